"""Fault suite for the consumer (issue 12): what a consumer group reads when things break.

Every test writes uniquely valued records, counts them in a :class:`~faults.ledger.Ledger` (sent /
acknowledged / read back / lost / duplicated), prints the report and asserts that nothing acknowledged
was lost, that duplicates come only from the at-least-once window (records processed whose commit did not
succeed: counted and bounded, never a committed record again) and that every ``poll`` (and every
``commit`` given a timeout) returned or raised within its timeout + 10% (+ 0.2 s of scheduling noise on
these shared machines).

Apache Kafka is the reference broker; librdkafka's mock cluster, whose faults are injected through its C
API, is the fast stand-in. noida-db is not used: it loses records it acknowledged in the last moments
before a crash and never removes a dead group member, so its numbers would measure noida, not the client.
"""

from __future__ import annotations

import itertools
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kafkawire.client import Client, Consumer
from kafkawire.client.consumer.consumer import CommitFailedError
from kafkawire.client.errors import KafkaTimeoutError
from kafkawire.testing import Broker, MockCluster, start_broker

from .ledger import Ledger

pytestmark = [pytest.mark.broker, pytest.mark.slow]

POLL_MS = 1000
# librdkafka's mock closes the connection on JoinGroup v6 and underflows on SyncGroup v4.
MOCK_CAPS = {11: 5, 14: 3}
OFFSET_COMMIT = 8
ILLEGAL_GENERATION, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, REQUEST_TIMED_OUT = 22, 15, 16, 7


def within(elapsed: float, timeout_ms: float) -> bool:
    return elapsed <= timeout_ms / 1000 * 1.1 + 0.2


@pytest.fixture(scope="module")
def kafka() -> Iterator[Broker]:
    """Apache Kafka (KRaft, one node), allowing session timeouts down to 1 s so dead members expire fast."""
    broker = start_broker("kafka", config={"group.min.session.timeout.ms": 1000})
    yield broker
    broker.stop()


@pytest.fixture
def mock() -> Iterator[MockCluster]:
    """A fresh librdkafka mock cluster (one broker) per test: faults are injected into it."""
    broker = start_broker("mock")
    assert isinstance(broker, MockCluster)
    yield broker
    broker.stop()


_names = itertools.count()


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """Unique topic and group names (the Kafka broker is shared by the module)."""

    def make(prefix: str = "t") -> str:
        base = re.sub(r"[^a-zA-Z0-9._-]+", "-", request.node.name)[:80]
        return f"{prefix}-{base}-{os.getpid()}-{next(_names)}"

    return make


def _produce(bootstrap: str, topic: str, ledger: Ledger, batches: int, per_batch: int, partitions: int) -> None:
    """``batches`` produce calls (one record batch each), spread round-robin over the partitions."""
    with Client(bootstrap) as c:
        for i in range(batches):
            values = ledger.make(per_batch)
            c.produce(topic, values, partition=i % partitions)
            ledger.acknowledged(values)


def _topic(broker: Broker, name: str, partitions: int) -> None:
    if isinstance(broker, MockCluster):
        broker.create_topic(name, partitions)
    else:
        with Client(broker.bootstrap) as c:
            c.create_topics({name: partitions})


@dataclass
class CallTimes:
    """How long each poll / commit took, against the timeout it was given."""

    polls: int = 0
    raised: int = 0
    commit_failures: int = 0
    #: Records processed in batches whose commit failed: the at-least-once window, the only records that
    #: may be read again (every other batch's offsets were committed before the next poll).
    uncommitted: int = 0
    overruns: list[str] = field(default_factory=list)

    def check(self, what: str, elapsed: float, timeout_ms: float) -> None:
        if not within(elapsed, timeout_ms):
            self.overruns.append(f"{what}({timeout_ms:.0f} ms) took {elapsed:.3f} s")


def _consume(
    cons: Consumer,
    ledger: Ledger,
    *,
    until: Callable[[], bool],
    timeout: float,
    rollback_failed_commits: bool = False,
    before_commit: Callable[[int], None] | None = None,
) -> CallTimes:
    """Poll, process, commit until ``until()`` or ``timeout`` seconds.

    Processing a batch means counting it as read in the ledger. By default that happens before the
    commit (at-least-once: a failed commit means the batch may come again). With
    ``rollback_failed_commits`` a batch counts only once its commit succeeded (a transactional sink that
    rolls back when the commit fails): then nothing may be skipped after a :class:`CommitFailedError`.
    """
    times = CallTimes()
    batches = 0
    end = time.monotonic() + timeout
    while not until() and time.monotonic() < end:
        start = time.monotonic()
        try:
            got = cons.poll(POLL_MS)
        except KafkaTimeoutError as e:  # no broker answered during the whole poll: it says why
            times.raised += 1
            print(f"poll raised: {e}")
            got = {}
        times.polls += 1
        times.check("poll", time.monotonic() - start, POLL_MS)
        values = [v for cols in got.values() for v in cols.value]
        if not values:
            continue
        batches += 1
        if not rollback_failed_commits:
            ledger.read(values)
        if before_commit is not None:
            before_commit(batches)
        start = time.monotonic()
        try:
            cons.commit(timeout_ms=POLL_MS)
        except (CommitFailedError, KafkaTimeoutError) as e:
            times.commit_failures += 1
            if not rollback_failed_commits:
                times.uncommitted += len(values)
            print(f"commit failed: {e}")
            continue
        finally:
            times.check("commit", time.monotonic() - start, POLL_MS)
        if rollback_failed_commits:
            ledger.read(values)
    return times


def _report(ledger: Ledger, times: CallTimes) -> None:
    report = ledger.report()
    print(
        f"{report}; polls={times.polls} raised={times.raised} commit_failures={times.commit_failures} "
        f"uncommitted={times.uncommitted}"
    )
    assert report.lost == 0, f"lost {report.lost}: {sorted(ledger.lost_values())[:10]}"
    assert report.unexpected == 0
    # Committed offsets promise that nothing committed comes again: duplicates only from the batches whose
    # commit failed (none when a failed commit rolls its batch back, rollback_failed_commits).
    assert report.duplicated <= times.uncommitted, (report.duplicated, times.uncommitted)
    assert not times.overruns, times.overruns


# ------------------------------------------------------------------------------- broker down during poll
def _take_down(broker: Broker, seconds: float) -> None:
    """Make the broker unreachable for ``seconds``, then bring it back (Kafka: SIGKILL, then a restart
    on the same ports and logs, which itself takes a few seconds; the mock: refuse connections)."""
    if isinstance(broker, MockCluster):
        broker.set_broker_down(1)
        time.sleep(seconds)
        broker.set_broker_up(1)
    else:
        assert broker.pid is not None
        os.kill(broker.pid, signal.SIGKILL)
        time.sleep(seconds)
        broker.start()


@pytest.mark.parametrize("down", [3, 30])
@pytest.mark.parametrize("kind", ["kafka", "mock"])
def test_broker_down_during_poll(request, topic_name, kind, down):
    broker = request.getfixturevalue(kind)
    caps = MOCK_CAPS if kind == "mock" else {}
    topic, group = topic_name(), topic_name("g")
    ledger = Ledger(f"down{down}")
    _topic(broker, topic, 2)
    _produce(broker.bootstrap, topic, ledger, batches=20, per_batch=50, partitions=2)
    cons = Consumer(
        broker.bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
        partition_max_bytes=1,  # one record batch per partition per poll: the reading spans the outage
        request_timeout_ms=2000,
        api_version_caps=caps,
    )
    cons.subscribe([topic])
    outage = threading.Thread(target=_take_down, args=(broker, down))
    try:

        def start_outage(batches: int) -> None:
            if batches == 4:
                outage.start()

        times = _consume(cons, ledger, until=outage.is_alive, timeout=5, before_commit=start_outage)
        assert outage.is_alive(), "the outage did not start while records were being read"
        more = _consume(cons, ledger, until=lambda: not outage.is_alive(), timeout=down + 60)
        outage.join()
        # The broker is back: new records arrive too, and everything acknowledged is read.
        _produce(broker.bootstrap, topic, ledger, batches=4, per_batch=50, partitions=2)
        rest = _consume(cons, ledger, until=lambda: not ledger.lost_values(), timeout=60)
    finally:
        if outage.is_alive():
            outage.join()
        start = time.monotonic()
        cons.close(timeout_ms=5000)
        assert within(time.monotonic() - start, 5000)
    total = CallTimes(
        polls=times.polls + more.polls + rest.polls,
        raised=times.raised + more.raised + rest.raised,
        commit_failures=times.commit_failures + more.commit_failures + rest.commit_failures,
        uncommitted=times.uncommitted + more.uncommitted + rest.uncommitted,
        overruns=times.overruns + more.overruns + rest.overruns,
    )
    _report(ledger, total)
    assert more.polls >= down * 0.5  # poll kept returning through the outage


# ---------------------------------------------------------------------------------------- failed commits
def test_commits_that_fail_skip_nothing_on_the_mock(mock, topic_name):
    # The coordinator refuses commits: retriably (COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
    # REQUEST_TIMED_OUT: retried within the commit's deadline) and definitively (ILLEGAL_GENERATION: the
    # member rejoins). Batches whose commit failed are rolled back by the application and must come again.
    topic, group = topic_name(), topic_name("g")
    ledger = Ledger("commit")
    mock.create_topic(topic, 2)
    _produce(mock.bootstrap, topic, ledger, batches=30, per_batch=20, partitions=2)
    cons = Consumer(
        mock.bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        partition_max_bytes=1,
        api_version_caps=MOCK_CAPS,
    )
    cons.subscribe([topic])

    def inject(batch: int) -> None:
        if batch == 3:
            mock.push_request_errors(OFFSET_COMMIT, [COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, REQUEST_TIMED_OUT])
        elif batch in (6, 9):
            mock.push_request_errors(OFFSET_COMMIT, [ILLEGAL_GENERATION])

    try:
        times = _consume(
            cons,
            ledger,
            until=lambda: not ledger.lost_values(),
            timeout=60,
            rollback_failed_commits=True,
            before_commit=inject,
        )
    finally:
        cons.close(timeout_ms=5000)
    _report(ledger, times)
    assert times.commit_failures == 2  # the two ILLEGAL_GENERATIONs; the retriable ones were retried
    assert cons.metrics()["commit_failures"] == 2


def test_commit_refused_after_a_stall_skips_nothing_on_kafka(kafka, topic_name):
    # The real failure: the member stalls past max_poll_interval_ms, its heartbeat thread leaves the group
    # (KIP-62), its commit is refused, it rejoins and must restart from the committed offset.
    topic, group = topic_name(), topic_name("g")
    ledger = Ledger("stall")
    _topic(kafka, topic, 2)
    _produce(kafka.bootstrap, topic, ledger, batches=20, per_batch=25, partitions=2)
    cons = Consumer(
        kafka.bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        partition_max_bytes=1,
        session_timeout_ms=1500,
        heartbeat_interval_ms=300,
        max_poll_interval_ms=2000,
        rebalance_timeout_ms=3000,
    )
    cons.subscribe([topic])
    try:
        times = _consume(
            cons,
            ledger,
            until=lambda: not ledger.lost_values(),
            timeout=60,
            rollback_failed_commits=True,
            before_commit=lambda batch: time.sleep(3.0) if batch in (3, 8) else None,  # the stall
        )
    finally:
        cons.close(timeout_ms=5000)
    _report(ledger, times)
    assert times.commit_failures == 2


# ------------------------------------------------------------------------ SIGKILL of one of three members
MEMBER = r"""
import os, sys, time
from kafkawire.client import Consumer
from kafkawire.client.errors import KafkaTimeoutError

bootstrap, group, topic, out, stop = sys.argv[1:6]
POLL_MS = 500
cons = Consumer(bootstrap, group_id=group, enable_auto_commit=False, auto_offset_reset="earliest",
                session_timeout_ms=3000, heartbeat_interval_ms=300, rebalance_timeout_ms=6000,
                partition_max_bytes=1)
cons.subscribe([topic])
polls = overruns = 0
with open(out, "ab") as f:
    while not os.path.exists(stop):
        start = time.monotonic()
        try:
            got = cons.poll(POLL_MS)
        except KafkaTimeoutError as e:
            print("poll raised:", e, flush=True)
            got = {}
        elapsed = time.monotonic() - start
        polls += 1
        if elapsed > POLL_MS / 1000 * 1.1 + 0.2:
            overruns += 1
            print(f"OVERRUN poll({POLL_MS}) took {elapsed:.3f} s", flush=True)
        values = [bytes(v) for cols in got.values() for v in cols.value]
        if not values:
            continue
        f.write(b"".join(v + b"\n" for v in values))  # processed: written before it is committed
        f.flush()
        time.sleep(0.02)  # the application's own work per batch
        try:
            cons.commit(timeout_ms=2000)
        except Exception as e:
            print("commit failed:", e, flush=True)
            continue
        with open(out + ".c", "ab") as c:  # committed: these may never come again
            c.write(b"".join(v + b"\n" for v in values))
cons.close(timeout_ms=5000)
print(f"DONE polls={polls} overruns={overruns}", flush=True)
"""


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1] if path.exists() else []


def test_sigkill_of_one_of_three_group_members_loses_nothing(kafka, topic_name, tmp_path):
    topic, group = topic_name(), topic_name("g")
    ledger = Ledger("kill")
    _topic(kafka, topic, 6)
    _produce(kafka.bootstrap, topic, ledger, batches=60, per_batch=20, partitions=6)
    script = tmp_path / "member.py"
    script.write_text(MEMBER)
    stop = tmp_path / "stop"
    outs = [tmp_path / f"member{i}.out" for i in range(3)]
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), kafka.bootstrap, group, topic, str(out), str(stop)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for out in outs
    ]
    try:
        # Kill the first member once all three are reading (it has partitions and uncommitted work).
        deadline = time.monotonic() + 60
        while not all(_lines(out) for out in outs):
            assert time.monotonic() < deadline, "the three members did not all start reading"
            assert all(p.poll() is None for p in procs), "a member exited early"
            time.sleep(0.05)
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait(10)
        # More records after the kill: the survivors must read those and the dead member's leftovers.
        _produce(kafka.bootstrap, topic, ledger, batches=30, per_batch=20, partitions=6)
        deadline = time.monotonic() + 60
        while True:
            read = {v for out in outs for v in _lines(out)}
            if not (ledger.lost_values() - read):
                break
            assert time.monotonic() < deadline, f"{len(ledger.lost_values() - read)} records never read"
            assert all(p.poll() is None for p in procs[1:]), "a surviving member exited"
            time.sleep(0.2)
    finally:
        stop.touch()
        outputs = []
        for p in procs:
            try:
                outputs.append(p.communicate(timeout=30)[0].decode(errors="replace"))
            except subprocess.TimeoutExpired:
                p.kill()
                outputs.append(p.communicate()[0].decode(errors="replace"))
    for out in outs:
        ledger.read(_lines(out))
    report = ledger.report()
    # The at-least-once window: records a member processed whose commit it never saw succeed (the killed
    # member's last batch, a commit refused by the rebalance). Only those may come again.
    processed = [set(_lines(out)) for out in outs]
    committed = [set(_lines(out.with_name(out.name + ".c"))) for out in outs]
    window = set().union(*(p - c for p, c in zip(processed, committed)))
    counts = Counter(v for out in outs for v in _lines(out))
    again = {v for v, n in counts.items() if n > 1}
    print(report, f"window={len(window)} (killed member: {len(processed[0] - committed[0])})")
    for i, text in enumerate(outputs[1:], 1):
        print(f"member {i}: {text.strip().splitlines()[-1] if text.strip() else '(no output)'}")
    assert report.lost == 0 and report.unexpected == 0
    assert report.duplicated == sum(n - 1 for n in counts.values() if n > 1)
    assert again <= window, f"{len(again - window)} committed records came again: {sorted(again - window)[:5]}"
    assert report.duplicated <= len(window)
    for text in outputs[1:]:
        assert "overruns=0" in text, text  # every survivor's poll returned within its deadline + 10%
