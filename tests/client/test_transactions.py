"""The transactional producer against Apache Kafka's own transaction coordinator (issue 14).

What read_committed readers (``Client.fetch`` and the ``Consumer``) see after commits and aborts, fencing
of an older instance with the same transactional id, offsets sent to a transaction (committed with it,
dropped by an abort, refused for a stale group generation: KIP-447), and the calls a state forbids.
"""

from __future__ import annotations

import itertools
import os
import time
from typing import Any

import pytest
from visibility import read_values, wait_stable

from kafkawire.client import Client, Consumer, ProduceFailedError, Producer
from kafkawire.client.producer.transaction import GroupMetadata, TransactionError, TransactionState
from kafkawire.protocol.errors import IllegalGenerationError, ProducerFencedError

_ids = itertools.count()


def _name(prefix: str) -> str:
    return f"{prefix}-{os.getpid()}-{next(_ids)}-{int(time.time() * 1000) % 100_000}"


@pytest.fixture
def bootstrap(kafka_broker: Any) -> str:
    return kafka_broker.bootstrap


@pytest.fixture
def topic(bootstrap: str) -> str:
    name = _name("txn")
    with Client(bootstrap) as c:
        c.create_topics([name], num_partitions=3)
    return name


def _consumer_values(bootstrap: str, topic: str) -> list[bytes]:
    """Every value of ``topic`` through a read_committed ``Consumer`` (manual assignment)."""
    out: list[bytes] = []
    with Client(bootstrap) as client:
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


@pytest.mark.broker
def test_read_committed_sees_exactly_the_committed_transactions(bootstrap: str, topic: str) -> None:
    committed: list[bytes] = []
    aborted: list[bytes] = []
    with Producer(bootstrap, transactional_id=_name("tid"), linger_ms=60_000) as producer:
        producer.init_transactions()
        for n in range(6):
            values = [f"t{n}-{i}".encode() for i in range(50)]
            producer.begin_transaction()
            for i, v in enumerate(values):
                producer.send(topic, v, key=str(i).encode())  # keyed: every partition is in the transaction
            if n % 2:
                producer.flush()  # written to the log, then aborted: must stay invisible
                producer.abort_transaction()
                aborted += values
            else:
                producer.commit_transaction()
                committed += values
        assert producer.transaction_manager is not None
        assert producer.transaction_manager.state is TransactionState.READY
    with Client(bootstrap) as client:
        wait_stable(client, topic)  # EndTxn returned; the markers that end the transactions may still be coming
        assert sorted(read_values(client, topic, "read_committed")) == sorted(committed)
        # The aborted records are in the log: only the transaction markers hide them.
        assert sorted(read_values(client, topic, "read_uncommitted")) == sorted(committed + aborted)
    assert sorted(_consumer_values(bootstrap, topic)) == sorted(committed)


@pytest.mark.broker
def test_context_manager_commits_or_aborts(bootstrap: str, topic: str) -> None:
    with Producer(bootstrap, transactional_id=_name("tid")) as producer:
        producer.init_transactions()
        with producer.transaction():
            producer.send(topic, b"kept", partition=0)
        with pytest.raises(RuntimeError, match="the application failed"):
            with producer.transaction():
                producer.send(topic, b"flushed-then-aborted", partition=1)
                producer.flush()
                producer.send(topic, b"buffered-then-aborted", partition=2)
                raise RuntimeError("the application failed")
        with producer.transaction():
            producer.send(topic, b"kept-too", partition=2)
    with Client(bootstrap) as client:
        wait_stable(client, topic)  # the commit marker of "kept-too" is written after EndTxn returned
        assert sorted(read_values(client, topic, "read_committed")) == [b"kept", b"kept-too"]
        # The buffered record of the aborted transaction was dropped, never written.
        assert b"buffered-then-aborted" not in read_values(client, topic, "read_uncommitted")


@pytest.mark.broker
def test_abort_leaves_nothing_visible(bootstrap: str, topic: str) -> None:
    with Producer(bootstrap, transactional_id=_name("tid")) as producer:
        producer.init_transactions()
        producer.begin_transaction()
        for i in range(300):
            producer.send(topic, f"a{i}".encode(), key=f"{i}".encode())
        producer.flush()
        producer.abort_transaction()
    with Client(bootstrap) as client:
        wait_stable(client, topic)  # judged after the abort markers, not while the open transaction hides the rows
        assert read_values(client, topic, "read_committed") == []
        assert len(read_values(client, topic, "read_uncommitted")) == 300
    assert _consumer_values(bootstrap, topic) == []


@pytest.mark.broker
def test_fenced_producer_gets_producer_fenced_and_writes_nothing_more(bootstrap: str, topic: str) -> None:
    tid = _name("tid")
    old = Producer(bootstrap, transactional_id=tid)
    old.init_transactions()
    old.begin_transaction()
    old.send(topic, b"old-before-fence", partition=0)
    old.flush()

    new = Producer(bootstrap, transactional_id=tid)
    new.init_transactions()  # bumps the epoch: fences `old` and aborts its open transaction
    assert new.transaction_manager is not None and old.transaction_manager is not None
    assert new.transaction_manager.producer_epoch > old.transaction_manager.producer_epoch

    old.send(topic, b"old-after-fence", partition=1)
    with pytest.raises(ProducerFencedError):
        old.commit_transaction()
    assert old.transaction_manager.state is TransactionState.FATAL_ERROR
    # Every later call raises the same fatal error; nothing more reaches the broker.
    with pytest.raises(ProducerFencedError):
        old.begin_transaction()
    with pytest.raises(ProducerFencedError):
        old.send(topic, b"old-later", partition=2)
    with pytest.raises(ProducerFencedError):
        old.abort_transaction()

    with new.transaction():
        new.send(topic, b"new", partition=0)
    new.close()
    old.close()
    with Client(bootstrap) as client:
        wait_stable(client, topic)  # the commit marker of "new" is written after EndTxn returned
        assert read_values(client, topic, "read_committed") == [b"new"]
        everything = read_values(client, topic, "read_uncommitted")
        assert b"old-after-fence" not in everything and b"old-later" not in everything
        assert everything.count(b"old-before-fence") == 1  # written, then aborted by the new instance


@pytest.mark.broker
def test_fenced_while_sending(bootstrap: str, topic: str) -> None:
    """The fence found by a produce request (the partition was already in the transaction)."""
    tid = _name("tid")
    old = Producer(bootstrap, transactional_id=tid)
    old.init_transactions()
    old.begin_transaction()
    old.send(topic, b"one", partition=0)
    old.flush()
    Producer(bootstrap, transactional_id=tid).init_transactions()
    old.send(topic, b"two", partition=0)
    with pytest.raises(ProducerFencedError):
        old.flush()
    old.close()
    with Client(bootstrap) as client:
        assert b"two" not in read_values(client, topic, "read_uncommitted")


@pytest.mark.broker
def test_offsets_sent_to_a_transaction_commit_with_it(bootstrap: str, topic: str) -> None:
    group = _name("grp")
    tp = (topic, 0)
    with Producer(bootstrap, transactional_id=_name("tid")) as producer, Client(bootstrap) as client:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(topic, b"x", partition=1)
        producer.send_offsets_to_transaction({tp: 7}, GroupMetadata(group))
        producer.abort_transaction()
        assert client.committed(group, [tp])[tp].offset == -1  # the abort dropped them

        producer.begin_transaction()
        producer.send_offsets_to_transaction({tp: 11}, group)  # offsets only, no records
        producer.commit_transaction()
        # Right after EndTxn the offsets' commit markers may still be on their way: OffsetFetch with
        # require_stable (KIP-447) waits for them instead of answering the previous offset.
        assert client.committed(group, [tp])[tp].offset == 11


@pytest.mark.broker
def test_offsets_of_a_stale_generation_are_refused(bootstrap: str, topic: str) -> None:
    """KIP-447: TxnOffsetCommit carries the member's generation; a zombie's is refused, and the error is
    abortable (abort, then the producer carries on)."""
    group = _name("grp")
    with Client(bootstrap) as c:
        c.produce(topic, [b"in"], partition=0)
    consumer = Consumer(
        bootstrap, group_id=group, auto_offset_reset="earliest", enable_auto_commit=False, session_timeout_ms=10_000
    )
    consumer.subscribe([topic])
    deadline = time.monotonic() + 30
    while consumer.generation < 0:
        assert time.monotonic() < deadline, "consumer never joined its group"
        consumer.poll(200)
    meta = consumer.group_metadata()
    assert meta.group_id == group and meta.generation_id >= 1 and meta.member_id
    stale = GroupMetadata(group, meta.generation_id + 5, meta.member_id)
    with Producer(bootstrap, transactional_id=_name("tid")) as producer:
        producer.init_transactions()
        producer.begin_transaction()
        with pytest.raises(IllegalGenerationError):
            producer.send_offsets_to_transaction({(topic, 0): 1}, stale)
        with pytest.raises(TransactionError) as info:
            producer.commit_transaction()
        assert info.value.abortable
        producer.abort_transaction()
        with producer.transaction():
            producer.send_offsets_to_transaction({(topic, 0): 1}, meta)
    assert consumer.committed([(topic, 0)])[(topic, 0)] == 1
    consumer.close()


@pytest.mark.broker
def test_calls_a_state_forbids(bootstrap: str, topic: str) -> None:
    with pytest.raises(ValueError, match="acks=-1"):
        Producer(bootstrap, transactional_id="x", acks=1)
    with Producer(bootstrap, transactional_id=_name("tid")) as producer:
        with pytest.raises(TransactionError, match="init_transactions"):
            producer.begin_transaction()
        producer.init_transactions()
        with pytest.raises(TransactionError, match="ready"):
            producer.send(topic, b"outside a transaction")
        with pytest.raises(TransactionError, match="ready"):
            producer.commit_transaction()
        producer.begin_transaction()
        with pytest.raises(TransactionError, match="in transaction"):
            producer.begin_transaction()
        producer.commit_transaction()  # empty: nothing was added, so no EndTxn either
    with Producer(bootstrap) as plain, pytest.raises(RuntimeError, match="transactional_id"):
        plain.begin_transaction()


# ------------------------------------------------------------------ a scripted coordinator (no Kafka)
_VERSIONS = {0: (3, 12), 3: (1, 12), 10: (0, 4), 18: (0, 3), 22: (0, 5), 24: (0, 5), 25: (0, 4), 26: (0, 5), 28: (0, 5)}


class _ScriptedCoordinator:
    """Answers as one broker that leads ``t``/0 and coordinates every transaction, with scripted error
    codes per API key (popped one per request; 0 once the script is empty, or ``stall`` forever)."""

    def __init__(self, script: dict[int, list[int]]) -> None:
        from client_fakes import FakeKafkaBroker

        self.script = script
        self.stall: dict[int, int] = {}
        self.produced: list[tuple[int, Any]] = []  # (version, request)
        self.inits: list[tuple[int, Any]] = []  # (version, InitProducerId request)
        self.seen: list[tuple[int, int]] = []  # (api key, version) of every request
        self.server = FakeKafkaBroker(self.respond, _VERSIONS)

    def code(self, key: int) -> int:
        if key in self.stall:
            return self.stall[key]
        queue = self.script.get(key) or []
        return queue.pop(0) if queue else 0

    def respond(self, header: Any, request: Any) -> Any:
        import uuid

        from kafkawire import protocol as p

        key, version = header.api_key, header.api_version
        self.seen.append((key, version))
        port = self.server.port
        if key == 3:
            part = p.MetadataResponse.MetadataResponsePartition(
                error_code=0, partition_index=0, leader_id=1, replica_nodes=[1], isr_nodes=[1]
            )
            topics = [
                p.MetadataResponse.MetadataResponseTopic(
                    error_code=0, name="t", topic_id=uuid.UUID(int=0), partitions=[part]
                )
            ]
            return p.MetadataResponse(
                brokers=[p.MetadataResponse.MetadataResponseBroker(node_id=1, host="127.0.0.1", port=port)],
                cluster_id="fake",
                controller_id=1,
                topics=topics if request.topics is None or any(t.name == "t" for t in request.topics) else [],
            )
        if key == 10:
            c = p.FindCoordinatorResponse.Coordinator(key="x", node_id=1, host="127.0.0.1", port=port, error_code=0)
            return p.FindCoordinatorResponse(coordinators=[c])
        if key == 22:
            self.inits.append((version, request))
            code = self.code(22)
            epoch = 3 + sum(1 for _v, r in self.inits if r.producer_id >= 0)  # a KIP-360 bump raises the epoch
            return p.InitProducerIdResponse(error_code=code, producer_id=7 if not code else -1, producer_epoch=epoch)
        if key == 24:
            code = self.code(24)
            results = [
                p.AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult(
                    name=t.name,
                    results_by_partition=[
                        p.AddPartitionsToTxnResponse.AddPartitionsToTxnPartitionResult(
                            partition_index=i, partition_error_code=code
                        )
                        for i in t.partitions
                    ],
                )
                for t in request.v3_and_below_topics
            ]
            return p.AddPartitionsToTxnResponse(results_by_topic_v3_and_below=results)
        if key == 0:
            self.produced.append((version, request))
            return p.ProduceResponse(
                responses=[
                    p.ProduceResponse.TopicProduceResponse(
                        name="t",
                        partition_responses=[
                            p.ProduceResponse.PartitionProduceResponse(index=0, error_code=self.code(0), base_offset=0)
                        ],
                    )
                ]
            )
        if key == 26:
            return p.EndTxnResponse(error_code=self.code(26))
        raise AssertionError(f"unexpected request {key} v{version}")


def test_retriable_coordinator_errors_are_retried_and_versions_stay_at_transaction_protocol_v1() -> None:
    import struct

    coord = _ScriptedCoordinator({22: [51, 51, 14], 24: [14, 16, 51], 26: [51, 15]})  # CONCURRENT, LOAD, NOT_COORD.
    with coord.server, Producer(coord.server.address, transactional_id="scripted", retry_backoff_ms=10) as producer:
        producer.init_transactions(timeout_ms=10_000)
        txn = producer.transaction_manager
        assert txn is not None and (txn.producer_id, txn.producer_epoch) == (7, 3)
        with producer.transaction():
            producer.send("t", b"v", partition=0)
        assert txn.state is TransactionState.READY
    versions = dict(coord.seen)
    assert versions[24] == 3 and versions[26] == 4  # v4+ / v5: broker-to-broker, transaction protocol v2
    ((version, request),) = coord.produced
    assert version == 11 and request.transactional_id == "scripted"
    batch = bytes(request.topic_data[0].partition_data[0].records)
    attributes = struct.unpack_from(">h", batch, 21)[0]
    producer_id, epoch = struct.unpack_from(">qh", batch, 43)
    assert attributes & 0x10 and (producer_id, epoch) == (7, 3)  # the transactional bit, our id and epoch


def test_a_commit_that_runs_out_of_time_can_be_called_again() -> None:
    from kafkawire.client import KafkaTimeoutError

    coord = _ScriptedCoordinator({})
    with coord.server, Producer(coord.server.address, transactional_id="scripted", retry_backoff_ms=10) as producer:
        producer.init_transactions(timeout_ms=10_000)
        producer.begin_transaction()
        producer.send("t", b"v", partition=0)
        coord.stall[26] = 51  # CONCURRENT_TRANSACTIONS for ever
        started = time.monotonic()
        with pytest.raises(KafkaTimeoutError, match="CONCURRENT_TRANSACTIONS"):
            producer.commit_transaction(timeout_ms=1_000)
        took = time.monotonic() - started
        assert took <= 1.0 * 1.1 + 0.2, took  # the call's deadline + 10% (and scheduling noise)
        assert producer.transaction_manager is not None
        assert producer.transaction_manager.state is TransactionState.COMMITTING
        with pytest.raises(TransactionError):
            producer.begin_transaction()
        del coord.stall[26]
        producer.commit_transaction(timeout_ms=5_000)
        assert producer.transaction_manager.state is TransactionState.READY


def test_a_fenced_answer_is_fatal_and_a_refused_batch_abortable() -> None:
    coord = _ScriptedCoordinator({26: [90]})  # PRODUCER_FENCED on the first EndTxn
    with coord.server, Producer(coord.server.address, transactional_id="scripted", retry_backoff_ms=10) as producer:
        producer.init_transactions(timeout_ms=10_000)
        producer.begin_transaction()
        producer.send("t", b"v", partition=0)
        with pytest.raises(ProducerFencedError):
            producer.commit_transaction(timeout_ms=5_000)
        with pytest.raises(ProducerFencedError):
            producer.begin_transaction()
    coord = _ScriptedCoordinator({0: [87]})  # INVALID_RECORD: the batch is refused
    with coord.server, Producer(coord.server.address, transactional_id="scripted", retry_backoff_ms=10) as producer:
        producer.init_transactions(timeout_ms=10_000)
        producer.begin_transaction()
        producer.send("t", b"v", partition=0)
        with pytest.raises(ProduceFailedError):
            producer.commit_transaction(timeout_ms=5_000)
        assert producer.transaction_manager is not None
        assert producer.transaction_manager.state is TransactionState.ABORTABLE_ERROR
        producer.abort_transaction(timeout_ms=5_000)
        with producer.transaction():
            producer.send("t", b"again", partition=0)


@pytest.mark.broker
def test_a_handed_over_transaction_is_finished_by_another_client(bootstrap: str, topic: str) -> None:
    """Write in one producer, commit from elsewhere with the handle (a Spark task writes, the driver commits);
    a repeated commit succeeds again; an abort through a handle leaves nothing visible."""
    from kafkawire.client import end_transaction

    tid = _name("tid")
    producer = Producer(bootstrap, transactional_id=tid)
    producer.init_transactions()
    producer.begin_transaction()
    for i in range(30):
        producer.send(topic, f"h{i}".encode(), key=str(i).encode())
    handle = producer.hand_over_transaction()
    assert handle.transactional_id == tid and handle.producer_id >= 0
    with pytest.raises(RuntimeError, match="closed"):
        producer.send(topic, b"after hand-over")
    with Client(bootstrap) as client:
        assert read_values(client, topic, "read_committed") == []  # open: nothing stable yet
        end_transaction(client, handle, commit=True)
        end_transaction(client, handle, commit=True)  # a driver unsure whether its commit went through
        wait_stable(client, topic)  # EndTxn returned; the commit markers may still be coming
        assert sorted(read_values(client, topic, "read_committed")) == sorted(f"h{i}".encode() for i in range(30))

    other = Producer(bootstrap, transactional_id=_name("tid"))
    other.init_transactions()
    other.begin_transaction()
    other.send(topic, b"handed-over-then-aborted", partition=0)
    aborted = other.hand_over_transaction()
    with Client(bootstrap) as client:
        end_transaction(client, aborted, commit=False)
        wait_stable(client, topic)  # judged after the abort marker, not while the open transaction hides the row
        assert b"handed-over-then-aborted" not in read_values(client, topic, "read_committed")
        assert b"handed-over-then-aborted" in read_values(client, topic, "read_uncommitted")


def test_an_out_of_order_sequence_aborts_and_bumps_the_epoch() -> None:
    """KIP-360: sequence numbers in doubt make the transaction abortable; after the abort InitProducerId
    (v3+) with the current id and epoch bumps the epoch, and the next transaction numbers from 0 again."""
    import struct

    coord = _ScriptedCoordinator({0: [45]})  # OUT_OF_ORDER_SEQUENCE_NUMBER on the first batch
    with coord.server, Producer(coord.server.address, transactional_id="scripted", retry_backoff_ms=10) as producer:
        producer.init_transactions(timeout_ms=10_000)
        producer.begin_transaction()
        producer.send("t", b"v", partition=0)
        with pytest.raises(ProduceFailedError):
            producer.commit_transaction(timeout_ms=5_000)
        txn = producer.transaction_manager
        assert txn is not None and txn.state is TransactionState.ABORTABLE_ERROR
        producer.abort_transaction(timeout_ms=5_000)
        assert (txn.producer_id, txn.producer_epoch) == (7, 4)
        with producer.transaction():
            producer.send("t", b"again", partition=0)
    (first_version, first), (bump_version, bump) = coord.inits
    assert (first.producer_id, first.producer_epoch) == (-1, -1)
    assert bump_version >= 3 and (bump.producer_id, bump.producer_epoch) == (7, 3)
    batch = bytes(coord.produced[-1][1].topic_data[0].partition_data[0].records)
    producer_id, epoch, base_sequence = struct.unpack_from(">qhi", batch, 43)
    assert (producer_id, epoch, base_sequence) == (7, 4, 0)
