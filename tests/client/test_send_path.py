"""``Producer.send()`` through the compiled accumulator, against Apache Kafka 4.4 (issue 32): keyed records
land where confluent-kafka's ``murmur2_random`` (the Java client's partitioner) puts them, keyless records
stick to one partition per batch (KIP-480), futures and ``on_delivery`` callbacks resolve in send order with
the offsets a fetch returns, and a full ``buffer_memory`` blocks ``send()`` for ``max_block_ms``, then raises
naming both settings, with memory bounded while the broker is down."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from confluent_kafka import Producer as ConfluentProducer

from kafkawire.client import Client, KafkaTimeoutError, ProduceFailedError, Producer, RecordMetadata
from kafkawire.client.producer.partitioner import partition_for_key
from kafkawire.testing import start_broker

pytestmark = pytest.mark.broker


def _fetch_all(client: Client, topic: str, partitions: int) -> dict[int, list[tuple[int, bytes | None, bytes]]]:
    """Every record of ``topic`` as ``{partition: [(offset, key, value)]}``."""
    out: dict[int, list[tuple[int, bytes | None, bytes]]] = {}
    ends = client.list_offsets(topic)
    for p in range(partitions):
        pos, rows = 0, []
        while pos < ends[p].offset:
            [res] = client.fetch_many({(topic, p): pos}, max_wait_ms=10).values()
            cols = res.records
            rows += list(zip(cols.offset.tolist(), cols.key.to_pylist(), cols.value.to_pylist()))
            pos = res.next_offset
        out[p] = rows
    return out


def test_keys_land_where_confluent_kafkas_murmur2_random_puts_them(kafka, topic_name):
    ours, theirs = topic_name("ours"), topic_name("theirs")
    # Keys of many lengths (murmur2's tail bytes), bytes and str, empty included.
    keys: list[bytes | str] = [os.urandom(n) for n in range(0, 40)] + [f"customer-{i}" for i in range(200)]
    with Client(kafka.bootstrap) as c:
        c.create_topics({ours: 6, theirs: 6})
    with Producer(kafka.bootstrap, linger_ms=2) as prod:
        futures = [prod.send(ours, b"v", key=k) for k in keys]
        prod.flush()
    ours_placed = [f.result(0).partition for f in futures]
    p = ConfluentProducer({"bootstrap.servers": kafka.bootstrap, "partitioner": "murmur2_random"})
    theirs_placed: dict[int, int] = {}
    for i, k in enumerate(keys):
        p.produce(theirs, value=b"%d" % i, key=k,
                  on_delivery=lambda err, msg: theirs_placed.__setitem__(int(msg.value()), msg.partition()))
    assert p.flush(30) == 0
    assert ours_placed == [theirs_placed[i] for i in range(len(keys))]
    encoded = [k.encode() if isinstance(k, str) else k for k in keys]
    assert ours_placed == [partition_for_key(k, 6) for k in encoded]
    with Client(kafka.bootstrap) as c:
        log = _fetch_all(c, ours, 6)
    assert sorted(k for rows in log.values() for _, k, _ in rows) == sorted(encoded)
    assert all(partition_for_key(k, 6) == part for part, rows in log.items() for _, k, _ in rows)


def test_keyless_records_stick_to_one_partition_per_batch_and_batches_move(kafka, topic_name):
    topic = topic_name("sticky")
    with Client(kafka.bootstrap) as c:
        c.create_topics({topic: 6})
    with Producer(kafka.bootstrap, linger_ms=1e9, batch_records=100) as prod:
        # One record to each partition first: the metadata the partitioner reads then has every leader (the
        # sticky partition rotates over the partitions with a leader).
        for p in range(6):
            prod.send(topic, b"first", partition=p)
        prod.flush()
        futures = [prod.send(topic, b"%d" % i) for i in range(1000)]
        prod.flush()
    parts = [f.result(0).partition for f in futures]
    batches = [parts[i : i + 100] for i in range(0, 1000, 100)]
    assert all(len(set(b)) == 1 for b in batches), batches  # one partition per batch (KIP-480)
    firsts = [b[0] for b in batches]
    assert all(a != b for a, b in zip(firsts, firsts[1:]))  # the next batch moves on
    assert len(set(firsts)) == 6  # and over time every partition gets batches


def test_futures_and_callbacks_resolve_in_send_order_with_the_offsets_a_fetch_returns(kafka, topic_name):
    topic = topic_name("order")
    with Client(kafka.bootstrap) as c:
        c.create_topics({topic: 3})
    n = 5000
    calls: list[tuple[int, BaseException | None, RecordMetadata | None]] = []
    done_order: list[int] = []
    futures = []
    with Producer(kafka.bootstrap, linger_ms=3, batch_records=700) as prod:
        for i in range(n):
            f = prod.send(topic, b"v%d" % i, key=b"k%d" % (i % 11), headers=[("i", b"%d" % i)] if i % 3 else None,
                          on_delivery=lambda err, md, i=i: calls.append((i, err, md)))
            if i % 5 == 0:
                f.add_done_callback(lambda fut, i=i: done_order.append(i))
            futures.append(f)
        prod.flush()
    assert [i for i, _, _ in calls] == list(range(n))  # confluent's order: the order records were sent
    assert all(err is None for _, err, _ in calls)
    assert done_order == list(range(0, n, 5))
    metas = [f.result(0) for f in futures]
    assert [md for _, _, md in calls] == metas
    assert all(f.done() and f.exception(0) is None for f in futures)
    # A callback added after completion runs at once, in the calling thread.
    late: list[object] = []
    futures[7].add_done_callback(late.append)
    assert late == [futures[7]]
    with Client(kafka.bootstrap) as c:
        log = _fetch_all(c, topic, 3)
    by_place = {(p, off): v for p, rows in log.items() for off, _, v in rows}
    assert len(by_place) == n
    last: dict[int, int] = {}
    for i, md in enumerate(metas):
        assert by_place[(md.partition, md.offset)] == b"v%d" % i
        assert md.offset > last.get(md.partition, -1)  # per-partition order is send order
        last[md.partition] = md.offset


def test_a_full_buffer_blocks_send_for_max_block_ms_then_raises_naming_the_setting():
    broker = start_broker("kafka")
    try:
        topic = "full-buffer"
        with Client(broker.bootstrap) as c:
            c.create_topics({topic: 2})
        limit = 200_000
        prod = Producer(broker.bootstrap, buffer_memory=limit, max_block_ms=1500, linger_ms=1e9,
                        batch_records=10**9, batch_bytes=1 << 30, delivery_timeout_ms=4000, retry_timeout_ms=4000)
        warm = prod.send(topic, b"warm")
        prod.flush()
        assert warm.result(0).offset == 0
        assert broker.pid is not None
        os.kill(broker.pid, signal.SIGKILL)  # a crash: nothing answers any more
        broker.kill_process()
        futures = []
        peak = 0
        value = b"x" * 976  # 1000 bytes with the record overhead
        t0 = time.monotonic()
        with pytest.raises(KafkaTimeoutError) as info:
            for _ in range(10 * limit // 1000):
                futures.append(prod.send(topic, value))
                peak = max(peak, prod._accumulator.buffered_bytes)
        blocked = time.monotonic() - t0
        message = str(info.value)
        assert "max_block_ms=1500" in message and "buffer_memory=200000" in message
        assert "buffer.memory" in message and "max.block.ms" in message
        # Bounded: what was taken fits the limit, and send() blocked about max_block_ms (a loaded 2-core
        # machine may add seconds; no upper bound beyond what it needs).
        assert peak <= limit and len(futures) == limit // 1000
        assert blocked >= 1.5
        # Nothing is dropped silently: every record taken fails with the delivery timeout's error once the
        # writes give up, and nothing is acknowledged.
        failures = 0
        for _ in range(5):
            try:
                prod.flush(timeout_ms=4000)
                break
            except ProduceFailedError as e:
                failures += e.unacknowledged_count
        assert all(f.done() for f in futures)
        errors = [f.exception(0) for f in futures]
        assert all(e is not None for e in errors)
        assert prod._accumulator.buffered_bytes == 0 and prod.buffered == 0
        prod.close(timeout=5)
        assert failures <= len(futures)
    finally:
        broker.stop()


def test_a_send_waiting_for_room_resumes_when_a_write_frees_it(kafka, topic_name):
    topic = topic_name("room")
    with Client(kafka.bootstrap) as c:
        c.create_topics({topic: 1})
    got: list[int] = []
    lock = threading.Lock()
    with Producer(kafka.bootstrap, buffer_memory=50_000, max_block_ms=60_000, linger_ms=1e9,
                  batch_records=10**9, batch_bytes=1 << 30) as prod:
        for i in range(2000):  # 40x the limit: send() waits for the sender's writes many times
            prod.send(topic, b"%06d" % i + b"y" * 994,
                      on_delivery=lambda err, md, i=i: (lock.acquire(), got.append(i), lock.release()))
            assert prod._accumulator.buffered_bytes <= 50_000
        prod.flush()
    assert got == list(range(2000))
    with Client(kafka.bootstrap) as c:
        log = _fetch_all(c, topic, 1)
    assert [v[:6] for _, _, v in log[0]] == [b"%06d" % i for i in range(2000)]
