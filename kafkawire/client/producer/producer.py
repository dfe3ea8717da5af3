"""A buffering producer on top of :meth:`kafkawire.Client.produce`.

``send()`` only appends to a per-topic buffer; the buffer goes out as one ``produce()`` call (records
spread over partitions, batched per partition) when it reaches ``batch_records`` / ``batch_bytes`` (written
by that ``send()``), when ``linger_ms`` has passed since its first record (written by the producer's
background sender thread, as the Java client's ``Sender`` does), or on ``flush()`` / ``close()``. So
``producer.send(topic, b"v").result(timeout=5)`` resolves without a ``flush()``. Writes are serialised
(one at a time, oldest records first), which keeps every partition's records in order and the idempotent
producer's sequence numbers gapless; ``send()`` does not wait for a background write unless it must write a
full batch itself (back-pressure). Everything the blocking client guarantees holds: idempotent retries, murmur2
partitioning, one request per leader, and retries until the delivery timeout (``delivery_timeout_ms``,
default the client's ``retry_timeout_ms``).

Nothing is dropped silently: records leave the buffer only once ``produce()`` returned, or raised
:class:`~kafkawire.client.errors.ProduceFailedError`, whose ``unacknowledged`` hands the records that
were not acknowledged (values, keys, headers, timestamps per partition) back to the application to
send again. Any other exception (an interrupt, an authorization error) leaves them in the buffer, and
the next ``flush()`` tries them again. A background write has nobody to raise to: its records' futures fail
with the cause, and its ``ProduceFailedError`` (with ``unacknowledged``; any other error is wrapped in one)
is raised by the next ``flush()`` or ``close()``.

Transactions (KIP-98): with ``transactional_id`` the producer writes inside transactions that readers with
``isolation="read_committed"`` see whole or not at all::

    producer = Producer(bootstrap, transactional_id="orders-1")
    producer.init_transactions()          # fences older instances with this id, aborts their transaction
    with producer.transaction():          # commit_transaction() on success, abort_transaction() on error
        producer.send("out", b"v")
        producer.send_offsets_to_transaction({("in", 0): 42}, consumer.group_metadata())

Errors follow the Java client (:mod:`kafkawire.client.producer.transaction`): ``ProducerFencedError`` and other
fatal errors leave the producer only closable; an abortable error (a refused batch, a zombie consumer's
offsets) must be followed by ``abort_transaction()``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...records import check_record_arguments
from ..client import Client, resolve_client
from ..errors import ProduceFailedError
from ..types import ProduceResult, UnacknowledgedRecords
from .delivery import DeliveryCallback, DeliveryFuture, RecordDroppedError, RecordMetadata, as_done_callback
from .transaction import GroupMetadata, TransactionHandle, TransactionManager, TransactionState
from .txn_offsets import send_offsets_to_transaction

__all__ = ["Producer"]

_IN_TXN = TransactionState.IN_TRANSACTION

log = logging.getLogger("kafkawire.producer")

#: What ``send`` takes as a value or key besides ``str`` (written as UTF-8) and None, as the README says.
BytesLike = bytes | bytearray | memoryview


def _as_bytes(data: BytesLike | str | None) -> bytes | None:
    """A value or key as the buffer keeps it: ``str`` as UTF-8; a bytearray or memoryview copied (the caller
    may change it before the batch is written; a memoryview's ``len`` counts items, not bytes)."""
    if data is None or isinstance(data, bytes):
        return data
    if isinstance(data, str):
        return data.encode()
    return bytes(data)


@dataclass
class _Buffer:
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

    def extend(self, newer: _Buffer) -> None:
        """Append the records of ``newer`` (sent while this buffer was being written) after these."""
        self.values += newer.values
        self.keys += newer.keys
        self.headers += newer.headers
        self.timestamps += newer.timestamps
        self.partitions += newer.partitions
        self.futures += newer.futures
        self.nbytes += newer.nbytes
        self.last = max(self.last, newer.last)


class _SenderState:
    """What the background sender thread shares with its producer without keeping it alive: the
    condition it sleeps on (over the producer's lock) and the flags that wake or stop it."""

    def __init__(self, lock: threading.RLock) -> None:
        self.cond = threading.Condition(lock)
        self.stop = False
        self.idle = False  # the sender sleeps until a buffer exists
        self.kick = False  # a new buffer exists: recompute when to wake


_MAX_NAP = 0.05  # seconds
_MIN_INLINE_MS = 1.0  # the youngest buffer send() writes itself (see send())


def _sender_main(
    due_ref: weakref.WeakMethod[Callable[[float], tuple[list[str], float | None]]],
    write_ref: weakref.WeakMethod[Callable[[list[str]], None]],
    state: _SenderState,
) -> None:
    """The background sender: writes every buffer whose ``linger_ms`` has passed. Holds the producer only
    while working (a weak reference otherwise), so a producer dropped without ``close()`` is collected and
    its ``__del__`` stops this thread.

    While records keep coming, ``send()`` writes lingered buffers itself and the sender finds nothing to do;
    it then naps longer each time (up to ``_MAX_NAP``) rather than take the GIL from the sending thread every
    ``linger_ms`` (measured: 30% of send throughput). A buffer nothing is sent to any more is written at
    most a nap after its ``linger_ms``."""
    nap = 0.0
    while True:
        find_due, write = due_ref(), write_ref()  # the producer's _due and _write_background, bound
        if find_due is None or write is None:
            return
        try:
            with state.cond:
                if state.stop:
                    return
                state.kick = False
                due, wait = find_due(time.monotonic())
                if not due:
                    find_due = write = None  # may run the producer's __del__ here, which sets stop
                    if wait is None:
                        nap, state.idle = 0.0, True
                    else:
                        wait = max(wait, nap)
                        nap = min(max(2 * nap, wait), _MAX_NAP)
                    state.cond.wait_for(lambda: state.stop or state.kick, wait)
                    state.idle = False
                    continue
            nap = 0.0
            write(due)
        except Exception:  # never let the thread die silently: the next flush() still writes everything
            log.exception("kafkawire producer sender: unexpected error")
            with state.cond:  # back off, but a close() or a dropped producer still stops the thread at once
                state.cond.wait_for(lambda: state.stop, 0.1)
        finally:
            find_due = write = None


class Producer:
    """Buffer records and write them in batches.

    ``compression``, ``acks``: as in :meth:`Client.produce`; ``delivery_timeout_ms`` bounds each
    write, retries included (default: the client's ``retry_timeout_ms``). Pass ``client`` to share a
    :class:`Client`, or ``bootstrap_servers`` and any :class:`Client` options.

    ``transactional_id`` makes the producer transactional (see the module docstring); its transactions
    time out on the coordinator after ``transaction_timeout_ms`` (the broker's
    ``transaction.max.timeout.ms`` caps it). ``acks`` must then be -1.
    """

    def __init__(
        self,
        bootstrap_servers: str | list[str] | None = None,
        *,
        client: Client | None = None,
        batch_records: int = 100_000,
        batch_bytes: int = 16 << 20,
        linger_ms: float = 5.0,
        compression: str | None = None,
        acks: int = -1,
        delivery_timeout_ms: float | None = None,
        transactional_id: str | None = None,
        transaction_timeout_ms: int = 60_000,
        **client_options: Any,
    ) -> None:
        if transactional_id is not None and acks != -1:
            raise ValueError(f"a transactional producer needs acks=-1, not {acks!r}")
        client, self._own_client = resolve_client(bootstrap_servers, client, client_options)
        self.client = client
        self.batch_records = batch_records
        self.batch_bytes = batch_bytes
        self.linger_ms = linger_ms
        self.compression = compression
        self.acks = acks
        self.delivery_timeout_ms = delivery_timeout_ms
        self._buffers: dict[str, _Buffer] = {}
        # Lock order: _write_lock (one write at a time, in order), then _lock (buffers and state, held
        # briefly; never during network I/O), then _deliver_lock (callbacks, in completion order).
        self._lock = threading.RLock()
        self._write_lock = threading.RLock()
        self._deliver_lock = threading.RLock()
        self._completed: deque[DeliveryFuture] = deque()  # futures whose callbacks have not run yet
        self._failures: deque[ProduceFailedError] = deque()  # background write failures not raised yet
        self._sender_state = _SenderState(self._lock)
        self._sender: threading.Thread | None = None
        self._waiter = self._before_wait  # one bound method for every future (a reference cycle, collected)
        self._closed = False
        self._closing = False
        #: The transaction state of a transactional producer (None otherwise).
        self.transaction_manager: TransactionManager | None = (
            None if transactional_id is None else TransactionManager(transactional_id, transaction_timeout_ms)
        )

    @classmethod
    def from_properties(
        cls, properties: Mapping[str, Any] | str | os.PathLike[str], **overrides: Any
    ) -> Producer:
        """A producer configured with the Java producer's property names, from a mapping or a
        ``.properties`` file: ``bootstrap.servers``, ``acks``, ``enable.idempotence``, ``linger.ms``,
        ``batch.size``, ``compression.type``, ``delivery.timeout.ms``, ``transactional.id``,
        ``transaction.timeout.ms``, ``client.id`` and the connection and security properties of
        :meth:`Client.from_properties`; see :func:`kafkawire.client.config.producer_kwargs_from_properties`.
        ``overrides`` are keyword arguments that win."""
        from ..config import producer_kwargs_from_properties

        return cls(**{**producer_kwargs_from_properties(properties), **overrides})

    def send(
        self,
        topic: str,
        value: BytesLike | str | None,
        key: BytesLike | str | None = None,
        *,
        partition: int | None = None,
        headers: Sequence[tuple[str, bytes | None]] | None = None,
        timestamp_ms: int | None = None,
        on_delivery: DeliveryCallback | None = None,
        callback: DeliveryCallback | None = None,
    ) -> DeliveryFuture:
        """Queue one record; writes the topic's buffer itself when it is full (then raises
        :class:`ProduceFailedError` as :meth:`flush` does); a buffer that is not full is written by the
        background sender once ``linger_ms`` has passed. ``value`` / ``key``: bytes-like, ``str``
        (written as UTF-8) or None; anything else is a ``TypeError``.

        Returns the record's :class:`~kafkawire.client.producer.delivery.DeliveryFuture`, resolved when the batch
        holding it is acknowledged (to a :class:`~kafkawire.client.producer.delivery.RecordMetadata`) or finally
        fails (to the error under which it is handed back in ``ProduceFailedError.unacknowledged``).
        ``on_delivery`` (alias ``callback``): confluent-kafka's ``fn(err, metadata)``, called then."""
        check_record_arguments(
            [value], None if key is None else [key], None if headers is None else [headers], argument_prefix="send: "
        )
        value, key = _as_bytes(value), _as_bytes(key)
        fut = DeliveryFuture(topic, waiter=self._waiter)
        for cb in (on_delivery, callback):
            if cb is not None:
                fut.add_done_callback(as_done_callback(cb))
        now = time.monotonic()
        with self._lock:
            if self._closed or self._closing:
                raise RuntimeError("producer is closed")
            if self.transaction_manager is not None:
                self.transaction_manager.require(_IN_TXN, what="send")
            buf = self._buffers.get(topic)
            if buf is None:
                buf = self._buffers[topic] = _Buffer(since=now)
                self._wake_sender()
            buf.last = now
            buf.values.append(value)
            buf.keys.append(key)
            buf.headers.append(list(headers) if headers else None)
            buf.timestamps.append(int(time.time() * 1000) if timestamp_ms is None else int(timestamp_ms))
            buf.partitions.append(partition)
            buf.futures.append(fut)
            buf.nbytes += len(value or b"") + len(key or b"")
            full = len(buf.values) >= self.batch_records or buf.nbytes >= self.batch_bytes
            # Not sooner than _MIN_INLINE_MS: with linger_ms=0 every send() would write its one record itself
            # and wait for the answer (kafkawire tune measured under 1,000 records/s). The sender, woken when
            # the buffer was made, writes it at once, and what is sent meanwhile accumulates for its next
            # write, as in the Java producer.
            lingered = (now - buf.since) * 1000 >= max(self.linger_ms, _MIN_INLINE_MS)
        if full:
            # Written here, not handed to the sender: a producer faster than the broker waits (back-pressure).
            with self._write_lock:
                _, failure = self._write_topic(topic, only_if_full=True)
        elif lingered and self._write_lock.acquire(blocking=False):
            # While send() is being called, the sending thread writes lingered buffers itself (unless a write
            # is under way): handing every write to the sender thread costs the GIL hand-offs of two busy
            # threads (measured 4x slower, benchmarks/bench_producer_send.py). The sender covers the
            # buffers nobody sends after (see _due).
            try:
                _, failure = self._write_topic(topic, only_if_lingered=True)
            finally:
                self._write_lock.release()
        else:
            return fut
        self._deliver()
        if failure is not None:
            raise failure
        return fut

    # ------------------------------------------------------------------------------ writing
    def _wake_sender(self) -> None:
        """Start the background sender, or wake it to schedule a new buffer (caller holds ``_lock``)."""
        state = self._sender_state
        t = self._sender
        if t is None or not t.is_alive():
            t = self._sender = threading.Thread(
                target=_sender_main,
                args=(weakref.WeakMethod(self._due), weakref.WeakMethod(self._write_background), state),
                name="kafkawire-producer-sender",
                daemon=True,
            )
            t.start()
        elif state.idle:  # a sender that is napping wakes on its own
            state.kick = True
            state.cond.notify()

    def _may_write(self) -> bool:
        """A transactional producer writes only inside a transaction that has not failed."""
        txn = self.transaction_manager
        return txn is None or txn.state is _IN_TXN

    def _due(self, now: float) -> tuple[list[str], float | None]:
        """Topics whose buffer the sender writes now: nothing was sent to them for ``linger_ms`` (while
        records keep coming, ``send()`` writes a buffer ``linger_ms`` after its first record itself), and
        the seconds until the next one will be due (None: no buffer). Caller holds ``_lock``."""
        if not self._buffers:
            return [], None
        if not self._may_write():
            return [], 1.0  # buffers of a failed transaction wait for abort_transaction()
        linger = self.linger_ms / 1000
        due, wait = [], None
        for topic, buf in self._buffers.items():
            left = buf.last + linger - now
            if left <= 0:
                due.append(topic)
            else:
                wait = left if wait is None else min(wait, left)
        return due, wait

    def _write_background(self, topics: list[str]) -> None:
        """The sender's write of lingered buffers; failures are kept for the next flush() or close()."""
        with self._write_lock:
            for topic in topics:
                _, failure = self._write_topic(topic, only_if_idle=True, background=True)
                if failure is not None:
                    log.warning("background write to %r failed: %s", topic, failure)
                    with self._lock:
                        self._failures.append(failure)
        self._deliver()

    def _before_wait(self, fut: DeliveryFuture) -> None:
        """``fut.result()`` is about to block. When the waiting thread is the sender itself (a delivery
        callback waiting on another record) or no sender runs, nobody else would write the record's
        buffer: write it now rather than wait forever."""
        t = self._sender
        if t is not None and t.is_alive() and threading.current_thread() is not t:
            return
        if not self._may_write():
            return
        with self._write_lock:
            _, failure = self._write_topic(fut.topic, background=True)
            if failure is not None:
                with self._lock:
                    self._failures.append(failure)
        self._deliver()

    def _deliver(self) -> None:
        """Run the callbacks of completed futures, oldest first, with no producer lock held (a callback
        may call send(), flush() or another future's result()): a no-op in a thread that holds ``_lock``,
        whose outermost method calls it again once released."""
        if self._lock._is_owned():  # type: ignore[attr-defined]
            return
        with self._deliver_lock:
            completed = self._completed
            while completed:
                try:
                    fut = completed.popleft()
                except IndexError:
                    return
                fut.run_callbacks()

    def _write_topic(
        self,
        topic: str,
        *,
        only_if_full: bool = False,
        only_if_lingered: bool = False,
        only_if_idle: bool = False,
        background: bool = False,
    ) -> tuple[list[ProduceResult], ProduceFailedError | None]:
        """Write ``topic``'s buffer (caller holds ``_write_lock``): returns the results and the failure,
        if any, after completing the records' futures. The buffer is detached while it is written, so
        ``send()`` goes on filling a new one; what was neither written nor handed back (an exception other
        than ProduceFailedError) is put back in front of it. ``background``: such an exception fails the
        records too (there is no caller to raise it to) and comes back as a ProduceFailedError."""
        with self._lock:
            buf = self._buffers.get(topic)
            if buf is None or not buf.values:
                self._buffers.pop(topic, None)
                return [], None
            if only_if_full and len(buf.values) < self.batch_records and buf.nbytes < self.batch_bytes:
                return [], None  # another thread wrote it meanwhile
            if only_if_lingered and (time.monotonic() - buf.since) * 1000 < self.linger_ms:
                return [], None
            if only_if_idle and (time.monotonic() - buf.last) * 1000 < self.linger_ms:
                return [], None
            if not self._may_write() and background:
                return [], None
            del self._buffers[topic]
        headers = buf.headers if any(h for h in buf.headers) else None
        explicit = {p for p in buf.partitions if p is not None}
        if not explicit:
            groups: list[tuple[int | None, list[int]]] = [(None, list(range(len(buf.values))))]
        else:
            # Records sent to explicit partitions go in one call per partition; the rest are partitioned.
            by: dict[int | None, list[int]] = {}
            for i, p in enumerate(buf.partitions):
                by.setdefault(p, []).append(i)
            groups = list(by.items())
        has_keys = any(k is not None for k in buf.keys)
        results: list[ProduceResult] = []
        failures: list[tuple[list[int], ProduceFailedError]] = []
        completed: list[DeliveryFuture] = []
        done: list[int] = []
        try:
            for part, rows in groups:
                try:
                    result = self.client.produce(
                        topic,
                        [buf.values[i] for i in rows],
                        keys=[buf.keys[i] for i in rows] if has_keys else None,
                        partition=part,
                        headers=None if headers is None else [headers[i] for i in rows],
                        timestamps=[buf.timestamps[i] for i in rows],
                        acks=self.acks,
                        compression=self.compression,
                        timeout_ms=self.delivery_timeout_ms,
                        producer_state=self.transaction_manager,
                    )
                    results.append(result)
                    completed += _resolve(buf, topic, rows, result, None)
                except ProduceFailedError as e:
                    completed += _resolve(buf, topic, rows, e.result, e)
                    if self.transaction_manager is not None:
                        fatal = self.transaction_manager.fail_produce(e)
                        if fatal is not e:  # fenced: nothing more may be written
                            done += rows
                            raise fatal from e
                    failures.append((rows, e))
                except Exception as e:
                    if not background:
                        raise
                    wrapped = _not_written(buf, topic, rows, part, e)
                    completed += _resolve(buf, topic, rows, None, wrapped)
                    if self.transaction_manager is not None:
                        self.transaction_manager.fail_produce(wrapped)
                    failures.append((rows, wrapped))
                done += rows
        finally:
            # Only what was written, or is handed back, leaves the buffer; the rest goes back in front.
            buf.drop(done)
            with self._lock:
                self._completed.extend(completed)
                if buf.values:
                    newer = self._buffers.get(topic)
                    if newer is not None:
                        buf.extend(newer)
                    self._buffers[topic] = buf
        if failures:
            return results, _combined_failure(topic, failures, results)
        return results, None

    def flush(self, *, timeout_ms: float | None = None) -> list[ProduceResult]:
        """Write every buffered record; returns one :class:`ProduceResult` per produce call.
        ``timeout_ms`` bounds each write instead of ``delivery_timeout_ms``.

        Raises :class:`ProduceFailedError` when some records were not acknowledged by the delivery
        timeout: its ``unacknowledged`` holds them (``rows`` are positions in the flushed buffer).
        Every topic is attempted first. Failures of background writes since the last flush are raised
        too; when several writes failed (several topics), the first is raised and the next ``flush()``
        raises the next, so every one is handed back."""
        out: list[ProduceResult] = []
        try:
            with self._write_lock:
                saved = self.delivery_timeout_ms
                if timeout_ms is not None:
                    self.delivery_timeout_ms = timeout_ms if saved is None else min(saved, timeout_ms)
                try:
                    with self._lock:
                        topics = list(self._buffers)
                    for topic in topics:
                        results, failure = self._write_topic(topic)
                        out += results
                        if failure is not None:
                            with self._lock:
                                self._failures.append(failure)
                finally:
                    self.delivery_timeout_ms = saved
        finally:
            self._deliver()
        with self._lock:
            if self._failures:
                first = self._failures.popleft()
                if self._failures:
                    log.error("flush: %d more failed write(s) are raised by the next flush()", len(self._failures))
                raise first
        return out

    @property
    def buffered(self) -> int:
        """Records queued and not written yet (a write in progress not counted)."""
        with self._lock:
            return sum(len(b.values) for b in self._buffers.values())

    def _stop_sender(self) -> None:
        state = self._sender_state
        with state.cond:
            state.stop = True
            state.cond.notify_all()
        t = self._sender
        if t is not None and t is not threading.current_thread():
            t.join()

    def close(self, timeout: float | None = None) -> None:
        """Flush (each write bounded by ``timeout`` seconds when given), stop the background sender, then
        close the client if this producer created it. A transactional producer aborts the transaction it
        is in instead of flushing into it. Raises the flush's :class:`ProduceFailedError` (after closing)."""
        with self._lock:
            if self._closed or self._closing:
                return
            # From here send() refuses records: none can slip in after the final flush and be left behind.
            self._closing = True
        try:
            txn = self.transaction_manager
            if txn is None:
                try:
                    self.flush(timeout_ms=None if timeout is None else timeout * 1000)
                finally:
                    with self._lock:
                        rest, self._failures = list(self._failures), deque()
                    for e in rest:
                        log.error("close: a write failed and its records were not handed back: %s", e)
            elif txn.in_transaction:
                try:
                    self.abort_transaction(timeout_ms=None if timeout is None else timeout * 1000)
                except Exception as e:  # the coordinator aborts it after transaction_timeout_ms anyway
                    log.warning("abort_transaction on close failed: %s", e)
        finally:
            with self._lock:
                self._closed = True
            self._stop_sender()
            if self._own_client:
                self.client.close()

    def __del__(self) -> None:
        # Dropped without close(): stop the sender (it holds only a weak reference) and say what is lost.
        state = getattr(self, "_sender_state", None)
        if state is None or state.stop:
            return
        if state.cond.acquire(timeout=1):
            try:
                state.stop = True
                state.cond.notify_all()
            finally:
                state.cond.release()
        n = sum(len(b.values) for b in self._buffers.values())
        if n and not self._closed:
            log.warning("Producer garbage-collected without close(): %d buffered record(s) were not sent", n)

    # ---------------------------------------------------------------------------- transactions
    def _txn(self, what: str) -> TransactionManager:
        if self.transaction_manager is None:
            raise RuntimeError(f"{what}: the producer has no transactional_id")
        if self._closed:
            raise RuntimeError("producer is closed")
        return self.transaction_manager

    def init_transactions(self, *, timeout_ms: float | None = None) -> None:
        """Register the transactional id with its coordinator (InitProducerId): older producers with
        the same id are fenced and a transaction they left open is aborted. Call once, first."""
        with self._lock:
            txn = self._txn("init_transactions")
            cluster = self.client.cluster
            with cluster.lock:
                txn.init(cluster, self.client.deadline(timeout_ms))

    def begin_transaction(self) -> None:
        """Start a transaction: what is sent until commit or abort belongs to it."""
        with self._lock:
            self._txn("begin_transaction").begin()

    def send_offsets_to_transaction(
        self,
        offsets: Mapping[Any, int | tuple[int, str | None]],
        group_metadata: GroupMetadata | str,
        *,
        timeout_ms: float | None = None,
    ) -> None:
        """Commit a consumer group's offsets as part of the transaction (consume-transform-produce).

        ``offsets``: ``{(topic, partition) or TopicPartition: next offset to read}``.
        ``group_metadata``: the consumer's :meth:`Consumer.group_metadata` (KIP-447: the coordinator
        refuses offsets from a member of an old generation), or just a group id."""
        with self._lock:
            txn = self._txn("send_offsets_to_transaction")
            group = group_metadata if isinstance(group_metadata, GroupMetadata) else GroupMetadata(group_metadata)
            normalised = {(str(tp[0]), int(tp[1])): v for tp, v in offsets.items()}
            cluster = self.client.cluster
            with cluster.lock:
                send_offsets_to_transaction(txn, cluster, normalised, group, self.client.deadline(timeout_ms))

    def commit_transaction(self, *, timeout_ms: float | None = None) -> None:
        """Flush what is buffered, then commit the transaction (EndTxn). A failed flush makes the
        transaction abortable: the error is raised and :meth:`abort_transaction` must follow. A commit
        that timed out may be called again."""
        try:
            # Both locks for the whole commit: no background write and no send() slips in between the
            # flush and EndTxn (a send() waits, then finds the transaction over, as in the Java client).
            with self._write_lock, self._lock:
                txn = self._txn("commit_transaction")
                txn.require(_IN_TXN, TransactionState.COMMITTING, what="commit_transaction")
                try:
                    self.flush()
                except ProduceFailedError as e:
                    txn.fail_produce(e)
                    raise
                cluster = self.client.cluster
                with cluster.lock:
                    txn.end(cluster, True, self.client.deadline(timeout_ms))
        finally:
            self._deliver()

    def abort_transaction(self, *, timeout_ms: float | None = None) -> None:
        """Abort the transaction: buffered records are dropped, written ones stay invisible to
        read_committed readers, offsets sent to the transaction are not committed."""
        try:
            with self._write_lock, self._lock:
                txn = self._txn("abort_transaction")
                dropped = RecordDroppedError("the transaction was aborted before the record was written")
                for buf in self._buffers.values():
                    for fut in buf.futures:
                        if fut.settle(None, dropped):
                            self._completed.append(fut)
                self._buffers.clear()
                self._failures.clear()  # their records belonged to the aborted transaction
                cluster = self.client.cluster
                with cluster.lock:
                    txn.end(cluster, False, self.client.deadline(timeout_ms))
        finally:
            self._deliver()

    def hand_over_transaction(self, *, timeout_ms: float | None = None) -> TransactionHandle:
        """Flush the open transaction, close the producer *without* committing or aborting, and return the
        :class:`~kafkawire.client.producer.transaction.TransactionHandle` with which any process finishes it
        (:func:`kafkawire.client.producer.transaction.end_transaction`): a Spark task writes, its driver commits.
        The coordinator aborts it after ``transaction_timeout_ms`` if nobody does."""
        try:
            with self._write_lock, self._lock:
                txn = self._txn("hand_over_transaction")
                txn.require(_IN_TXN, what="hand_over_transaction")
                try:
                    self.flush(timeout_ms=timeout_ms)
                except ProduceFailedError as e:
                    txn.fail_produce(e)
                    raise
                handle = txn.handle()
                self._closed = True
        finally:
            self._deliver()
        self._stop_sender()
        if self._own_client:
            self.client.close()
        return handle

    @contextmanager
    def transaction(self) -> Iterator[Producer]:
        """``with producer.transaction(): ...`` begins a transaction, commits it when the block ends
        normally and aborts it when the block raises (the exception propagates)."""
        self.begin_transaction()
        try:
            yield self
        except BaseException:
            txn = self.transaction_manager
            if txn is not None and txn.state is not TransactionState.FATAL_ERROR:
                self.abort_transaction()
            raise
        self.commit_transaction()

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _resolve(
    buf: _Buffer, topic: str, rows: list[int], result: object, failure: ProduceFailedError | None
) -> list[DeliveryFuture]:
    """Complete the futures of ``rows`` (positions in ``buf``) from one produce call: acknowledged
    records get their metadata, the ones handed back in ``failure.unacknowledged`` its error. Returns the
    futures completed that have callbacks, which the producer runs once it released its locks."""
    failed: dict[int, BaseException] = {}
    if failure is not None:
        for u in failure.unacknowledged.values():
            assert isinstance(u, UnacknowledgedRecords)
            for j in np.asarray(u.rows).tolist():
                failed[j] = u.error or failure
    parts: list[int] = []
    offsets: list[int] = []
    times: list[int] = []
    if isinstance(result, ProduceResult):
        parts, offsets, times = result.partition.tolist(), result.offset.tolist(), result.log_append_time.tolist()
    completed: list[DeliveryFuture] = []
    for j, i in enumerate(rows):
        fut = buf.futures[i]
        if j in failed:
            ok = fut.settle(None, failed[j])
        elif j < len(parts) and (failure is None or offsets[j] >= 0):
            ts = times[j] if times[j] >= 0 else buf.timestamps[i]
            ok = fut.settle(RecordMetadata(topic, int(parts[j]), int(offsets[j]), int(ts)), None)
        else:  # neither acknowledged nor handed back: the call's error is all that is known
            ok = fut.settle(None, failure or ProduceFailedError(f"produce to {topic!r}: no result for the record"))
        if ok:  # callbacks to run (settle says so only once)
            completed.append(fut)
    return completed


def _not_written(
    buf: _Buffer, topic: str, rows: list[int], partition: int | None, error: Exception
) -> ProduceFailedError:
    """A ProduceFailedError handing back ``rows`` of ``buf`` that a background write could not send
    because of an error other than ProduceFailedError (keyed by ``partition``, -1 when not chosen)."""
    has_keys = any(buf.keys[i] is not None for i in rows)
    has_headers = any(buf.headers[i] for i in rows)
    p = -1 if partition is None else partition
    unacked = UnacknowledgedRecords(
        topic,
        p,
        np.arange(len(rows), dtype=np.int64),
        [buf.values[i] for i in rows],
        [buf.keys[i] for i in rows] if has_keys else None,
        [buf.headers[i] for i in rows] if has_headers else None,
        [buf.timestamps[i] for i in rows],
        error,
    )
    message = f"produce to {topic!r} failed: {error!r}; {len(rows)} record(s) not written"
    handed_back: dict[int, UnacknowledgedRecords] = {p: unacked}
    err = ProduceFailedError(message, {(topic, p): error}, None, handed_back)
    err.__cause__ = error
    return err


def _combined_failure(
    topic: str, failures: list[tuple[list[int], ProduceFailedError]], results: list[ProduceResult]
) -> ProduceFailedError:
    """One error for a flush whose produce calls failed: the records of every call not acknowledged,
    per partition, ``rows`` renumbered to positions in the flushed buffer."""
    if len(failures) == 1 and not results:
        return failures[0][1]
    errors: dict[tuple[str, int], BaseException] = {}
    unacked: dict[int, UnacknowledgedRecords] = {}
    for rows, e in failures:
        errors.update(e.errors)
        for p, u in e.unacknowledged.items():
            assert isinstance(u, UnacknowledgedRecords)
            mapped = np.asarray(rows, dtype=np.int64)[u.rows]
            prev = unacked.get(p)
            if prev is None:
                unacked[p] = UnacknowledgedRecords(
                    topic, p, mapped, list(u.values), u.keys, u.headers, list(u.timestamps), u.error
                )
            else:
                prev.rows = np.concatenate([prev.rows, mapped])
                prev.values += u.values
                prev.keys = None if prev.keys is None or u.keys is None else prev.keys + u.keys
                prev.headers = None if prev.headers is None or u.headers is None else prev.headers + u.headers
                prev.timestamps += u.timestamps
    message = "; ".join(str(e) for _, e in failures)
    handed_back: dict[int, UnacknowledgedRecords] = dict(unacked)
    err = ProduceFailedError(
        f"flush of {topic!r}: {message}", errors, results, handed_back, any(e.timed_out for _, e in failures)
    )
    err.__cause__ = failures[0][1]
    return err
