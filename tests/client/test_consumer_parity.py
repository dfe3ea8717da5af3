"""The consumer features a Java client user reaches for first, against Apache Kafka (issue 16).

Rebalance listeners (called where the Java consumer calls them), ``pause`` / ``resume``, pattern
subscription re-evaluated on metadata refresh, and static membership (KIP-345).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence

import pytest

from kafkawire.client import Client, Consumer
from kafkawire.client.consumer.consumer import CommitFailedError
from kafkawire.client.consumer.listeners import ConsumerRebalanceListener
from kafkawire.testing import Broker, start_broker

pytestmark = pytest.mark.broker

TP = tuple[str, int]


@pytest.fixture(scope="module")
def kafka() -> Iterator[Broker]:
    """Apache Kafka allowing 1 s sessions (a stalled member expires quickly) and no initial rebalance delay;
    consumer-protocol groups (KIP-848, whose session the broker sets) with 3 s sessions and 1 s heartbeats."""
    broker = start_broker(
        "kafka",
        config={
            "group.min.session.timeout.ms": 1000,
            "group.initial.rebalance.delay.ms": 0,
            "group.consumer.min.session.timeout.ms": 1000,
            "group.consumer.session.timeout.ms": 3000,
            "group.consumer.min.heartbeat.interval.ms": 500,
            "group.consumer.heartbeat.interval.ms": 1000,
        },
    )
    yield broker
    broker.stop()


class Recorder(ConsumerRebalanceListener):
    """Records each callback; in ``on_partitions_revoked`` also what the group had committed then."""

    def __init__(self, consumer_ref: Callable[[], Consumer] | None = None) -> None:
        self.events: list[tuple[str, list[TP]]] = []
        self.committed_at_revoke: dict[TP, int] = {}
        self.consumer_ref = consumer_ref

    def on_partitions_revoked(self, partitions: list[TP]) -> None:
        self.events.append(("revoked", partitions))
        if self.consumer_ref is not None and partitions:
            self.committed_at_revoke = self.consumer_ref().committed(partitions)

    def on_partitions_assigned(self, partitions: list[TP]) -> None:
        self.events.append(("assigned", partitions))

    def on_partitions_lost(self, partitions: list[TP]) -> None:
        self.events.append(("lost", partitions))


def _poll_until(consumers: Sequence[Consumer], done: Callable[[], bool], timeout: float = 60.0) -> dict[TP, list]:
    """Poll every consumer in turn until ``done()``; the values read per partition."""
    got: dict[TP, list] = {}
    end = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < end, "condition not reached in time"
        for c in consumers:
            for tp, cols in c.poll(1000).items():
                got.setdefault(tp, []).extend(cols.value)
    return got


def _read(consumer: Consumer, enough: Callable[[dict[TP, list]], bool], timeout: float = 30.0) -> dict[TP, list]:
    """Poll ``consumer`` until ``enough(values read per partition)``."""
    got: dict[TP, list] = {}
    end = time.monotonic() + timeout
    while not enough(got):
        assert time.monotonic() < end, f"read only { ({tp: len(v) for tp, v in got.items()}) }"
        for tp, cols in consumer.poll(1000).items():
            got.setdefault(tp, []).extend(cols.value)
    return got


def _produce(bootstrap: str, topic: str, per_partition: dict[int, int]) -> None:
    with Client(bootstrap) as c:
        for p, n in per_partition.items():
            c.produce(topic, [f"{topic}-{p}-{i}".encode() for i in range(n)], partition=p)


def test_listener_revoked_runs_before_the_auto_commit_then_assigned(kafka, topic_name):
    topic, group = topic_name(), topic_name("g")
    with Client(kafka.bootstrap) as c:
        c.create_topics({topic: 2})
    _produce(kafka.bootstrap, topic, {0: 10, 1: 10})
    opts = dict(group_id=group, auto_offset_reset="earliest", auto_commit_interval_ms=3_600_000)
    a_events = Recorder(lambda: a)
    a = Consumer(kafka.bootstrap, listener=a_events, **opts)
    a.subscribe([topic])
    b = Consumer(kafka.bootstrap, **opts)
    _read(a, lambda got: sum(map(len, got.values())) >= 20)
    assert a_events.events == [("assigned", [(topic, 0), (topic, 1)])]
    # The auto-commit interval is an hour: nothing committed yet.
    assert a.committed([(topic, 0), (topic, 1)]) == {(topic, 0): -1, (topic, 1): -1}

    b.subscribe([topic])
    try:
        _poll_until([a, b], lambda: len(a.assignment()) == 1 and len(b.assignment()) == 1)
        kinds = [e for e, _ in a_events.events]
        assert kinds == ["assigned", "revoked", "assigned"]
        assert a_events.events[1][1] == [(topic, 0), (topic, 1)]  # eager: everything is revoked
        assert a_events.events[2][1] == a.assignment()
        # Revoked ran while nothing was committed; the auto-commit right after it committed the positions.
        assert a_events.committed_at_revoke == {(topic, 0): -1, (topic, 1): -1}
        assert a.committed([(topic, 0), (topic, 1)]) == {(topic, 0): 10, (topic, 1): 10}
    finally:
        b.close()
    # b left: a gets both partitions again (revoked its one, then assigned both).
    _poll_until([a], lambda: len(a.assignment()) == 2)
    assert [e for e, _ in a_events.events][-2:] == ["revoked", "assigned"]
    a.close()
    # close() revokes too, as Java's close() does for a member of a live generation.
    assert a_events.events[-1] == ("revoked", [(topic, 0), (topic, 1)])


def test_listener_lost_when_the_poll_timer_expired_and_nothing_is_committed(kafka, topic_name):
    topic, group = topic_name(), topic_name("g")
    with Client(kafka.bootstrap) as c:
        c.create_topics({topic: 1})
    _produce(kafka.bootstrap, topic, {0: 5})
    events = Recorder()
    cons = Consumer(
        kafka.bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        auto_commit_interval_ms=3_600_000,
        session_timeout_ms=1000,
        heartbeat_interval_ms=200,
        max_poll_interval_ms=1500,
        listener=events,
    )
    cons.subscribe([topic])
    try:
        _read(cons, lambda got: len(got.get((topic, 0), [])) == 5)
        # Stop polling past max_poll_interval_ms: the heartbeat thread leaves the group (KIP-62).
        time.sleep(2.5)
        _poll_until([cons], lambda: len(events.events) >= 3)
        assert [e for e, _ in events.events] == ["assigned", "lost", "assigned"]
        assert events.events[1][1] == [(topic, 0)]
        # lost: no commit of the positions reached (the partition may have been someone else's).
        assert cons.committed([(topic, 0)]) == {(topic, 0): -1}
    finally:
        cons.close()


def test_pause_stops_a_partition_and_resume_restarts_it(kafka, topic_name):
    topic, group = topic_name(), topic_name("g")
    with Client(kafka.bootstrap) as c:
        c.create_topics({topic: 2})
    _produce(kafka.bootstrap, topic, {0: 7, 1: 9})
    cons = Consumer(kafka.bootstrap, group_id=group, auto_offset_reset="earliest", enable_auto_commit=False)
    cons.subscribe([topic])
    try:
        # The listener pauses p0 as soon as it is assigned, before anything was fetched (a Java idiom).
        cons.listener = type("PauseP0", (), {"on_partitions_assigned": lambda _, ps: cons.pause([(topic, 0)])})()
        read = _read(cons, lambda got: len(got.get((topic, 1), [])) == 9)
        assert cons.paused() == [(topic, 0)]
        assert (topic, 0) not in read
        for _ in range(3):  # still nothing from the paused partition
            assert (topic, 0) not in cons.poll(1000)
        cons.resume([(topic, 0)])
        assert cons.paused() == []
        read = _read(cons, lambda got: len(got.get((topic, 0), [])) == 7)
        assert read[(topic, 0)] == [f"{topic}-0-{i}".encode() for i in range(7)]
        with pytest.raises(ValueError):
            cons.pause([(topic, 5)])
    finally:
        cons.close()


def test_pattern_subscription_picks_up_a_new_topic_on_metadata_refresh(kafka, topic_name):
    prefix = topic_name("pat")
    first, second, other = f"{prefix}-a", f"{prefix}-b", f"x{prefix}-c"
    with Client(kafka.bootstrap) as c:
        c.create_topics({first: 1, other: 1})
    _produce(kafka.bootstrap, first, {0: 3})
    events = Recorder()
    cons = Consumer(
        kafka.bootstrap,
        group_id=topic_name("g"),
        auto_offset_reset="earliest",
        metadata_max_age_ms=500,
        listener=events,
    )
    cons.subscribe(pattern=re.compile(re.escape(prefix) + r"-.*"))
    try:
        _read(cons, lambda got: len(got.get((first, 0), [])) == 3)
        assert cons.subscription() == [first]  # the full name must match: x<prefix>-c does not
        with Client(kafka.bootstrap) as c:
            c.create_topics({second: 2})
        _produce(kafka.bootstrap, second, {0: 2, 1: 2})
        _read(cons, lambda got: len(got.get((second, 0), [])) + len(got.get((second, 1), [])) == 4)
        assert cons.subscription() == [first, second]
        assert sorted(cons.assignment()) == [(first, 0), (second, 0), (second, 1)]
        assert events.events[-1] == ("assigned", [(first, 0), (second, 0), (second, 1)])
    finally:
        cons.close()


def test_static_member_restarted_within_the_session_keeps_its_assignment_without_a_rebalance(kafka, topic_name):
    topic, group = topic_name(), topic_name("g")
    with Client(kafka.bootstrap) as c:
        c.create_topics({topic: 4})
    opts = dict(group_id=group, auto_offset_reset="earliest", session_timeout_ms=20_000)
    a_events, b_events = Recorder(), Recorder()
    a = Consumer(kafka.bootstrap, group_instance_id="a", listener=a_events, **opts)
    b = Consumer(kafka.bootstrap, group_instance_id="b", listener=b_events, **opts)
    a.subscribe([topic])
    b.subscribe([topic])
    a2 = None
    try:
        _poll_until([a, b], lambda: len(a.assignment()) + len(b.assignment()) == 4 and a.assignment() != [])
        # Let the group settle (a second generation when b joined after a's first assignment).
        _poll_until([a, b], lambda: len(a.assignment()) == 2 and len(b.assignment()) == 2)
        a_parts, generation = a.assignment(), a.generation
        b_events_before = list(b_events.events)
        a.close()  # a static member does not leave the group
        a2 = Consumer(kafka.bootstrap, group_instance_id="a", **opts)
        a2.subscribe([topic])
        _poll_until([a2, b], lambda: a2.assignment() != [])
        for _ in range(5):  # b's heartbeats go on: no rebalance announced to it
            b.poll(1000)
            a2.poll(1000)
        assert a2.assignment() == a_parts
        assert a2.generation == generation
        assert b.generation == generation
        assert b_events.events == b_events_before
    finally:
        for c in (a2, b):
            if c is not None:
                c.close()


# ------------------------------------------------------------------------------ consumer protocol (KIP-848)


def _revoked(*recorders: Recorder) -> int:
    """Partitions revoked so far, over ``recorders``."""
    return sum(len(ps) for r in recorders for e, ps in r.events if e == "revoked")


def _describe(bootstrap: str, group: str) -> tuple[str, dict[str, list[TP]]]:
    """State and member id -> assignment of a consumer-protocol group, as its coordinator reports them."""
    from kafkawire.protocol import ConsumerGroupDescribeRequest

    with Client(bootstrap) as c:
        conn = c.coordinator(group)
        resp = conn.request(
            ConsumerGroupDescribeRequest(group_ids=[group]), conn.version_for(ConsumerGroupDescribeRequest)
        )
    (g,) = resp.groups
    assert g.error_code == 0, g
    return g.group_state, {
        m.member_id: sorted((tp.topic_name, p) for tp in m.assignment.topic_partitions for p in tp.partitions)
        for m in g.members
    }


def _ledger_produce(bootstrap: str, topic: str, ledger, partitions: int, per_partition: int) -> None:
    with Client(bootstrap) as c:
        for p in range(partitions):
            values = ledger.make(per_partition)
            c.produce(topic, values, partition=p)
            ledger.acknowledged(values)


def test_consumer_protocol_group_of_three_with_a_join_and_a_leave_loses_nothing(kafka, topic_name):
    from faults.ledger import Ledger

    topic, group = topic_name(), topic_name("g")
    partitions = 6
    with Client(kafka.bootstrap) as c:
        c.create_topics({topic: partitions})
    ledger = Ledger("kip848")
    events: dict[str, Recorder] = {}
    refused = 0  # records whose commit the group refused (a rebalance): not counted as read, so they come again

    def member(name: str) -> Consumer:
        events[name] = Recorder()
        cons = Consumer(
            kafka.bootstrap,
            group_id=group,
            group_protocol="consumer",
            group_remote_assignor="uniform",
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            partition_max_bytes=256,  # a few records per partition per poll: the work spans the rebalances
            listener=events[name],
        )
        cons.subscribe([topic])
        return cons

    def work(consumers: dict[str, Consumer], until: Callable[[], bool], timeout: float = 90.0) -> None:
        nonlocal refused
        end = time.monotonic() + timeout
        while not until():
            assert time.monotonic() < end, f"timed out: {ledger.report()}"
            for cons in consumers.values():
                got = cons.poll(500)
                values = [v for cols in got.values() for v in cols.value]
                if not values:
                    continue
                try:
                    cons.commit()
                except CommitFailedError:  # the group moved on: rolled back, comes again (any other error fails)
                    refused += len(values)
                    continue
                ledger.read(values)

    members = {"a": member("a"), "b": member("b")}
    try:
        _ledger_produce(kafka.bootstrap, topic, ledger, partitions, 200)
        work(members, lambda: len(ledger.lost_values()) < 600)
        # The second member's join may still be under way when half the records are read (a loaded
        # machine): the reconciliation gets the time the later steps get.
        work(members, lambda: all(len(c.assignment()) == 3 for c in members.values()))
        assert {len(c.assignment()) for c in members.values()} == {3}
        revoked_before = _revoked(events["a"], events["b"])
        members["c"] = member("c")
        _ledger_produce(kafka.bootstrap, topic, ledger, partitions, 200)
        work(members, lambda: all(len(c.assignment()) == 2 for c in members.values()))
        moved_on_join = _revoked(events["a"], events["b"]) - revoked_before
        # The coordinator's view (ConsumerGroupDescribe) becomes what the members hold (once the last
        # acknowledgement has arrived: the group is then Stable).
        work(
            members,
            lambda: (
                _describe(kafka.bootstrap, group)
                == ("Stable", {c.member_id: sorted(c.assignment()) for c in members.values()})
            ),
            timeout=30,
        )
        members.pop("b").close()
        _ledger_produce(kafka.bootstrap, topic, ledger, partitions, 200)
        work(members, lambda: not ledger.lost_values() and sum(len(c.assignment()) for c in members.values()) == 6)
    finally:
        for cons in members.values():
            cons.close()
    report = ledger.report()
    print(report, "moved on join:", moved_on_join, "refused commits' records:", refused)
    assert report.lost == 0 and report.unexpected == 0
    # A batch counts as read only once its commit succeeded: a committed record that came again would be
    # a real bug (a refused batch coming again is counted once, then).
    assert report.duplicated == 0
    # Incremental: a and b kept what they did not have to give up; only 2 partitions moved to c.
    assert moved_on_join == 2
    # Each consumer's epochs only grew; a's listener saw only additions or revocations, never a full revoke.
    assert all(e in ("assigned", "revoked") for e, _ in events["a"].events)
    assert events["a"].events[0][0] == "assigned"


def test_consumer_protocol_on_a_broker_without_it_raises_a_clear_error(broker_factory, topic_name):
    # noida offers no ConsumerGroupHeartbeat (API 68) in ApiVersions: poll() says so and names the way out.
    from kafkawire.client.consumer.consumer import GroupProtocolUnsupportedError

    noida = broker_factory("noida")
    topic = topic_name()
    with Client(noida.bootstrap) as c:
        c.create_topics({topic: 1})
    cons = Consumer(noida.bootstrap, group_id=topic_name("g"), group_protocol="consumer")
    cons.subscribe([topic])
    try:
        with pytest.raises(GroupProtocolUnsupportedError, match="API 68.*group_protocol='classic'"):
            cons.poll(5000)
    finally:
        cons.close(timeout_ms=5000)
    with pytest.raises(ValueError, match="group_protocol"):
        Consumer(noida.bootstrap, group_id="g", group_protocol="next")


# ------------------------------------------------------------------------- sticky assignors (no broker)


def test_subscription_v3_carries_owned_partitions_and_generation():
    from kafkawire.client.group.payloads import decode_subscription, decode_subscription_full, encode_subscription

    raw = encode_subscription(
        ["b", "a"], b"\x00\x00\x00\x07", owned=[("a", 1), ("a", 0), ("b", 2)], generation=7, version=3
    )
    sub = decode_subscription_full(raw)
    assert (sub.version, sub.topics, sub.user_data) == (3, ["a", "b"], b"\x00\x00\x00\x07")
    assert (sub.owned, sub.generation, sub.rack_id) == ([("a", 0), ("a", 1), ("b", 2)], 7, None)
    assert decode_subscription(raw) == ["a", "b"]
    # The layout of Kafka's ConsumerProtocolSubscription.json v3, field by field.
    expected = (
        b"\x00\x03"
        + b"\x00\x00\x00\x02"
        + b"\x00\x01a"
        + b"\x00\x01b"
        + b"\x00\x00\x00\x04\x00\x00\x00\x07"
        + b"\x00\x00\x00\x02"
        + b"\x00\x01a"
        + b"\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x01"
        + b"\x00\x01b"
        + b"\x00\x00\x00\x01\x00\x00\x00\x02"
        + b"\x00\x00\x00\x07"
        + b"\xff\xff"
    )
    assert raw == expected
    v0 = decode_subscription_full(encode_subscription(["a"]))
    assert (v0.version, v0.owned, v0.generation) == (0, [], -1)


def test_sticky_user_data_roundtrip_and_v0():
    from kafkawire.client.group.assignors import decode_sticky_user_data, encode_sticky_user_data

    data = encode_sticky_user_data([("t", 2), ("t", 0), ("u", 1)], 5)
    assert decode_sticky_user_data(data) == ([("t", 0), ("t", 2), ("u", 1)], 5)
    assert decode_sticky_user_data(data[:-4]) == ([("t", 0), ("t", 2), ("u", 1)], -1)  # v0: no generation
    assert decode_sticky_user_data(None) == ([], -1)


def test_cooperative_sticky_keeps_owners_balances_and_withholds_moves():
    from kafkawire.client.group.assignors import cooperative_sticky_assign, withhold_transfers
    from kafkawire.client.group.payloads import Subscription

    subs = {
        "m1": Subscription(["t"], owned=[("t", p) for p in range(6)], generation=3),
        "m2": Subscription(["t"]),  # a new member
    }
    plan = cooperative_sticky_assign(subs, {"t": 6})
    assert sorted(len(ps["t"]) for ps in plan.values()) == [3, 3]
    assert set(plan["m1"]["t"]) <= set(range(6))
    adjusted, withheld = withhold_transfers(plan, subs)
    assert withheld == 3 and adjusted["m2"] == {} and adjusted["m1"] == plan["m1"]
    # Second rebalance: m1 now owns its 3; m2 gets the others, nothing withheld.
    subs["m1"] = Subscription(["t"], owned=[("t", p) for p in plan["m1"]["t"]], generation=4)
    plan2 = cooperative_sticky_assign(subs, {"t": 6})
    assert plan2["m1"] == plan["m1"]
    assert withhold_transfers(plan2, subs)[1] == 0
    # A stale claim (lower generation) loses to the current owner.
    subs = {
        "m1": Subscription(["t"], owned=[("t", 0), ("t", 1)], generation=2),
        "m2": Subscription(["t"], owned=[("t", 1), ("t", 2)], generation=4),
    }
    plan = cooperative_sticky_assign(subs, {"t": 4})
    assert 1 in plan["m2"]["t"] and 2 in plan["m2"]["t"] and 0 in plan["m1"]["t"]


def test_sticky_reads_the_previous_assignment_from_user_data():
    from kafkawire.client.group.assignors import encode_sticky_user_data, sticky_assign
    from kafkawire.client.group.payloads import Subscription

    subs = {
        "a": Subscription(["t"], user_data=encode_sticky_user_data([("t", 1), ("t", 3)], 2)),
        "b": Subscription(["t"], user_data=encode_sticky_user_data([("t", 0), ("t", 2)], 2)),
        "c": Subscription(["t"]),
    }
    plan = sticky_assign(subs, {"t": 5})
    assert sorted(len(v.get("t", [])) for v in plan.values()) == [1, 2, 2]
    moved = sum(1 for m, prev in (("a", {1, 3}), ("b", {0, 2})) for p in prev if p not in plan[m].get("t", []))
    assert moved <= 1  # only what balance requires moves


def test_consumer_protocol_static_member_restart_keeps_its_partitions(kafka_broker, topic_name):
    # KIP-848 + KIP-345: close() of a static member sends epoch -2 ("leaving, coming back"); the
    # restarted process (same group_instance_id) gets the same partitions and the other member none of
    # them in between. On the session's broker: its consumer groups keep the default 45 s session (this
    # module's broker expires them after 3 s, which a restart on a loaded machine may exceed).
    kafka = kafka_broker
    topic, group = topic_name(), topic_name("g")
    with Client(kafka.bootstrap) as c:
        c.create_topics({topic: 4})
    opts = dict(group_id=group, group_protocol="consumer", auto_offset_reset="earliest")
    b_events = Recorder()
    a = Consumer(kafka.bootstrap, group_instance_id="a", **opts)
    b = Consumer(kafka.bootstrap, group_instance_id="b", listener=b_events, **opts)
    a.subscribe([topic])
    b.subscribe([topic])
    a2 = None
    try:
        _poll_until([a, b], lambda: len(a.assignment()) == 2 and len(b.assignment()) == 2)
        a_parts, b_parts = a.assignment(), b.assignment()
        settled = len(b_events.events)
        a.close()
        for _ in range(3):  # b heartbeats meanwhile: the coordinator keeps a's partitions for it
            b.poll(1000)
        assert b.assignment() == b_parts
        a2 = Consumer(kafka.bootstrap, group_instance_id="a", **opts)
        a2.subscribe([topic])
        _poll_until([a2, b], lambda: a2.assignment() != [])
        assert a2.assignment() == a_parts
        assert b.assignment() == b_parts
        assert b_events.events[settled:] == []  # b was not disturbed
    finally:
        for c in (a2, b):
            if c is not None:
                c.close()


def test_consumer_protocol_member_past_its_poll_timer_loses_its_partitions_and_rejoins(kafka, topic_name):
    topic, group = topic_name(), topic_name("g")
    with Client(kafka.bootstrap) as c:
        c.create_topics({topic: 2})
    _produce(kafka.bootstrap, topic, {0: 5, 1: 5})
    events = Recorder()
    cons = Consumer(
        kafka.bootstrap,
        group_id=group,
        group_protocol="consumer",
        auto_offset_reset="earliest",
        auto_commit_interval_ms=3_600_000,
        max_poll_interval_ms=2000,
        listener=events,
    )
    cons.subscribe([topic])
    try:
        _read(cons, lambda got: sum(map(len, got.values())) == 10)
        time.sleep(4.5)  # no poll past max_poll_interval_ms: the heartbeat thread leaves (epoch -1, KIP-62)
        _poll_until([cons], lambda: len(events.events) >= 3)
        assert [e for e, _ in events.events][:3] == ["assigned", "lost", "assigned"]
        assert events.events[1][1] == [(topic, 0), (topic, 1)]
        assert cons.committed([(topic, 0), (topic, 1)]) == {(topic, 0): -1, (topic, 1): -1}  # lost: no commit
        _poll_until([cons], lambda: len(cons.assignment()) == 2)
        assert cons.generation > 0 and cons.metrics()["partitions_lost"] == 2
    finally:
        cons.close()
