"""Writing the accumulator's buffers (the Java client's ``Sender``): one topic's buffer at a time, oldest
records first, as :meth:`kafkawire.Client.produce` calls, and a background thread that writes the
buffers nothing was sent to for ``linger_ms``.

Writes are serialised by :attr:`Sender.write_lock`, which keeps every partition's records in order and the
idempotent producer's sequence numbers gapless. Lock order: ``write_lock`` (one write at a time), then the
producer's lock (buffers and state, held briefly; never during network I/O), then ``deliver_lock``
(callbacks, in completion order). Futures are completed under the producer's lock; their callbacks run in
:meth:`Sender.deliver`, with no producer lock held (a callback may call ``send()``, ``flush()`` or another
future's ``result()``).
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ProduceFailedError
from ..types import ProduceResult
from .accumulator import Completed, RecordAccumulator, RecordBuffer
from .outcomes import combined_failure, not_written, resolve_rows
from .partitioner import partitions_for_keys
from .produce import take
from .settings import ProducerSettings
from .transaction import TransactionManager, TransactionState

if TYPE_CHECKING:
    from ...binary import BinaryColumn
    from ..client import Client

__all__ = ["Sender"]

log = logging.getLogger("kafkawire.producer")

_MAX_NAP = 0.05  # seconds


class _SenderState:
    """What the background sender thread shares with its producer without keeping it alive: the
    condition it sleeps on (over the producer's lock) and the flags that wake or stop it."""

    def __init__(self, lock: threading.RLock) -> None:
        self.cond = threading.Condition(lock)
        self.stop = False
        self.idle = False  # the sender sleeps until a buffer exists
        self.kick = False  # a new buffer exists: recompute when to wake


def _sender_main(
    due_ref: weakref.WeakMethod[Callable[[float], tuple[list[str], float | None]]],
    write_ref: weakref.WeakMethod[Callable[[list[str]], None]],
    state: _SenderState,
) -> None:
    """The background sender: writes every buffer whose ``linger_ms`` has passed. Holds the sender only
    while working (a weak reference otherwise), so a producer dropped without ``close()`` is collected and
    its ``__del__`` stops this thread.

    While records keep coming, ``send()`` writes lingered buffers itself and the sender finds nothing to do;
    it then naps longer each time (up to ``_MAX_NAP``) rather than take the GIL from the sending thread every
    ``linger_ms`` (measured: 30% of send throughput). A buffer nothing is sent to any more is written at
    most a nap after its ``linger_ms``."""
    nap = 0.0
    while True:
        find_due, write = due_ref(), write_ref()  # the Sender's due and write_background, bound
        if find_due is None or write is None:
            return
        try:
            with state.cond:
                if state.stop:
                    return
                state.kick = False
                due, wait = find_due(time.monotonic())
                if not due:
                    find_due = write = None  # hold nothing while asleep: a dropped producer is collected
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


class Sender:
    """Drains a producer's :class:`~kafkawire.client.producer.accumulator.RecordAccumulator` through
    ``client.produce`` and completes the records' futures.

    ``failures``: background writes' :class:`ProduceFailedError` not raised yet (the next ``flush()`` or
    ``close()`` raises them); ``completed``: delivery batches and rows whose callbacks have not run yet."""

    def __init__(
        self,
        client: Client,
        settings: ProducerSettings,
        txn: TransactionManager | None,
        lock: threading.RLock,
    ) -> None:
        self.client = client
        self.settings = settings
        self.txn = txn
        self.lock = lock
        self.accumulator = RecordAccumulator(settings, lock, txn, self.wake, self.before_wait)
        self.write_lock = threading.RLock()
        self.deliver_lock = threading.RLock()
        self.completed: deque[Completed] = deque()
        self.failures: deque[ProduceFailedError] = deque()
        self.thread: threading.Thread | None = None
        self.state = _SenderState(lock)
        #: Topics to write now, lingered or not: a send() waits for room in buffer_memory (see request).
        self.urgent: set[str] = set()

    # ------------------------------------------------------------------------ the background thread
    def wake(self) -> None:
        """Start the background thread, or wake it to schedule a new buffer (caller holds the lock)."""
        state = self.state
        t = self.thread
        if t is None or not t.is_alive():
            t = self.thread = threading.Thread(
                target=_sender_main,
                args=(weakref.WeakMethod(self.due), weakref.WeakMethod(self.write_background), state),
                name="kafkawire-producer-sender",
                daemon=True,
            )
            t.start()
        elif state.idle:  # a sender that is napping wakes on its own
            state.kick = True
            state.cond.notify()

    def request(self, topic: str) -> None:
        """Have the background thread write ``topic``'s buffer now (caller holds the lock): ``send()`` waits
        for room in ``buffer_memory`` and must not do the write itself (its deadline is ``max_block_ms``)."""
        self.urgent.add(topic)
        t = self.thread
        if t is None or not t.is_alive():
            self.wake()
        else:
            self.state.kick = True
            self.state.cond.notify()

    def stop(self, *, join: bool = True) -> None:
        """Stop the background thread (and wait for it, unless called from it or ``join`` is false)."""
        state = self.state
        with state.cond:
            state.stop = True
            state.cond.notify_all()
        t = self.thread
        if join and t is not None and t is not threading.current_thread():
            t.join()

    def may_write(self) -> bool:
        """A transactional producer writes only inside a transaction that has not failed."""
        txn = self.txn
        return txn is None or txn.state is TransactionState.IN_TRANSACTION

    def due(self, now: float) -> tuple[list[str], float | None]:
        """The topics the background thread writes now and the seconds until the next one is due (None:
        no buffer). Caller holds the lock."""
        if not self.accumulator.buffers:
            return [], None
        if not self.may_write():
            return [], 1.0  # buffers of a failed transaction wait for abort_transaction()
        due, wait = self.accumulator.due(now)
        if self.urgent:
            due = list(dict.fromkeys([*self.urgent, *due]))
        return due, wait

    def write_background(self, topics: list[str]) -> None:
        """The background thread's write of lingered buffers; failures are kept for the next flush()."""
        with self.write_lock:
            with self.lock:  # only the requests this call serves (one made since due() waits for the next)
                urgent = self.urgent.intersection(topics)
                self.urgent -= urgent
            for topic in topics:
                _, failure = self.write(topic, only_if_idle=topic not in urgent, background=True)
                if failure is not None:
                    log.warning("background write to %r failed: %s", topic, failure)
                    with self.lock:
                        self.failures.append(failure)
        self.deliver()

    def before_wait(self, topic: str) -> None:
        """A future of ``topic`` is about to block in ``result()``. When the waiting thread is the sender
        itself (a delivery callback waiting on another record) or no sender runs, nobody else would write the record's
        buffer: write it now rather than wait forever."""
        t = self.thread
        if t is not None and t.is_alive() and threading.current_thread() is not t:
            return
        if not self.may_write():
            return
        with self.write_lock:
            _, failure = self.write(topic, background=True)
            if failure is not None:
                with self.lock:
                    self.failures.append(failure)
        self.deliver()

    # ---------------------------------------------------------------------------------- writing
    def deliver(self) -> None:
        """Run the callbacks of completed futures, oldest first. Call it with no producer lock held."""
        with self.deliver_lock:
            completed = self.completed
            while completed:
                try:
                    batch, rows = completed.popleft()
                except IndexError:
                    return
                batch.run_callbacks(rows)

    def write_all(self, timeout_ms: float | None) -> list[ProduceResult]:
        """Write every buffer (``timeout_ms``, when given, bounds each write below ``delivery_timeout_ms``);
        failures join :attr:`failures`. Callbacks are left to :meth:`deliver`."""
        saved = self.settings.delivery_timeout_ms
        if timeout_ms is not None:
            timeout_ms = timeout_ms if saved is None else min(saved, timeout_ms)
        out: list[ProduceResult] = []
        with self.write_lock:
            with self.lock:
                topics = list(self.accumulator.buffers)
            for topic in topics:
                results, failure = self.write(topic, timeout_ms=timeout_ms)
                out += results
                if failure is not None:
                    with self.lock:
                        self.failures.append(failure)
        return out

    def raise_failure(self) -> None:
        """Raise the oldest write failure not raised yet; when several writes failed (several topics), the
        next call raises the next, so every one is handed back."""
        with self.lock:
            if self.failures:
                first = self.failures.popleft()
                if self.failures:
                    log.error("flush: %d more failed write(s) are raised by the next flush()", len(self.failures))
                raise first

    def discard(self, error: BaseException) -> None:
        """Fail every buffered record with ``error`` and forget the background failures (an aborted
        transaction: they belonged to it). Caller holds the lock."""
        self.completed.extend(self.accumulator.discard(error))
        self.failures.clear()

    def write(
        self,
        topic: str,
        *,
        timeout_ms: float | None = None,
        only_if_full: bool = False,
        only_if_lingered: bool = False,
        only_if_idle: bool = False,
        background: bool = False,
    ) -> tuple[list[ProduceResult], ProduceFailedError | None]:
        """Write ``topic``'s buffer (caller holds :attr:`write_lock`): returns the results and the failure,
        if any, after completing the records' futures. The buffer is detached while it is written, so
        ``send()`` goes on filling a new one; what was neither written nor handed back (an exception other
        than ProduceFailedError) is put back in front of it. ``background``: such an exception fails the
        records too (there is no caller to raise it to) and comes back as a ProduceFailedError.
        ``timeout_ms``: instead of ``delivery_timeout_ms``."""
        with self.lock:
            buf = self.accumulator.detach(
                topic,
                only_if_full=only_if_full,
                only_if_lingered=only_if_lingered,
                only_if_idle=only_if_idle,
                hold=background and not self.may_write(),
            )
        if buf is None:
            return [], None
        if timeout_ms is None:
            timeout_ms = self.settings.delivery_timeout_ms
        results: list[ProduceResult] = []
        failures: list[tuple[list[int], ProduceFailedError]] = []
        completed: list[Completed] = []
        n = len(buf)
        done = np.zeros(n, dtype=bool)
        try:
            for part, rows in _calls(buf):
                outcome, fatal, rows = self._produce(buf, topic, part, rows, timeout_ms, background, completed)
                done[rows] = True
                if isinstance(outcome, ProduceResult):
                    results.append(outcome)
                elif fatal is not None:  # fenced: nothing more may be written
                    raise fatal from outcome
                else:
                    failures.append((rows.tolist(), outcome))
        finally:
            # Only what was written, or is handed back, leaves the buffer; the rest goes back in front.
            before = buf.nbytes
            if done.all():
                buf.keep([])
            elif done.any():
                buf.keep(np.flatnonzero(~done).tolist())
            with self.lock:
                self.completed.extend(completed)
                self.accumulator.restore(topic, buf)
                self.accumulator.release(before - buf.nbytes)
        if failures:
            return results, combined_failure(topic, failures, results)
        return results, None

    def _produce(
        self,
        buf: RecordBuffer,
        topic: str,
        part: int | None,
        rows: np.ndarray,
        timeout_ms: float | None,
        background: bool,
        completed: list[Completed],
    ) -> tuple[ProduceResult | ProduceFailedError, BaseException | None, np.ndarray]:
        """One produce call for ``rows`` of ``buf``, their futures completed (into ``completed``): its
        result, or the failure handing them back, the fatal transaction error to raise (fenced), if any, and
        the rows in the order the call took them (the positions its result and failure refer to). Any other
        exception propagates (the rows stay buffered), unless ``background``. The columns go to
        ``Client.produce`` as the buffer holds them: no per-record object on the way."""
        settings, txn = self.settings, self.txn
        values, keys, ts = buf.value_column(), buf.key_column(), buf.timestamp_array()
        headers = buf.headers
        order = None if part is not None else _by_partition(self.client, topic, keys, len(rows) == len(buf))
        if order is not None:
            rows = rows[order]
        if order is not None or len(rows) != len(buf):
            values, keys, ts = take(values, rows), None if keys is None else take(keys, rows), ts[rows]
            headers = None if headers is None else [headers[i] for i in rows.tolist()]
        if headers is not None and not any(headers):
            headers = None
        try:
            result = self.client.produce(
                topic,
                values,
                keys=keys,
                partition=part,
                headers=headers,
                timestamps=ts,
                acks=settings.acks,
                compression=settings.compression,
                timeout_ms=timeout_ms,
                producer_state=txn,
            )
        except ProduceFailedError as e:
            completed += resolve_rows(buf, topic, rows, ts, e.result, e)
            fatal = None if txn is None else txn.fail_produce(e)
            return e, (fatal if fatal is not e else None), rows
        except Exception as e:
            if not background:
                raise
            wrapped = not_written(buf, topic, rows, part, e)
            completed += resolve_rows(buf, topic, rows, ts, None, wrapped)
            if txn is not None:
                txn.fail_produce(wrapped)
            return wrapped, None, rows
        completed += resolve_rows(buf, topic, rows, ts, result, None)
        return result, None, rows


def _by_partition(client: Client, topic: str, keys: BinaryColumn | None, whole: bool) -> np.ndarray | None:
    """The order that groups a whole buffer's records by the partition ``Client.produce`` will give them (a
    stable sort: each partition's records stay in send order), or None to leave them as they are.

    ``Client.produce`` cuts its input into per-partition batches; rows of one partition that lie in one run
    are a slice, scattered ones a gather per partition and column (measured on Kafka 4.4, 1,000 keyed records
    over 6 partitions: 1.34-1.54 ms of CPU per call scattered, 0.89-0.99 ms grouped). Only when every record
    has a key: a keyless record goes to the call's sticky partition, which only the call knows, and sorting
    it apart from keyed ones of that partition would reorder them. The partition count is the one cached for
    ``topic``, the one ``Client.produce`` reads under the cluster lock (a key's partition does not depend on
    anything else, so records of one key keep their order even if the count changes in between)."""
    if keys is None or keys.valid is not None or not whole or len(keys) < 2:
        return None
    tm = client.cluster.topics.get(topic)
    if tm is None or tm.num_partitions < 2:
        return None
    parts = partitions_for_keys(keys, tm.num_partitions)
    order = np.argsort(parts, kind="stable")
    return order


def _calls(buf: RecordBuffer) -> list[tuple[int | None, np.ndarray]]:
    """The buffer's rows per produce call: one call when no record names a partition, else one per
    explicit partition and one (partition None: the client partitions them) for the rest."""
    n = len(buf)
    if not buf.has_partitions:
        return [(None, np.arange(n))]
    parts = buf.partition_array()
    out: list[tuple[int | None, np.ndarray]] = []
    for p in np.unique(parts).tolist():
        out.append((None if p < 0 else int(p), np.flatnonzero(parts == p)))
    return out
