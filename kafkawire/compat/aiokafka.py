"""Drop-in record decoding for aiokafka's ``AIOKafkaConsumer``.

::

    import kafkawire.compat.aiokafka as kw_aiokafka

    kw_aiokafka.install()      # every AIOKafkaConsumer in the process, existing ones included
    ...
    kw_aiokafka.uninstall()

aiokafka's fetcher (``aiokafka/consumer/fetcher.py``) does ``from aiokafka.record.memory_records import
MemoryRecords`` and builds one per fetched partition; :func:`install` rebinds that name in the fetcher
module. aiokafka's own ``MemoryRecords`` is a final Cython class (no subclassing), so
:class:`MemoryRecords` here re-implements its framing and asks aiokafka's own batch classes for
everything that is not a magic-2 data batch (control batches, legacy message sets).

Behaviours in which aiokafka's compiled and pure-Python classes differ are reproduced, because
consumers see them. They are *probed* when this module is imported (against whichever implementation
aiokafka activated) rather than assumed, so a release that changes them is followed:

* the compiled ``MemoryRecords`` (0.14) picks the batch class from the magic byte of the *first* entry
  of the fetch for every entry (it reads ``buf[16]``, not ``buf[pos + 16]``), so a v2 batch after a
  legacy message fails; the pure-Python one looks at each entry;
* the compiled ``DefaultRecordBatch`` (0.14) refuses ``iter()`` after a bare ``next()`` (assertion);
* some aiokafka sources report a record timestamp of -1 as ``timestamp=None, timestamp_type=None``;
  0.14's compiled and pure classes both report -1 and the batch's timestamp type.

Performance, honestly: aiokafka already decodes records in Cython and builds one C object per record, so
there is little left for a drop-in to save, and re-creating Python objects from columns costs about as
much as aiokafka's own loop. ``benchmarks/bench_dropin.py`` measured the drop-in *slower* (aiokafka
0.14, compiled): end to end 0.93x (0.36 s -> 0.39 s for 100,000 records), ``MemoryRecords`` alone
0.32x. kafkawire's gain for aiokafka users is in using :func:`kafkawire.decode_records` columns
directly; this adapter exists for compatibility (one decoder, identical results, in code bases that
mix kafka-python and aiokafka) and completeness.
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Iterable, Iterator
from typing import Any

try:
    import aiokafka.consumer.fetcher as _fetcher
    import aiokafka.record.memory_records as _aio_memory_records
    from aiokafka.errors import CorruptRecordException as _CorruptRecordException
    from aiokafka.record.default_records import DefaultRecordBatch as _AioDefaultRecordBatch
    from aiokafka.record.legacy_records import LegacyRecordBatch as _AioLegacyRecordBatch
except ModuleNotFoundError as exc:  # pragma: no cover - depends on the environment
    from .._optional import missing

    raise missing("aiokafka", "kafkawire.compat.aiokafka") from exc

from .. import crc32c as _crc32c
from ._fast import HEADER, FetchColumns, decode_batch, fast_entry

__all__ = ["DefaultRecordBatch", "MemoryRecords", "install", "installed", "is_installed", "uninstall"]

_LENGTH = struct.Struct(">i")
_LOG_OVERHEAD = 12
_RECORD_OVERHEAD_V0 = 14
_NOT_STARTED, _FAST, _FALLBACK = 0, 1, 2
_UNSET: Any = object()


class _Quirks:
    """Behaviours of aiokafka's active record classes, probed when this module is imported (module doc)."""

    magic_from_first_entry = True
    none_timestamps = False
    iter_after_next_asserts = True


class DefaultRecordBatch:
    """A magic-2 data batch with the interface of aiokafka's ``DefaultRecordBatch``, decoded by kafkawire."""

    __slots__ = ("_view", "_header", "_owner", "_start", "_state", "_it", "_fallback", "_iterated", "_peeked")

    CODEC_MASK = 0x07
    CODEC_NONE = 0x00
    CODEC_GZIP = 0x01
    CODEC_SNAPPY = 0x02
    CODEC_LZ4 = 0x03
    CODEC_ZSTD = 0x04

    def __init__(self, buffer: Any, owner: MemoryRecords | None = None, start: int = 0) -> None:
        self._view = buffer
        self._header = HEADER.unpack_from(buffer)
        self._owner = owner
        self._start = start
        self._state = _NOT_STARTED
        self._it: Iterator[Any] | None = None
        self._fallback: Any = None
        self._iterated = False
        self._peeked = False

    base_offset = property(lambda self: self._header[0])
    magic = property(lambda self: self._header[3])
    crc = property(lambda self: self._header[4])
    attributes = property(lambda self: self._header[5])
    last_offset_delta = property(lambda self: self._header[6])
    first_timestamp = property(lambda self: self._header[7])
    max_timestamp = property(lambda self: self._header[8])
    producer_id = property(lambda self: self._header[9])
    producer_epoch = property(lambda self: self._header[10])
    base_sequence = property(lambda self: self._header[11])

    @property
    def compression_type(self) -> int:
        return int(self._header[5] & 0x07)

    @property
    def timestamp_type(self) -> int:
        return 1 if self._header[5] & 0x08 else 0

    @property
    def is_transactional(self) -> bool:
        return bool(self._header[5] & 0x10)

    @property
    def is_control_batch(self) -> bool:
        return bool(self._header[5] & 0x20)

    @property
    def next_offset(self) -> int:
        return int(self._header[0] + self._header[6] + 1)

    def validate_crc(self) -> bool:
        """True if the stored CRC32C matches the one computed over ``[attributes, end)``."""
        assert not self._iterated, "Validate should be called before iteration"
        return bool(self._header[4] == _crc32c(memoryview(self._view)[21:]))

    def _begin(self) -> None:
        records: Iterable[Any] | None = None
        owner = self._owner
        if owner is not None:
            records = owner._records(self._start, self._header, self._view)
        if records is None:
            records = decode_batch(self._view, self._header, with_sizes=False, none_timestamps=_Quirks.none_timestamps)
        if records is None:
            self._state = _FALLBACK
            self._fallback = _AioDefaultRecordBatch(self._view)
            return
        self._state = _FAST
        self._it = iter(records)

    def __iter__(self) -> Any:
        if self._peeked and _Quirks.iter_after_next_asserts:
            # aiokafka's compiled batch asserts that no record was read before iter() (0.14).
            raise AssertionError
        self._iterated = True
        if self._state == _NOT_STARTED:
            self._begin()
        if self._state == _FAST:
            return self._it
        return iter(self._fallback)

    def __next__(self) -> Any:
        state = self._state
        if not self._iterated:
            self._peeked = True
        if state == _NOT_STARTED:
            if self.compression_type != self.CODEC_NONE:
                # aiokafka's next() without iter() reads the compressed bytes as records: keep that.
                self._state = state = _FALLBACK
                self._fallback = _AioDefaultRecordBatch(self._view)
            else:
                self._begin()
                state = self._state
        if state == _FAST:
            return next(self._it)  # type: ignore[arg-type]
        return next(self._fallback)

    def __repr__(self) -> str:
        h = self._header
        return f"DefaultRecordBatch(base_offset={h[0]}, last_offset_delta={h[6]}, records={h[12]})"


class MemoryRecords:
    """aiokafka's ``MemoryRecords`` (framing, errors and batch classes) with kafkawire-decoded data batches."""

    __slots__ = ("_buffer", "_pos", "_first_magic", "_fetch")

    def __init__(self, bytes_data: Any) -> None:
        self._buffer = bytes_data
        self._pos = 0
        self._first_magic = bytes_data[16] if len(bytes_data) > 16 else 0
        self._fetch: FetchColumns | None = _UNSET

    def size_in_bytes(self) -> int:
        return len(self._buffer)

    def has_next(self) -> bool:
        """True if a complete entry follows (it may still turn out to be corrupt)."""
        remaining = len(self._buffer) - self._pos
        if remaining < _LOG_OVERHEAD:
            return False
        (length,) = _LENGTH.unpack_from(self._buffer, self._pos + 8)
        return bool(remaining >= _LOG_OVERHEAD + length)

    def next_batch(self) -> Any:
        """The next batch, or None at the end or before a partial entry."""
        buffer = self._buffer
        pos = self._pos
        end = len(buffer)
        if end - pos < _LOG_OVERHEAD:
            return None
        (length,) = _LENGTH.unpack_from(buffer, pos + 8)
        if length < _RECORD_OVERHEAD_V0:
            raise _CorruptRecordException(
                f"Record size is less than the minimum record overhead ({_RECORD_OVERHEAD_V0})"
            )
        stop = pos + _LOG_OVERHEAD + length
        if stop > end:
            return None
        self._pos = stop
        piece = memoryview(buffer)[pos:stop]
        if _Quirks.magic_from_first_entry:
            # The compiled class reads the first entry's magic as a C char (signed).
            magic = self._first_magic - 256 if self._first_magic > 127 else self._first_magic
        else:
            magic = piece[16]
        if magic < 2:
            return _AioLegacyRecordBatch(piece, magic)
        if piece[16] == 2 and fast_entry(piece):
            return DefaultRecordBatch(piece, self, pos)
        return _AioDefaultRecordBatch(piece)

    def _records(self, start: int, header: tuple[Any, ...], view: Any) -> Iterator[Any] | None:
        fetch = self._fetch
        if fetch is _UNSET:
            fetch = self._fetch = FetchColumns.build(
                self._buffer, start, with_sizes=False, none_timestamps=_Quirks.none_timestamps
            )
        if fetch is None:
            return None
        return fetch.records(start, header, view)


def _probe_quirks() -> None:
    """Find out how aiokafka's active record classes behave on the two points where they differ."""
    from aiokafka.record.default_records import DefaultRecordBatchBuilder
    from aiokafka.record.legacy_records import LegacyRecordBatchBuilder

    legacy = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    legacy.append(0, timestamp=1, key=None, value=b"v")
    v2 = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=0, producer_id=-1, producer_epoch=-1,
        base_sequence=-1, batch_size=1 << 20,
    )  # fmt: skip
    v2.append(0, timestamp=-1, key=None, value=b"v", headers=[])
    v2_bytes = bytes(v2.build())
    cls = _aio_memory_records.MemoryRecords
    probe = cls(bytes(legacy.build()) + v2_bytes)
    probe.next_batch()
    try:
        second = probe.next_batch()
    except Exception:
        # The compiled class parses the v2 batch as a legacy message and fails (SystemError, seen with
        # aiokafka 0.14): it took the magic from the first entry.
        _Quirks.magic_from_first_entry = True
    else:
        _Quirks.magic_from_first_entry = isinstance(second, _AioLegacyRecordBatch)
    record = next(iter(cls(v2_bytes).next_batch()))
    _Quirks.none_timestamps = record.timestamp is None
    batch = cls(v2_bytes).next_batch()
    next(batch)
    try:
        iter(batch)
    except AssertionError:
        _Quirks.iter_after_next_asserts = True
    else:
        _Quirks.iter_after_next_asserts = False


_original: Any = None


def _original_class() -> Any:
    return _original if _original is not None else _aio_memory_records.MemoryRecords


def install() -> None:
    """Make every aiokafka consumer in this process decode record batches with kafkawire.

    Idempotent; affects consumers created before the call too. Undo with :func:`uninstall`.
    """
    global _original
    if _fetcher.MemoryRecords is MemoryRecords:
        return
    _original = _fetcher.MemoryRecords
    _fetcher.MemoryRecords = MemoryRecords


def uninstall() -> None:
    """Restore aiokafka's own ``MemoryRecords`` in its fetcher (no-op if not installed)."""
    global _original
    if _fetcher.MemoryRecords is MemoryRecords:
        _fetcher.MemoryRecords = _original_class()
        _original = None


def is_installed() -> bool:
    """True while :func:`install` is in effect."""
    return _fetcher.MemoryRecords is MemoryRecords


@contextlib.contextmanager
def installed() -> Iterator[None]:
    """Context manager: :func:`install` on entry, and on exit restore the previous state."""
    was = is_installed()
    install()
    try:
        yield
    finally:
        if not was:
            uninstall()


_probe_quirks()
