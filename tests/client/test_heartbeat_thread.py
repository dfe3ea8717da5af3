"""Background heartbeats and the poll timer (KIP-62), on Apache Kafka 4.4, classic and consumer (KIP-848)
protocols (issue 22).

Two members share a 4-partition topic while a producer keeps writing. Each member polls on a thread of its
own, "processes" a batch, commits it and only then counts it as read (a refused commit rolls the batch back:
it must come again). Member B is told to stall between a poll and its commit:

* 15 s, twice, with a 6 s session timeout: the heartbeat thread keeps it in the group, so nothing is
  rebalanced: A's assignment and generation (member epoch) never change, nor do B's;
* 20 s past ``max_poll_interval_ms=8000``: B leaves the group while it stalls, A takes its partitions, B's
  commit after the stall is refused naming ``max_poll_interval_ms``, and B's next poll rejoins.

The ledger counts sent / acknowledged / read / lost / duplicated: nothing acknowledged may be lost, and
nothing committed may come again (0 duplicated: a batch counts as read once its commit succeeded).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator

import pytest
from faults.ledger import Ledger

from kafkawire.client import Client, CommitFailedError, Consumer
from kafkawire.testing import Broker, start_broker

pytestmark = pytest.mark.broker

PARTITIONS = 4
SESSION_MS = 6_000
BROKER_CONFIG = {
    "group.consumer.min.session.timeout.ms": 1000,
    "group.consumer.session.timeout.ms": SESSION_MS,
    "group.consumer.min.heartbeat.interval.ms": 1000,
    "group.consumer.heartbeat.interval.ms": 2000,
}


@pytest.fixture(scope="module")
def kafka() -> Iterator[Broker]:
    """Kafka 4.4 whose consumer-protocol groups (KIP-848, where session and heartbeat interval are the
    broker's) have the same 6 s session as the classic members ask for."""
    broker = start_broker("kafka", config=BROKER_CONFIG)
    yield broker
    broker.stop()


class _Member(threading.Thread):
    """One group member polling on its own thread (the consumer is used by this thread only)."""

    def __init__(self, name: str, consumer: Consumer, ledger: Ledger) -> None:
        super().__init__(name=name, daemon=True)
        self.consumer = consumer
        self.ledger = ledger
        self.stalls: queue.Queue[float] = queue.Queue()  # stall before the commit of the next batch
        self.stalled: list[tuple[float, float]] = []  # (start, end) of each stall
        self.history: list[tuple[float, int, tuple[tuple[str, int], ...]]] = []  # (time, generation, assignment)
        self.commit_errors: list[CommitFailedError] = []
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        cons = self.consumer
        try:
            while not self.stop.is_set():
                got = cons.poll(500)
                self.history.append((time.monotonic(), cons.generation, tuple(sorted(cons.assignment()))))
                values = [v for cols in got.values() for v in cols.value]
                if not values:
                    continue
                try:
                    stall = self.stalls.get_nowait()
                except queue.Empty:
                    stall = 0.0
                if stall:
                    start = time.monotonic()
                    time.sleep(stall)  # "processing" for longer than the session timeout
                    self.stalled.append((start, time.monotonic()))
                try:
                    cons.commit()
                except CommitFailedError as e:
                    self.commit_errors.append(e)
                    continue  # rolled back: these records count as not read
                self.ledger.read(values)
        except BaseException as e:
            self.error = e
        finally:
            cons.close(timeout_ms=10_000)

    def state(self) -> tuple[int, tuple[tuple[str, int], ...]]:
        return (self.consumer.generation, self.history[-1][2]) if self.history else (-1, ())


class _Producer(threading.Thread):
    """Writes a few records to every partition every 100 ms until stopped; counts what was acknowledged."""

    def __init__(self, bootstrap: str, topic: str, ledger: Ledger) -> None:
        super().__init__(daemon=True)
        self.bootstrap, self.topic, self.ledger = bootstrap, topic, ledger
        self.stop = threading.Event()

    def run(self) -> None:
        with Client(self.bootstrap) as c:
            while not self.stop.is_set():
                for p in range(PARTITIONS):
                    values = self.ledger.make(5)
                    c.produce(self.topic, values, partition=p)
                    self.ledger.acknowledged(values)
                time.sleep(0.1)


def _until(check, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f} s waiting for {what}"
        time.sleep(0.2)


def _start(kafka: Broker, protocol: str, topic: str, group: str, ledger: Ledger, **opts: object):
    members = []
    for name in ("A", "B"):
        extra = {"session_timeout_ms": SESSION_MS, "heartbeat_interval_ms": 2000} if protocol == "classic" else {}
        cons = Consumer(
            kafka.bootstrap,
            group_id=group,
            group_protocol=protocol,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            partition_max_bytes=4096,  # small fetches: records keep arriving over many polls
            **extra,
            **opts,
        )
        cons.subscribe([topic])
        members.append(_Member(name, cons, ledger))
    for m in members:
        m.start()
    a, b = members

    def balanced() -> bool:
        (ga, sa), (gb, sb) = a.state(), b.state()
        return ga >= 0 and gb >= 0 and len(sa) == len(sb) == PARTITIONS // 2 and not set(sa) & set(sb)

    _until(balanced, 90, "both members to hold two partitions each")
    return a, b


def _finish(members: list[_Member], producer: _Producer, ledger: Ledger) -> None:
    producer.stop.set()
    producer.join(30)
    _until(lambda: not ledger.lost_values() or any(m.error for m in members), 90, "every record to be read")
    for m in members:
        m.stop.set()
    for m in members:
        m.join(30)
        assert m.error is None, f"member {m.name} failed: {m.error!r}"
    report = ledger.report()
    print(report)
    assert report.acknowledged > 0 and report.lost == 0 and report.unexpected == 0
    # A batch counts as read only once its commit succeeded (a refused one is rolled back and comes again,
    # counted then): any record read twice was committed and delivered again, a real bug.
    assert report.duplicated == 0, report


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_a_member_processing_longer_than_the_session_timeout_stays_in_its_group(kafka, topic_name, protocol):
    topic, group = topic_name(), topic_name("g")
    ledger = Ledger("stay")
    with Client(kafka.bootstrap) as c:
        c.create_topics({topic: PARTITIONS})
    producer = _Producer(kafka.bootstrap, topic, ledger)
    producer.start()
    a, b = _start(kafka, protocol, topic, group, ledger)
    try:
        _until(lambda: len(a.history) > 3, 30, "A to poll")
        before_a, before_b = a.state(), b.state()
        rebalances_a = a.consumer.metrics()["rebalances"]
        since = time.monotonic()
        b.stalls.put(15.0)
        b.stalls.put(15.0)
        _until(lambda: len(b.stalled) == 2, 90, "B's two 15 s stalls")
        _until(lambda: b.history[-1][0] > b.stalled[-1][1], 30, "B to poll after its stalls")
        # 0 rebalances: A's assignment and generation never changed while B stalled, nor did B's.
        seen_a = {(g, s) for t, g, s in a.history if t >= since}
        assert seen_a == {before_a}, f"A went through {sorted(seen_a)} while B stalled"
        assert b.state() == before_b
        assert a.consumer.metrics()["rebalances"] == rebalances_a
        assert b.commit_errors == []
        assert all(end - start >= 15.0 for start, end in b.stalled)  # really longer than the session
    finally:
        _finish([a, b], producer, ledger)


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_a_member_past_max_poll_interval_leaves_and_rejoins_on_its_next_poll(kafka, topic_name, protocol):
    topic, group = topic_name(), topic_name("g")
    ledger = Ledger("leave")
    with Client(kafka.bootstrap) as c:
        c.create_topics({topic: PARTITIONS})
    producer = _Producer(kafka.bootstrap, topic, ledger)
    producer.start()
    a, b = _start(kafka, protocol, topic, group, ledger, max_poll_interval_ms=8_000)
    try:
        b.stalls.put(20.0)
        _until(lambda: len(b.stalled) == 1, 90, "B's 20 s stall")
        start, end = b.stalled[0]
        # While B stalled, its partitions moved to A (after 8 s, and a rebalance's worth of slack).
        took_all = [t for t, g, s in a.history if start < t < end and len(s) == PARTITIONS]
        assert took_all, "A never held all partitions while B stalled past max_poll_interval_ms"
        # B's commit after the stall was refused, saying why.
        _until(lambda: b.commit_errors, 30, "B's refused commit")
        assert "max_poll_interval_ms" in str(b.commit_errors[0])
        # B's next poll rejoins: the partitions are shared again.
        _until(
            lambda: len(b.state()[1]) == PARTITIONS // 2 and len(a.state()[1]) == PARTITIONS // 2,
            90,
            "B to rejoin and get two partitions back",
        )
    finally:
        _finish([a, b], producer, ledger)


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_auto_commit_with_short_polls_commits_everything_read(kafka, topic_name, protocol):
    # Auto-commit is sent by the heartbeat thread with the request timeout as its deadline, not squeezed
    # into what is left of a 50 ms poll ("did not complete after 0.2 s ... within 0.003 s" before).
    topic, group = topic_name(), topic_name("g")
    with Client(kafka.bootstrap) as c:
        c.create_topics({topic: 2})
        for p in (0, 1):
            c.produce(topic, [b"x%d" % i for i in range(300)], partition=p)
    cons = Consumer(
        kafka.bootstrap,
        group_id=group,
        group_protocol=protocol,
        auto_offset_reset="earliest",
        auto_commit_interval_ms=100,
        partition_max_bytes=512,
        max_wait_ms=20,
    )
    cons.subscribe([topic])
    try:
        # Join with room to spare first: what is tested is the auto-commit under short polls. A poll of
        # 50 ms cannot join when the coordinator lookup alone takes longer (a loaded 2-core machine): the
        # lookup is cut short at each poll's deadline and starts over at the next.
        read = sum(len(cols) for cols in cons.poll(10_000).values())
        deadline = time.monotonic() + 90
        while read < 600:
            assert time.monotonic() < deadline, f"read {read} of 600"
            read += sum(len(cols) for cols in cons.poll(50).values())
        tps = [(topic, 0), (topic, 1)]
        _until(lambda: (cons.poll(50), cons.committed(tps))[1] == {tp: 300 for tp in tps}, 60, "the auto-commit")
        assert cons.metrics()["commit_failures"] == 0
    finally:
        cons.close()


def test_wakeup_from_another_thread_interrupts_poll(kafka, topic_name):
    from kafkawire.client import WakeupError

    topic = topic_name()
    with Client(kafka.bootstrap) as c:
        c.create_topics({topic: 1})
    with Consumer(kafka.bootstrap, auto_offset_reset="latest") as cons:
        cons.assign([(topic, 0)])
        timer = threading.Timer(1.0, cons.wakeup)
        timer.start()
        start = time.monotonic()
        with pytest.raises(WakeupError):
            cons.poll(60_000)  # nothing to read: only wakeup() ends it early
        assert time.monotonic() - start < 30  # (a loaded machine's slack; the poll asked for 60 s)
        assert cons.poll(100) == {}  # the wakeup is used up


def test_auto_commit_of_a_manually_assigned_consumer_with_a_group_id(kafka, topic_name):
    # No membership, so no heartbeat thread: the auto-commit is a plain commit from poll(), as before.
    topic, group = topic_name(), topic_name("g")
    with Client(kafka.bootstrap) as c:
        c.create_topics({topic: 1})
        c.produce(topic, [b"x%d" % i for i in range(50)], partition=0)
    with Consumer(kafka.bootstrap, group_id=group, auto_offset_reset="earliest", auto_commit_interval_ms=100) as cons:
        cons.assign([(topic, 0)])
        read = 0
        deadline = time.monotonic() + 60
        while read < 50:
            assert time.monotonic() < deadline, f"read {read} of 50"
            read += sum(len(cols) for cols in cons.poll(500).values())
        _until(lambda: (cons.poll(200), cons.committed([(topic, 0)]))[1] == {(topic, 0): 50}, 60, "the auto-commit")
        assert cons.metrics()["commit_failures"] == 0
