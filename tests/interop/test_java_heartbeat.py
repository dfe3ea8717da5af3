"""A Java member in the scenario of ``tests/client/test_heartbeat_thread.py`` (KIP-62; issue 22): beside a
kafkawire member, on Apache Kafka 4.4, classic and consumer (KIP-848) protocols.

The Java member (``java/StallingMember.java``, Kafka's own client) stalls between a poll and its commit:
15 s twice with a 6 s session (its heartbeat thread keeps it in the group: the kafkawire member's assignment
and generation never change), then, with ``max.poll.interval.ms=8000``, 20 s (it leaves the group while it
stalls, the kafkawire member takes its partitions, and its next poll rejoins; on the classic protocol its
commit after the stall is refused as kafkawire's is, while Java's KIP-848 consumer drops its assignment on
leaving and so has nothing to commit). The two clients behave alike in the same group, and nothing
acknowledged is lost (ledger).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from client.test_heartbeat_thread import BROKER_CONFIG, PARTITIONS, SESSION_MS, _Member, _Producer, _until
from faults.ledger import Ledger

from kafkawire.client import Client, Consumer
from kafkawire.testing import Broker, start_broker
from kafkawire.testing.java import java_command

pytestmark = pytest.mark.broker

MEMBER = Path(__file__).parent / "java" / "StallingMember.java"



@pytest.fixture(scope="module")
def kafka_hb() -> Iterator[Broker]:
    """Kafka 4.4 with 6 s consumer-protocol sessions, as in tests/client/test_heartbeat_thread.py."""
    broker = start_broker("kafka", config=BROKER_CONFIG)
    yield broker
    broker.stop()


class _JavaMember:
    """StallingMember in a JVM: its polls (generation, assignment), stalls, refused commits, records."""

    def __init__(self, bootstrap: str, topic: str, group: str, protocol: str, ledger: Ledger, max_poll_ms: int):
        cmd = java_command(MEMBER, bootstrap, topic, group, protocol, str(SESSION_MS), str(max_poll_ms))
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.ledger = ledger
        self.history: list[tuple[float, int, tuple[int, ...]]] = []
        self.stalled: list[float] = []  # time.monotonic() each stall ended
        self.commit_errors: list[str] = []
        #: Records of the batches processed across a stall (between a "stalled" event and the next poll).
        self.after_stall: set[bytes] = set()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        stalled = False
        for line in self.proc.stdout:
            if not line.startswith("{"):
                continue
            ev = json.loads(line)
            kind = ev["event"]
            if kind == "poll":
                stalled = False
                self.history.append((time.monotonic(), ev["generation"], tuple(ev["assignment"])))
            elif kind == "record":
                self.ledger.read([bytes.fromhex(ev["v"])])
                if stalled:
                    self.after_stall.add(bytes.fromhex(ev["v"]))
            elif kind == "stalled":
                stalled = True
                self.stalled.append(time.monotonic())
            elif kind == "commit_failed":
                self.commit_errors.append(ev["error"])

    def stall(self, seconds: float) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"stall {int(seconds * 1000)}\n")
        self.proc.stdin.flush()

    def state(self) -> tuple[int, tuple[int, ...]]:
        return self.history[-1][1:] if self.history else (-1, ())

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.write("exit\n")
            self.proc.stdin.flush()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def _pair(kafka: Broker, protocol: str, ledger: Ledger, max_poll_ms: int):
    topic, group = f"java-hb-{protocol}-{time.monotonic_ns()}", f"g-java-hb-{time.monotonic_ns()}"
    with Client(kafka.bootstrap) as c:
        c.create_topics({topic: PARTITIONS})
    producer = _Producer(kafka.bootstrap, topic, ledger)
    producer.start()
    extra = {"session_timeout_ms": SESSION_MS, "heartbeat_interval_ms": 2000} if protocol == "classic" else {}
    cons = Consumer(kafka.bootstrap, group_id=group, group_protocol=protocol, enable_auto_commit=False,
                    auto_offset_reset="earliest", partition_max_bytes=4096, **extra)  # fmt: skip
    cons.subscribe([topic])
    a = _Member("A", cons, ledger)
    a.start()
    java = _JavaMember(kafka.bootstrap, topic, group, protocol, ledger, max_poll_ms)

    def balanced() -> bool:
        (ga, sa), (gb, sb) = a.state(), java.state()
        return ga >= 0 and gb >= 0 and len(sa) == len(sb) == PARTITIONS // 2 and not {p for _, p in sa} & set(sb)

    _until(balanced, 120, "the kafkawire and the Java member to hold two partitions each")
    return a, java, producer


def _finish(
    a: _Member, java: _JavaMember, producer: _Producer, ledger: Ledger, may_repeat: frozenset[bytes] = frozenset()
) -> None:
    """Stop everything, read what is left; assert nothing lost and nothing read twice but ``may_repeat``."""
    producer.stop.set()
    producer.join(30)
    try:
        _until(lambda: not ledger.lost_values() or a.error is not None, 120, "every record to be read")
    finally:
        java.close()
        a.stop.set()
        a.join(30)
    assert a.error is None, a.error
    report = ledger.report()
    print(report)
    assert report.acknowledged > 0 and report.lost == 0 and report.unexpected == 0
    # Both members count a batch as read only once its commit succeeded: a record read twice was committed
    # and delivered again, unless it is in ``may_repeat``.
    again = ledger.duplicated_values()
    assert again <= may_repeat, f"{len(again - may_repeat)} committed records read again: {sorted(again)[:5]}"
    assert report.duplicated <= len(may_repeat)


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_java_member_processing_longer_than_the_session_timeout_stays_beside_kafkawire(kafka_hb, protocol):
    ledger = Ledger("java-stay")
    a, java, producer = _pair(kafka_hb, protocol, ledger, max_poll_ms=300_000)
    try:
        before_a, before_java = a.state(), java.state()
        since = time.monotonic()
        java.stall(15)
        java.stall(15)
        _until(lambda: len(java.stalled) == 2, 120, "the Java member's two 15 s stalls")
        _until(lambda: java.history[-1][0] > java.stalled[-1], 30, "the Java member to poll after its stalls")
        seen_a = {(g, s) for t, g, s in a.history if t >= since}
        assert seen_a == {before_a}, f"the kafkawire member went through {sorted(seen_a)}"
        assert java.state() == before_java and java.commit_errors == []
    finally:
        _finish(a, java, producer, ledger)


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_java_member_past_max_poll_interval_leaves_like_kafkawire(kafka_hb, protocol):
    ledger = Ledger("java-leave")
    a, java, producer = _pair(kafka_hb, protocol, ledger, max_poll_ms=8_000)
    try:
        start = time.monotonic()
        java.stall(20)
        _until(lambda: java.stalled, 120, "the Java member's 20 s stall")
        took_all = [t for t, g, s in a.history if start < t < java.stalled[0] and len(s) == PARTITIONS]
        assert took_all, "the kafkawire member never held all partitions while the Java member stalled"
        if protocol == "classic":
            # Java's classic consumer refuses the commit (CommitFailedException), as kafkawire does. Its
            # KIP-848 consumer drops the assignment when it leaves, so its commitSync() has nothing to commit.
            _until(lambda: java.commit_errors, 30, "the Java member's refused commit")
        _until(
            lambda: len(java.state()[1]) == PARTITIONS // 2 and len(a.state()[1]) == PARTITIONS // 2,
            120,
            "the Java member to rejoin",
        )
    finally:
        # Java's KIP-848 consumer commits nothing for the batch it processed across its leave (it dropped the
        # assignment) and reports it read: those records, and only those, may come again to the other member.
        _finish(a, java, producer, ledger, frozenset(java.after_stall) if protocol == "consumer" else frozenset())
