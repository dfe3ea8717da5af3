"""Through :class:`kafkawire.testing.proxy.FaultProxy` (issue 34): the network faults of Trogdor's
``DegradedNetworkFault`` and ``NetworkPartitionFault`` between kafkawire and Apache Kafka.

* An idempotent :class:`Producer` through added latency and jitter, a bandwidth cap and answers cut halfway
  by TCP resets: everything acknowledged, nothing lost, nothing written twice (read back directly).
* A committing group :class:`Consumer` through a blackhole (requests read, never answered) and then a
  half-open connection (nothing read, nothing answered): every ``poll`` and ``commit`` within its deadline,
  none raising, the silence counted; once healed, everything read, nothing lost or duplicated.

Counted and asserted: sent / acknowledged / read back / lost / duplicated, the longest call against its
deadline, polls that raised, polls without an answer.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from kafkawire.client import Client, Consumer, Producer
from kafkawire.testing import Broker
from kafkawire.testing.proxy import FaultProxy

from .ledger import Ledger

pytestmark = [pytest.mark.broker, pytest.mark.slow]

PARTITIONS = 3


def within(elapsed: float, timeout_ms: float) -> bool:
    return elapsed <= timeout_ms / 1000 * 1.1 + 0.3


@pytest.fixture
def proxy(kafka_broker: Broker) -> Iterator[FaultProxy]:
    with FaultProxy(kafka_broker.bootstrap) as p:
        yield p


def _topic(broker: Broker) -> str:
    name = f"proxy-{uuid.uuid4().hex[:8]}"
    with Client(broker.bootstrap) as c:
        c.create_topics({name: PARTITIONS})
    return name


def _read_back(broker: Broker, topic: str, ledger: Ledger) -> None:
    with Client(broker.bootstrap) as c:
        for p in range(PARTITIONS):
            offset = 0
            end = c.list_offsets(topic, [p])[p].offset
            while offset < end:
                cols = c.fetch(topic, p, offset)
                ledger.read(bytes(v) for v in cols.value)
                offset = cols.next_offset


def test_idempotent_producer_through_latency_bandwidth_cap_and_resets(kafka_broker, proxy):
    topic = _topic(kafka_broker)
    ledger = Ledger("proxy-produce")
    longest = 0.0
    with Producer(proxy.address, delivery_timeout_ms=30_000, request_timeout_ms=5_000) as producer:
        proxy.degrade(latency_ms=50, jitter_ms=20, bandwidth_bps=1 << 20)
        for round_ in range(10):
            if round_ in (2, 5, 8):
                proxy.reset_mid_response()  # the next answer (a produce's, most likely) is cut halfway
            values = ledger.make(200)
            futures = [producer.send(topic, v, partition=i % PARTITIONS) for i, v in enumerate(values)]
            start = time.monotonic()
            producer.flush()
            longest = max(longest, time.monotonic() - start)
            assert within(time.monotonic() - start, 30_000)
            for v, f in zip(values, futures):
                f.result(timeout=0)
                ledger.acknowledged([v])
    assert proxy._resets == 0, "not every reset was used"  # noqa: SLF001
    _read_back(kafka_broker, topic, ledger)
    report = ledger.report()
    print(f"degraded produce: {report}; longest flush {longest:.2f} s")
    assert report.sent == report.acknowledged == report.read_back == 2000
    assert report.lost == 0 and report.duplicated == 0 and report.unexpected == 0


def test_committing_consumer_through_a_blackhole_and_a_half_open_connection(kafka_broker, proxy):
    topic = _topic(kafka_broker)
    ledger = Ledger("proxy-consume")
    with Client(kafka_broker.bootstrap) as c:
        for i in range(30):
            values = ledger.make(50)
            c.produce(topic, values, partition=i % PARTITIONS)
            ledger.acknowledged(values)
    cons = Consumer(
        proxy.address,
        group_id=f"proxy-{uuid.uuid4().hex[:8]}",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=30_000,  # outlasts the faults: no rebalance, so nothing may come twice
        partition_max_bytes=1,  # one record batch per partition per poll: the reading spans the faults
    )
    cons.subscribe([topic])
    overruns: list[str] = []
    raised = batches = 0
    phases = iter([("blackhole", proxy.blackhole), ("half_open", proxy.half_open), ("healed", proxy.heal)])
    phase, phase_at = "forward", 0.0
    try:
        end = time.monotonic() + 120
        while time.monotonic() < end and (phase != "healed" or ledger.lost_values()):
            if batches >= 4 and time.monotonic() - phase_at > 4 and phase != "healed":
                phase, start_fault = next(phases)
                start_fault()
                phase_at = time.monotonic()
            start = time.monotonic()
            try:
                got = cons.poll(1000)
            except Exception as e:  # noqa: BLE001 - counted and asserted: poll must not raise
                raised += 1
                print(f"poll raised {type(e).__name__}: {e}")
                got = {}
            if not within(time.monotonic() - start, 1000):
                overruns.append(f"poll during {phase} took {time.monotonic() - start:.3f} s")
            values = [v for cols in got.values() for v in cols.value]
            if not values:
                continue
            ledger.read(values)
            batches += 1
            start = time.monotonic()
            try:
                cons.commit(timeout_ms=1000)
            except Exception as e:  # noqa: BLE001 - retried by the next commit (no rebalance)
                print(f"commit during {phase} failed: {type(e).__name__}: {e}")
            if not within(time.monotonic() - start, 1000):
                overruns.append(f"commit during {phase} took {time.monotonic() - start:.3f} s")
        unanswered, rebalances = cons.metrics()["polls_unanswered"], cons.metrics()["rebalances"]
    finally:
        proxy.heal()
        start = time.monotonic()
        cons.close(timeout_ms=5000)
        assert within(time.monotonic() - start, 5000)
    report = ledger.report()
    print(f"blackhole + half-open consume: {report}; polls_unanswered={unanswered} raised={raised}")
    assert phase == "healed", f"the faults did not all run (reached {phase})"
    assert report.lost == 0 and report.duplicated == 0 and report.unexpected == 0, report
    assert not overruns and raised == 0, (overruns, raised)
    assert unanswered >= 2 and rebalances == 1  # both faults were felt; the member kept its place
