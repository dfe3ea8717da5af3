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

from kafkawire import encode_records
from kafkawire.client import Client, Consumer, Producer, end_transaction
from kafkawire.client.cluster import broker_error
from kafkawire.client.transaction import TransactionHandle, TransactionManager, TransactionState
from kafkawire.protocol import ProduceRequest
from kafkawire.protocol.errors import InvalidTxnStateError, ProducerFencedError, TransactionAbortableError

_ids = itertools.count()


def _name(prefix: str) -> str:
    return f"{prefix}-{os.getpid()}-{next(_ids)}-{int(time.time() * 1000) % 100_000}"


def _requests(client: Client) -> dict[str, int]:
    """Requests sent so far per API name (the client's own counters)."""
    return {name: api["requests"] for name, api in client.metrics()["apis"].items()}


def _wait_stable(client: Client, topic: str) -> None:
    """Wait until no transaction is open on ``topic``: the last stable offset (read_committed end) reaches the
    high watermark. The coordinator writes the markers after it answered EndTxn (Kafka), so right after a
    commit the records may not be readable yet."""
    deadline = time.monotonic() + 30
    while True:
        stable = {p: o.offset for p, o in client.list_offsets(topic, isolation="read_committed").items()}
        high = {p: o.offset for p, o in client.list_offsets(topic, isolation="read_uncommitted").items()}
        if stable == high:
            return
        assert time.monotonic() < deadline, f"{topic}: last stable offsets {stable} never reached {high}"
        time.sleep(0.02)


def _values(client: Client, topic: str, isolation: str) -> list[bytes]:
    """Every value of ``topic`` under ``isolation``, up to the end offsets that isolation reports."""
    out: list[bytes] = []
    for p, listed in sorted(client.list_offsets(topic, isolation=isolation).items()):
        offset = 0
        deadline = time.monotonic() + 30
        while offset < listed.offset:
            assert time.monotonic() < deadline, f"{topic}/{p} stuck at {offset} of {listed.offset}"
            cols = client.fetch(topic, p, offset, isolation=isolation, max_wait_ms=100)
            out += [bytes(r.value) for r in cols]
            offset = max(offset, int(cols.next_offset))
    return out


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


def test_the_broker_finalizes_transaction_version_2(client: Client) -> None:
    """The premise of the other tests: Kafka 4.4 formatted by kafkawire.testing finalizes the feature."""
    conn = client.cluster.any_connection(client.deadline(10_000))
    assert conn.versions.finalized_features.get("transaction.version", 0) >= 2
    assert conn.versions.finalized_features_epoch >= 0


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

    _wait_stable(client, topic)
    assert sorted(_values(client, topic, "read_committed")) == sorted(committed)
    assert sorted(_values(client, topic, "read_uncommitted")) == sorted(committed + aborted)
    assert sorted(_consumer_values(client, topic)) == sorted(committed)
    # The last committed transaction's offsets (n = 3), not the aborted one's (n = 2). OffsetFetch with
    # require_stable (KIP-447) waits for the commit markers written after EndTxn was answered.
    offsets = client.committed(group, [(topic, p) for p in range(3)])
    assert {p: o.offset for (_t, p), o in offsets.items()} == {p: 400 + p for p in range(3)}


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
    _wait_stable(client, topic)
    assert _values(client, topic, "read_committed") == [b"after-empty"]


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
    _wait_stable(client, topic)
    assert sorted(_values(client, topic, "read_committed")) == [b"new-committed", b"old-committed"]


def _bootstrap(client: Client) -> str:
    broker = next(iter(client.cluster.brokers.values()))
    return f"{broker.host}:{broker.port}"


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
    assert _values(client, topic, "read_committed") == []
    # What kafkawire.spark.source passes the driver: three fields, no protocol.
    full, h = handles
    three_fields = TransactionHandle(h.transactional_id, h.producer_id, h.producer_epoch)
    for handle in (full, three_fields):
        end_transaction(client, handle, commit=True)
        end_transaction(client, handle, commit=True)  # a driver unsure whether its commit went through
    expected = sorted(f"h{n}-{i}".encode() for n in range(2) for i in range(20))
    _wait_stable(client, topic)
    assert sorted(_values(client, topic, "read_committed")) == expected
    # The coordinator bumped each id's epoch at the commit: the task's epoch is stale for anything new.
    # Aborting a committed transaction through its handle is refused (INVALID_TXN_STATE: the coordinator
    # recognises the epoch one below its own as a retry of the commit), and nothing changes.
    resumed = TransactionManager.resume(full)
    with pytest.raises(InvalidTxnStateError):
        with client.cluster.lock:
            resumed.end(client.cluster, False, client.deadline(10_000))
    assert sorted(_values(client, topic, "read_committed")) == expected


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
    _wait_stable(client, topic)
    assert _values(client, topic, "read_committed") == []


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
        _wait_stable(capped, topic)
        assert sorted(_values(capped, topic, "read_committed")) == [b"v1-0", b"v1-1"]


@pytest.fixture(scope="module")
def legacy_kafka() -> Iterator[Any]:
    from kafkawire.testing import start_broker
    from kafkawire.testing.kafka import LEGACY_KAFKA_VERSION

    broker = start_broker("kafka", version=LEGACY_KAFKA_VERSION)
    yield broker
    broker.stop()


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
        _wait_stable(client, topic)
        assert sorted(_values(client, topic, "read_committed")) == [b"handed-over", b"kept"]
