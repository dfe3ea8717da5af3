"""kafkawire.spark.writing: produce calls on one thread in order, queued groups merged per (topic, partition)
with their rows in order, errors raised in the task, and nothing held back while the task waits for input."""

from __future__ import annotations

import threading
import time

import pyarrow as pa
import pytest

from kafkawire.spark.arrow import ProduceGroup
from kafkawire.spark.writing import ProduceThread, merge_groups


def _group(lo: int, hi: int, partition: int | None = None, topic: str = "t", keys: bool = True) -> ProduceGroup:
    values = pa.array([b"v%d" % i for i in range(lo, hi)], pa.binary())
    k = pa.array([None if i % 7 == 0 else b"k%d" % i for i in range(lo, hi)], pa.binary()) if keys else None
    return ProduceGroup(topic, partition, k, values, None)


def test_merge_groups_keeps_each_targets_rows_in_order():
    headers = [[("h", b"%d" % i)] for i in range(30, 40)]
    groups = [
        _group(0, 10, 0),
        _group(10, 20, 1),
        _group(20, 30, 0, keys=False),
        ProduceGroup("t", 1, None, pa.array([b"v%d" % i for i in range(30, 40)], pa.binary()), headers),
        _group(40, 50, 0, topic="u"),
    ]
    out = merge_groups(groups)
    assert [(g.topic, g.partition) for g in out] == [("t", 0), ("t", 1), ("u", 0)]
    p0, p1, u0 = out
    assert p0.values.to_pylist() == [b"v%d" % i for i in [*range(0, 10), *range(20, 30)]]
    assert p0.keys is not None
    assert p0.keys.to_pylist() == [None if i % 7 == 0 else b"k%d" % i for i in range(10)] + [None] * 10
    assert p0.headers is None
    assert p1.values.to_pylist() == [b"v%d" % i for i in [*range(10, 20), *range(30, 40)]]
    assert p1.headers == [None] * 10 + headers
    assert u0 is groups[4]  # alone: passed on as it is


def test_produce_thread_runs_calls_in_order_on_another_thread():
    seen: list[bytes] = []
    threads: set[int] = set()

    def produce(g: ProduceGroup) -> int:
        threads.add(threading.get_ident())
        time.sleep(0.002)  # slower than the task: groups queue up and are merged
        seen.extend(g.values.to_pylist())
        return len(g.values)

    with ProduceThread(produce) as t:
        for i in range(0, 5000, 100):
            t.submit(_group(i, i + 100))
        assert t.finish() == 5000
    assert seen == [b"v%d" % i for i in range(5000)]
    assert threads and threading.get_ident() not in threads


def test_produce_thread_produces_what_it_has_while_the_task_waits_for_more():
    produced = threading.Event()

    def produce(g: ProduceGroup) -> int:
        produced.set()
        return len(g.values)

    with ProduceThread(produce) as t:
        t.submit(_group(0, 10))
        assert produced.wait(30)  # not held back for more input
        assert t.finish() == 10


def test_produce_thread_stops_the_task_while_max_bytes_wait():
    release = threading.Event()

    def produce(g: ProduceGroup) -> int:
        release.wait(30)
        return len(g.values)

    one = _group(0, 100)
    limit = one.values.nbytes + one.keys.nbytes  # type: ignore[union-attr]
    with ProduceThread(produce, max_bytes=limit) as t:
        t.submit(one)  # taken by the thread, which waits in produce
        time.sleep(0.1)
        t.submit(_group(100, 200))  # queued: now max_bytes wait
        blocked = threading.Thread(target=t.submit, args=(_group(200, 300),))
        blocked.start()
        blocked.join(0.3)
        assert blocked.is_alive()  # back-pressure: the task waits for the thread
        release.set()
        blocked.join(30)
        assert t.finish() == 300


def test_produce_thread_raises_the_first_error_and_writes_nothing_after_it():
    seen: list[int] = []

    def produce(g: ProduceGroup) -> int:
        if g.partition == 3:
            raise ValueError("refused 3")
        seen.append(g.partition)
        time.sleep(0.01)
        return 1

    with pytest.raises(ValueError, match="refused 3"), ProduceThread(produce) as t:
        for i in range(20):
            t.submit(_group(i, i + 1, partition=i))
            time.sleep(0.02)  # (a round that merges groups keeps their partitions apart, in order)
        t.finish()
    assert seen == [0, 1, 2]


def test_produce_thread_stops_after_the_call_under_way_when_the_task_fails():
    started = threading.Event()
    release = threading.Event()
    seen: list[int | None] = []

    def produce(g: ProduceGroup) -> int:
        started.set()
        release.wait(10)
        seen.append(g.partition)
        return 1

    with pytest.raises(RuntimeError, match="task failed"), ProduceThread(produce) as t:
        t.submit(_group(0, 1, partition=0))
        assert started.wait(10)
        t.submit(_group(1, 2, partition=1))  # queued behind the call under way
        threading.Timer(0.05, release.set).start()
        raise RuntimeError("task failed")
    assert seen == [0]  # the call under way ended; the queued one was dropped
