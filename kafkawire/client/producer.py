"""A buffering producer on top of :meth:`kafkawire.Client.produce`.

``send()`` only appends to a per-topic buffer; the buffer goes out as one ``produce()`` call (records
spread over partitions, batched per partition) when it reaches ``batch_records`` / ``batch_bytes``,
when ``linger_ms`` has passed since its first record (checked on the next ``send()``), or on
``flush()`` / ``close()``. Everything the blocking client guarantees holds: idempotent retries, murmur2
partitioning, one request per leader, and retries until the delivery timeout (``delivery_timeout_ms``,
default the client's ``retry_timeout_ms``).

Nothing is dropped silently: records leave the buffer only once ``produce()`` returned, or raised
:class:`~kafkawire.client.errors.ProduceFailedError`, whose ``unacknowledged`` hands the records that
were not acknowledged (values, keys, headers, timestamps per partition) back to the application to
send again. Any other exception (an interrupt, an authorization error) leaves them in the buffer, and
the next ``flush()`` tries them again.

Transactions (KIP-98): with ``transactional_id`` the producer writes inside transactions that readers with
``isolation="read_committed"`` see whole or not at all::

    producer = Producer(bootstrap, transactional_id="orders-1")
    producer.init_transactions()          # fences older instances with this id, aborts their transaction
    with producer.transaction():          # commit_transaction() on success, abort_transaction() on error
        producer.send("out", b"v")
        producer.send_offsets_to_transaction({("in", 0): 42}, consumer.group_metadata())

Errors follow the Java client (:mod:`kafkawire.client.transaction`): ``ProducerFencedError`` and other
fatal errors leave the producer only closable; an abortable error (a refused batch, a zombie consumer's
offsets) must be followed by ``abort_transaction()``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..records import check_record_arguments
from .client import Client
from .delivery import DeliveryCallback, DeliveryFuture, RecordDroppedError, RecordMetadata, as_done_callback
from .errors import ProduceFailedError
from .transaction import GroupMetadata, TransactionHandle, TransactionManager, TransactionState
from .types import ProduceResult, UnacknowledgedRecords

__all__ = ["Producer"]

_IN_TXN = TransactionState.IN_TRANSACTION

log = logging.getLogger("kafkawire.producer")


@dataclass
class _Buffer:
    values: list[bytes | None] = field(default_factory=list)
    keys: list[bytes | None] = field(default_factory=list)
    headers: list[Sequence[tuple[str, bytes | None]] | None] = field(default_factory=list)
    timestamps: list[int] = field(default_factory=list)
    partitions: list[int | None] = field(default_factory=list)
    futures: list[DeliveryFuture] = field(default_factory=list)
    nbytes: int = 0
    since: float = 0.0

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
        if client is None:
            if bootstrap_servers is None:
                raise ValueError("give bootstrap_servers or client")
            client = Client(bootstrap_servers, **client_options)
            self._own_client = True
        else:
            self._own_client = False
        self.client = client
        self.batch_records = batch_records
        self.batch_bytes = batch_bytes
        self.linger_ms = linger_ms
        self.compression = compression
        self.acks = acks
        self.delivery_timeout_ms = delivery_timeout_ms
        self._buffers: dict[str, _Buffer] = {}
        self._lock = threading.RLock()
        self._closed = False
        #: The transaction state of a transactional producer (None otherwise).
        self.transaction_manager: TransactionManager | None = (
            None if transactional_id is None else TransactionManager(transactional_id, transaction_timeout_ms)
        )

    def send(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None = None,
        *,
        partition: int | None = None,
        headers: Sequence[tuple[str, bytes | None]] | None = None,
        timestamp_ms: int | None = None,
        on_delivery: DeliveryCallback | None = None,
        callback: DeliveryCallback | None = None,
    ) -> DeliveryFuture:
        """Queue one record; may write the topic's buffer when it is full or has lingered long enough
        (then raises :class:`ProduceFailedError` as :meth:`flush` does). ``value`` / ``key``: bytes-like,
        ``str`` (written as UTF-8) or None; anything else is a ``TypeError``.

        Returns the record's :class:`~kafkawire.client.delivery.DeliveryFuture`, resolved when the batch
        holding it is acknowledged (to a :class:`~kafkawire.client.delivery.RecordMetadata`) or finally
        fails (to the error under which it is handed back in ``ProduceFailedError.unacknowledged``).
        ``on_delivery`` (alias ``callback``): confluent-kafka's ``fn(err, metadata)``, called then."""
        check_record_arguments(
            [value], None if key is None else [key], None if headers is None else [headers], argument_prefix="send: "
        )
        with self._lock:
            if self._closed:
                raise RuntimeError("producer is closed")
            if self.transaction_manager is not None:
                self.transaction_manager.require(_IN_TXN, what="send")
            buf = self._buffers.get(topic)
            if buf is None:
                buf = self._buffers[topic] = _Buffer(since=time.monotonic())
            if isinstance(value, str):
                value = value.encode()
            if isinstance(key, str):
                key = key.encode()
            buf.values.append(value)
            buf.keys.append(key)
            buf.headers.append(list(headers) if headers else None)
            buf.timestamps.append(int(time.time() * 1000) if timestamp_ms is None else int(timestamp_ms))
            buf.partitions.append(partition)
            fut = DeliveryFuture(topic)
            for cb in (on_delivery, callback):
                if cb is not None:
                    fut.add_done_callback(as_done_callback(cb))
            buf.futures.append(fut)
            buf.nbytes += len(value or b"") + len(key or b"")
            if (
                len(buf.values) >= self.batch_records
                or buf.nbytes >= self.batch_bytes
                or (time.monotonic() - buf.since) * 1000 >= self.linger_ms
            ):
                self._flush_topic(topic)
            return fut

    def _flush_topic(self, topic: str) -> list[ProduceResult]:
        buf = self._buffers.get(topic)
        if buf is None or not buf.values:
            self._buffers.pop(topic, None)
            return []
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
                    _resolve(buf, topic, rows, result, None)
                except ProduceFailedError as e:
                    _resolve(buf, topic, rows, e.result, e)
                    if self.transaction_manager is not None:
                        fatal = self.transaction_manager.fail_produce(e)
                        if fatal is not e:  # fenced: nothing more may be written
                            raise fatal from e
                    failures.append((rows, e))
                done += rows
        finally:
            # Only what was written, or is handed back below, leaves the buffer.
            buf.drop(done)
            if not buf.values:
                self._buffers.pop(topic, None)
        if failures:
            raise _combined_failure(topic, failures, results)
        return results

    def flush(self) -> list[ProduceResult]:
        """Write every buffered record; returns one :class:`ProduceResult` per produce call.

        Raises :class:`ProduceFailedError` when some records were not acknowledged by the delivery
        timeout: its ``unacknowledged`` holds them (``rows`` are positions in the flushed buffer).
        Every topic is attempted before the first failure is raised."""
        with self._lock:
            out: list[ProduceResult] = []
            failure: ProduceFailedError | None = None
            for topic in list(self._buffers):
                try:
                    out += self._flush_topic(topic)
                except ProduceFailedError as e:
                    failure = failure or e
            if failure is not None:
                raise failure
            return out

    @property
    def buffered(self) -> int:
        """Records queued and not written yet."""
        return sum(len(b.values) for b in self._buffers.values())

    def close(self) -> None:
        """Flush, then close the client if this producer created it. A transactional producer aborts
        the transaction it is in instead of flushing into it."""
        with self._lock:
            if self._closed:
                return
            try:
                txn = self.transaction_manager
                if txn is None:
                    self.flush()
                elif txn.in_transaction:
                    try:
                        self.abort_transaction()
                    except Exception as e:  # the coordinator aborts it after transaction_timeout_ms anyway
                        log.warning("abort_transaction on close failed: %s", e)
            finally:
                self._closed = True
                if self._own_client:
                    self.client.close()

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
                txn.send_offsets(cluster, normalised, group, self.client.deadline(timeout_ms))

    def commit_transaction(self, *, timeout_ms: float | None = None) -> None:
        """Flush what is buffered, then commit the transaction (EndTxn). A failed flush makes the
        transaction abortable: the error is raised and :meth:`abort_transaction` must follow. A commit
        that timed out may be called again."""
        with self._lock:
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

    def abort_transaction(self, *, timeout_ms: float | None = None) -> None:
        """Abort the transaction: buffered records are dropped, written ones stay invisible to
        read_committed readers, offsets sent to the transaction are not committed."""
        with self._lock:
            txn = self._txn("abort_transaction")
            dropped = RecordDroppedError("the transaction was aborted before the record was written")
            for buf in self._buffers.values():
                for fut in buf.futures:
                    fut._resolve(None, dropped)
            self._buffers.clear()
            cluster = self.client.cluster
            with cluster.lock:
                txn.end(cluster, False, self.client.deadline(timeout_ms))

    def hand_over_transaction(self, *, timeout_ms: float | None = None) -> TransactionHandle:
        """Flush the open transaction, close the producer *without* committing or aborting, and return the
        :class:`~kafkawire.client.transaction.TransactionHandle` with which any process finishes it
        (:func:`kafkawire.client.transaction.end_transaction`): a Spark task writes, its driver commits.
        The coordinator aborts it after ``transaction_timeout_ms`` if nobody does."""
        with self._lock:
            txn = self._txn("hand_over_transaction")
            txn.require(_IN_TXN, what="hand_over_transaction")
            try:
                if timeout_ms is None:
                    self.flush()
                else:
                    saved, self.delivery_timeout_ms = self.delivery_timeout_ms, timeout_ms
                    try:
                        self.flush()
                    finally:
                        self.delivery_timeout_ms = saved
            except ProduceFailedError as e:
                txn.fail_produce(e)
                raise
            handle = txn.handle()
            self._closed = True
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
) -> None:
    """Resolve the futures of ``rows`` (positions in ``buf``) from one produce call: acknowledged
    records get their metadata, the ones handed back in ``failure.unacknowledged`` its error."""
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
    for j, i in enumerate(rows):
        fut = buf.futures[i]
        if j in failed:
            fut._resolve(None, failed[j])
        elif j < len(parts) and (failure is None or offsets[j] >= 0):
            ts = times[j] if times[j] >= 0 else buf.timestamps[i]
            fut._resolve(RecordMetadata(topic, int(parts[j]), int(offsets[j]), int(ts)), None)
        else:  # neither acknowledged nor handed back: the call's error is all that is known
            fut._resolve(None, failure or ProduceFailedError(f"produce to {topic!r}: no result for the record"))


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
    err = ProduceFailedError(
        f"flush of {topic!r}: {message}", errors, results, unacked, any(e.timed_out for _, e in failures)
    )
    err.__cause__ = failures[0][1]
    return err
