"""Records waiting to be written, per topic (the Java client's ``RecordAccumulator``).

``Producer.send()`` is :meth:`SendPath.send` of the compiled accumulator (``_accumulator.pyx``, or its pure
twin ``_accumulator_pure.py``): it appends a record to its topic's :class:`RecordBuffer` (columns, not
per-record objects) and counts its bytes against ``buffer_memory``. The sender (:mod:`.sender`) detaches a
buffer to write it and puts back in front what was neither written nor handed back; the bytes of a record are
released once it is acknowledged or failed, as the Java client frees a batch's memory when it completes.
Not thread-safe on its own: every method is called with the producer's lock held (``send`` takes it).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ._impl import accumulator_impl
from .delivery import DeliveryBatch
from .settings import ProducerSettings
from .transaction import TransactionManager, TransactionState

if TYPE_CHECKING:
    from ._accumulator_pure import FULL, LINGERED, NO_SPACE, RecordBuffer, SendPath
else:
    FULL, LINGERED, NO_SPACE = accumulator_impl.FULL, accumulator_impl.LINGERED, accumulator_impl.NO_SPACE
    RecordBuffer, SendPath = accumulator_impl.RecordBuffer, accumulator_impl.SendPath

__all__ = ["FULL", "LINGERED", "NO_SPACE", "RecordAccumulator", "RecordBuffer"]

#: A completed write's delivery work: the batch and its rows whose callbacks wait to be run.
Completed = tuple[DeliveryBatch, np.ndarray]


class RecordAccumulator:
    """The producer's buffers, one per topic, and :attr:`core` (the :class:`SendPath` that ``send()`` is).
    ``wake`` is called when a buffer is made (the sender then schedules its write); ``settings`` decides
    when a buffer is full or has lingered; :attr:`space` is notified when buffered bytes are released."""

    def __init__(
        self,
        settings: ProducerSettings,
        lock: threading.RLock,
        txn: TransactionManager | None,
        wake: Callable[[], None],
        waiter: Callable[[str], object] | None,
    ) -> None:
        self.settings = settings
        self.waiter = waiter
        self.space = threading.Condition(lock)
        # after_send and make_room are the producer's; set by it before the first send.
        self.core = SendPath(
            settings, lock, txn, TransactionState.IN_TRANSACTION, self._new_batch, wake, None, None
        )
        self.buffers: dict[str, RecordBuffer] = self.core.buffers

    def _new_batch(self, topic: str) -> DeliveryBatch:
        return DeliveryBatch(topic, self.waiter)

    @property
    def buffered_bytes(self) -> int:
        """Bytes of the records sent and not yet acknowledged or failed (see ``buffer_memory``)."""
        return int(self.core.buffered_bytes)

    def release(self, nbytes: int) -> None:
        """Records of ``nbytes`` were acknowledged or failed: room for as many (wakes blocked sends)."""
        if nbytes:
            self.core.buffered_bytes -= nbytes
            self.space.notify_all()

    def due(self, now: float) -> tuple[list[str], float | None]:
        """Topics nothing was sent to for ``linger_ms`` (while records keep coming, ``send()`` writes a
        buffer ``linger_ms`` after its first record itself), and the seconds until the next one is due
        (None: no buffer)."""
        linger = self.settings.linger_ms / 1000
        due, wait = [], None
        for topic, buf in self.buffers.items():
            left = buf.last + linger - now
            if left <= 0:
                due.append(topic)
            else:
                wait = left if wait is None else min(wait, left)
        return due, wait

    def detach(
        self, topic: str, *, only_if_full: bool, only_if_lingered: bool, only_if_idle: bool, hold: bool
    ) -> RecordBuffer | None:
        """Take ``topic``'s buffer out to write it (``send()`` then fills a new one), or None: no records,
        or the condition asked for no longer holds (another thread wrote it meanwhile), or ``hold``."""
        buf = self.buffers.get(topic)
        if buf is None or not len(buf):
            self.buffers.pop(topic, None)
            return None
        settings = self.settings
        if only_if_full and len(buf) < settings.batch_records and buf.nbytes < settings.batch_bytes:
            return None
        if only_if_lingered and (time.monotonic() - buf.since) * 1000 < settings.linger_ms:
            return None
        if only_if_idle and (time.monotonic() - buf.last) * 1000 < settings.linger_ms:
            return None
        if hold:
            return None
        del self.buffers[topic]
        return buf

    def restore(self, topic: str, buf: RecordBuffer) -> None:
        """Put back a detached buffer's records that were neither written nor handed back, in front of
        those sent since."""
        if len(buf):
            newer = self.buffers.get(topic)
            if newer is not None:
                buf.extend(newer)
            self.buffers[topic] = buf

    def discard(self, error: BaseException) -> list[Completed]:
        """Fail every buffered record with ``error`` and empty the buffers; returns the delivery work
        (callbacks) to run once the lock is released."""
        completed: list[Completed] = []
        freed = 0
        for buf in self.buffers.values():
            completed += fail_rows(buf, np.arange(len(buf)), error)
            freed += buf.nbytes
        self.buffers.clear()
        self.release(freed)
        return completed

    def count(self) -> int:
        """Records buffered (a write in progress not counted)."""
        return sum(len(b) for b in self.buffers.values())


def _by_batch(buf: RecordBuffer, rows: np.ndarray) -> list[tuple[Any, np.ndarray, np.ndarray]]:
    """``rows`` of ``buf`` grouped by delivery batch: ``(batch, positions in rows, rows of the batch)``."""
    batches, bno, bidx = buf.row_refs()
    if len(batches) == 1:
        return [(batches[0], np.arange(len(rows)), bidx[rows])]
    out = []
    nos = bno[rows]
    for b in np.unique(nos).tolist():
        pos = np.flatnonzero(nos == b)
        out.append((batches[b], pos, bidx[rows[pos]]))
    return out


def acknowledge_rows(
    buf: RecordBuffer, rows: np.ndarray, partitions: np.ndarray, offsets: np.ndarray, timestamps: np.ndarray
) -> list[Completed]:
    """Resolve ``rows`` of ``buf`` as acknowledged (per-row partition, offset, timestamp)."""
    out: list[Completed] = []
    for batch, pos, brows in _by_batch(buf, rows):
        cb = batch.acknowledge(brows, partitions[pos], offsets[pos], timestamps[pos])
        if len(cb):
            out.append((batch, cb))
    return out


def fail_rows(buf: RecordBuffer, rows: np.ndarray, errors: BaseException | list[BaseException]) -> list[Completed]:
    """Resolve ``rows`` of ``buf`` as failed (one error, or one per row)."""
    out: list[Completed] = []
    for batch, pos, brows in _by_batch(buf, rows):
        errs = errors if isinstance(errors, BaseException) else [errors[j] for j in pos.tolist()]
        cb = batch.fail(brows, errs)
        if len(cb):
            out.append((batch, cb))
    return out
