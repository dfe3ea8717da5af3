"""Records waiting to be written, per topic (the Java client's ``RecordAccumulator``).

``Producer.send()`` appends a record to its topic's :class:`TopicBuffer`; the sender
(:mod:`.sender`) detaches a buffer to write it and puts back in front what was neither written nor
handed back. Not thread-safe on its own: every method is called with the producer's lock held.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .delivery import DeliveryFuture
from .settings import ProducerSettings

__all__ = ["FULL", "LINGERED", "RecordAccumulator", "TopicBuffer", "as_bytes"]

#: What :meth:`RecordAccumulator.append` asks of its caller: write the buffer now (back-pressure) ...
FULL = 1
#: ... or write it unless a write is under way (see ``Producer.send``).
LINGERED = 2

_MIN_INLINE_MS = 1.0  # the youngest buffer send() writes itself (see append())


def as_bytes(data: bytes | bytearray | memoryview | str | None) -> bytes | None:
    """A value or key as the buffer keeps it: ``str`` as UTF-8; a bytearray or memoryview copied (the caller
    may change it before the batch is written; a memoryview's ``len`` counts items, not bytes)."""
    if data is None or isinstance(data, bytes):
        return data
    if isinstance(data, str):
        return data.encode()
    return bytes(data)


@dataclass
class TopicBuffer:
    """One topic's records not written yet, column by column, oldest first."""

    values: list[bytes | None] = field(default_factory=list)
    keys: list[bytes | None] = field(default_factory=list)
    headers: list[Sequence[tuple[str, bytes | None]] | None] = field(default_factory=list)
    timestamps: list[int] = field(default_factory=list)
    partitions: list[int | None] = field(default_factory=list)
    futures: list[DeliveryFuture] = field(default_factory=list)
    nbytes: int = 0
    since: float = 0.0  # time.monotonic() of the first record
    last: float = 0.0  # ... and of the latest

    def drop(self, rows: Sequence[int]) -> None:
        """Remove ``rows`` (positions in the buffer) once they were written or handed back."""
        gone = set(rows)
        keep = [i for i in range(len(self.values)) if i not in gone]
        self.values = [self.values[i] for i in keep]
        self.keys = [self.keys[i] for i in keep]
        self.headers = [self.headers[i] for i in keep]
        self.timestamps = [self.timestamps[i] for i in keep]
        self.partitions = [self.partitions[i] for i in keep]
        self.futures = [self.futures[i] for i in keep]
        self.nbytes = sum(len(v or b"") + len(k or b"") for v, k in zip(self.values, self.keys))

    def extend(self, newer: TopicBuffer) -> None:
        """Append the records of ``newer`` (sent while this buffer was being written) after these."""
        self.values += newer.values
        self.keys += newer.keys
        self.headers += newer.headers
        self.timestamps += newer.timestamps
        self.partitions += newer.partitions
        self.futures += newer.futures
        self.nbytes += newer.nbytes
        self.last = max(self.last, newer.last)

    def calls(self) -> list[tuple[int | None, list[int]]]:
        """The buffer's rows per produce call: one call when no record names a partition, else one per
        explicit partition and one (partition None: the client partitions them) for the rest."""
        if all(p is None for p in self.partitions):
            return [(None, list(range(len(self.values))))]
        by: dict[int | None, list[int]] = {}
        for i, p in enumerate(self.partitions):
            by.setdefault(p, []).append(i)
        return list(by.items())


class RecordAccumulator:
    """The producer's buffers, one per topic. ``wake`` is called when a buffer is made (the sender then
    schedules its write); ``settings`` decides when a buffer is full or has lingered."""

    def __init__(self, settings: ProducerSettings, wake: Callable[[], None]) -> None:
        self.settings = settings
        self.buffers: dict[str, TopicBuffer] = {}
        self.wake = wake

    def append(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None,
        headers: Sequence[tuple[str, bytes | None]] | None,
        timestamp_ms: int | None,
        partition: int | None,
        fut: DeliveryFuture,
        now: float,
    ) -> int:
        """Buffer one record sent at ``now`` (``time.monotonic()``). Returns :data:`FULL` when its buffer
        must be written now, :data:`LINGERED` when it may be, else 0."""
        buf = self.buffers.get(topic)
        if buf is None:
            buf = self.buffers[topic] = TopicBuffer(since=now)
            self.wake()
        buf.last = now
        buf.values.append(value)
        buf.keys.append(key)
        buf.headers.append(list(headers) if headers else None)
        buf.timestamps.append(int(time.time() * 1000) if timestamp_ms is None else int(timestamp_ms))
        buf.partitions.append(partition)
        buf.futures.append(fut)
        buf.nbytes += len(value or b"") + len(key or b"")
        settings = self.settings
        if len(buf.values) >= settings.batch_records or buf.nbytes >= settings.batch_bytes:
            return FULL
        # Not sooner than _MIN_INLINE_MS: with linger_ms=0 every send() would write its one record itself
        # and wait for the answer (kafkawire tune measured under 1,000 records/s). The sender, woken when
        # the buffer was made, writes it at once, and what is sent meanwhile accumulates for its next
        # write, as in the Java producer.
        if (now - buf.since) * 1000 >= max(settings.linger_ms, _MIN_INLINE_MS):
            return LINGERED
        return 0

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
    ) -> TopicBuffer | None:
        """Take ``topic``'s buffer out to write it (``send()`` then fills a new one), or None: no records,
        or the condition asked for no longer holds (another thread wrote it meanwhile), or ``hold``."""
        buf = self.buffers.get(topic)
        if buf is None or not buf.values:
            self.buffers.pop(topic, None)
            return None
        settings = self.settings
        if only_if_full and len(buf.values) < settings.batch_records and buf.nbytes < settings.batch_bytes:
            return None
        if only_if_lingered and (time.monotonic() - buf.since) * 1000 < settings.linger_ms:
            return None
        if only_if_idle and (time.monotonic() - buf.last) * 1000 < settings.linger_ms:
            return None
        if hold:
            return None
        del self.buffers[topic]
        return buf

    def restore(self, topic: str, buf: TopicBuffer) -> None:
        """Put back a detached buffer's records that were neither written nor handed back, in front of
        those sent since."""
        if buf.values:
            newer = self.buffers.get(topic)
            if newer is not None:
                buf.extend(newer)
            self.buffers[topic] = buf

    def discard(self, error: BaseException) -> list[DeliveryFuture]:
        """Fail every buffered record with ``error`` and empty the buffers; returns the futures whose
        callbacks are to be run."""
        completed = [fut for buf in self.buffers.values() for fut in buf.futures if fut.settle(None, error)]
        self.buffers.clear()
        return completed

    def count(self) -> int:
        """Records buffered (a write in progress not counted)."""
        return sum(len(b.values) for b in self.buffers.values())
