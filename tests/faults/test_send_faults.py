"""Per-record ``Producer.send()`` through a SIGKILL of Apache Kafka (issue 32): the application sends one record
at a time with an ``on_delivery`` callback and never calls ``flush()`` until the end, so the background sender
and ``send()``'s own writes of lingered buffers carry every record through the crash and restart.

Counted with tests/faults/ledger.py: sent, acknowledged (callbacks with no error), read back, lost (must be 0),
duplicated (must be 0: the outage is shorter than the delivery timeout, so nothing is handed back and resent,
and retries are idempotent), and per partition the records must be in the order they were sent.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid

import pytest

from kafkawire.client import Client, Producer, RecordMetadata
from kafkawire.client.producer.partitioner import partition_for_key
from kafkawire.testing import start_broker

from .ledger import Ledger

pytestmark = [pytest.mark.broker, pytest.mark.slow]

DELIVERY_S = 60.0  # outlasts the outage and the restarted broker's log recovery
PARTITIONS = 3
KEYS = [b"%d" % i for i in range(7)]


class _PerRecordWriter:
    """Sends fresh ledger values one by one (keys cycling over KEYS) until stopped, counting callbacks."""

    def __init__(self, producer: Producer, topic: str, ledger: Ledger) -> None:
        self.producer, self.topic, self.ledger = producer, topic, ledger
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.failed: list[tuple[bytes, BaseException]] = []
        self.callbacks = 0
        self.lock = threading.Lock()
        #: Per partition, the send order of the values (what the log must show).
        self.sent_order: dict[int, list[bytes]] = {}
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _on_delivery(self, value: bytes, err: BaseException | None, md: RecordMetadata | None) -> None:
        with self.lock:
            self.callbacks += 1
            if err is None:
                assert md is not None and md.offset >= 0
                self.ledger.acknowledged([value])
            else:
                self.failed.append((value, err))

    def _run(self) -> None:
        try:
            n = 0
            while not self.stop.is_set():
                for v in self.ledger.make(50):
                    key = KEYS[n % len(KEYS)]
                    n += 1
                    self.sent_order.setdefault(partition_for_key(key, PARTITIONS), []).append(v)
                    self.producer.send(self.topic, v, key=key,
                                       on_delivery=lambda err, md, v=v: self._on_delivery(v, err, md))
                time.sleep(0.002)  # ~20k records/s at most: the test is about the crash, not throughput
        except BaseException as e:  # reported by the test
            self.error = e


def _read_back(bootstrap: str, topic: str, ledger: Ledger) -> dict[int, list[bytes]]:
    """Every partition up to its high watermark, into the ledger; returns the values per partition in log order."""
    logs: dict[int, list[bytes]] = {}
    with Client(bootstrap) as c:
        offsets = {(topic, p): 0 for p in c.partitions_for(topic)}
        while offsets:
            results = c.fetch_many(offsets, max_bytes=4 << 20, timeout_ms=30_000)
            for tp, r in results.items():
                values = [bytes(v) for v in r.records.value.to_pylist() if v is not None]
                ledger.read(values)
                logs.setdefault(tp[1], []).extend(values)
                offsets[tp] = max(r.records.next_offset, offsets[tp])
                if offsets[tp] >= r.high_watermark:
                    del offsets[tp]
    return logs


def test_kafka_killed_during_per_record_sends():
    broker = start_broker("kafka")
    topic = f"faults-send-{uuid.uuid4().hex[:10]}"
    ledger = Ledger(topic)
    try:
        with Client(broker.bootstrap, retry_timeout_ms=DELIVERY_S * 1000) as admin:
            admin.create_topics({topic: PARTITIONS}, timeout_ms=30_000)
        producer = Producer(broker.bootstrap, linger_ms=5, retry_timeout_ms=DELIVERY_S * 1000,
                            delivery_timeout_ms=DELIVERY_S * 1000)
        writer = _PerRecordWriter(producer, topic, ledger)
        try:
            writer.thread.start()
            time.sleep(1.5)
            assert broker.pid is not None
            os.kill(broker.pid, signal.SIGKILL)  # a crash, not a controlled shutdown
            broker.kill_process()
            time.sleep(3)
            broker.start()
            time.sleep(2)
            writer.stop.set()
            writer.thread.join(DELIVERY_S * 2)
            assert not writer.thread.is_alive()
            if writer.error is not None:
                raise writer.error
            producer.flush()
        finally:
            producer.close()
        logs = _read_back(broker.bootstrap, topic, ledger)
    finally:
        broker.stop()
    report = ledger.report()
    print(f"per-record sends through a SIGKILL: {report}; callbacks {writer.callbacks}, failed {len(writer.failed)}")
    assert report.sent > 1000  # records were sent before, during and after the outage
    assert writer.callbacks == report.sent  # every record's callback ran, exactly once
    assert writer.failed == []  # nothing failed: the outage is shorter than the delivery timeout
    assert report.acknowledged == report.sent
    assert report.read_back == report.sent
    assert report.lost == 0, sorted(ledger.lost_values())[:10]
    assert report.duplicated == 0
    assert report.unexpected == 0
    # Per partition, the log holds the records in the order they were sent.
    assert {p: v for p, v in logs.items() if v} == {p: v for p, v in writer.sent_order.items() if v}
