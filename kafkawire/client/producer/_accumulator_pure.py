"""The pure-Python twin of the compiled accumulator (``_accumulator.pyx``): what ``Producer.send()`` does
per record. Both define the same three classes and are kept equal by tests/client/test_accumulator_twins.py:

- :class:`DeliveryFuture`: one record's handle, two fields (its :class:`~.delivery.DeliveryBatch` and its
  row there); everything else is the batch's, so a send whose caller ignores the future costs one small object.
- :class:`RecordBuffer`: one topic's records not written yet, column by column (value and key bytes with
  int32 offsets and validity, as :class:`~kafkawire.BinaryColumn`; int64 timestamps; int32 partitions, -1 for
  none; headers as per-record lists only once a record has any), which ``Client.produce`` takes as they are.
- :class:`SendPath`: ``send()`` itself: the argument checks (the ``TypeError`` of
  :func:`kafkawire.records.check_record_arguments` with ``send: `` in front), the producer's state, the
  ``buffer_memory`` limit and the append, under the producer's lock; the rare cases (a batch to write, a full
  buffer, a refused send) are handed to the producer's Python callbacks.

Not thread-safe on their own: the producer's lock guards every buffer (``SendPath.send`` takes it).
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...binary import BinaryColumn
from ...records import check_record_arguments

__all__ = ["DeliveryFuture", "RecordBuffer", "SendPath", "FULL", "LINGERED", "NO_SPACE", "RECORD_OVERHEAD"]

#: What an append asks of the producer: write the buffer now (it is full) ...
FULL = 1
#: ... or write it unless a write is under way (it lingered; see ``Producer.send``) ...
LINGERED = 2
#: ... or make room first (``buffer_memory`` is used up; the record was not appended).
NO_SPACE = 3

#: Bytes a record counts against ``buffer_memory`` beyond its key, value and headers (the v2 record framing
#: and the buffer's offsets, timestamp and partition: what the Java client's estimate also adds).
RECORD_OVERHEAD = 24

_MIN_INLINE_MS = 1.0  # the youngest buffer send() writes itself (see SendPath.send)

_TEXT = (bytes, str)


def _record_bytes(data: Any) -> bytes | None:
    """A value or key as the buffer keeps it: ``str`` as UTF-8, a bytearray or memoryview copied (the caller
    may change it before the batch is written), anything else None (the caller checks first)."""
    if type(data) is bytes:
        return data
    if type(data) is str:
        return data.encode()
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    if isinstance(data, str):
        return str(data).encode()
    return None


def _headers_list(headers: Any) -> tuple[list[tuple[str | bytes, bytes | str | None]] | None, int]:
    """One record's headers as the buffer keeps them and their bytes; a header of an unexpected type is the
    ``TypeError`` of :func:`check_record_arguments`, raised by it."""
    if type(headers) is list or type(headers) is tuple:
        out = list(headers)
        size = 0
        for pair in out:
            if (type(pair) is not tuple and type(pair) is not list) or len(pair) != 2:
                break
            k, v = pair
            if type(k) not in _TEXT or (v is not None and type(v) not in _TEXT):
                break
            size += len(k) + (0 if v is None else len(v))
        else:
            return (out or None), size
    check_record_arguments([None], None, [headers], argument_prefix="send: ")
    # Accepted by the reference check (a header of a bytes subclass, a bytearray...): kept as they are.
    out = list(headers)
    return (out or None), sum(len(k) + (0 if v is None else len(v)) for k, v in out)


class DeliveryFuture:
    """The delivery result of one record sent with ``Producer.send()``: :meth:`result` blocks until it
    is known. Resolved once, with the batch that carried the record: to a
    :class:`~kafkawire.client.producer.delivery.RecordMetadata` when it was acknowledged, or to the error under
    which it came back in ``ProduceFailedError.unacknowledged`` (:class:`RecordDroppedError` when
    ``abort_transaction()`` dropped it). The background sender writes a buffer once ``linger_ms`` has passed, so
    ``producer.send(...).result(timeout=5)`` resolves without a ``flush()`` (as with the Java client)."""

    __slots__ = ("batch", "index")

    def __init__(self, batch: Any, index: int) -> None:
        self.batch = batch
        self.index = index

    @property
    def topic(self) -> str:
        """The record's topic."""
        return self.batch.topic  # type: ignore[no-any-return]

    def done(self) -> bool:
        """True once the record was acknowledged or failed."""
        return self.batch.is_done(self.index)  # type: ignore[no-any-return]

    def result(self, timeout: float | None = None) -> Any:
        """The record's ``RecordMetadata``; raises the delivery error, or ``KafkaTimeoutError`` when it is
        not known within ``timeout`` seconds."""
        return self.batch.result(self.index, timeout)

    def exception(self, timeout: float | None = None) -> BaseException | None:
        """The delivery error, or None when the record was acknowledged (waits as :meth:`result`)."""
        return self.batch.exception(self.index, timeout)  # type: ignore[no-any-return]

    def add_done_callback(self, fn: Callable[[DeliveryFuture], object]) -> None:
        """Call ``fn(future)`` once the future is done (at once when it already is)."""
        self.batch.add_callback(self.index, fn, self)

    def __repr__(self) -> str:
        return f"<DeliveryFuture {self.batch.topic} {self.batch.describe(self.index)}>"


class RecordBuffer:
    """One topic's records not written yet, column by column, oldest first (see the module docstring).

    ``batches`` are the :class:`~.delivery.DeliveryBatch` es the rows belong to; row ``i`` is row
    ``bidx[i]`` of ``batches[bno[i]]`` (one batch, ``bidx`` = ``0..n-1``, unless records not written were
    put back in front of newer ones)."""

    __slots__ = (
        "batches", "bno", "bidx", "vdata", "voff", "vvalid", "kdata", "koff", "kvalid", "has_keys", "headers",
        "timestamps", "partitions", "has_partitions", "nbytes", "since", "last", "tail",
    )

    def __init__(self, batch: Any, since: float) -> None:
        self.batches: list[Any] = [batch]
        self.bno = array("i")
        self.bidx = array("i")
        self.vdata = bytearray()
        self.voff = array("i", [0])
        self.vvalid = array("b")
        self.kdata = bytearray()
        self.koff = array("i", [0])
        self.kvalid = array("b")
        self.has_keys = False
        self.headers: list[Any] | None = None
        self.timestamps = array("q")
        self.partitions = array("i")
        self.has_partitions = False
        self.nbytes = 0
        self.since = since
        self.last = since
        self.tail = 0  # rows of ``batches[-1]`` so far: the next record's row there

    def __len__(self) -> int:
        return len(self.timestamps)

    def append(
        self, value: bytes | None, key: bytes | None, headers: list[Any] | None, hbytes: int, timestamp: int,
        partition: int,
    ) -> DeliveryFuture:
        """Add one checked record (value and key as :func:`_record_bytes` made them); returns its future."""
        n = len(self.timestamps)
        batch = self.batches[-1]
        idx = self.tail
        self.tail = idx + 1
        self.bno.append(len(self.batches) - 1)
        self.bidx.append(idx)
        size = RECORD_OVERHEAD + hbytes
        if value is None:
            self.vvalid.append(0)
        else:
            self.vdata += value
            self.vvalid.append(1)
            size += len(value)
        self.voff.append(len(self.vdata))
        if key is None:
            self.kvalid.append(0)
        else:
            self.kdata += key
            self.kvalid.append(1)
            self.has_keys = True
            size += len(key)
        self.koff.append(len(self.kdata))
        if headers is not None:
            if self.headers is None:
                self.headers = [None] * n
            self.headers.append(headers)
        elif self.headers is not None:
            self.headers.append(None)
        self.timestamps.append(timestamp)
        self.partitions.append(partition)
        if partition >= 0:
            self.has_partitions = True
        self.nbytes += size
        return DeliveryFuture(batch, idx)

    # ------------------------------------------------------------------------ what the sender reads
    def value_column(self) -> BinaryColumn:
        """The values as a :class:`BinaryColumn` (a copy: ``send()`` may go on appending)."""
        valid = np.frombuffer(self.vvalid, dtype=np.int8).astype(bool)
        return BinaryColumn(
            np.frombuffer(self.voff, dtype=np.int32).copy(),
            np.frombuffer(bytes(self.vdata), dtype=np.uint8),
            None if valid.all() else valid,
        )

    def key_column(self) -> BinaryColumn | None:
        """The keys as a :class:`BinaryColumn`, None when no record has one."""
        if not self.has_keys:
            return None
        valid = np.frombuffer(self.kvalid, dtype=np.int8).astype(bool)
        return BinaryColumn(
            np.frombuffer(self.koff, dtype=np.int32).copy(),
            np.frombuffer(bytes(self.kdata), dtype=np.uint8),
            None if valid.all() else valid,
        )

    def timestamp_array(self) -> np.ndarray:
        """The records' timestamps (int64 ms)."""
        out: np.ndarray = np.frombuffer(self.timestamps, dtype=np.int64).copy()
        return out

    def partition_array(self) -> np.ndarray:
        """The partition each record was sent to (int32; -1: none, the client partitions it)."""
        out: np.ndarray = np.frombuffer(self.partitions, dtype=np.int32).copy()
        return out

    def row_refs(self) -> tuple[list[Any], np.ndarray, np.ndarray]:
        """``(batches, bno, bidx)``: the delivery batch and its row of every buffered record."""
        return list(self.batches), np.frombuffer(self.bno, dtype=np.int32).copy(), np.frombuffer(
            self.bidx, dtype=np.int32
        ).copy()

    # ------------------------------------------------------------ what was neither written nor handed back
    def keep(self, rows: Sequence[int]) -> None:
        """Keep only ``rows`` (positions, ascending): the rest were written or handed back."""
        old = (self.vdata, self.voff, self.vvalid, self.kdata, self.koff, self.kvalid, self.headers)
        bno, bidx, ts, parts = self.bno, self.bidx, self.timestamps, self.partitions
        self.bno, self.bidx, self.timestamps, self.partitions = array("i"), array("i"), array("q"), array("i")
        self.vdata, self.voff, self.vvalid = bytearray(), array("i", [0]), array("b")
        self.kdata, self.koff, self.kvalid = bytearray(), array("i", [0]), array("b")
        self.headers = None if old[6] is None else []
        self.has_keys = self.has_partitions = False
        self.nbytes = 0
        vdata, voff, vvalid, kdata, koff, kvalid, headers = old
        for i in rows:
            self._copy_row(
                vdata[voff[i] : voff[i + 1]] if vvalid[i] else None,
                kdata[koff[i] : koff[i + 1]] if kvalid[i] else None,
                None if headers is None else headers[i],
                ts[i], parts[i], bno[i], bidx[i],
            )

    def extend(self, newer: RecordBuffer) -> None:
        """Append the records of ``newer`` (sent while this buffer was being written) after these."""
        base = len(self.batches)
        self.batches += newer.batches
        self.tail = newer.tail
        headers = newer.headers
        for i in range(len(newer)):
            self._copy_row(
                newer.vdata[newer.voff[i] : newer.voff[i + 1]] if newer.vvalid[i] else None,
                newer.kdata[newer.koff[i] : newer.koff[i + 1]] if newer.kvalid[i] else None,
                None if headers is None else headers[i],
                newer.timestamps[i], newer.partitions[i], base + newer.bno[i], newer.bidx[i],
            )
        self.last = max(self.last, newer.last)

    def _copy_row(
        self, value: bytes | bytearray | None, key: bytes | bytearray | None, headers: Any, ts: int, part: int,
        bno: int, bidx: int,
    ) -> None:
        n = len(self.timestamps)
        size = RECORD_OVERHEAD
        self.vvalid.append(value is not None)
        if value is not None:
            self.vdata += value
            size += len(value)
        self.voff.append(len(self.vdata))
        self.kvalid.append(key is not None)
        if key is not None:
            self.kdata += key
            self.has_keys = True
            size += len(key)
        self.koff.append(len(self.kdata))
        if headers is not None:
            if self.headers is None:
                self.headers = [None] * n
            size += sum(len(k) + (0 if v is None else len(v)) for k, v in headers)
        if self.headers is not None:
            self.headers.append(headers)
        self.timestamps.append(ts)
        self.partitions.append(part)
        self.has_partitions = self.has_partitions or part >= 0
        self.bno.append(bno)
        self.bidx.append(bidx)
        self.nbytes += size


class SendPath:
    """``Producer.send()`` (see the module docstring). The producer sets ``closed`` when it stops taking
    records; ``buffered_bytes`` counts every record sent and not yet acknowledged or failed (written or
    not), against ``settings.buffer_memory``.

    ``new_batch(topic)`` makes a buffer's delivery batch; ``wake()`` is called when a buffer is made;
    ``after_send(topic, future, ready)`` handles :data:`FULL` / :data:`LINGERED` and returns the future;
    ``make_room(topic, size)`` waits until ``size`` bytes fit (or raises). All are called without the lock
    except ``new_batch`` and ``wake``."""

    def __init__(
        self, settings: Any, lock: Any, txn: Any, in_txn: Any, new_batch: Callable[[str], Any],
        wake: Callable[[], None], after_send: Callable[[str, DeliveryFuture, int], DeliveryFuture] | None,
        make_room: Callable[[str, int], None] | None,
    ) -> None:
        self.settings = settings
        self.lock = lock
        self.txn = txn
        self.in_txn = in_txn
        self.new_batch = new_batch
        self.wake = wake
        self.after_send = after_send
        self.make_room = make_room
        self.buffers: dict[str, RecordBuffer] = {}
        self.buffered_bytes = 0
        self.closed = False
        self.configure()

    def configure(self) -> None:
        """Take the settings' limits (the producer calls it whenever one of its settings is assigned): read
        once, not per record."""
        s = self.settings
        self.batch_records, self.batch_bytes = int(s.batch_records), int(s.batch_bytes)
        self.linger_ms, self.buffer_memory = float(s.linger_ms), int(s.buffer_memory)

    def send(
        self,
        topic: str,
        value: Any,
        key: Any = None,
        *,
        partition: int | None = None,
        headers: Any = None,
        timestamp_ms: int | None = None,
        on_delivery: Any = None,
        callback: Any = None,
    ) -> DeliveryFuture:
        """``Producer.send()``: see its docstring."""
        v = _record_bytes(value)
        k = _record_bytes(key)
        if (v is None and value is not None) or (k is None and key is not None):
            check_record_arguments([value], None if key is None else [key], None, argument_prefix="send: ")
        hlist, hbytes = (None, 0) if headers is None else _headers_list(headers)
        if type(topic) is not str:
            raise TypeError(f"send: topic must be a str, not {type(topic).__name__}")
        part = -1
        if partition is not None:
            part = int(partition)
            if part < 0:
                raise ValueError(f"send: partition must be >= 0, not {partition!r}")
        ts = int(time.time() * 1000) if timestamp_ms is None else int(timestamp_ms)
        size = RECORD_OVERHEAD + hbytes + (0 if v is None else len(v)) + (0 if k is None else len(k))
        while True:
            now = time.monotonic()
            with self.lock:
                if self.closed:
                    raise RuntimeError("producer is closed")
                txn = self.txn
                if txn is not None and txn.state is not self.in_txn:
                    txn.require(self.in_txn, what="send")
                if self.buffered_bytes and self.buffered_bytes + size > self.buffer_memory:
                    ready = NO_SPACE
                else:
                    buf = self.buffers.get(topic)
                    if buf is None:
                        buf = self.buffers[topic] = RecordBuffer(self.new_batch(topic), now)
                        self.wake()
                    buf.last = now
                    fut = buf.append(v, k, hlist, hbytes, ts, part)
                    self.buffered_bytes += size
                    if on_delivery is not None:
                        fut.batch.add_callback(fut.index, on_delivery, None)
                    if callback is not None:
                        fut.batch.add_callback(fut.index, callback, None)
                    ready = 0
                    if len(buf) >= self.batch_records or buf.nbytes >= self.batch_bytes:
                        ready = FULL
                    elif (now - buf.since) * 1000 >= max(self.linger_ms, _MIN_INLINE_MS):
                        # Not sooner than _MIN_INLINE_MS: with linger_ms=0 every send() would write its one
                        # record itself and wait for the answer; the sender, woken when the buffer was made,
                        # writes it at once and what is sent meanwhile accumulates for its next write.
                        ready = LINGERED
            if ready == NO_SPACE:
                assert self.make_room is not None
                self.make_room(topic, size)
                continue
            if ready:
                assert self.after_send is not None
                return self.after_send(topic, fut, ready)
            return fut
