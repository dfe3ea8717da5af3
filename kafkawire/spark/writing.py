"""How a write task turns the Arrow batches Spark hands it into produce calls: on a thread of their own, merged.

Spark feeds a Python writer Arrow batches of ``spark.sql.execution.arrow.maxRecordsPerBatch`` rows (10 000
by default: about 1 MB of 100-byte values). Producing each batch as it came cost a produce call per batch,
each waiting for its acknowledgements before the task read the next batch: the task alternated between
reading from Spark and waiting for Kafka.

:class:`ProduceThread` runs the produce calls on a thread of the task while the task reads and splits the
next batches (:func:`~kafkawire.spark.arrow.batch_to_produce_groups`). The thread waits for sockets and
runs the compiled encoder, the task waits for Spark's socket and Arrow's decoding: the two overlap. When the
thread is free it takes every group queued since its last call (up to :data:`MERGE_BYTES`), merges the
groups that go to the same topic and partition (:func:`merge_groups`, rows in order) and produces each
merged group in one call, as the Java producer's sender drains whatever accumulated while it was busy: a
thread that keeps up sends each batch as it comes, one that falls behind sends fewer, larger calls (full
batches for every partition, each request carrying several). It never waits for more input, so what the
task was handed is produced even while the task waits for its next batch. Calls run one at a time in the
order their rows came, so each partition keeps the order of its rows and an idempotent or transactional
producer's sequence numbers stay in order. The task stops handing groups over while :data:`MERGE_BYTES`
wait (a task holds about twice that, the groups waiting and the ones being written).

The first error of a produce call is raised in the task at its next hand-over (or at the end), after which
the thread writes nothing more; an error in the task stops the thread after the call under way.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

import pyarrow as pa

from .arrow import ProduceGroup

__all__ = ["MERGE_BYTES", "ProduceThread", "merge_groups"]

#: Most bytes of Arrow data merged into one round of produce calls, and most bytes waiting for the thread.
MERGE_BYTES = 8 << 20


def _nbytes(g: ProduceGroup) -> int:
    return int(g.values.nbytes) + (0 if g.keys is None else int(g.keys.nbytes))


def merge_groups(groups: list[ProduceGroup]) -> list[ProduceGroup]:
    """``groups`` with the same (topic, partition) merged into one, rows in their order; the merged groups in
    the order of their first rows. (Groups of one Arrow batch go to different partitions; merging changes no
    partition's order of rows.)"""
    by_target: dict[tuple[str, int | None], list[ProduceGroup]] = {}
    for g in groups:
        by_target.setdefault((g.topic, g.partition), []).append(g)
    out = []
    for (topic, partition), same in by_target.items():
        if len(same) == 1:
            out.append(same[0])
            continue
        values = pa.concat_arrays([g.values for g in same])
        keys = None
        if any(g.keys is not None for g in same):
            keys = pa.concat_arrays([pa.nulls(len(g.values), pa.binary()) if g.keys is None else g.keys for g in same])
        headers = None
        if any(g.headers is not None for g in same):
            headers = [h for g in same for h in (g.headers if g.headers is not None else [None] * len(g.values))]
        out.append(ProduceGroup(topic, partition, keys, values, headers))
    return out


class ProduceThread:
    """Runs ``produce(group) -> records sent`` on one background thread for the groups :meth:`submit` ted,
    merged as the module docstring says.

    Use as a context manager; :meth:`finish` waits for the last call and returns the records sent, raising
    the first error a call raised. Leaving the ``with`` block without :meth:`finish` (an error in the task)
    lets the call under way end, drops what was not started, and joins the thread.
    """

    def __init__(self, produce: Callable[[ProduceGroup], int], max_bytes: int = MERGE_BYTES) -> None:
        self._produce = produce
        self._max_bytes = max_bytes
        self._cond = threading.Condition()
        self._queue: deque[ProduceGroup] = deque()
        self._queued_bytes = 0
        self._closed = False  # nothing more will be submitted
        self._stopping = False  # the task failed: write nothing more
        self._error: BaseException | None = None
        self.sent = 0
        self._thread = threading.Thread(target=self._run, name="kafkawire-spark-produce", daemon=True)
        self._thread.start()

    def _take(self) -> list[ProduceGroup] | None:
        """The groups of the next round (None: the end), waiting for one when none is queued."""
        with self._cond:
            while not self._queue and not self._closed:
                self._cond.wait()
            if not self._queue:
                return None
            taken = [self._queue.popleft()]
            size = _nbytes(taken[0])
            while self._queue and size + _nbytes(self._queue[0]) <= self._max_bytes:
                g = self._queue.popleft()
                taken.append(g)
                size += _nbytes(g)
            self._queued_bytes -= size
            self._cond.notify_all()
            return taken

    def _run(self) -> None:
        while (taken := self._take()) is not None:
            if self._error is not None or self._stopping:
                continue  # an earlier call failed, or the task gave up: write nothing more
            try:
                for g in merge_groups(taken):
                    self.sent += self._produce(g)
            except BaseException as e:  # noqa: BLE001 (handed to the task's thread, which raises it)
                with self._cond:
                    self._error = e
                    self._cond.notify_all()

    def submit(self, group: ProduceGroup) -> None:
        """Queue ``group``; blocks while :data:`MERGE_BYTES` wait. Raises an earlier call's error."""
        with self._cond:
            while self._queued_bytes >= self._max_bytes and self._error is None:
                self._cond.wait()
            if self._error is not None:
                raise self._error
            self._queue.append(group)
            self._queued_bytes += _nbytes(group)
            self._cond.notify_all()

    def finish(self) -> int:
        """Wait for every submitted group; the records sent, or the first call's error."""
        self._close()
        if self._error is not None:
            raise self._error
        return self.sent

    def _close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join()

    def __enter__(self) -> ProduceThread:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread.is_alive():
            self._stopping = True
            self._close()
