"""Transaction protocol version 2 (KIP-890 part 2) against Apache Kafka's own coordinator (issue 14).

Kafka 4.x clusters formatted at 4.x finalize ``transaction.version`` 2, and the producer then follows the Java
client's version-2 path: no AddPartitionsToTxn (Produce v12 adds the partition), no AddOffsetsToTxn
(TxnOffsetCommit v5 adds the group), and EndTxn v5, after which the coordinator has bumped the epoch. The
version-1 path still runs against Kafka 3.9 (and against 4.x for a client capped below EndTxn v5), and the
broker's own verification (KIP-890 part 1) answers a transactional write to a partition never added to the
transaction with TRANSACTION_ABORTABLE rather than letting it in.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
from visibility import read_values, wait_stable

from kafkawire import encode_records
from kafkawire.client import Client, Consumer, Producer, end_transaction
from kafkawire.client.producer.transaction import TransactionHandle, TransactionManager, TransactionState
from kafkawire.protocol import ProduceRequest
from kafkawire.protocol.errors import InvalidTxnStateError, ProducerFencedError, TransactionAbortableError, broker_error

_ids = itertools.count()


def _name(prefix: str) -> str:
    return f"{prefix}-{os.getpid()}-{next(_ids)}-{int(time.time() * 1000) % 100_000}"


def _requests(client: Client) -> dict[str, int]:
    """Requests sent so far per API name (the client's own counters)."""
    return {name: api["requests"] for name, api in client.metrics()["apis"].items()}


def _consumer_values(client: Client, topic: str) -> list[bytes]:
    """Every value of ``topic`` through a read_committed ``Consumer`` (manual assignment)."""
    out: list[bytes] = []
    ends = {p: lo.offset for p, lo in client.list_offsets(topic, isolation="read_committed").items()}
    consumer = Consumer(client=client, auto_offset_reset="earliest", isolation="read_committed")
    consumer.assign([(topic, p) for p in ends])
    deadline = time.monotonic() + 30
    while any(consumer.position((topic, p)) < end for p, end in ends.items()):
        assert time.monotonic() < deadline, f"consumer stuck after {len(out)} records"
        for _tp, cols in consumer.poll(200).items():
            out += [bytes(r.value) for r in cols]
    consumer.close()
    return out


@pytest.fixture
def client(kafka_broker: Any) -> Iterator[Client]:
    with Client(kafka_broker.bootstrap) as c:
        yield c


@pytest.fixture
def topic(client: Client) -> str:
    name = _name("tv2")
    client.create_topics([name], num_partitions=3)
    return name


@pytest.mark.broker
def test_the_broker_finalizes_transaction_version_2(client: Client) -> None:
    """The premise of the other tests: Kafka 4.4 formatted by kafkawire.testing finalizes the feature."""
    conn = client.cluster.any_connection(client.deadline(10_000))
    assert conn.versions.finalized_features.get("transaction.version", 0) >= 2
    assert conn.versions.finalized_features_epoch >= 0


@pytest.mark.broker
def test_version_2_sends_no_add_requests_and_bumps_the_epoch_at_every_end(client: Client, topic: str) -> None:
    group = _name("group")
    committed: list[bytes] = []
    aborted: list[bytes] = []
    producer = Producer(client=client, transactional_id=_name("tid"), linger_ms=60_000)
    producer.init_transactions()
    txn = producer.transaction_manager
    assert txn is not None and txn.transaction_v2 and txn.max_produce_version == 12
    producer_id, epoch = txn.producer_id, txn.producer_epoch
    for n in range(4):
        values = [f"t{n}-{i}".encode() for i in range(60)]
        producer.begin_transaction()
        for i, v in enumerate(values):
            producer.send(topic, v, key=str(i).encode())  # keyed: every partition is in the transaction
        producer.send_offsets_to_transaction({(topic, p): 100 * (n + 1) + p for p in range(3)}, group)
        if n == 2:
            producer.flush()  # in the log, then aborted: must stay invisible, offsets not committed
            producer.abort_transaction()
            aborted += values
        else:
            producer.commit_transaction()
            committed += values
        # EndTxn v5: the coordinator bumped the epoch; the next transaction's sequences start at 0 again
        # (the broker would refuse anything else from a new epoch with OUT_OF_ORDER_SEQUENCE_NUMBER).
        assert (txn.producer_id, txn.producer_epoch) == (producer_id, epoch + n + 1)
        assert txn.sequences == {}
    assert txn.state is TransactionState.READY
    sent = _requests(client)
    assert sent.get("AddPartitionsToTxn", 0) == 0 and sent.get("AddOffsetsToTxn", 0) == 0
    # At least one each per transaction (more when the broker answered a retriable error, e.g. a coordinator
    # still loading, or CONCURRENT_TRANSACTIONS while the previous transaction's markers are written).
    assert sent["EndTxn"] >= 4 and sent["TxnOffsetCommit"] >= 4
    producer.close()

    wait_stable(client, topic)
    assert sorted(read_values(client, topic, "read_committed")) == sorted(committed)
    assert sorted(read_values(client, topic, "read_uncommitted")) == sorted(committed + aborted)
    assert sorted(_consumer_values(client, topic)) == sorted(committed)
    # The last committed transaction's offsets (n = 3), not the aborted one's (n = 2). OffsetFetch with
    # require_stable (KIP-447) waits for the commit markers written after EndTxn was answered.
    offsets = client.committed(group, [(topic, p) for p in range(3)])
    assert {p: o.offset for (_t, p), o in offsets.items()} == {p: 400 + p for p in range(3)}


@pytest.mark.broker
def test_a_transaction_with_nothing_sent_sends_no_end_txn(client: Client, topic: str) -> None:
    producer = Producer(client=client, transactional_id=_name("tid"))
    producer.init_transactions()
    txn = producer.transaction_manager
    assert txn is not None
    before = (txn.producer_id, txn.producer_epoch)
    with producer.transaction():
        pass
    producer.begin_transaction()
    producer.abort_transaction()
    assert (txn.producer_id, txn.producer_epoch) == before
    assert _requests(client).get("EndTxn", 0) == 0
    with producer.transaction():
        producer.send(topic, b"after-empty", partition=1)
    assert (txn.producer_id, txn.producer_epoch) == (before[0], before[1] + 1)
    producer.close()
    wait_stable(client, topic)
    assert read_values(client, topic, "read_committed") == [b"after-empty"]


@pytest.mark.broker
def test_a_fenced_producer_gets_producer_fenced_under_version_2(client: Client, topic: str) -> None:
    tid = _name("tid")
    old = Producer(client=client, transactional_id=tid)
    old.init_transactions()
    with old.transaction():  # one completed transaction first: the epoch was bumped by EndTxn v5
        old.send(topic, b"old-committed", partition=0)
    old.begin_transaction()
    old.send(topic, b"old-open", partition=0)
    old.flush()

    with Client(_bootstrap(client)) as other:
        new = Producer(client=other, transactional_id=tid)
        new.init_transactions()  # fences the old instance and aborts its open transaction
        assert new.transaction_manager is not None and new.transaction_manager.transaction_v2
        with pytest.raises(ProducerFencedError):
            old.send(topic, b"old-after-fence", partition=0)
            old.commit_transaction()
        assert old.transaction_manager is not None
        assert old.transaction_manager.state is TransactionState.FATAL_ERROR
        with pytest.raises(ProducerFencedError):
            old.begin_transaction()
        with new.transaction():
            new.send(topic, b"new-committed", partition=0)
        new.close()
    old.close()
    wait_stable(client, topic)
    assert sorted(read_values(client, topic, "read_committed")) == [b"new-committed", b"old-committed"]


def _bootstrap(client: Client) -> str:
    broker = next(iter(client.cluster.brokers.values()))
    return f"{broker.host}:{broker.port}"


@pytest.mark.broker
def test_a_handed_over_version_2_transaction_is_ended_elsewhere(client: Client, topic: str) -> None:
    """A Spark task writes under version 2 and hands over; the driver's EndTxn ends it. The handle says
    which protocol wrote it; a handle kept as three fields lets the broker's finalized feature decide.
    A repeated commit succeeds (EndTxn v5 recognises the retry by the epoch one below the bumped one)."""
    handles = []
    for n in range(2):
        producer = Producer(_bootstrap(client), transactional_id=_name("tid"))
        producer.init_transactions()
        producer.begin_transaction()
        for i in range(20):
            producer.send(topic, f"h{n}-{i}".encode(), key=str(i).encode())
        handle = producer.hand_over_transaction()
        assert handle.transaction_v2 is True
        handles.append(handle)
    assert read_values(client, topic, "read_committed") == []
    # What kafkawire.spark.source passes the driver: three fields, no protocol.
    full, h = handles
    three_fields = TransactionHandle(h.transactional_id, h.producer_id, h.producer_epoch)
    for handle in (full, three_fields):
        end_transaction(client, handle, commit=True)
        end_transaction(client, handle, commit=True)  # a driver unsure whether its commit went through
    expected = sorted(f"h{n}-{i}".encode() for n in range(2) for i in range(20))
    wait_stable(client, topic)
    assert sorted(read_values(client, topic, "read_committed")) == expected
    # The coordinator bumped each id's epoch at the commit: the task's epoch is stale for anything new.
    # Aborting a committed transaction through its handle is refused (INVALID_TXN_STATE: the coordinator
    # recognises the epoch one below its own as a retry of the commit), and nothing changes.
    resumed = TransactionManager.resume(full)
    with pytest.raises(InvalidTxnStateError):
        with client.cluster.lock:
            resumed.end(client.cluster, False, client.deadline(10_000))
    assert sorted(read_values(client, topic, "read_committed")) == expected


@pytest.mark.broker
def test_the_broker_refuses_a_write_to_a_partition_not_in_the_transaction(client: Client, topic: str) -> None:
    """KIP-890 part 1: Produce v11 of a transactional batch to a partition never added (no AddPartitionsToTxn)
    is answered TRANSACTION_ABORTABLE, which the client treats as abortable; Produce v12 adds the partition."""
    producer = Producer(client=client, transactional_id=_name("tid"))
    producer.init_transactions()
    txn = producer.transaction_manager
    assert txn is not None
    producer.begin_transaction()
    codes = {}
    for version in (11, 12):
        batch = encode_records(
            [b"raw"],
            producer_id=txn.producer_id,
            producer_epoch=txn.producer_epoch,
            base_sequence=0,
            transactional=True,
        )
        d = client.deadline(40_000)
        conn = client.cluster.connection(client.cluster.leader(topic, 0, d), d)
        req = ProduceRequest(
            transactional_id=txn.transactional_id,
            acks=-1,
            timeout_ms=5_000,
            topic_data=[
                ProduceRequest.TopicProduceData(
                    name=topic, partition_data=[ProduceRequest.PartitionProduceData(index=0, records=batch)]
                )
            ],
        )
        until = time.monotonic() + 30
        while True:  # a new topic's partition may not be on the broker yet: NOT_LEADER_OR_FOLLOWER (6)
            resp = conn.request(req, version, deadline=d)
            codes[version] = resp.responses[0].partition_responses[0].error_code
            if codes[version] != 6 or time.monotonic() > until:
                break
            time.sleep(0.05)
    assert codes == {11: TransactionAbortableError.code, 12: 0}, codes
    err = broker_error(codes[11], None, "produce")
    assert isinstance(err, TransactionAbortableError)
    txn.fail(err)
    assert txn.state is TransactionState.ABORTABLE_ERROR
    txn.partitions.add((topic, 0))  # what the v12 write added, so that the abort ends it
    producer.abort_transaction()
    producer.close()
    wait_stable(client, topic)
    assert read_values(client, topic, "read_committed") == []


@pytest.mark.broker
def test_a_client_capped_below_end_txn_v5_speaks_version_1_to_kafka_4(kafka_broker: Any, topic: str) -> None:
    with Client(kafka_broker.bootstrap, api_version_caps={26: 4}) as capped:
        producer = Producer(client=capped, transactional_id=_name("tid"))
        producer.init_transactions()
        txn = producer.transaction_manager
        assert txn is not None and not txn.transaction_v2 and txn.max_produce_version == 11
        epoch = txn.producer_epoch
        for n in range(2):
            with producer.transaction():
                producer.send(topic, f"v1-{n}".encode(), partition=n)
        assert txn.producer_epoch == epoch  # version 1: EndTxn does not bump the epoch
        assert _requests(capped)["AddPartitionsToTxn"] >= 2
        producer.close()
        wait_stable(capped, topic)
        assert sorted(read_values(capped, topic, "read_committed")) == [b"v1-0", b"v1-1"]


@pytest.fixture(scope="module")
def legacy_kafka() -> Iterator[Any]:
    from kafkawire.testing import start_broker
    from kafkawire.testing.kafka import LEGACY_KAFKA_VERSION

    broker = start_broker("kafka", version=LEGACY_KAFKA_VERSION)
    yield broker
    broker.stop()


@pytest.mark.broker
def test_version_1_against_kafka_3(legacy_kafka: Any) -> None:
    """Kafka 3.9 finalizes no transaction.version 2: AddPartitionsToTxn, AddOffsetsToTxn, EndTxn <= v4, the
    same producer id and epoch across transactions, and a handed-over transaction ended elsewhere."""
    with Client(legacy_kafka.bootstrap) as client:
        topic = _name("tv1")
        client.create_topics([topic], num_partitions=2)
        producer = Producer(client=client, transactional_id=_name("tid"))
        producer.init_transactions()
        txn = producer.transaction_manager
        assert txn is not None and not txn.transaction_v2
        ids = (txn.producer_id, txn.producer_epoch)
        with producer.transaction():
            producer.send(topic, b"kept", partition=0)
            producer.send_offsets_to_transaction({(topic, 0): 1}, _name("group"))
        producer.begin_transaction()
        producer.send(topic, b"aborted", partition=1)
        producer.flush()
        producer.abort_transaction()
        assert (txn.producer_id, txn.producer_epoch) == ids
        sent = _requests(client)
        # At least (retriable answers of a coordinator still loading are retried).
        assert sent["AddPartitionsToTxn"] >= 2 and sent["AddOffsetsToTxn"] >= 1 and sent["EndTxn"] >= 2
        producer.begin_transaction()
        producer.send(topic, b"handed-over", partition=1)
        handle = producer.hand_over_transaction()
        assert handle.transaction_v2 is False
        end_transaction(client, handle, commit=True)
        end_transaction(client, handle, commit=True)
        wait_stable(client, topic)
        assert sorted(read_values(client, topic, "read_committed")) == [b"handed-over", b"kept"]


# ------------------------------------------------------------------ a scripted coordinator (no Kafka)
_VERSIONS = {0: (3, 12), 3: (1, 12), 10: (0, 4), 18: (0, 3), 22: (0, 5), 24: (0, 5), 25: (0, 4), 26: (0, 5), 28: (0, 5)}


class _FeatureCoordinator:
    """One broker that leads ``t``/0 and coordinates every transaction, finalizing ``transaction.version``
    ``level`` in its ApiVersions answers (read at each new connection). EndTxn v5 answers the next producer id
    and epoch from ``end_ids`` (popped), else the same id with the epoch plus one, as Kafka does."""

    def __init__(self, level: int, end_ids: list[tuple[int, int]] | None = None) -> None:
        from client_fakes import FakeKafkaBroker, read_request

        outer = self
        self.level = level
        self.features_epoch = 1
        self.end_ids = list(end_ids or [])
        self.seen: list[tuple[int, int, Any]] = []  # (api key, version, request)

        class Broker(FakeKafkaBroker):  # type: ignore[misc]
            def _handle(self, conn: Any) -> None:
                from kafkawire.protocol import ApiVersionsResponse, decode_request

                while (req := read_request(conn)) is not None:
                    header, request = decode_request(req[3])
                    if header.api_key == 18:
                        resp = ApiVersionsResponse(
                            error_code=0,
                            api_keys=[
                                ApiVersionsResponse.ApiVersion(api_key=k, min_version=lo, max_version=hi)
                                for k, (lo, hi) in sorted(_VERSIONS.items())
                            ],
                            finalized_features_epoch=outer.features_epoch,
                            finalized_features=[
                                ApiVersionsResponse.FinalizedFeatureKey(
                                    name="transaction.version", max_version_level=outer.level, min_version_level=0
                                )
                            ],
                        )
                        conn.sendall(resp.encode(header.api_version, header.correlation_id))
                        continue
                    conn.sendall(outer.respond(header, request).encode(header.api_version, header.correlation_id))

        self.server = Broker(None, _VERSIONS)
        self.producer_id, self.epoch = 7, 3

    def keys(self) -> list[tuple[int, int]]:
        return [(k, v) for k, v, _r in self.seen]

    def respond(self, header: Any, request: Any) -> Any:
        import struct
        import uuid

        from kafkawire import protocol as p

        key, version = header.api_key, header.api_version
        self.seen.append((key, version, request))
        port = self.server.port
        if key == 3:
            part = p.MetadataResponse.MetadataResponsePartition(
                error_code=0, partition_index=0, leader_id=1, replica_nodes=[1], isr_nodes=[1]
            )
            topic = p.MetadataResponse.MetadataResponseTopic(
                error_code=0, name="t", topic_id=uuid.UUID(int=0), partitions=[part]
            )
            return p.MetadataResponse(
                brokers=[p.MetadataResponse.MetadataResponseBroker(node_id=1, host="127.0.0.1", port=port)],
                cluster_id="fake",
                controller_id=1,
                topics=[topic] if request.topics is None or any(t.name == "t" for t in request.topics) else [],
            )
        if key == 10:
            c = p.FindCoordinatorResponse.Coordinator(key="x", node_id=1, host="127.0.0.1", port=port, error_code=0)
            return p.FindCoordinatorResponse(coordinators=[c])
        if key == 22:
            if request.producer_id >= 0:  # KIP-360 bump
                self.epoch += 1
            return p.InitProducerIdResponse(error_code=0, producer_id=self.producer_id, producer_epoch=self.epoch)
        if key == 24:
            results = [
                p.AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult(
                    name=t.name,
                    results_by_partition=[
                        p.AddPartitionsToTxnResponse.AddPartitionsToTxnPartitionResult(
                            partition_index=i, partition_error_code=0
                        )
                        for i in t.partitions
                    ],
                )
                for t in request.v3_and_below_topics
            ]
            return p.AddPartitionsToTxnResponse(results_by_topic_v3_and_below=results)
        if key == 25:
            return p.AddOffsetsToTxnResponse(error_code=0)
        if key == 28:
            return p.TxnOffsetCommitResponse(
                topics=[
                    p.TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic(
                        name=t.name,
                        partitions=[
                            p.TxnOffsetCommitResponse.TxnOffsetCommitResponsePartition(
                                partition_index=q.partition_index, error_code=0
                            )
                            for q in t.partitions
                        ],
                    )
                    for t in request.topics
                ]
            )
        if key == 0:
            batch = bytes(request.topic_data[0].partition_data[0].records)
            pid, epoch, seq = struct.unpack_from(">qhi", batch, 43)
            assert (pid, epoch) == (self.producer_id, self.epoch), "a batch of a stale producer id or epoch"
            return p.ProduceResponse(
                responses=[
                    p.ProduceResponse.TopicProduceResponse(
                        name="t",
                        partition_responses=[
                            p.ProduceResponse.PartitionProduceResponse(index=0, error_code=0, base_offset=0)
                        ],
                    )
                ]
            )
        if key == 26:
            if version >= 5:
                self.producer_id, self.epoch = (
                    self.end_ids.pop(0) if self.end_ids else (self.producer_id, self.epoch + 1)
                )
                return p.EndTxnResponse(error_code=0, producer_id=self.producer_id, producer_epoch=self.epoch)
            return p.EndTxnResponse(error_code=0)
        raise AssertionError(f"unexpected request {key} v{version}")


def _sequences(coord: _FeatureCoordinator) -> list[tuple[int, int, int, int]]:
    """(Produce version, producer id, epoch, base sequence) of every batch the coordinator got."""
    import struct

    out = []
    for key, version, request in coord.seen:
        if key == 0:
            batch = bytes(request.topic_data[0].partition_data[0].records)
            out.append((version, *struct.unpack_from(">qhi", batch, 43)))
    return out


def test_end_txn_v5_hands_out_a_new_producer_id_when_the_epoch_runs_out() -> None:
    """Epoch overflow under version 2 (KAFKA-18660): EndTxn v5 answers a new producer id with epoch 0; the
    next transaction writes with it, its sequences from 0."""
    coord = _FeatureCoordinator(level=2, end_ids=[(8, 0)])
    with coord.server, Producer(coord.server.address, transactional_id="scripted", retry_backoff_ms=10) as producer:
        producer.init_transactions(timeout_ms=10_000)
        txn = producer.transaction_manager
        assert txn is not None and txn.transaction_v2
        for n in range(2):
            with producer.transaction():
                producer.send("t", b"a", partition=0)
                producer.send("t", b"b", partition=0)
                producer.send_offsets_to_transaction({("t", 0): n}, "group")
        assert (txn.producer_id, txn.producer_epoch) == (8, 1)
    assert _sequences(coord) == [(12, 7, 3, 0), (12, 8, 0, 0)]
    keys = coord.keys()
    assert not any(k in (24, 25) for k, _v in keys)
    assert [v for k, v in keys if k == 26] == [5, 5] and [v for k, v in keys if k == 28] == [5, 5]
    assert [k for k, _v in keys].count(22) == 1


def test_a_producer_moves_to_version_2_when_the_feature_appears() -> None:
    """A cluster finalizing transaction.version 2 while the producer runs (kafka-features upgrade): the
    transaction under way stays on version 1, then the producer bumps its epoch with InitProducerId (Java's
    clientSideEpochBumpRequired) and speaks version 2 from the next transaction on."""
    coord = _FeatureCoordinator(level=0)
    with coord.server, Producer(coord.server.address, transactional_id="scripted", retry_backoff_ms=10) as producer:
        producer.init_transactions(timeout_ms=10_000)
        txn = producer.transaction_manager
        assert txn is not None and not txn.transaction_v2
        with producer.transaction():
            producer.send("t", b"v1", partition=0)
        coord.level, coord.features_epoch = 2, 2
        for conn in producer.client.cluster.conns.values():
            conn.close()  # the next connection's ApiVersions carries the new features
        with producer.transaction():
            producer.send("t", b"still-v1", partition=0)
        assert txn.transaction_v2 and txn.producer_epoch == 4  # bumped by InitProducerId after the EndTxn
        with producer.transaction():
            producer.send("t", b"v2", partition=0)
        assert txn.producer_epoch == 5  # bumped by EndTxn v5
    assert _sequences(coord) == [(11, 7, 3, 0), (11, 7, 3, 1), (12, 7, 4, 0)]
    ends = [v for k, v, _r in coord.seen if k == 26]
    bumps = [(r.producer_id, r.producer_epoch) for k, _v, r in coord.seen if k == 22]
    assert ends == [4, 4, 5] and bumps == [(-1, -1), (7, 3)]
    assert [v for k, v, _r in coord.seen if k == 24] == [3, 3]
