"""SIGKILL and restart of a real Apache Kafka broker while kafkawire produces and while it consumes.

Each test runs on a private broker (``start_broker("kafka")``), never the session's, and kills it with
``restart(graceful=False)`` (SIGKILL, then a start on the same ports and log directories). Every value is
unique and counted by the fault ledger:

* produce (idempotent, acks=all, KIP-98): every acknowledged record is read back exactly once. A call
  that fails across the outage reports which of its records were acknowledged; none of them is re-sent,
  so a duplicate could only come from the client re-sending a batch the broker had already written
  under a new sequence number, which idempotence exists to prevent.
* consume (a group member with auto-commit): every record is processed, none twice. The member keeps its
  positions across the outage and commits before any rejoin, so a coordinator restart alone must not
  replay records.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from faults.ledger import Ledger

from kafkawire.client import Client, Consumer, KafkaTimeoutError, ProduceFailedError
from kafkawire.testing import start_broker

pytestmark = [pytest.mark.broker, pytest.mark.slow]

PARTITIONS = 3


@pytest.fixture(scope="module")
def broker() -> Iterator[Any]:
    b = start_broker("kafka")
    try:
        yield b
    finally:
        b.stop()


def _topic(client: Client, prefix: str) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    client.create_topics({name: PARTITIONS})
    return name


def _read_back(bootstrap: str, topic: str, ledger: Ledger, order: dict[int, list[bytes]] | None = None) -> None:
    """Read every partition from offset 0 to its end with a fresh client, into the ledger (and into
    ``order``, each partition's values in offset order)."""
    with Client(bootstrap) as client:
        for p, listed in sorted(client.list_offsets(topic).items()):
            offset = 0
            deadline = time.monotonic() + 120
            while offset < listed.offset:
                assert time.monotonic() < deadline, f"{topic}/{p}: stuck at {offset} of {listed.offset}"
                cols = client.fetch(topic, p, offset, max_wait_ms=100)
                ledger.read(cols.value)
                if order is not None:
                    order.setdefault(p, []).extend(cols.value.to_pylist())
                offset = max(offset, int(cols.next_offset))


def _wait_for(cond: Any, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.mark.parametrize("max_batch_bytes", [1_000_000, 1_000], ids=["batch-per-call", "pipelined"])
def test_sigkill_during_idempotent_produce_loses_and_duplicates_nothing(broker: Any, max_batch_bytes: int) -> None:
    # "pipelined": a call's 500 records make ~20 batches of its partition, sent 5 requests in flight at a
    # time (max.in.flight.requests.per.connection 5), so the kill catches requests in flight behind others.
    ledger = Ledger(f"produce-kill-{max_batch_bytes}")
    stop = threading.Event()
    failed_calls: list[BaseException] = []
    acked = [0]
    longest = [0.0]  # the longest produce call: one that spanned the outage takes seconds

    with Client(broker.bootstrap, enable_idempotence=True) as setup:
        topic = _topic(setup, "kill-produce")

    def produce() -> None:
        with Client(broker.bootstrap, enable_idempotence=True, retry_timeout_ms=120_000,
                    max_batch_bytes=max_batch_bytes) as client:
            while not stop.is_set():
                values = ledger.make(500)
                started = time.monotonic()
                try:
                    res = client.produce(topic, values, acks=-1)
                except ProduceFailedError as e:
                    failed_calls.append(e)
                    res = e.result
                longest[0] = max(longest[0], time.monotonic() - started)
                ok = [v for v, a in zip(values, res.acknowledged) if a]
                ledger.acknowledged(ok)
                acked[0] += len(ok)

    worker = threading.Thread(target=produce, daemon=True)
    worker.start()
    try:
        _wait_for(lambda: acked[0] >= 30_000, "30,000 acknowledged records before the kill", 120)
        before = acked[0]
        broker.restart(graceful=False)
        _wait_for(lambda: acked[0] >= before + 30_000, "30,000 more acknowledged after the restart", 180)
    finally:
        stop.set()
        worker.join(180)
    assert not worker.is_alive()

    order: dict[int, list[bytes]] = {}
    _read_back(broker.bootstrap, topic, ledger, order)
    report = ledger.report()
    print(
        f"SIGKILL during produce ({max_batch_bytes} B batches): {report}; calls that failed: {len(failed_calls)} "
        f"{failed_calls[:1]}; longest call {longest[0]:.1f} s"
    )
    # Per-partition order intact: one thread writes, so each partition holds its values in the order made.
    for p, values in order.items():
        counters = [int(v.rsplit(b"-", 1)[1]) for v in values]
        assert all(a < b for a, b in zip(counters, counters[1:])), f"partition {p} out of order"
    assert report.acknowledged >= 60_000
    assert report.lost == 0, sorted(ledger.lost_values())[:10]
    assert report.duplicated == 0
    assert report.unexpected == 0


def test_sigkill_during_group_consume_loses_and_duplicates_nothing(broker: Any) -> None:
    ledger = Ledger("consume-kill")
    with Client(broker.bootstrap) as client:
        topic = _topic(client, "kill-consume")

        def produce(n: int) -> None:
            for p in range(PARTITIONS):
                for _ in range(n // 1000):
                    values = ledger.make(1000)
                    res = client.produce(topic, values, partition=p)
                    ledger.acknowledged(v for v, a in zip(values, res.acknowledged) if a)

        produce(40_000)

    stop = threading.Event()
    errors: list[BaseException] = []
    timeouts: list[BaseException] = []
    longest = [0.0]
    group = f"g-{topic}"

    def consume() -> None:
        consumer = Consumer(
            broker.bootstrap, group_id=group, auto_offset_reset="earliest", auto_commit_interval_ms=200,
            max_bytes=12 << 10, partition_max_bytes=4 << 10,  # small fetches: the kill lands mid-read
        )
        try:
            consumer.subscribe([topic])
            while not stop.is_set():
                started = time.monotonic()
                try:
                    polled = consumer.poll(200)
                except KafkaTimeoutError as e:  # the broker is down: poll() says so and carries on
                    timeouts.append(e)
                    continue
                finally:
                    longest[0] = max(longest[0], time.monotonic() - started)
                for cols in polled.values():
                    ledger.read(cols.value)
                time.sleep(0.005)  # "processing": keeps the read going for seconds, so the kill lands inside it
        except BaseException as e:  # reported by the main thread
            errors.append(e)
        finally:
            try:
                consumer.close()
            except Exception as e:
                errors.append(e)

    worker = threading.Thread(target=consume, daemon=True)
    worker.start()
    try:
        _wait_for(lambda: ledger.report().read_back >= 20_000 or errors, "20,000 records read before the kill", 120)
        at_kill = ledger.report().read_back
        broker.restart(graceful=False)
        with Client(broker.bootstrap) as client:
            for p in range(PARTITIONS):
                values = ledger.make(2000)
                res = client.produce(topic, values, partition=p)
                ledger.acknowledged(v for v, a in zip(values, res.acknowledged) if a)
        total = ledger.report().acknowledged
        _wait_for(lambda: ledger.report().read_back >= total or errors, f"all {total} records read", 180)
    finally:
        stop.set()
        worker.join(120)
    assert not errors, errors
    report = ledger.report()
    print(
        f"SIGKILL during consume: {report}; read before the kill: {at_kill}; "
        f"polls that timed out during the outage: {len(timeouts)}; longest poll(200) {longest[0]:.2f} s"
    )
    assert at_kill < 3 * 40_000  # the kill did land in the middle of the read
    assert report.acknowledged == 3 * 42_000
    assert report.lost == 0
    assert report.duplicated == 0
    assert report.unexpected == 0
