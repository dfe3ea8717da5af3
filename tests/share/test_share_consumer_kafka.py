"""ShareConsumer against Apache Kafka 4.4: implicit and explicit acknowledgement, release, reject, expired
acquisition locks and the delivery limit (the broker's locks are short here: see conftest.py)."""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import pytest

from kafkawire.client import Client, ShareConsumer, ShareStateError, WakeupError

from .helpers import DELIVERY_LIMIT, new_group, new_topic

pytestmark = pytest.mark.broker

WAIT_S = 60  # a loaded 2-core machine: generous bounds on how long records take to arrive


def _produce(client: Client, topic: str, partitions: int, per_partition: int) -> set[tuple[str, int, int]]:
    sent = set()
    for p in range(partitions):
        res = client.produce(topic, [f"{p}-{i}".encode() for i in range(per_partition)], partition=p)
        sent.update((topic, p, int(o)) for o in res.offset)
    return sent


def test_implicit_mode_consumes_every_record_once(share_kafka):
    client = Client(share_kafka.bootstrap)
    topic = new_topic(client, 3)
    sent = _produce(client, topic, 3, 1000)
    group = new_group(share_kafka.bootstrap)
    seen: Counter = Counter()
    with ShareConsumer(share_kafka.bootstrap, group_id=group) as c:
        c.subscribe([topic])
        until = time.monotonic() + WAIT_S
        while len(seen) < len(sent) and time.monotonic() < until:
            for (t, p), cols in c.poll(1000).items():
                assert cols.delivery_count.dtype == np.int16 and set(cols.delivery_count.tolist()) == {1}
                assert cols.value.to_pylist()[0] == f"{p}-{cols.offset[0]}".encode()
                first = next(iter(cols))  # a per-record view knows where it came from (issue 32)
                assert (first.topic, first.partition, first.offset) == (t, p, int(cols.offset[0]))
                seen.update((t, p, int(o)) for o in cols.offset)
        results = c.commit(timeout_ms=30_000)
        assert results and all(err is None for err in results.values()), results
        m = c.metrics()
        assert m["records_consumed"] == len(sent) and m["acknowledged"]["accept"] == len(sent)
    assert set(seen) == sent and max(seen.values()) == 1
    # Everything was accepted: another member of the group gets nothing.
    with ShareConsumer(share_kafka.bootstrap, group_id=group) as c2:
        c2.subscribe([topic])
        got = sum(len(cols) for _ in range(4) for cols in c2.poll(1000).values())
    assert got == 0
    client.close()


def test_explicit_accept_release_reject(share_kafka):
    client = Client(share_kafka.bootstrap)
    topic = new_topic(client, 1)
    sent = {o for _, _, o in _produce(client, topic, 1, 30)}
    group = new_group(share_kafka.bootstrap)
    tp = (topic, 0)
    accepted: dict[int, int] = {}  # offset -> delivery count when accepted
    rejected: set[int] = set()
    released_once: set[int] = set()
    with ShareConsumer(share_kafka.bootstrap, group_id=group, acknowledgement_mode="explicit") as c:
        c.subscribe([topic])
        until = time.monotonic() + WAIT_S
        first = True
        while len(accepted) + len(rejected) < len(sent) and time.monotonic() < until:
            out = c.poll(1000)
            if tp not in out:
                continue
            cols = out[tp]
            offsets = cols.offset.tolist()
            counts = dict(zip(offsets, cols.delivery_count.tolist()))
            assert not rejected & set(offsets), "a rejected record was delivered again"
            if first:
                first = False
                with pytest.raises(ShareStateError, match="not acknowledged"):
                    c.poll(100)
                with pytest.raises(ValueError, match="not delivered"):
                    c.acknowledge(tp, [max(sent) + 5])
                release = [o for o in offsets if o % 3 == 0]
                reject = [o for o in offsets if o % 3 == 1]
                c.acknowledge(tp, np.array(release), "release")
                c.acknowledge(tp, reject, "reject")
                released_once.update(release)
                rejected.update(reject)
                rest = [o for o in offsets if o % 3 == 2]
            else:
                rest = offsets
            c.acknowledge(tp, rest, "accept")
            accepted.update({o: counts[o] for o in rest})
        assert c.commit(timeout_ms=30_000) is not None
        # Nothing left: the rejected records never come back.
        extra = [o for _ in range(3) for cols in c.poll(1000).values() for o in cols.offset.tolist()]
        assert extra == []
    assert released_once and rejected
    assert set(accepted) | rejected == sent and not set(accepted) & rejected
    assert all(accepted[o] == 2 for o in released_once), {o: accepted[o] for o in released_once}
    assert all(accepted[o] == 1 for o in set(accepted) - released_once)
    client.close()


def test_lock_expired_record_comes_back_to_another_member(share_kafka):
    client = Client(share_kafka.bootstrap)
    topic = new_topic(client, 1)
    sent = {o for _, _, o in _produce(client, topic, 1, 20)}
    group = new_group(share_kafka.bootstrap)
    holder = ShareConsumer(share_kafka.bootstrap, group_id=group, acknowledgement_mode="explicit")
    holder.subscribe([topic])
    held: set[int] = set()
    until = time.monotonic() + WAIT_S
    while not held and time.monotonic() < until:
        held.update(int(o) for cols in holder.poll(1000).values() for o in cols.offset)
    assert held, "the first member got nothing"
    # The holder neither acknowledges nor polls again: its acquisition locks expire (5 s here).
    counts: dict[int, int] = {}
    with ShareConsumer(share_kafka.bootstrap, group_id=group) as other:
        other.subscribe([topic])
        until = time.monotonic() + WAIT_S
        while not held <= set(counts) and time.monotonic() < until:
            for cols in other.poll(1000).values():
                counts.update(zip(cols.offset.tolist(), cols.delivery_count.tolist()))
        other.commit(timeout_ms=30_000)
    holder.close(timeout_ms=10_000)
    assert held <= set(counts), f"records {sorted(held - set(counts))[:5]} did not come back"
    assert all(counts[o] == 2 for o in held)
    assert set(counts) == sent
    client.close()


def test_past_the_delivery_limit_a_record_is_archived(share_kafka):
    client = Client(share_kafka.bootstrap)
    topic = new_topic(client, 1)
    _produce(client, topic, 1, 1)
    group = new_group(share_kafka.bootstrap)
    tp = (topic, 0)
    deliveries = []
    with ShareConsumer(share_kafka.bootstrap, group_id=group, acknowledgement_mode="explicit") as c:
        c.subscribe([topic])
        until = time.monotonic() + WAIT_S
        while time.monotonic() < until and len(deliveries) < DELIVERY_LIMIT + 1:
            out = c.poll(1000)
            if tp in out:
                deliveries.extend(out[tp].delivery_count.tolist())
                c.acknowledge(tp, out[tp].offset, "release")
            elif len(deliveries) == DELIVERY_LIMIT:
                # Released at the limit: archived. Prove the member still fetches: a new record arrives alone.
                client.produce(topic, [b"after"], partition=0)
                for _ in range(10):
                    out = c.poll(1000)
                    if tp in out:
                        assert out[tp].value.to_pylist() == [b"after"] and out[tp].offset.tolist() == [1]
                        c.acknowledge(tp, out[tp].offset, "accept")
                        break
                break
        c.commit(timeout_ms=30_000)
    assert deliveries == list(range(1, DELIVERY_LIMIT + 1))
    client.close()


def test_commit_async_callbacks_wakeup_and_close_releasing(share_kafka):
    client = Client(share_kafka.bootstrap)
    topic = new_topic(client, 1)
    tp = (topic, 0)
    first = client.produce(topic, [b"a%d" % i for i in range(100)], partition=0).offset
    second = client.produce(topic, [b"b%d" % i for i in range(100)], partition=0).offset
    group = new_group(share_kafka.bootstrap)
    async_results: list = []
    c = ShareConsumer(share_kafka.bootstrap, group_id=group, acknowledgement_mode="explicit", max_poll_records=100)
    c.subscribe([topic])
    got = {}
    until = time.monotonic() + WAIT_S
    while not got and time.monotonic() < until:
        got = c.poll(1000)
    assert got[tp].offset.tolist() == first.tolist()  # one batch per fetch: the first produce call
    c.acknowledge(tp, got[tp].offset, "accept")
    c.commit_async(lambda results, error: async_results.append((results, error)))
    assert async_results == []  # sent, not waited for
    c.wakeup()
    with pytest.raises(WakeupError):
        c.poll(5000)
    held = {}
    until = time.monotonic() + WAIT_S
    while not held and time.monotonic() < until:
        held = c.poll(1000)
    assert async_results == [({tp: None}, None)]  # completed by the poll after it
    assert held[tp].offset.tolist() == second.tolist()
    # close() releases what is not acknowledged: another member gets it at once, its delivery count raised.
    c.close()
    counts: dict[int, int] = {}
    ridden: list = []
    with ShareConsumer(share_kafka.bootstrap, group_id=group, acknowledgement_commit_callback=ridden.append) as other:
        other.subscribe([topic])
        until = time.monotonic() + WAIT_S
        while len(counts) < len(second) and time.monotonic() < until:
            for cols in other.poll(1000).values():
                counts.update(zip(cols.offset.tolist(), cols.delivery_count.tolist()))
        other.poll(500)  # accepts the last poll's records; the answer reaches the callback
    assert set(counts) == set(second.tolist()) and set(counts.values()) == {2}
    assert ridden and all(err is None for results in ridden for err in results.values())
    client.close()
