"""A Java and a kafkawire member in one classic group with ``cooperative-sticky`` (KIP-429), on Apache Kafka.

Each member reads the other's subscription bytes (ConsumerProtocolSubscription v3: owned partitions,
generation) and assignments, whichever is the leader; rebalancing is incremental: when the second member
joins, the first revokes only the partitions that move (half of them), in a first rebalance, and the
second gets them in the next one. The number of partitions revoked is compared with two Java members in
the same scenario, and the records produced meanwhile are all read (the fault ledger).
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from faults.ledger import Ledger

from kafkawire.client import Client, Consumer
from kafkawire.client.errors import KafkaTimeoutError
from kafkawire.testing.java import java_command

pytestmark = pytest.mark.broker

PEER = Path(__file__).parent / "java" / "KafkaPeer.java"
PARTITIONS = 6


class JavaMember:
    """KafkaPeer in ``group`` mode with an assignor; its events (assigned/revoked) and records."""

    def __init__(
        self, bootstrap: str, topic: str, group: str, ledger: Ledger, assignor: str, session_ms: int = 30_000
    ) -> None:
        cmd = java_command(
            PEER,
            "group",
            "--bootstrap",
            bootstrap,
            "--topic",
            topic,
            "--group",
            group,
            "--assignor",
            assignor,
            # Generous: on a loaded machine a 10 s session can expire between two polls of the JVM.
            "--session-timeout-ms",
            str(session_ms),
        )
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.ledger = ledger
        self.assignment: list[int] = []
        self.revoked = 0  # partitions revoked, over all rebalances
        self.events: list[dict[str, Any]] = []
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if not line.startswith("{"):
                continue
            ev = json.loads(line)
            kind = ev.get("event")
            if kind == "record":
                self.ledger.read([bytes.fromhex(ev["v"])] if ev.get("v") else [])
            elif kind == "assigned":
                self.assignment = sorted(p for _, p in _tps(ev["partitions"]))
                self.events.append(ev)
            elif kind == "revoked":
                parts = _tps(ev["partitions"])
                self.revoked += len(parts)
                gone = {p for _, p in parts}
                self.assignment = [p for p in self.assignment if p not in gone]
                self.events.append(ev)

    def leave(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.write("exit\n")
            self.proc.stdin.close()
            self.proc.wait(60)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def _tps(js: Any) -> list[tuple[str, int]]:
    """KafkaPeer's partitions JSON: a list of [topic, partition] pairs or of {"topic", "partition"}."""
    out = []
    for x in js:
        if isinstance(x, dict):
            out.append((x.get("topic", x.get("t")), int(x.get("partition", x.get("p")))))
        elif isinstance(x, list):
            out.append((x[0], int(x[1])))
        else:
            out.append(("", int(x)))
    return out


class KwRecorder:
    def __init__(self) -> None:
        self.revoked = 0
        self.events: list[tuple[str, list[tuple[str, int]]]] = []

    def on_partitions_revoked(self, partitions: list[tuple[str, int]]) -> None:
        self.revoked += len(partitions)
        self.events.append(("revoked", partitions))

    def on_partitions_assigned(self, partitions: list[tuple[str, int]]) -> None:
        self.events.append(("assigned", partitions))


def _wait(cond: Any, what: str, timeout: float, tick: Any, state: Any) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, f"timed out waiting for {what}; {state()}"
        tick()


def _produce(bootstrap: str, topic: str, ledger: Ledger, n: int) -> None:
    with Client(bootstrap) as c:
        for p in range(PARTITIONS):
            values = ledger.make(n)
            c.produce(topic, values, partition=p)
            ledger.acknowledged(values)


@pytest.fixture
def bootstrap(kafka_broker: Any) -> str:
    return kafka_broker.bootstrap


def _java_pair_moves(bootstrap: str, assignor: str) -> int:
    """The reference: two Java members with ``assignor``; partitions the first revokes when the second joins."""
    topic = f"coop-java-{time.time_ns()}"
    ledger = Ledger(topic)
    with Client(bootstrap) as c:
        c.create_topics({topic: PARTITIONS})
    first = JavaMember(bootstrap, topic, f"g-{topic}", ledger, assignor)
    second = None
    try:
        _wait(
            lambda: len(first.assignment) == PARTITIONS, "java alone", 60, lambda: time.sleep(0.1), lambda: first.events
        )
        second = JavaMember(bootstrap, topic, f"g-{topic}", ledger, assignor)
        _wait(
            lambda: len(first.assignment) == 3 and len(second.assignment) == 3,
            "a 3 + 3 split",
            60,
            lambda: time.sleep(0.1),
            lambda: (first.events, second.events),
        )
        return first.revoked
    finally:
        for m in (first, second):
            if m is not None:
                m.leave()
                m.kill()


@pytest.mark.parametrize("assignor", ["cooperative-sticky", "sticky"])
@pytest.mark.parametrize("leader", ["java", "kafkawire"])
def test_sticky_java_and_kafkawire_member_agree(bootstrap: str, leader: str, assignor: str) -> None:
    """``leader`` joins first (and leads); the other joins and the two end with 3 partitions each.

    cooperative-sticky: the first member revokes only the 3 that move (KIP-429), as between two Java
    members. sticky (eager): it revokes all 6 and gets 3 of them back, as between two Java members."""
    topic = f"coop-{leader}-{time.time_ns()}"
    group = f"g-{topic}"
    ledger = Ledger(topic)
    with Client(bootstrap) as c:
        c.create_topics({topic: PARTITIONS})
    events = KwRecorder()
    kw = Consumer(
        bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        partition_assignment_strategy=(assignor,),
        session_timeout_ms=30_000,
        heartbeat_interval_ms=1_000,
        auto_commit_interval_ms=500,
        listener=events,
    )
    java: JavaMember | None = None

    def kw_tick() -> None:
        try:
            for cols in kw.poll(200).values():
                ledger.read(cols.value)
        except KafkaTimeoutError:
            pass

    def kw_parts() -> list[int]:
        return sorted(p for _, p in kw.assignment())

    def state() -> str:
        j = (java.assignment, java.events) if java else None
        return f"{ledger.report()}; java {j}; kw {kw_parts()} {events.events}"

    try:
        if leader == "java":
            java = JavaMember(bootstrap, topic, group, ledger, assignor)
            _wait(lambda: len(java.assignment) == PARTITIONS, "java alone", 60, lambda: time.sleep(0.1), state)
            _produce(bootstrap, topic, ledger, 100)
            kw.subscribe([topic])
        else:
            kw.subscribe([topic])
            _wait(lambda: len(kw_parts()) == PARTITIONS, "kafkawire alone", 60, kw_tick, state)
            _produce(bootstrap, topic, ledger, 100)
            java = JavaMember(bootstrap, topic, group, ledger, assignor)
        _wait(lambda: len(java.assignment) == 3 and len(kw_parts()) == 3, "a 3 + 3 split", 90, kw_tick, state)
        assert sorted(java.assignment + kw_parts()) == list(range(PARTITIONS))
        _produce(bootstrap, topic, ledger, 100)
        _wait(lambda: not ledger.lost_values(), "every record", 60, kw_tick, state)
        first_revoked = java.revoked if leader == "java" else events.revoked
        assert kw.metrics()["partitions_revoked"] == events.revoked
        if assignor == "cooperative-sticky":
            # Incremental: the first member gave up only the 3 partitions that moved, never all 6 at once.
            assert first_revoked == 3, state()
            assert all(len(ps) < PARTITIONS for e, ps in events.events if e == "revoked")
    finally:
        kw.close()  # commits what it read (auto-commit on close) and leaves
        if java is not None:
            java.leave()
            java.kill()
    report = ledger.report()
    java_reference = _java_pair_moves(bootstrap, assignor)
    print(f"{assignor}, {leader} first: revoked {first_revoked}; two Java members: {java_reference}; {report}")
    assert first_revoked <= java_reference
    assert report.lost == 0 and report.unexpected == 0
    # Both commit what they processed before giving a partition up (Java in its listener, kafkawire's
    # auto-commit right after the listener), so nothing is read twice.
    assert report.duplicated == 0, report


def test_cooperative_sticky_java_member_sigkilled_kafkawire_takes_over(bootstrap: str) -> None:
    """The Java member is SIGKILLed mid-stream: after its session (6 s) the kafkawire member owns all 6
    partitions (getting only the 3 it lacked: nothing of its own is revoked) and every record is read;
    duplicates can only be what Java read after its last commit."""
    topic = f"coop-kill-{time.time_ns()}"
    group = f"g-{topic}"
    ledger = Ledger(topic)
    with Client(bootstrap) as c:
        c.create_topics({topic: PARTITIONS})
    events = KwRecorder()
    kw = Consumer(
        bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        partition_assignment_strategy=("cooperative-sticky",),
        session_timeout_ms=30_000,
        heartbeat_interval_ms=1_000,
        auto_commit_interval_ms=500,
        listener=events,
    )
    java = JavaMember(bootstrap, topic, group, ledger, "cooperative-sticky", session_ms=6_000)

    def kw_tick() -> None:
        try:
            for cols in kw.poll(500).values():
                ledger.read(cols.value)
        except KafkaTimeoutError:
            pass

    def state() -> str:
        return f"{ledger.report()}; java {java.assignment}; kw {kw.assignment()} {events.events}"

    try:
        kw.subscribe([topic])
        _wait(lambda: len(java.assignment) == 3 and len(kw.assignment()) == 3, "a 3 + 3 split", 90, kw_tick, state)
        revoked_before = kw.metrics()["partitions_revoked"]  # (whoever joined first gave up 3 while forming)
        _produce(bootstrap, topic, ledger, 200)
        _wait(lambda: ledger.report().read_back >= 600, "some records read", 60, kw_tick, state)
        java.kill()  # SIGKILL: no commit, no LeaveGroup
        _produce(bootstrap, topic, ledger, 200)
        _wait(lambda: len(kw.assignment()) == PARTITIONS, "kafkawire to own all 6", 60, kw_tick, state)
        _wait(lambda: not ledger.lost_values(), "every record", 60, kw_tick, state)
        assert kw.metrics()["partitions_revoked"] == revoked_before  # it only gained
    finally:
        java.kill()
        kw.close()
    report = ledger.report()
    print(f"Java SIGKILLed: {report}")
    assert report.lost == 0 and report.unexpected == 0
    assert report.duplicated <= 3 * 200  # at most what Java had read of its 3 partitions
