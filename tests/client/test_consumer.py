"""kafkawire.Consumer (manual assignment and consumer groups) and kafkawire.Producer against brokers."""

from __future__ import annotations

import threading
import time

import pytest
from confluent_kafka import Consumer as CKConsumer

from kafkawire.client import Client, Consumer, Producer
from kafkawire.client.group import (
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
    range_assign,
)
from kafkawire.errors import ProtocolError

pytestmark = pytest.mark.broker


# ------------------------------------------------------------------------------------ pure functions
def test_range_assignor_matches_kafkas_rules():
    plan = range_assign({"c2": ["t", "u"], "c1": ["t", "u"], "c3": ["t"]}, {"t": 7, "u": 2, "x": 3})
    # t: 7 over c1, c2, c3 (sorted) -> 3, 2, 2; u: 2 over c1, c2 -> 1, 1.
    assert plan == {"c1": {"t": [0, 1, 2], "u": [0]}, "c2": {"t": [3, 4], "u": [1]}, "c3": {"t": [5, 6]}}
    assert range_assign({"a": ["t"], "b": ["t"], "c": ["t"]}, {"t": 1}) == {"a": {"t": [0]}, "b": {}, "c": {}}
    assert range_assign({"a": ["missing"]}, {}) == {"a": {}}


def test_consumer_protocol_payloads_roundtrip_and_reject_forgeries():
    sub = encode_subscription(["b", "a", "b"])
    assert decode_subscription(sub) == ["a", "b"]
    asg = encode_assignment({"t": [2, 0], "u": []})
    assert decode_assignment(asg) == {"t": [0, 2], "u": []}
    assert decode_assignment(b"") == {}
    # A later version appends fields (v1 owned partitions...): the v0 prefix is still read.
    assert decode_subscription(b"\x00\x01" + sub[2:] + b"\x00\x00\x00\x00") == ["a", "b"]
    with pytest.raises(ProtocolError):
        decode_assignment(asg[:-6])
    with pytest.raises(ProtocolError):
        decode_subscription(b"\x00\x00\x7f\xff\xff\xff")  # forged topic count


# --------------------------------------------------------------------------------------- assignment
def test_manual_assignment_seek_and_positions(noida, topic_name):
    topic = topic_name()
    with Client(noida.bootstrap) as c:
        c.create_topics({topic: 2})
        c.produce(topic, [b"a", b"b", b"c"], partition=0)
        with Consumer(client=c, auto_offset_reset="earliest") as cons:
            cons.assign([(topic, 0), (topic, 1)])
            got = cons.poll(2000)
            assert list(got) == [(topic, 0)]
            assert list(got[(topic, 0)].value) == [b"a", b"b", b"c"]
            assert cons.position((topic, 0)) == 3 and cons.position((topic, 1)) == 0
            assert cons.poll(100) == {}
            cons.seek((topic, 0), 1)
            assert list(cons.poll(2000)[(topic, 0)].value) == [b"b", b"c"]
            cons.seek_to_beginning([(topic, 0)])
            assert cons.position((topic, 0)) == 0
        with Consumer(client=c, auto_offset_reset="latest") as cons:
            cons.assign([(topic, 0)])
            assert cons.position((topic, 0)) == 3


def test_out_of_range_position_is_reset(noida, topic_name):
    topic = topic_name()
    with Client(noida.bootstrap) as c:
        c.create_topics([topic])
        c.produce(topic, [b"x"], partition=0)
        with Consumer(client=c, auto_offset_reset="earliest") as cons:
            cons.assign([(topic, 0)])
            cons.seek((topic, 0), 99)
            assert list(cons.poll(3000)[(topic, 0)].value) == [b"x"]


# -------------------------------------------------------------------------------------------- groups
def _drain(cons: Consumer, want: int, timeout: float = 30.0) -> list[bytes]:
    out: list[bytes] = []
    deadline = time.monotonic() + timeout
    while len(out) < want and time.monotonic() < deadline:
        for cols in cons.poll(500).values():
            out += list(cols.value)
    return out


@pytest.mark.parametrize("kind", ["noida", "tansu"])
def test_group_consumer_commits_and_a_successor_resumes(request, kind, topic_name):
    broker = request.getfixturevalue(kind)
    topic, group = topic_name(), topic_name("g")
    opts = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 500, "auto_offset_reset": "earliest"}
    with Client(broker.bootstrap) as c:
        c.create_topics({topic: 3})
        keys = [f"k{i}".encode() for i in range(30)]
        c.produce(topic, keys, keys=keys)
    # Tansu makes a new group's first join wait session.timeout/2 (PROTOCOL-NOTES.md): hence 6 s.
    with Consumer(broker.bootstrap, group_id=group, **opts) as cons:
        cons.subscribe([topic])
        first = _drain(cons, 30)
        assert sorted(first) == sorted(keys)
        assert sorted(cons.assignment()) == [(topic, 0), (topic, 1), (topic, 2)]
        assert cons.generation >= 0 and cons.member_id  # Tansu numbers generations from 0, Kafka from 1
    # close() committed the positions: the group's offsets cover everything read.
    with Client(broker.bootstrap) as c:
        committed = c.committed(group, [(topic, p) for p in range(3)])
        ends = c.fetch_many({(topic, p): 0 for p in range(3)})
        assert {tp: o.offset for tp, o in committed.items()} == {tp: r.high_watermark for tp, r in ends.items()}
        c.produce(topic, [b"new"], keys=[b"k0"])
    with Consumer(broker.bootstrap, group_id=group, **opts) as cons:
        cons.subscribe([topic])
        assert _drain(cons, 1) == [b"new"]


def test_two_members_split_the_partitions_and_read_everything_once(noida, topic_name):
    topic, group = topic_name(), topic_name("g")
    n = 400
    with Client(noida.bootstrap) as c:
        c.create_topics({topic: 4})
    opts = {
        "session_timeout_ms": 6000,
        "heartbeat_interval_ms": 200,
        "auto_offset_reset": "earliest",
        "auto_commit_interval_ms": 200,
    }
    seen: dict[str, list[bytes]] = {"a": [], "b": []}
    assignments: dict[str, list] = {}
    stop = threading.Event()

    def member(name: str, start_delay: float) -> None:
        time.sleep(start_delay)
        with Consumer(noida.bootstrap, group_id=group, **opts) as cons:
            cons.subscribe([topic])
            while not stop.is_set():
                for cols in cons.poll(200).values():
                    seen[name] += list(cols.value)
                assignments[name] = cons.assignment()

    threads = [threading.Thread(target=member, args=("a", 0)), threading.Thread(target=member, args=("b", 1.0))]
    for t in threads:
        t.start()
    try:
        time.sleep(1.5)
        with Producer(noida.bootstrap, linger_ms=0) as prod:
            for i in range(n):
                prod.send(topic, f"m{i}".encode(), key=f"key{i}".encode())
                if i % 50 == 0:
                    time.sleep(0.1)
        deadline = time.monotonic() + 30
        while len(seen["a"]) + len(seen["b"]) < n and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        # Snapshot before stopping: once one member leaves, the other rightly takes all four.
        final = {name: list(a) for name, a in assignments.items()}
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    everything = seen["a"] + seen["b"]
    assert sorted(everything) == sorted(f"m{i}".encode() for i in range(n))  # each exactly once
    assert len(final["a"]) == 2 and len(final["b"]) == 2
    assert set(final["a"]).isdisjoint(final["b"])
    assert seen["a"] and seen["b"]


def test_group_offsets_are_shared_with_librdkafka(noida, topic_name):
    # A kafkawire group consumer commits; librdkafka's consumer in the same group resumes from there.
    topic, group = topic_name(), topic_name("g")
    with Client(noida.bootstrap) as c:
        c.create_topics([topic])
        c.produce(topic, [b"old-1", b"old-2"], partition=0)
    with Consumer(noida.bootstrap, group_id=group, auto_offset_reset="earliest") as cons:
        cons.subscribe([topic])
        assert _drain(cons, 2) == [b"old-1", b"old-2"]
    with Client(noida.bootstrap) as c:
        c.produce(topic, [b"fresh"], partition=0)
    ck = CKConsumer({"bootstrap.servers": noida.bootstrap, "group.id": group, "auto.offset.reset": "earliest"})
    try:
        ck.subscribe([topic])
        msg = None
        deadline = time.monotonic() + 30
        while msg is None and time.monotonic() < deadline:
            msg = ck.poll(0.5)
        assert msg is not None and msg.error() is None and msg.value() == b"fresh"
    finally:
        ck.close()


# ------------------------------------------------------------------------------------------ producer
def test_producer_buffers_and_flushes(noida, topic_name):
    topic = topic_name()
    with Client(noida.bootstrap) as c:
        c.create_topics({topic: 3})
        with Producer(client=c, linger_ms=60_000, batch_records=1000) as prod:
            for i in range(10):
                prod.send(topic, f"v{i}".encode(), key=f"k{i}".encode(), headers=[("i", str(i).encode())])
            prod.send(topic, b"pinned", partition=2, timestamp_ms=1234)
            assert prod.buffered == 11
            results = prod.flush()
            assert prod.buffered == 0
            assert sum(len(r) for r in results) == 11
        got = []
        for p in range(3):
            got += c.fetch(topic, p, 0).to_records()
    assert sorted(r.value for r in got) == sorted([f"v{i}".encode() for i in range(10)] + [b"pinned"])
    pinned = next(r for r in got if r.value == b"pinned")
    assert pinned.timestamp == 1234
    assert next(r for r in got if r.value == b"v3").headers == [("i", b"3")]


def test_producer_batch_limits_trigger_writes(noida, topic_name):
    topic = topic_name()
    with Client(noida.bootstrap) as c:
        c.create_topics([topic])
        prod = Producer(client=c, linger_ms=60_000, batch_records=5)
        for _ in range(12):
            prod.send(topic, b"x", partition=0)
        assert prod.buffered == 2  # two batches of 5 went out on their own
        assert c.list_offsets(topic)[0].offset == 10
        prod.close()
        assert c.list_offsets(topic)[0].offset == 12
        with pytest.raises(RuntimeError):
            prod.send(topic, b"late")
