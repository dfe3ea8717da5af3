"""Producer.send() returns a DeliveryFuture per record and calls on_delivery(err, metadata): checked
against Apache Kafka, including answers lost on the way back (a proxy) and a write that finally fails."""

from __future__ import annotations

import threading
import time

import pytest
from client_fakes import KafkaProxy

from kafkawire.client import (
    Client,
    DeliveryFuture,
    KafkaTimeoutError,
    ProduceFailedError,
    Producer,
    RecordDroppedError,
    RecordMetadata,
)
from kafkawire.testing import free_port


def _fetch_all(client: Client, topic: str, partitions: int) -> dict[int, list[tuple[int, bytes]]]:
    """Every record of ``topic`` as ``{partition: [(offset, value)]}``."""
    out: dict[int, list[tuple[int, bytes]]] = {}
    ends = client.list_offsets(topic)
    for p in range(partitions):
        pos, rows = 0, []
        while pos < ends[p].offset:
            [res] = client.fetch_many({(topic, p): pos}, max_wait_ms=10).values()
            cols = res.records
            rows += list(zip(cols.offset.tolist(), cols.value.to_pylist()))
            pos = res.next_offset
        out[p] = rows
    return out


@pytest.mark.broker
def test_every_future_resolves_to_the_offset_a_fetch_returns(kafka, topic_name):
    topic = topic_name("fut")
    with Client(kafka.bootstrap) as admin:
        admin.create_topics([topic], num_partitions=3)
    calls: list[tuple[BaseException | None, RecordMetadata | None]] = []
    seen_by_future: list[DeliveryFuture] = []
    with Producer(kafka.bootstrap, linger_ms=1e9, batch_records=250) as prod:
        futures = []
        for i in range(1010):
            f = prod.send(
                topic,
                b"v%d" % i,
                key=b"k%d" % (i % 17),
                partition=2 if i % 10 == 0 else None,
                timestamp_ms=1_700_000_000_000 + i,
                on_delivery=lambda err, md: calls.append((err, md)),
            )
            f.add_done_callback(seen_by_future.append)
            futures.append(f)
        # batch_records=250 wrote the first batches from send() already; the rest waits for flush().
        assert futures[0].done() and not futures[-1].done()
        prod.flush()
    assert all(f.done() for f in futures)
    assert len(calls) == 1010 and all(err is None for err, _ in calls)
    assert len(seen_by_future) == 1010
    metas = [f.result(0) for f in futures]
    assert all(f.exception() is None for f in futures)
    with Client(kafka.bootstrap) as c:
        log = _fetch_all(c, topic, 3)
    by_offset = {(p, off): v for p, rows in log.items() for off, v in rows}
    assert len(by_offset) == 1010
    for i, md in enumerate(metas):
        assert md.topic == topic and md.timestamp == 1_700_000_000_000 + i
        assert by_offset[(md.partition, md.offset)] == b"v%d" % i
        if i % 10 == 0:
            assert md.partition == 2


@pytest.mark.broker
def test_lost_answers_are_retried_and_a_final_failure_reaches_every_future_and_callback(kafka, topic_name):
    topic = topic_name("futfault")
    with Client(kafka.bootstrap) as admin:
        admin.create_topics([topic], num_partitions=2)
    host, port = kafka.bootstrap.split(":")
    dropping = {"left": 2}
    lock = threading.Lock()

    def drop(api_key: int) -> bool:
        # Swallow Produce answers (api key 0) while "left" allows: the broker applied the batch, the
        # client never hears so; idempotent retries must not duplicate it.
        with lock:
            if api_key == 0 and dropping["left"] > 0:
                dropping["left"] -= 1
                return True
        return False

    errors: list[BaseException] = []
    with KafkaProxy(host, int(port), drop) as proxy:
        with Producer(proxy.address, linger_ms=1e9, delivery_timeout_ms=20_000, retry_backoff_ms=50) as prod:
            first = [prod.send(topic, b"a%d" % i, key=b"%d" % i) for i in range(200)]
            prod.flush()
            metas = [f.result(0) for f in first]
            assert proxy.dropped.count(0) == 2

            # Now every Produce answer is lost until the delivery timeout: all records come back.
            dropping["left"] = 10**9
            prod.delivery_timeout_ms = 1500
            second = [
                prod.send(topic, b"b%d" % i, key=b"%d" % i, callback=lambda err, md: errors.append(err))
                for i in range(50)
            ]
            with pytest.raises(ProduceFailedError) as info:
                prod.flush()
            dropping["left"] = 0
    assert info.value.unacknowledged_count == 50
    assert all(f.done() and f.exception() is not None for f in second)
    with pytest.raises(type(second[0].exception())):
        second[0].result(0)
    assert len(errors) == 50 and all(e is not None for e in errors)
    with Client(kafka.bootstrap) as c:
        log = _fetch_all(c, topic, 2)
    by_value = {v: (p, off) for p, rows in log.items() for off, v in rows}
    a_values = [v for rows in log.values() for _, v in rows if v.startswith(b"a")]
    assert len(a_values) == 200  # no duplicates despite the lost answers
    for i, md in enumerate(metas):
        assert by_value[b"a%d" % i] == (md.partition, md.offset)


def test_abort_and_unreachable_brokers_resolve_futures_with_errors():
    p = Producer(f"127.0.0.1:{free_port()}", linger_ms=1e9, delivery_timeout_ms=500, retry_backoff_ms=50)
    got: list[tuple[BaseException | None, RecordMetadata | None]] = []
    f = p.send("t", b"x", on_delivery=lambda err, md: got.append((err, md)))
    with pytest.raises(KafkaTimeoutError):
        f.result(0.05)  # not known yet: nothing was written
    assert not f.done()
    with pytest.raises(ProduceFailedError):
        p.flush()
    assert f.done() and got and got[0][1] is None and got[0][0] is f.exception()
    p.close()



@pytest.mark.broker
def test_transactional_futures_resolve_on_commit_and_fail_on_abort(kafka, topic_name):
    topic = topic_name("futtxn")
    with Client(kafka.bootstrap) as admin:
        admin.create_topics([topic])
    with Producer(kafka.bootstrap, transactional_id=f"{topic}-tx", linger_ms=1e9) as prod:
        prod.init_transactions()
        prod.begin_transaction()
        dropped = prod.send(topic, b"never")
        prod.abort_transaction()
        assert isinstance(dropped.exception(0), RecordDroppedError)
        with prod.transaction():
            kept = prod.send(topic, b"kept")
            assert not kept.done()
        md = kept.result(0)
    # EndTxn returns once the coordinator decided; the partition's commit marker (which moves the last stable
    # offset) is written after that (KIP-98), so a read_committed read right after may still see nothing.
    committed: list = []
    deadline = time.monotonic() + 15
    with Client(kafka.bootstrap) as c:
        while not committed and time.monotonic() < deadline:
            [res] = c.fetch_many({(topic, 0): 0}, isolation="read_committed", max_wait_ms=100).values()
            committed = [(o, v) for o, v in zip(res.records.offset.tolist(), res.records.value.to_pylist())]
    assert committed == [(md.offset, b"kept")]
