"""Drop-in record decoding for kafka-python's ``KafkaConsumer`` (kafka-python 2.0.2 through 3.x).

::

    import kafkawire.compat.kafka_python as kw_kafka_python

    kw_kafka_python.install()          # every KafkaConsumer in the process, existing ones included
    consumer = kafka.KafkaConsumer("topic", bootstrap_servers=...)
    ...
    kw_kafka_python.uninstall()        # back to kafka-python's own decoder

kafka-python's fetcher builds ``MemoryRecords(partition_data.records)`` for each fetched partition and
walks its batches. ``kafka/consumer/fetcher.py`` binds the name at import time
(``from kafka.record import MemoryRecords``), so :func:`install` rebinds
``kafka.consumer.fetcher.MemoryRecords``; replacing ``kafka.record.MemoryRecords`` would change nothing.

What changes and what does not:

* :class:`MemoryRecords` subclasses kafka-python's own class, so framing, ``has_next()``,
  ``size_in_bytes()``, ``valid_bytes()``, partial tails and "record smaller than the minimum overhead"
  errors are those of the installed kafka-python version.
* Magic-2 *data* batches come back as :class:`DefaultRecordBatch`, a subclass of kafka-python's, so every
  batch attribute of the installed version is there. Iterating the first one decodes the rest of the
  fetch in one call of kafkawire's compiled core; each batch then takes its rows and turns them into
  records in bulk. ``validate_crc()`` uses kafkawire's CRC32C (kafka-python falls back to a pure-Python
  CRC32C when the ``crc32c`` package is missing).
* Control batches, legacy (magic 0/1) message sets and unknown magics are kafka-python's own objects: the
  fetcher's transaction-marker logic (which differs between versions: 2.0.2 even returns control records
  to the application) and per-message CRCs behave exactly as before.
* Whenever kafkawire's stricter decoder rejects a batch, or cannot reproduce kafka-python's result
  exactly (a header key that is not UTF-8, say), that batch is handed to kafka-python's own code, which
  yields the records it can and raises its own ``CorruptRecordError`` where it always did.
* The fetcher's per-partition record loop (``Fetcher.PartitionRecords._unpack_records``) is replaced
  too, by default, on the releases whose loop this module mirrors (2.2.x, 2.3.x, 3.0.x, recognised by a
  hash of its source): with decoding gone it is most of a consumer's time per record, and the
  replacement builds ConsumerRecords from the columns without Python code per record.

Measured with ``benchmarks/bench_dropin.py`` (100,000 records of 100 bytes from a local noida-db broker,
kafka-python 3.0.12, a shared 2-core machine): a ``KafkaConsumer`` reading the topic end to end 3.3x
faster (1.12 s -> 0.34 s); ``MemoryRecords`` decoding alone 3.1x. Single-record batches gain nothing
(per-batch overhead), large batches gain most.

Checked (``tests/compat``) against kafka-python 2.0.2, 2.1.6, 2.2.21, 2.3.3, 3.0.0 and 3.0.12: every
batch and record attribute, CRC results, errors, and the ConsumerRecords/positions the fetcher produces.
Two differences remain, both only on hostile input with a *valid* CRC (a broker never sends it, and a
CRC check catches it when the bytes were damaged in transit): a record whose attributes byte has its
high bit set (kafka-python reads that field as a varint, the Java client and kafkawire as one byte),
and a compressed payload that kafkawire's decompressor accepts but kafka-python's rejects.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import repeat
from typing import Any

try:
    import kafka.consumer.fetcher as _fetcher
    from kafka.record.default_records import DefaultRecordBatch as _KDefaultRecordBatch
    from kafka.record.memory_records import MemoryRecords as _KMemoryRecords
except ModuleNotFoundError as exc:  # pragma: no cover - depends on the environment
    from .._optional import missing

    raise missing("kafka", "kafkawire.compat.kafka_python") from exc

from .. import crc32c as _crc32c
from ._fast import BatchFields, FastRecord, FetchColumns, decode_batch, decode_batch_fields, fast_entry

__all__ = [
    "DefaultRecordBatch",
    "MemoryRecords",
    "fetcher_fast_path_installed",
    "install",
    "installed",
    "is_installed",
    "uninstall",
]

# Iteration states of a DefaultRecordBatch.
_NOT_STARTED, _FAST, _FALLBACK = 0, 1, 2
_UNSET: Any = object()


class DefaultRecordBatch(_KDefaultRecordBatch):  # type: ignore[misc]  # kafka-python ships no types
    """A magic-2 data batch whose records come from kafkawire's columns.

    Behaves like kafka-python's ``DefaultRecordBatch`` (which it subclasses): same properties, the same
    ``validate_crc()`` contract (only before iteration), ``next(batch)`` without ``iter()`` first, and
    the same records. Falls back to the parent's own record parser for anything the fast path cannot
    reproduce exactly.
    """

    __slots__ = ("_kw_view", "_kw_owner", "_kw_start", "_kw_state", "_kw_it")

    def __init__(self, buffer: Any, owner: MemoryRecords | None = None, start: int = 0) -> None:
        super().__init__(buffer)
        self._kw_view = buffer
        self._kw_owner = owner
        self._kw_start = start
        self._kw_state = _NOT_STARTED
        self._kw_it: Iterator[FastRecord] | None = None

    def validate_crc(self) -> bool:
        """True if the stored CRC32C matches the one computed over ``[attributes, end)``."""
        assert self._decompressed is False, "Validate should be called before iteration"
        return bool(self.crc == _crc32c(memoryview(self._buffer)[self.ATTRIBUTES_OFFSET :]))

    def _kw_begin(self) -> None:
        records = None
        header = self._header_data
        owner = self._kw_owner
        if owner is not None:
            records = owner._kw_records(self._kw_start, header, self._kw_view)
        if records is None:
            records = decode_batch(self._kw_view, header)
        if records is None:
            self._kw_state = _FALLBACK
            return
        self._kw_state = _FAST
        self._kw_it = iter(records)

    def _kw_fields(self) -> BatchFields | None:
        """This batch's records as columns-derived iterables for the fetcher fast path (or None).

        Consumes the batch like iteration does: the records are the caller's from then on.
        """
        if self._kw_state != _NOT_STARTED:
            return None
        header = self._header_data
        owner = self._kw_owner
        fields = owner._kw_fields(self._kw_start, header, self._kw_view) if owner is not None else None
        if fields is None:
            fields = decode_batch_fields(self._kw_view, header)
        if fields is not None:
            self._kw_state = _FAST
            self._kw_it = iter(())
            self._decompressed = True  # type: ignore[misc]  # the parent's slot
        return fields

    def __iter__(self) -> Any:
        if self._kw_state == _NOT_STARTED:
            self._kw_begin()
        if self._kw_state == _FAST:
            # As in the parent: once iter() was called, validate_crc() is a programming error.
            self._decompressed = True  # type: ignore[misc]  # the parent's slot
            return self._kw_it
        # The parent's __iter__ decompresses (and checks the codec) even after a bare next(): keep that.
        return _KDefaultRecordBatch.__iter__(self)

    def __next__(self) -> Any:
        state = self._kw_state
        if state == _FAST:
            return next(self._kw_it)  # type: ignore[arg-type]
        if state == _NOT_STARTED:
            if self.compression_type != self.CODEC_NONE:
                # kafka-python's next() without iter() reads the records section undecompressed; keep
                # that (garbage in, its own error out) rather than silently doing something else.
                self._kw_state = _FALLBACK
            else:
                self._kw_begin()
                if self._kw_state == _FAST:
                    return next(self._kw_it)  # type: ignore[arg-type]
        return _KDefaultRecordBatch.__next__(self)

    next = __next__


class MemoryRecords(_KMemoryRecords):  # type: ignore[misc]  # kafka-python ships no types
    """kafka-python's ``MemoryRecords`` whose magic-2 data batches decode through kafkawire.

    Construct it with the ``records`` bytes of one fetched partition, as the fetcher does.
    """

    __slots__ = ("_kw_fetch",)

    def __init__(self, bytes_data: Any) -> None:
        self._kw_fetch: FetchColumns | None = _UNSET
        super().__init__(bytes_data)

    def next_batch(self, *args: Any, **kwargs: Any) -> Any:
        """The next batch (None at the end): kafkawire-backed for data batches, kafka-python's otherwise."""
        next_slice = self._next_slice
        if next_slice is None or not fast_entry(next_slice):
            return super().next_batch(*args, **kwargs)
        # _cache_next() left _pos at the end of the cached slice: that is where this entry starts.
        start = self._pos - len(next_slice)
        self._cache_next()
        return DefaultRecordBatch(next_slice, self, start)

    def _kw_fields(self, start: int, header: tuple[Any, ...], view: Any) -> BatchFields | None:
        fetch = self._kw_fetch
        if fetch is _UNSET:
            # Decode from the first data batch that is iterated to the end of the fetch in one call.
            fetch = self._kw_fetch = FetchColumns.build(self._buffer, start)
        if fetch is None:
            return None
        return fetch.fields(start, header, view)

    def _kw_records(self, start: int, header: tuple[Any, ...], view: Any) -> Iterator[FastRecord] | None:
        fields = self._kw_fields(start, header, view)
        return None if fields is None else fields.records()


# ------------------------------------------------------------------------------ fetcher fast path
#
# With the decoding gone, most of a kafka-python consumer's time per record is its fetcher's own loop
# (``Fetcher.PartitionRecords._unpack_records``): a CRC call, two deserializer calls, a header-size sum
# and a 13-field namedtuple built in Python. For data batches decoded by kafkawire the replacement below
# builds the ConsumerRecords with C-level map/zip over the columns (sizes computed vectorised) and only
# keeps the per-record bookkeeping in Python. Everything else (batch-level transaction logic, legacy and
# control batches, fallbacks) follows the original line by line. It is installed only over the exact
# ``_unpack_records`` it was written against (source hash), so a kafka-python release that changes the
# fetcher keeps its own loop and still gets kafkawire's MemoryRecords.

#: sha256 prefixes of ``inspect.getsource(Fetcher.PartitionRecords._unpack_records)`` this mirrors, and
#: whether ``_deserialize`` takes the record headers there.
_KNOWN_UNPACK_RECORDS = {
    "d91ccce28d83483f": True,  # kafka-python 3.0.0 - 3.0.12
    "74e6f16557ed13ab": False,  # kafka-python 2.2.x - 2.3.x
}
_new = tuple.__new__


def _unpack_records_variant() -> bool | None:
    """True/False: the installed fetcher is a known variant (deserializer takes headers?); None: unknown."""
    import hashlib
    import inspect

    try:
        source = inspect.getsource(_fetcher.Fetcher.PartitionRecords._unpack_records)
    except (AttributeError, OSError, TypeError):
        return None
    return _KNOWN_UNPACK_RECORDS.get(hashlib.sha256(source.encode()).hexdigest()[:16])


@dataclass(frozen=True)
class _Peer:
    """What the replacement ``_unpack_records`` takes from the installed kafka-python's fetcher module."""

    errors: Any
    log: Any
    consumer_record: Any
    read_committed: Any
    #: kafka-python 2.1+ passes the record's headers to deserializers.
    deserialize_with_headers: bool


def _make_unpack_records(original: Any, deserialize_with_headers: bool) -> Any:
    isolation = getattr(_fetcher, "IsolationLevel", None)
    peer = _Peer(
        _fetcher.Errors, _fetcher.log, _fetcher.ConsumerRecord,
        isolation.READ_COMMITTED if isolation is not None else _fetcher.READ_COMMITTED, deserialize_with_headers,
    )  # fmt: skip

    def unpack_records(self: Any, tp: Any, records: Any, key_deserializer: Any, value_deserializer: Any) -> Any:
        if not isinstance(records, MemoryRecords):
            yield from original(self, tp, records, key_deserializer, value_deserializer)
            return
        yield from _unpack(peer, self, tp, records, key_deserializer, value_deserializer)

    unpack_records.__doc__ = "kafkawire's fast path over kafka-python's ``PartitionRecords._unpack_records``."
    unpack_records._kw_original = original  # type: ignore[attr-defined]
    return unpack_records


def _unpack(peer: _Peer, pr: Any, tp: Any, records: MemoryRecords, key_des: Any, value_des: Any) -> Any:
    """The records of ``records`` as kafka-python's ``PartitionRecords`` (``pr``) yields them, batch by batch."""
    try:
        batch = records.next_batch()
        last_batch = None
        while batch is not None:
            last_batch = batch
            if _skipped(peer, pr, batch):
                batch = records.next_batch()
                continue
            fields = batch._kw_fields() if type(batch) is DefaultRecordBatch else None
            if fields is not None:
                for cr, size in zip(_batch_records(peer, pr, tp, fields, key_des, value_des), fields.sizes):  # type: ignore[arg-type]
                    pr.records_read += 1
                    pr.bytes_read += size
                    pr.next_fetch_offset = cr[3] + 1
                    yield cr
            else:
                yield from _slow_records(peer, pr, tp, batch, key_des, value_des)
            batch = records.next_batch()
        else:
            # Message format v2 keeps the last offset of a batch even when compaction removed its
            # last records: continue after it rather than re-fetching the same batch.
            if last_batch and last_batch.magic == 2:
                pr.next_fetch_offset = last_batch.next_offset
            pr.drain()
    except StopIteration:
        # A StopIteration leaking out of a generator would end it silently (PEP 479 makes it an
        # error anyway); kafka-python turns it into RuntimeError, so do the same.
        peer.log.exception("StopIteration raised unpacking messageset")
        raise RuntimeError("StopIteration raised unpacking messageset") from None


def _skipped(peer: _Peer, pr: Any, batch: Any) -> bool:
    """Check the batch's CRC; True (and the fetch position moved past it) for a batch the application does
    not see: an aborted transaction's under read_committed, or a control batch."""
    if pr.check_crcs and not batch.validate_crc():
        raise peer.errors.CorruptRecordError(
            f"Record batch for partition {pr.topic_partition} at offset {batch.base_offset} failed crc check"
        )
    if batch.magic != 2:
        return False
    pr.leader_epoch = batch.leader_epoch
    if pr.isolation_level == peer.read_committed and batch.has_producer_id():
        pr._consume_aborted_transactions_up_to(batch.last_offset)
        producer_id = batch.producer_id
        if pr._contains_abort_marker(batch):
            pr.aborted_producer_ids.discard(producer_id)
        elif pr._is_batch_aborted(batch):
            peer.log.debug(
                "Skipping aborted record batch from partition %s with producer_id %s and offsets %s to %s",
                pr.topic_partition, producer_id, batch.base_offset, batch.last_offset,
            )  # fmt: skip
            pr.next_fetch_offset = batch.next_offset
            return True
    if batch.is_control_batch:
        pr.next_fetch_offset = batch.next_offset
        return True
    return False


def _batch_records(peer: _Peer, pr: Any, tp: Any, fields: BatchFields, key_des: Any, value_des: Any) -> Iterator[Any]:
    """The batch's ConsumerRecords from kafkawire's decoded fields."""
    if key_des is not None or value_des is not None or fields.n <= 8:
        return _deserialized(peer, pr, tp, fields, key_des, value_des)
    # C-level construction; below a few records the iterator set-up costs more.
    ksz, vsz, hsz = fields.wire_sizes()
    n = fields.n
    return map(
        _new,
        repeat(peer.consumer_record, n),
        zip(
            repeat(tp.topic, n), repeat(tp.partition, n), repeat(pr.leader_epoch, n), fields.offsets,
            fields.timestamps, fields.timestamp_types, fields.keys, fields.values, fields.headers,
            repeat(None, n), ksz, vsz, hsz,
        ),
    )  # fmt: skip


def _deserialized(peer: _Peer, pr: Any, tp: Any, fields: BatchFields, key_des: Any, value_des: Any) -> Iterator[Any]:
    topic, partition, epoch = tp.topic, tp.partition, pr.leader_epoch
    ksz, vsz, hsz = fields.wire_sizes()
    rows = zip(
        fields.offsets, fields.timestamps, fields.timestamp_types, fields.keys, fields.values,
        fields.headers, ksz, vsz, hsz,
    )  # fmt: skip
    deserialize = pr._deserialize
    with_headers = peer.deserialize_with_headers
    consumer_record = peer.consumer_record
    for offset, ts, ts_type, key, value, headers, key_size, value_size, header_size in rows:
        # kafka-python's _deserialize returns the bytes unchanged for a None deserializer.
        if with_headers:
            if key_des is not None:
                key = deserialize(key_des, topic, headers, key)
            if value_des is not None:
                value = deserialize(value_des, topic, headers, value)
        else:
            if key_des is not None:
                key = deserialize(key_des, topic, key)
            if value_des is not None:
                value = deserialize(value_des, topic, value)
        yield _new(
            consumer_record,
            (topic, partition, epoch, offset, ts, ts_type, key, value, headers, None,
             key_size, value_size, header_size),
        )  # fmt: skip


def _slow_records(peer: _Peer, pr: Any, tp: Any, batch: Any, key_des: Any, value_des: Any) -> Any:
    """kafka-python's own record objects, for a batch the fast path does not read."""
    for record in batch:
        if pr.check_crcs and not record.validate_crc():
            raise peer.errors.CorruptRecordError(
                f"Record for partition {pr.topic_partition} at offset {record.offset} failed crc check"
            )
        key_size = len(record.key) if record.key is not None else -1
        value_size = len(record.value) if record.value is not None else -1
        if peer.deserialize_with_headers:
            key = pr._deserialize(key_des, tp.topic, record.headers, record.key)
            value = pr._deserialize(value_des, tp.topic, record.headers, record.value)
        else:
            key = pr._deserialize(key_des, tp.topic, record.key)
            value = pr._deserialize(value_des, tp.topic, record.value)
        headers = record.headers
        header_size = (
            sum(len(k.encode("utf-8")) + (len(v) if v is not None else 0) for k, v in headers) if headers else -1
        )
        pr.records_read += 1
        pr.bytes_read += record.size_in_bytes
        pr.next_fetch_offset = record.offset + 1
        yield peer.consumer_record(
            tp.topic, tp.partition, pr.leader_epoch, record.offset, record.timestamp,
            record.timestamp_type, key, value, headers, record.checksum, key_size, value_size, header_size,
        )  # fmt: skip


# -------------------------------------------------------------------------------------- install


_original: Any = None


def install(*, fetcher_fast_path: bool = True) -> None:
    """Make every kafka-python consumer in this process decode record batches with kafkawire.

    Idempotent. Affects consumers created before the call too (the fetcher looks the class up on each
    fetch). With ``fetcher_fast_path`` (the default) the fetcher's per-partition record loop is
    replaced as well, where the installed kafka-python's loop is one this module knows (see above).
    Undo with :func:`uninstall`.
    """
    global _original
    if _fetcher.MemoryRecords is not MemoryRecords:
        _original = _fetcher.MemoryRecords
        _fetcher.MemoryRecords = MemoryRecords
    partition_records = _fetcher.Fetcher.PartitionRecords
    current = partition_records.__dict__.get("_unpack_records")
    if fetcher_fast_path and not hasattr(current, "_kw_original"):
        variant = _unpack_records_variant()
        if variant is not None:
            partition_records._unpack_records = _make_unpack_records(current, variant)


def uninstall() -> None:
    """Restore kafka-python's own ``MemoryRecords`` and fetcher loop (no-op if not installed)."""
    global _original
    if _fetcher.MemoryRecords is MemoryRecords:
        _fetcher.MemoryRecords = _original if _original is not None else _KMemoryRecords
        _original = None
    partition_records = _fetcher.Fetcher.PartitionRecords
    current = partition_records.__dict__.get("_unpack_records")
    if hasattr(current, "_kw_original"):
        partition_records._unpack_records = current._kw_original


def is_installed() -> bool:
    """True while :func:`install` is in effect."""
    return _fetcher.MemoryRecords is MemoryRecords


def fetcher_fast_path_installed() -> bool:
    """True while the fetcher's record loop is kafkawire's (see :func:`install`)."""
    return hasattr(_fetcher.Fetcher.PartitionRecords.__dict__.get("_unpack_records"), "_kw_original")


@contextlib.contextmanager
def installed(*, fetcher_fast_path: bool = True) -> Iterator[None]:
    """Context manager: :func:`install` on entry, and on exit restore the previous state."""
    was = is_installed()
    install(fetcher_fast_path=fetcher_fast_path)
    try:
        yield
    finally:
        if not was:
            uninstall()
