"""Prefetch: the next Fetch is on its way while the caller works on the current one.

:func:`~kafkawire.client.consumer.fetch.fetch_many` given a :class:`Prefetcher` does, per broker: read the
response, send the next Fetch for the same partitions at the offsets that follow (computed from the batch
headers alone, :func:`next_offsets_of`), and only then decode the response into columns. The broker reads
its log for the next answer while this one is decoded and while the caller (``Consumer.poll``'s user, the
range reader's Spark task or CLI) processes it; the next ``fetch_many`` finds it answered.

A Fetch sent ahead is used only when the next call asks that broker for exactly the same partitions at
exactly the same offsets with the same limits, so it can never return other records than a fetch sent then
would: a ``seek()``, an assignment change, a rebalance, a pause, a leader change or an offset the decoder
computed differently all make it stale, and a stale one is *drained* (its answer read and dropped, the fetch
session moved on with it, KIP-227) before anything else is sent to that broker. Nothing is prefetched for a
broker none of whose partitions has records waiting beyond the next offset (high watermark, or last stable
offset under read_committed): such a Fetch would be held by the broker for ``max_wait_ms`` and delay every
request queued behind it on the connection.

Bound: at most one Fetch per broker is ahead, and its answer is at most ``max_bytes`` (the consumer's
``fetch.max.bytes``): the memory prefetching adds is one response per broker, ``fetch.max.bytes`` each.

A thread of the prefetcher (:class:`_AheadReader`, started with the first Fetch sent ahead, ended after a
second without one) reads each answer off its socket as it arrives (:meth:`BrokerConnection.read_ahead`), so
that copying it out of the socket, half of a consume's time when the caller does little with the records,
overlaps the decoding of the previous answer and the caller's own work instead of following them; the answer
waits in the connection for the next ``fetch_many``, which decodes it.
"""

from __future__ import annotations

import logging
import struct
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..net.deadline import Deadline
from .fetch_session import FetchSessionHandler, SessionRequest

__all__ = ["Ahead", "Prefetcher", "next_offsets_of"]

log = logging.getLogger("kafkawire.client.prefetch")

TP = tuple[str, int]
_ENTRY = struct.Struct(">qi")  # base offset, length: the start of every entry (batch or legacy message)
_DELTA = struct.Struct(">i")  # lastOffsetDelta at byte 23 of a magic-2 batch


def next_offsets_of(records: Any, fetch_offset: int) -> int:
    """Where the fetch after one that returned ``records`` (a partition's raw ``records`` bytes) for
    ``fetch_offset`` starts, read from the entry headers without decoding: after the last complete entry
    (``baseOffset + lastOffsetDelta + 1`` for a v2 batch, ``offset + 1`` for a legacy one), else
    ``fetch_offset``. The same rule as the decoder's ``next_offset`` (docs/CODEC-SPEC.md); where they differ
    (a legacy compressed wrapper whose offset is not its last), the prefetch is found stale and drained."""
    if records is None:
        return fetch_offset
    view = memoryview(records)
    size = len(view)
    pos, nxt = 0, -1
    while pos + 12 <= size:
        base, length = _ENTRY.unpack_from(view, pos)
        end = pos + 12 + length
        if length < 14 or end > size:
            break
        if view[pos + 16] == 2:
            if length < 49:  # too short for a v2 header: leave it to the decoder to report
                break
            nxt = base + _DELTA.unpack_from(view, pos + 23)[0] + 1
        else:
            nxt = base + 1
        pos = end
    return nxt if nxt >= 0 else fetch_offset


@dataclass
class Ahead:
    """A Fetch sent ahead to broker ``leader`` for ``offsets``, with the limits in ``key``."""

    leader: int
    key: tuple[Any, ...]
    offsets: dict[TP, int]
    pending: Any  # PendingResponse
    handler: FetchSessionHandler | None
    sreq: SessionRequest | None
    timeout_ms: float


class _AheadReader:
    """One thread reading the answers of Fetches sent ahead off their connections, in the order sent."""

    #: Seconds the thread waits for another Fetch sent ahead before it ends (a new one starts with the next).
    IDLE_S = 1.0

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: deque[Ahead] = deque()
        self._thread: threading.Thread | None = None
        self._closed = False
        #: Answers this thread read off their sockets (the rest were collected by the reader first).
        self.read = 0

    def submit(self, ahead: Ahead) -> None:
        with self._cond:
            if self._closed:
                return
            self._queue.append(ahead)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="kafkawire-prefetch", daemon=True)
                self._thread.start()
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._queue and not self._closed:
                    self._cond.wait(self.IDLE_S)
                if not self._queue or self._closed:
                    self._thread = None
                    return
                ahead = self._queue.popleft()
            # Returns as soon as the reader's own thread collected the answer, or the connection closed.
            if ahead.pending.connection.read_ahead(ahead.pending.correlation_id, Deadline.from_ms(ahead.timeout_ms)):
                self.read += 1

    def close(self, timeout_s: float) -> None:
        """Stop the thread (it ends within its current read: the answers were drained or their
        connections closed) and wait for it at most ``timeout_s``."""
        with self._cond:
            self._closed = True
            self._queue.clear()
            thread = self._thread
            self._cond.notify_all()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)


class Prefetcher:
    """The Fetches one reader (a ``Consumer``, a range read) has sent ahead: at most one per broker.

    Pass it to ``Client.fetch_many(prefetch=...)`` on every call of the reader; :meth:`close` drains what is
    still ahead (needed only when the client stays open: closing a client drops its connections)."""

    def __init__(self) -> None:
        self._ahead: dict[int, Ahead] = {}
        self._lock: Any = None  # the client's cluster lock, from the first fetch
        self._reader = _AheadReader()
        #: Fetches answered from ahead / sent ahead / drained unused (for tests and metrics).
        self.used = self.sent = self.drained = 0

    def __len__(self) -> int:
        return len(self._ahead)

    @property
    def read_by_thread(self) -> int:
        """Answers of Fetches sent ahead that the prefetcher's thread read off their sockets."""
        return self._reader.read

    def bind(self, lock: Any) -> None:
        """Remember the client's lock (taken by :meth:`close`)."""
        self._lock = lock

    def put(self, ahead: Ahead) -> None:
        """Keep ``ahead`` (the caller drained any earlier one for the same broker)."""
        self._ahead[ahead.leader] = ahead
        self.sent += 1
        self._reader.submit(ahead)

    def take(self, leader: int, key: tuple[Any, ...], offsets: Mapping[TP, int], deadline: Deadline) -> Ahead | None:
        """The Fetch ahead for ``leader`` when it asked for exactly ``offsets`` with ``key``; a different one
        is drained (and None returned), so the caller may send afresh."""
        ahead = self._ahead.pop(leader, None)
        if ahead is None:
            return None
        if ahead.key == key and ahead.offsets == dict(offsets):
            self.used += 1
            return ahead
        self._drain(ahead, deadline)
        return None

    def drain_except(self, leaders: set[int], deadline: Deadline) -> None:
        """Drain what is ahead for brokers not in ``leaders`` (the partitions moved, or are not read now)."""
        for leader in [k for k in self._ahead if k not in leaders]:
            self._drain(self._ahead.pop(leader), deadline)

    def _drain(self, ahead: Ahead, deadline: Deadline) -> None:
        # Read the answer (the connection answers in order, and the broker moved the fetch session on with
        # it) and drop its records undecoded.
        self.drained += 1
        try:
            resp = ahead.pending.result(ahead.timeout_ms, deadline=deadline)
        except Exception as e:  # the connection failed or time ran out: the session starts afresh
            log.debug("prefetched fetch from node %d not drained: %s", ahead.leader, e)
            if ahead.handler is not None:
                ahead.handler.handle_error()
            return
        if ahead.handler is not None and ahead.sreq is not None:
            ahead.handler.handle_response(ahead.sreq, getattr(resp, "error_code", 0) or 0,
                                          getattr(resp, "session_id", 0) or 0)

    def close(self, timeout_ms: float = 5_000) -> None:
        """Drain every Fetch still ahead, within ``timeout_ms``, and stop the reading thread. (With the
        client closed instead, nothing is left to drain: closing its connections ends the thread's read.)"""
        deadline = Deadline.from_ms(timeout_ms)
        if self._ahead:  # (_drain keeps its errors: nothing here raises)
            lock = self._lock
            # Within timeout_ms, the wait for the client's lock included: another thread's call may hold it.
            if lock is None or lock.acquire(timeout=min(deadline.remaining(), threading.TIMEOUT_MAX)):
                try:
                    self.drain_except(set(), deadline)
                finally:
                    if lock is not None:
                        lock.release()
        self._reader.close(min(1.0, deadline.remaining()))
