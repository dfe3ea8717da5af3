"""Incremental fetch sessions (KIP-227): the handler's bookkeeping, and against Apache Kafka a consumer
that reads exactly what a sessionless one reads while sending less, a stale epoch and a restarted broker
falling back to full fetches, and the stand-ins (which open no session) staying on full fetches."""

from __future__ import annotations

import pytest

from kafkawire.client import Client, Consumer
from kafkawire.client.consumer.fetch_session import FINAL_EPOCH, INITIAL_EPOCH, FetchSessionHandler


def test_handler_sends_only_changed_partitions_and_forgets_dropped_ones():
    h = FetchSessionHandler(1)
    wanted = {("t", 0): (0, 100), ("t", 1): (5, 100), ("u", 0): (7, 100)}
    first = h.build(wanted, 12, False)
    assert first.full and first.epoch == INITIAL_EPOCH and first.session_id == 0 and first.send == list(wanted)
    assert h.handle_response(first, 0, 42)
    assert (h.session_id, h.epoch) == (42, 1)

    nxt = {("t", 0): (3, 100), ("t", 1): (5, 100), ("v", 2): (0, 100)}
    inc = h.build(nxt, 12, False)
    assert (inc.session_id, inc.epoch) == (42, 1) and not inc.full
    assert inc.send == [("t", 0), ("v", 2)] and inc.forget == [("u", 0)]
    assert h.handle_response(inc, 0, 42) and h.epoch == 2
    assert h.build(nxt, 12, False).send == []  # nothing changed: an empty incremental request
    h.observe(("t", 1), 9, 9, 0)
    assert h.unchanged(("t", 1)).high_watermark == 9

    # FETCH_SESSION_ID_NOT_FOUND: the session is gone, the next request is a full one with no id.
    assert not h.handle_response(h.build(nxt, 12, False), 70, 0)
    again = h.build(nxt, 12, False)
    assert again.full and again.session_id == 0 and again.send == list(nxt)

    # A request that got no answer: a full request that replaces the session (id kept, epoch 0).
    h.handle_response(again, 0, 43)
    h.handle_error()
    replace = h.build(nxt, 12, False)
    assert replace.full and (replace.session_id, replace.epoch) == (43, INITIAL_EPOCH)

    # Below Fetch v7, or with sessions off, every request is outside any session.
    assert FetchSessionHandler(1).build(wanted, 6, False).epoch == FINAL_EPOCH
    assert FetchSessionHandler(1, enabled=False).build(wanted, 12, False).epoch == FINAL_EPOCH


def _read_until(cons: Consumer, ends: dict[tuple[str, int], int], into: dict) -> None:
    """Poll until every partition's position reached ``ends``, appending (offset, value) per partition."""
    while any(cons.position(tp) < end for tp, end in ends.items()):
        for tp, cols in cons.poll(5_000).items():
            into.setdefault(tp, []).extend(zip(cols.offset.tolist(), cols.value.to_pylist()))


@pytest.mark.broker
def test_consumer_reads_the_same_with_and_without_sessions_and_sends_less(kafka, topic_name):
    topic = topic_name("fs")
    n = 50
    tps = [(topic, p) for p in range(n)]
    with Client(kafka.bootstrap) as writer:
        writer.create_topics([topic], num_partitions=n)
        written: dict[tuple[str, int], list[tuple[int, bytes]]] = {}

        def write(round_: int, parts: list[int]) -> None:
            for p in parts:
                vals = [b"r%d-p%d-%d" % (round_, p, i) for i in range(1 + (p + round_) % 3)]
                res = writer.produce(topic, vals, partition=p)
                written.setdefault((topic, p), []).extend(zip(res.offset.tolist(), vals))

        write(0, list(range(0, n, 5)))
        with (
            Consumer(kafka.bootstrap, auto_offset_reset="earliest", max_wait_ms=100) as with_s,
            Consumer(kafka.bootstrap, auto_offset_reset="earliest", max_wait_ms=100, fetch_sessions=False) as without,
        ):
            with_s.assign(tps)
            without.assign(tps)
            got_s: dict = {}
            got_n: dict = {}
            for r in range(1, 7):
                ends = {(topic, p): o.offset for p, o in writer.list_offsets(topic).items()}
                _read_until(with_s, ends, got_s)
                _read_until(without, ends, got_n)
                # Records appear in a few partitions between fetches; the others stay unchanged.
                write(r, [(r * 7) % n, (r * 13 + 1) % n, (r * 29 + 3) % n])
            ends = {(topic, p): o.offset for p, o in writer.list_offsets(topic).items()}
            _read_until(with_s, ends, got_s)
            _read_until(without, ends, got_n)

            assert got_s == got_n == written
            [h] = with_s.client.fetch_sessions._handlers.values()
            assert h.session_id != 0 and h.epoch > 2  # the session stayed open throughout
            assert all(x.session_id == 0 for x in without.client.fetch_sessions._handlers.values())
            fs = with_s.client.metrics()["apis"]["Fetch"]
            fn = without.client.metrics()["apis"]["Fetch"]
            assert fs["bytes_sent"] / fs["requests"] < fn["bytes_sent"] / fn["requests"]


@pytest.mark.broker
def test_stale_epoch_and_restarted_broker_fall_back_to_a_full_fetch(broker_factory, topic_name):
    broker = broker_factory("kafka")
    topic = topic_name("fsr")
    with Client(broker.bootstrap, retry_backoff_ms=50) as c:
        c.create_topics([topic], num_partitions=4)
        c.produce(topic, [b"a", b"b"], partition=1)
        offs = {(topic, p): 0 for p in range(4)}
        first = c.fetch_many(offs, max_wait_ms=10)
        [h] = c.fetch_sessions._handlers.values()
        sid = h.session_id
        assert sid != 0 and first[(topic, 1)].records.value.to_pylist() == [b"a", b"b"]

        # An epoch the broker does not expect (as after an answer lost on the way back):
        # INVALID_FETCH_SESSION_EPOCH, then a full fetch that opens a new session.
        h.epoch += 5
        again = c.fetch_many(offs, max_wait_ms=10)
        assert again[(topic, 1)].records.value.to_pylist() == [b"a", b"b"]
        assert h.session_id not in (0, sid) and h.epoch == 1

        before_restart = h.session_id
        broker.restart(graceful=False)  # the broker forgets every session
        c.produce(topic, [b"c"], partition=3)
        offs[(topic, 1)] = 2
        after = c.fetch_many(offs, max_wait_ms=10, timeout_ms=60_000)
        assert after[(topic, 3)].records.value.to_pylist() == [b"c"]
        assert after[(topic, 1)].records.value.to_pylist() == [] and after[(topic, 1)].high_watermark == 2
        assert h.session_id not in (0, before_restart)  # FETCH_SESSION_ID_NOT_FOUND, then a new session


@pytest.mark.broker
def test_stand_in_brokers_open_no_session_and_read_the_same(noida, topic_name):
    topic = topic_name("fsn")
    with Client(noida.bootstrap) as c:
        c.create_topics([topic], num_partitions=3)
        c.produce(topic, [b"x"], partition=2)
        offs = {(topic, p): 0 for p in range(3)}
        for _ in range(3):
            res = c.fetch_many(offs, max_wait_ms=10)
            assert res[(topic, 2)].records.value.to_pylist() == ([b"x"] if offs[(topic, 2)] == 0 else [])
            offs = {tp: r.next_offset for tp, r in res.items()}
        [h] = c.fetch_sessions._handlers.values()
        assert h.session_id == 0  # noida answers session id 0: full fetches every time


def test_handler_resends_a_partition_whose_leader_epoch_changed():
    h = FetchSessionHandler(1)
    wanted = {("t", 0): (0, 100), ("t", 1): (5, 100)}
    first = h.build(wanted, 12, False, {("t", 0): 3, ("t", 1): 3})
    assert first.epochs == {("t", 0): 3, ("t", 1): 3}
    assert h.handle_response(first, 0, 42)
    assert h.build(wanted, 12, False, {("t", 0): 3, ("t", 1): 3}).send == []  # nothing changed
    # KIP-320: partition 1's leader moved to epoch 4: it is listed again, with its new current_leader_epoch.
    inc = h.build(wanted, 12, False, {("t", 0): 3, ("t", 1): 4})
    assert inc.send == [("t", 1)] and inc.epochs[("t", 1)] == 4
    assert h.handle_response(inc, 0, 42)
    assert h.build(wanted, 12, False, {("t", 0): 3, ("t", 1): 4}).send == []


@pytest.mark.broker
def test_fetches_carry_the_leader_epoch_and_a_stale_one_is_refreshed(kafka_broker, monkeypatch):  # type: ignore[no-untyped-def]
    import uuid

    from kafkawire.client.net.connection import BrokerConnection
    from kafkawire.protocol import FetchRequest

    sent: list[int] = []
    real_send = BrokerConnection.send

    def send(self, request, *args, **kwargs):  # type: ignore[no-untyped-def]
        if isinstance(request, FetchRequest):
            sent.extend(p.current_leader_epoch for t in request.topics for p in t.partitions)
        return real_send(self, request, *args, **kwargs)

    monkeypatch.setattr(BrokerConnection, "send", send)
    topic = f"epochs-{uuid.uuid4().hex[:8]}"
    with Client(kafka_broker.bootstrap) as c:
        c.create_topics({topic: 1})
        c.produce(topic, [b"a", b"b", b"c"], partition=0)
        assert [bytes(v) for v in c.fetch(topic, 0, 0).value] == [b"a", b"b", b"c"]
        assert sent and set(sent) == {0}  # a new topic's leader epoch on one broker
        # Our metadata says epoch 7, newer than the leader's: it refuses (UNKNOWN_LEADER_EPOCH) rather than
        # answer; the client refreshes its metadata and fetches again with the leader's epoch.
        import dataclasses

        parts = c.cluster.topics[topic].partitions
        parts[0] = dataclasses.replace(parts[0], leader_epoch=7)
        sent.clear()
        assert [bytes(v) for v in c.fetch(topic, 0, 1).value] == [b"b", b"c"]
        assert sent[0] == 7 and sent[-1] == 0, sent
