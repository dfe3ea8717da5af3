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
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ..client import Client, resolve_client
from ..cluster.cluster import Cluster
from ..consumer.offsets import OffsetSpec
from ..errors import KafkaTimeoutError, ProduceFailedError
from ..net.deadline import Deadline
from ..types import ProduceResult
from .accumulator import FULL, LINGERED
from .delivery import DeliveryCallback, DeliveryFuture, RecordDroppedError
from .sender import Sender
from .settings import ProducerSettings, Setting
from .transaction import GroupMetadata, TransactionHandle, TransactionManager, TransactionState
from .txn_offsets import send_offsets_to_transaction

__all__ = ["Producer"]

_IN_TXN = TransactionState.IN_TRANSACTION

log = logging.getLogger("kafkawire.producer")

#: What ``send`` takes as a value or key besides ``str`` (written as UTF-8) and None, as the README says.
BytesLike = bytes | bytearray | memoryview


class Producer:
    """Buffer records and write them in batches.

    ``compression``, ``acks``: as in :meth:`Client.produce`; ``delivery_timeout_ms`` bounds each
    write, retries included (default: the client's ``retry_timeout_ms``). Pass ``client`` to share a
    :class:`Client`, or ``bootstrap_servers`` and any :class:`Client` options.

    ``buffer_memory`` (bytes, default 32 MiB) bounds the records sent and not yet acknowledged or failed;
    a ``send()`` beyond it waits up to ``max_block_ms`` (default 60 s) for room, then raises
    :class:`KafkaTimeoutError` (Java's ``buffer.memory`` / ``max.block.ms``).

    ``transactional_id`` makes the producer transactional (see the module docstring); its transactions
    time out on the coordinator after ``transaction_timeout_ms`` (the broker's
    ``transaction.max.timeout.ms`` caps it). ``acks`` must then be -1.
    """

    # The settings may be changed on a live producer; they are kept in ``settings``, shared with the
    # accumulator and the sender.
    batch_records: Setting[int] = Setting()
    batch_bytes: Setting[int] = Setting()
    linger_ms: Setting[float] = Setting()
    compression: Setting[str | None] = Setting()
    acks: Setting[int] = Setting()
    delivery_timeout_ms: Setting[float | None] = Setting()
    buffer_memory: Setting[int] = Setting()
    max_block_ms: Setting[float] = Setting()

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
        buffer_memory: int = 32 << 20,
        max_block_ms: float = 60_000,
        **client_options: Any,
    ) -> None:
        if transactional_id is not None and acks != -1:
            raise ValueError(f"a transactional producer needs acks=-1, not {acks!r}")
        if buffer_memory <= 0 or max_block_ms < 0:
            raise ValueError(f"buffer_memory must be > 0 and max_block_ms >= 0: {buffer_memory!r}, {max_block_ms!r}")
        self.client, self._own_client = resolve_client(bootstrap_servers, client, client_options)
        #: The producer's settings (its attributes of the same names read and write them).
        self.settings = ProducerSettings(
            batch_records, batch_bytes, linger_ms, compression, acks, delivery_timeout_ms, int(buffer_memory),
            float(max_block_ms),
        )
        #: The transaction state of a transactional producer (None otherwise).
        self.transaction_manager: TransactionManager | None = (
            None if transactional_id is None else TransactionManager(transactional_id, transaction_timeout_ms)
        )
        # The producer's lock guards the buffers and its state (held briefly, never during network I/O);
        # the sender's write_lock (one write at a time) is taken before it (see .sender).
        self._lock = threading.RLock()
        self._sender = Sender(self.client, self.settings, self.transaction_manager, self._lock)
        self._accumulator = self._sender.accumulator
        core = self._accumulator.core
        core.after_send, core.make_room = self._after_send, self._make_room
        # send() is the compiled accumulator's own method (the method below documents it): one C call per
        # record instead of a Python frame forwarding eight arguments (issue 32; half of send()'s cost).
        self.__dict__["send"] = core.send
        self._closed = False
        self._closing = False

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
        ``on_delivery`` (alias ``callback``): confluent-kafka's ``fn(err, metadata)``, called then.

        Records sent and not yet acknowledged or failed may take up ``buffer_memory`` bytes (Java's
        ``buffer.memory``); beyond that ``send()`` blocks until a write frees room, at most ``max_block_ms``
        (``max.block.ms``), then raises :class:`KafkaTimeoutError` naming both. The argument checks, the
        partitioner's input and the append run in the compiled accumulator (``_accumulator.pyx``)."""
        return self._accumulator.core.send(
            topic, value, key, partition=partition, headers=headers, timestamp_ms=timestamp_ms,
            on_delivery=on_delivery, callback=callback,
        )

    def _settings_changed(self) -> None:
        """A setting was assigned (``producer.linger_ms = ...``): send() takes the new limits."""
        with self._lock:
            self._accumulator.core.configure()

    def _after_send(self, topic: str, fut: DeliveryFuture, ready: int) -> DeliveryFuture:
        """``send()`` appended a record that made its buffer full (``FULL``) or lingered (``LINGERED``)."""
        sender = self._sender
        if ready == FULL:
            # Written here, not handed to the sender: a producer faster than the broker waits (back-pressure),
            # but for no longer than max_block_ms for another thread's write (its deadline is not ours).
            if not sender.write_lock.acquire(timeout=self.settings.max_block_ms / 1000):
                return fut
            try:
                _, failure = sender.write(topic, only_if_full=True)
            finally:
                sender.write_lock.release()
        elif ready == LINGERED and sender.write_lock.acquire(blocking=False):
            # While send() is being called, the sending thread writes lingered buffers itself (unless a write
            # is under way): handing every write to the sender thread costs the GIL hand-offs of two busy
            # threads (measured 4x slower, benchmarks/bench_producer_send.py). The sender covers the
            # buffers nobody sends after (see Sender.due).
            try:
                _, failure = sender.write(topic, only_if_lingered=True)
            finally:
                sender.write_lock.release()
        else:
            return fut
        sender.deliver()
        if failure is not None:
            raise failure
        return fut

    def _make_room(self, topic: str, size: int) -> None:
        """``send()`` of ``size`` bytes found ``buffer_memory`` used up: ask the background sender to write the
        buffers now and wait until a write frees room, at most ``max_block_ms`` (the Java producer's
        ``max.block.ms``), then raise a KafkaTimeoutError naming the settings. The writes are the sender's, not
        this caller's: a write waits up to ``delivery_timeout_ms`` for an unreachable broker, and the caller's
        deadline is ``max_block_ms``. Called without the lock."""
        settings, sender, acc = self.settings, self._sender, self._accumulator
        deadline = time.monotonic() + settings.max_block_ms / 1000
        with self._lock:
            while True:
                used = acc.buffered_bytes
                if not used or used + size <= settings.buffer_memory:
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    raise KafkaTimeoutError(
                        f"send: failed to allocate {size} bytes within max_block_ms={settings.max_block_ms:g} "
                        f"(max.block.ms): {used} bytes of buffer_memory={settings.buffer_memory} (buffer.memory) "
                        "are taken by records not yet acknowledged; a write is slow or the brokers are unreachable"
                    )
                for name in acc.buffers:
                    sender.request(name)
                acc.space.wait(min(left, 0.1))  # woken by a write that frees room; asks again meanwhile

    def flush(self, *, timeout_ms: float | None = None) -> list[ProduceResult]:
        """Write every buffered record; returns one :class:`ProduceResult` per produce call.
        ``timeout_ms`` bounds each write instead of ``delivery_timeout_ms``.

        Raises :class:`ProduceFailedError` when some records were not acknowledged by the delivery
        timeout: its ``unacknowledged`` holds them (``rows`` are positions in the flushed buffer).
        Every topic is attempted first. Failures of background writes since the last flush are raised
        too; when several writes failed (several topics), the first is raised and the next ``flush()``
        raises the next, so every one is handed back."""
        try:
            out = self._sender.write_all(timeout_ms)
        finally:
            self._sender.deliver()
        self._sender.raise_failure()
        return out

    @property
    def buffered(self) -> int:
        """Records queued and not written yet (a write in progress not counted)."""
        with self._lock:
            return self._accumulator.count()

    def close(self, timeout: float | None = None) -> None:
        """Flush (each write bounded by ``timeout`` seconds when given), stop the background sender, then
        close the client if this producer created it. A transactional producer aborts the transaction it
        is in instead of flushing into it. Raises the flush's :class:`ProduceFailedError` (after closing)."""
        with self._lock:
            if self._closed or self._closing:
                return
            # From here send() refuses records: none can slip in after the final flush and be left behind.
            self._closing = True
            self._accumulator.core.closed = True
        try:
            txn = self.transaction_manager
            if txn is None:
                try:
                    self.flush(timeout_ms=None if timeout is None else timeout * 1000)
                finally:
                    with self._lock:
                        rest = list(self._sender.failures)
                        self._sender.failures.clear()
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
            self._shut_down()

    def _shut_down(self) -> None:
        """Stop the background sender and close the client if this producer created it."""
        self._sender.stop()
        if self._own_client:
            self.client.close()

    def __del__(self) -> None:
        # Dropped without close(): stop the sender (it holds only a weak reference) and say what is lost.
        sender = getattr(self, "_sender", None)
        if sender is None or sender.state.stop:
            return
        cond = sender.state.cond
        if cond.acquire(timeout=1):
            try:
                sender.stop(join=False)
            finally:
                cond.release()
        n = sender.accumulator.count()
        if n and not self._closed:
            log.warning("Producer garbage-collected without close(): %d buffered record(s) were not sent", n)

    # ---------------------------------------------------------------------------- transactions
    def _txn(self, what: str) -> TransactionManager:
        if self.transaction_manager is None:
            raise RuntimeError(f"{what}: the producer has no transactional_id")
        if self._closed:
            raise RuntimeError("producer is closed")
        return self.transaction_manager

    def _on_cluster(self, timeout_ms: float | None, call: Callable[[Cluster, Deadline], object]) -> None:
        """``call(cluster, deadline)`` with the client's cluster lock held: a transaction request."""
        cluster = self.client.cluster
        with cluster.lock:
            call(cluster, self.client.deadline(timeout_ms))

    def _flush_in_transaction(self, txn: TransactionManager, timeout_ms: float | None) -> None:
        """Write what is buffered before the transaction ends (callbacks run by the caller, once it released
        the producer's lock); a failed write makes the transaction abortable and is raised."""
        try:
            self._sender.write_all(timeout_ms)
            self._sender.raise_failure()
        except ProduceFailedError as e:
            txn.fail_produce(e)
            raise

    def init_transactions(self, *, timeout_ms: float | None = None) -> None:
        """Register the transactional id with its coordinator (InitProducerId): older producers with
        the same id are fenced and a transaction they left open is aborted. Call once, first."""
        with self._lock:
            self._on_cluster(timeout_ms, self._txn("init_transactions").init)

    def begin_transaction(self) -> None:
        """Start a transaction: what is sent until commit or abort belongs to it."""
        with self._lock:
            self._txn("begin_transaction").begin()

    def send_offsets_to_transaction(
        self,
        offsets: Mapping[Any, OffsetSpec],
        group_metadata: GroupMetadata | str,
        *,
        timeout_ms: float | None = None,
    ) -> None:
        """Commit a consumer group's offsets as part of the transaction (consume-transform-produce).

        ``offsets``: ``{(topic, partition) or TopicPartition: next offset to read}``, or ``(offset, metadata)``
        or ``(offset, metadata, leader_epoch)`` (the leader epoch of the record before it, KIP-320, as Java's
        ``OffsetAndMetadata`` carries it).
        ``group_metadata``: the consumer's :meth:`Consumer.group_metadata` (KIP-447: the coordinator
        refuses offsets from a member of an old generation), or just a group id."""
        with self._lock:
            txn = self._txn("send_offsets_to_transaction")
            group = group_metadata if isinstance(group_metadata, GroupMetadata) else GroupMetadata(group_metadata)
            normalised = {(str(tp[0]), int(tp[1])): v for tp, v in offsets.items()}
            self._on_cluster(timeout_ms, lambda c, d: send_offsets_to_transaction(txn, c, normalised, group, d))

    def commit_transaction(self, *, timeout_ms: float | None = None) -> None:
        """Flush what is buffered, then commit the transaction (EndTxn). A failed flush makes the
        transaction abortable: the error is raised and :meth:`abort_transaction` must follow. A commit
        that timed out may be called again."""
        self._end_transaction(True, timeout_ms)

    def abort_transaction(self, *, timeout_ms: float | None = None) -> None:
        """Abort the transaction: buffered records are dropped, written ones stay invisible to
        read_committed readers, offsets sent to the transaction are not committed."""
        self._end_transaction(False, timeout_ms)

    def _end_transaction(self, commit: bool, timeout_ms: float | None) -> None:
        try:
            # Both locks for the whole commit: no background write and no send() slips in between the
            # flush and EndTxn (a send() waits, then finds the transaction over, as in the Java client).
            with self._sender.write_lock, self._lock:
                if commit:
                    txn = self._txn("commit_transaction")
                    txn.require(_IN_TXN, TransactionState.COMMITTING, what="commit_transaction")
                    self._flush_in_transaction(txn, None)
                else:
                    txn = self._txn("abort_transaction")
                    dropped = RecordDroppedError("the transaction was aborted before the record was written")
                    self._sender.discard(dropped)
                self._on_cluster(timeout_ms, lambda cluster, d: txn.end(cluster, commit, d))
        finally:
            self._sender.deliver()

    def hand_over_transaction(self, *, timeout_ms: float | None = None) -> TransactionHandle:
        """Flush the open transaction, close the producer *without* committing or aborting, and return the
        :class:`~kafkawire.client.producer.transaction.TransactionHandle` with which any process finishes it
        (:func:`kafkawire.client.producer.transaction.end_transaction`): a Spark task writes, its driver commits.
        The coordinator aborts it after ``transaction_timeout_ms`` if nobody does."""
        try:
            with self._sender.write_lock, self._lock:
                txn = self._txn("hand_over_transaction")
                txn.require(_IN_TXN, what="hand_over_transaction")
                self._flush_in_transaction(txn, timeout_ms)
                handle = txn.handle()
                self._closed = True
                self._accumulator.core.closed = True
        finally:
            self._sender.deliver()
        self._shut_down()
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
