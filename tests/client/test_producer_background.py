"""The producer's background sender (the Java client's ``Sender`` thread): ``send(...).result()`` resolves
without ``flush()`` once ``linger_ms`` has passed, against Apache Kafka; ordering and idempotence with
several sending threads, a callback waiting on a record still buffered, a broker that goes away while a
future is pending, transactions, and the thread's lifetime (close, garbage collection)."""

from __future__ import annotations

import gc
import socket
import threading
import time

import pytest
from client_fakes import KafkaProxy

from kafkawire.client import Client, ProduceFailedError, Producer, RecordDroppedError, RecordMetadata
from kafkawire.client.producer.transaction import TransactionError


def _log(client: Client, topic: str, partition: int, isolation: str = "read_uncommitted") -> list[tuple[int, bytes]]:
    """Every record of one partition as ``[(offset, value)]`` (up to the last stable offset when read_committed)."""
    rows: list[tuple[int, bytes]] = []
    pos = 0
    while True:
        [res] = client.fetch_many({(topic, partition): pos}, isolation=isolation, max_wait_ms=10).values()
        if not len(res.records.offset):
            return rows
        rows += list(zip(res.records.offset.tolist(), res.records.value.to_pylist()))
        pos = res.next_offset


def _take_down(proxy: KafkaProxy) -> None:
    """Stop accepting and cut every open connection (shutdown, not just close, wakes the threads blocked in
    accept() and recv() on them: on Linux a closed listening socket goes on accepting until then)."""
    for conn in [proxy.server.sock, *proxy.server.connections]:
        try:
            conn.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    proxy.close()


def _sender_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "kafkawire-producer-sender"]


@pytest.mark.broker
def test_result_resolves_without_flush(kafka, topic_name):
    topic = topic_name("bg")
    with Client(kafka.bootstrap) as admin:
        admin.create_topics([topic], num_partitions=2)
    with Producer(kafka.bootstrap, linger_ms=20) as prod:
        started = time.monotonic()
        md = prod.send(topic, value=b"first", partition=1).result(timeout=10)
        took = time.monotonic() - started
        assert isinstance(md, RecordMetadata) and md.partition == 1 and md.offset == 0
        assert took < 10
        later = [prod.send(topic, value=b"v%d" % i, key=b"k%d" % i) for i in range(100)]
        metas = [f.result(timeout=10) for f in later]  # the last send() is followed by no flush()
        assert prod.buffered == 0
    with Client(kafka.bootstrap) as c:
        by_pos = {(p, off): v for p in (0, 1) for off, v in _log(c, topic, p)}
    assert by_pos[(1, 0)] == b"first"
    assert [by_pos[(m.partition, m.offset)] for m in metas] == [b"v%d" % i for i in range(100)]


@pytest.mark.broker
def test_linger_zero_batches_what_is_sent_while_a_write_is_under_way(kafka, topic_name):
    # linger_ms=0 sends at once, but not one request per record: what send() is given while a write is
    # under way goes out together in the next one (as in the Java producer). It used to be one produce call
    # per record, each waiting for its answer (kafkawire tune: under 1,000 records/s).
    topic = topic_name("linger0")
    n = 5_000
    with Client(kafka.bootstrap) as admin:
        admin.create_topics([topic], num_partitions=1)
    with Producer(kafka.bootstrap, linger_ms=0) as prod:
        first = prod.send(topic, b"first").result(timeout=10)  # alone, at once, without a flush
        assert first.offset == 0
        futures = [prod.send(topic, b"v%d" % i) for i in range(n)]
        prod.flush()
        requests = prod.client.metrics()["apis"]["Produce"]["requests"]
    assert [f.result(timeout=0).offset for f in futures] == list(range(1, n + 1))
    assert requests < n // 10, requests


@pytest.mark.broker
def test_many_threads_keep_order_per_partition_without_duplicates(kafka, topic_name):
    topic = topic_name("bgthreads")
    with Client(kafka.bootstrap) as admin:
        admin.create_topics([topic], num_partitions=4)
    n, per = 4, 1500
    futures: dict[int, list] = {t: [] for t in range(n)}

    def run(t: int) -> None:
        for i in range(per):
            # One key per thread: all of a thread's records land in one partition, in send() order.
            futures[t].append(prod.send(topic, b"%d:%d" % (t, i), key=b"thread-%d" % t))

    # Small batches and linger: the sender and the senders' own full-batch writes interleave all along.
    with Producer(kafka.bootstrap, linger_ms=1, batch_records=97) as prod:
        threads = [threading.Thread(target=run, args=(t,)) for t in range(n)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        metas = {t: [f.result(timeout=60) for f in fs] for t, fs in futures.items()}
    with Client(kafka.bootstrap) as c:
        logs = {p: _log(c, topic, p) for p in range(4)}
    values = [v for rows in logs.values() for _, v in rows]
    assert len(values) == len(set(values)) == n * per  # nothing lost, nothing written twice
    for t in range(n):
        [part] = {m.partition for m in metas[t]}
        mine = [v for _, v in logs[part] if v.startswith(b"%d:" % t)]
        assert mine == [b"%d:%d" % (t, i) for i in range(per)]  # the order of send()
        offsets = [m.offset for m in metas[t]]
        assert offsets == sorted(offsets)
        assert dict(logs[part])[offsets[-1]] == b"%d:%d" % (t, per - 1)


@pytest.mark.broker
def test_a_callback_may_wait_on_a_record_still_buffered(kafka, topic_name):
    a, b = topic_name("cba"), topic_name("cbb")
    with Client(kafka.bootstrap) as admin:
        admin.create_topics([a, b])
    seen: dict[str, object] = {}
    done = threading.Event()
    with Producer(kafka.bootstrap, linger_ms=300) as prod:

        def on_a(err, md) -> None:
            # Runs in the sender thread, which is the one that writes lingered buffers: waiting on a record
            # it has just buffered must write it rather than wait for itself.
            seen["thread"] = threading.current_thread().name
            seen["b"] = prod.send(b, b"b").result(timeout=30)
            done.set()

        prod.send(a, b"a", on_delivery=on_a)
        assert done.wait(30)
    assert seen["thread"] == "kafkawire-producer-sender"
    md = seen["b"]
    assert isinstance(md, RecordMetadata) and md.topic == b and md.offset == 0


@pytest.mark.broker
def test_broker_gone_fails_the_pending_future_within_the_delivery_timeout(kafka, topic_name):
    topic = topic_name("bgdown")
    with Client(kafka.bootstrap) as admin:
        admin.create_topics([topic])
    host, port = kafka.bootstrap.split(":")
    errors: list[BaseException | None] = []
    proxy = KafkaProxy(host, int(port))
    prod = Producer(proxy.address, linger_ms=10, delivery_timeout_ms=2000, retry_backoff_ms=50)
    try:
        assert prod.send(topic, b"before").result(timeout=10).offset == 0
        _take_down(proxy)  # the only broker the producer knows is gone
        started = time.monotonic()
        fut = prod.send(topic, b"lost", key=b"k", on_delivery=lambda err, md: errors.append(err))
        with pytest.raises(Exception) as info:
            fut.result(timeout=30)
        took = time.monotonic() - started
        assert took <= (0.010 + 2.0) * 1.1 + 2.0  # linger + delivery timeout (+10%, + a loaded machine's slack)
        # The callback runs on the sender thread right after the future settles (as in Java, a future's
        # get() can return before the record's callback has run): wait for it, then compare.
        callback_deadline = time.monotonic() + 10
        while not errors and time.monotonic() < callback_deadline:
            time.sleep(0.01)
        assert errors == [info.value]
        # The background write's failure hands the record back at the next flush().
        with pytest.raises(ProduceFailedError) as failed:
            prod.flush()
        [unacked] = failed.value.unacknowledged.values()
        assert unacked.values == [b"lost"] and unacked.keys == [b"k"]
    finally:
        prod.close()
    with Client(kafka.bootstrap) as c:
        assert [v for _, v in _log(c, topic, 0)] == [b"before"]


@pytest.mark.broker
def test_transactional_records_are_written_in_the_background_only_inside_the_transaction(kafka, topic_name):
    topic = topic_name("bgtxn")
    with Client(kafka.bootstrap) as admin:
        admin.create_topics([topic])
    with Producer(kafka.bootstrap, transactional_id=f"{topic}-tx", linger_ms=10) as prod:
        prod.init_transactions()
        prod.begin_transaction()
        aborted = prod.send(topic, b"aborted").result(timeout=10)  # written before the abort, never visible
        prod.abort_transaction()
        with pytest.raises(TransactionError):
            prod.send(topic, b"outside")  # no transaction: refused, nothing buffered for the sender
        assert prod.buffered == 0
        with prod.transaction():
            kept = prod.send(topic, b"kept").result(timeout=10)  # acknowledged before the commit
        prod.begin_transaction()
        dropped = prod.send(topic, b"dropped")
        prod.abort_transaction()
        assert isinstance(dropped.exception(0), RecordDroppedError) or dropped.exception(0) is None
    assert kept.offset > aborted.offset
    with Client(kafka.bootstrap) as c:
        deadline = time.monotonic() + 30
        committed: list[bytes] = []
        while time.monotonic() < deadline:  # the commit marker is written after EndTxn is answered
            committed = [v for _, v in _log(c, topic, 0, "read_committed")]
            if b"kept" in committed:
                break
            time.sleep(0.05)
    assert committed == [b"kept"]


@pytest.mark.broker
def test_close_stops_the_sender_and_a_dropped_producer_does_not_leak_it(kafka, topic_name):
    topic = topic_name("bglife")
    with Client(kafka.bootstrap) as admin:
        admin.create_topics([topic])
    prod = Producer(kafka.bootstrap, linger_ms=5)
    prod.send(topic, b"x").result(timeout=10)
    thread = prod._sender.thread
    assert thread is not None and thread.is_alive()
    prod.linger_ms = 1e9  # from now on only close() writes
    held = [prod.send(topic, b"held-%d" % i) for i in range(50)]
    prod.close(timeout=30)
    assert not thread.is_alive()
    assert [f.result(0).offset for f in held] == list(range(1, 51))  # close() drained the buffer
    with pytest.raises(RuntimeError):
        prod.send(topic, b"after close")

    prod = Producer(kafka.bootstrap, linger_ms=5)
    prod.send(topic, b"y").result(timeout=10)
    thread = prod._sender.thread
    assert thread is not None and thread.is_alive()
    del prod
    gc.collect()
    thread.join(10)
    assert not thread.is_alive()
    assert thread not in _sender_threads()
