"""Per-record delivery results for :meth:`kafkawire.client.Producer.send`.

``send()`` returns a :class:`DeliveryFuture` that resolves when the produce call carrying its record
returns: to a :class:`RecordMetadata` when the broker acknowledged it, or to the error that made the
record come back in :attr:`ProduceFailedError.unacknowledged`. The Java client's ``Future<RecordMetadata>``
plus ``Callback`` and confluent-kafka's ``on_delivery(err, msg)`` are the models: ``add_done_callback``
and ``send(..., on_delivery=...)`` run in the thread that wrote the batch (the producer's background
sender when ``linger_ms`` expired, ``send`` when a batch filled, ``flush``, ``close``, ``commit_transaction``),
after the producer released its locks, in the order the records were written.

A future is two fields (its :class:`DeliveryBatch` and its row there; the class is the compiled
accumulator's, ``_accumulator.pyx``, or its pure twin): the results, the one lock waiters sleep on and the
callbacks are the batch's, one per buffer the producer writes, and ``RecordMetadata`` is built only when
asked for. So a send whose future is dropped costs no lock and no result object (issue 32).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import KafkaTimeoutError, RecordDroppedError
from ._impl import accumulator_impl

if TYPE_CHECKING:
    from ._accumulator_pure import DeliveryFuture
else:
    DeliveryFuture = accumulator_impl.DeliveryFuture

__all__ = ["DeliveryBatch", "DeliveryCallback", "DeliveryFuture", "RecordDroppedError", "RecordMetadata"]

log = logging.getLogger("kafkawire.producer")

_PENDING, _OK, _FAILED = 0, 1, 2


@dataclass(frozen=True)
class RecordMetadata:
    """Where an acknowledged record was written. ``offset`` is -1 when the broker did not say (acks=0);
    ``timestamp`` is the broker's LogAppendTime when the topic uses it, else the record's own timestamp."""

    topic: str
    partition: int
    offset: int
    timestamp: int


#: ``callback(err, metadata)``: exactly one of the two is None (confluent-kafka's ``on_delivery`` order).
DeliveryCallback = Callable[[BaseException | None, RecordMetadata | None], object]


class DeliveryBatch:
    """The delivery results of the records of one producer buffer (``n`` of them, row ``i`` is the future
    with ``index`` i): resolved by the producer in one call per produce call, not per record.

    ``callbacks``: per row, ``(fn, future)`` pairs registered before the row completed (``future`` None:
    confluent-kafka's ``fn(err, metadata)``, else ``fn(future)``). ``waiter(topic)`` is called before a wait blocks (the
    producer writes the buffer itself when nobody else would)."""

    __slots__ = ("topic", "n", "cond", "state", "partition", "offset", "timestamp", "errors", "callbacks", "waiter")

    def __init__(self, topic: str, waiter: Callable[[str], object] | None = None) -> None:
        self.topic = topic
        self.n = 0  # rows known to be resolved or resolving (the buffer numbers its rows; see _arrays)
        self.cond = threading.Condition(threading.Lock())
        self.state: np.ndarray | None = None  # uint8 per row: pending, acknowledged, failed
        self.partition: np.ndarray | None = None
        self.offset: np.ndarray | None = None
        self.timestamp: np.ndarray | None = None
        self.errors: dict[int, BaseException] = {}
        self.callbacks: dict[int, list[tuple[Callable[..., object], Any]]] = {}
        self.waiter = waiter

    def _arrays(self, rows: np.ndarray) -> np.ndarray:
        # The buffer numbers the rows (send() does not touch the batch); a row put back in front of newer ones
        # and numbered after the batch was first resolved grows the arrays.
        if len(rows):
            self.n = max(self.n, int(rows.max()) + 1)
        if self.state is None or len(self.state) < self.n:
            n, old = self.n, self.state
            self.state = np.zeros(n, dtype=np.uint8)
            parts, offs, times = np.full(n, -1, np.int32), np.full(n, -1, np.int64), np.full(n, -1, np.int64)
            if old is not None:
                m = len(old)
                self.state[:m] = old
                assert self.partition is not None and self.offset is not None and self.timestamp is not None
                parts[:m], offs[:m], times[:m] = self.partition, self.offset, self.timestamp
            self.partition, self.offset, self.timestamp = parts, offs, times
        return self.state

    # ------------------------------------------------------------------------------ the producer's side
    def acknowledge(self, rows: np.ndarray, partitions: np.ndarray, offsets: np.ndarray,
                    timestamps: np.ndarray) -> np.ndarray:
        """Rows acknowledged at those partitions, offsets and timestamps. Returns the rows this call
        completed that have callbacks to run (see :meth:`run_callbacks`)."""
        with self.cond:
            state = self._arrays(rows)
            rows = rows[state[rows] == _PENDING]
            assert self.partition is not None and self.offset is not None and self.timestamp is not None
            self.partition[rows], self.offset[rows], self.timestamp[rows] = partitions, offsets, timestamps
            state[rows] = _OK
            self.cond.notify_all()
            return self._with_callbacks(rows)

    def fail(self, rows: np.ndarray, errors: BaseException | list[BaseException]) -> np.ndarray:
        """Rows failed with ``errors`` (one for all, or one per row); returns them as :meth:`acknowledge`."""
        with self.cond:
            state = self._arrays(rows)
            pending = state[rows] == _PENDING
            if isinstance(errors, BaseException):
                rows = rows[pending]
                self.errors.update(dict.fromkeys(rows.tolist(), errors))
            else:
                keep = pending.tolist()
                for i, e, ok in zip(rows.tolist(), errors, keep):
                    if ok:
                        self.errors[i] = e
                rows = rows[pending]
            state[rows] = _FAILED
            self.cond.notify_all()
            return self._with_callbacks(rows)

    def _with_callbacks(self, rows: np.ndarray) -> np.ndarray:
        if not self.callbacks:
            return rows[:0]
        cbs = self.callbacks
        return rows[[i in cbs for i in rows.tolist()]] if len(rows) else rows

    def run_callbacks(self, rows: np.ndarray) -> None:
        """Run the callbacks of ``rows`` (completed), in row order, each once."""
        for i in rows.tolist():
            with self.cond:
                entries = self.callbacks.pop(i, None)
            for fn, future in entries or ():
                _run(self, i, fn, future)

    # ------------------------------------------------------------------------------- the future's side
    def is_done(self, i: int) -> bool:
        state = self.state
        return state is not None and i < len(state) and bool(state[i])

    def _wait(self, i: int, timeout: float | None) -> None:
        if self.is_done(i):
            return
        waiter = self.waiter
        if waiter is not None:
            waiter(self.topic)
        with self.cond:
            if not self.cond.wait_for(lambda: self.is_done(i), timeout):
                raise KafkaTimeoutError(f"delivery to {self.topic!r} not known within {timeout} s")

    def metadata(self, i: int) -> RecordMetadata:
        assert self.partition is not None and self.offset is not None and self.timestamp is not None
        return RecordMetadata(self.topic, int(self.partition[i]), int(self.offset[i]), int(self.timestamp[i]))

    def result(self, i: int, timeout: float | None) -> RecordMetadata:
        self._wait(i, timeout)
        error = self.errors.get(i)
        if error is not None:
            raise error
        return self.metadata(i)

    def exception(self, i: int, timeout: float | None) -> BaseException | None:
        self._wait(i, timeout)
        return self.errors.get(i)

    def add_callback(self, i: int, fn: Callable[..., object], future: Any) -> None:
        """Call ``fn(future)`` (``future`` None: ``fn(err, metadata)``) once row ``i`` is done."""
        with self.cond:
            if not self.is_done(i):
                self.callbacks.setdefault(i, []).append((fn, future))
                return
        _run(self, i, fn, future)

    def describe(self, i: int) -> str:
        if not self.is_done(i):
            return "pending"
        error = self.errors.get(i)
        return repr(error) if error is not None else repr(self.metadata(i))


def _run(batch: DeliveryBatch, i: int, fn: Callable[..., object], future: Any) -> None:
    # A failing callback must not stop the other records' results (librdkafka logs and goes on too).
    try:
        if future is None:
            error = batch.errors.get(i)
            fn(error, None if error is not None else batch.metadata(i))
        else:
            fn(future)
    except Exception:
        log.exception("delivery callback %r raised", fn)


def as_done_callback(callback: DeliveryCallback) -> Callable[[Any], object]:
    """Wrap a confluent-style ``callback(err, metadata)`` for :meth:`DeliveryFuture.add_done_callback`."""

    def call(fut: Any) -> object:
        error = fut.exception(0)
        return callback(error, None if error is not None else fut.result(0))

    return call
