"""The shared fast path of the drop-in decoders: one compiled decode per fetch, records built in bulk.

A fetched partition's ``records`` bytes are decoded by :func:`kafkawire.decode_records` into columns in
one call (:class:`FetchColumns`); each magic-2 data batch of the fetch then takes its rows of those
columns, turned into Python objects by a handful of bulk ``tolist()`` conversions and C-level
``map``/``zip`` pipelines (:class:`_Chunk`), so no Python code runs per record and records are created
only as the consumer pulls them.

Record objects are :class:`FastRecord` tuples. They carry every attribute kafka-python's and aiokafka's
``DefaultRecord`` expose to their fetchers (``offset``, ``timestamp``, ``timestamp_type``, ``key``,
``value``, ``headers``, ``size_in_bytes``, ``checksum``, ``validate_crc()``).

Everything here is conservative: whenever the columns cannot reproduce what the client's own decoder
would deliver (the compiled decoder rejects something the client accepts, a header key is not UTF-8,
a timestamp would overflow, ...) the caller gets ``None`` and falls back to the client's own classes,
which then behave exactly as they always have, errors included.
"""

from __future__ import annotations

import struct
from bisect import bisect_left
from collections import namedtuple
from collections.abc import Iterator
from itertools import repeat
from sys import intern
from typing import Any

import numpy as np

from ..columns import BinaryColumn, RecordColumns
from ..compression import decompress
from ..records import decode_records

__all__ = [
    "HEADER",
    "HEADER_SIZE",
    "AioRecord",
    "BatchFields",
    "FastRecord",
    "FetchColumns",
    "decode_batch",
    "decode_batch_fields",
    "fast_entry",
]

#: The 61-byte magic-2 batch header: baseOffset, batchLength, partitionLeaderEpoch, magic, crc,
#: attributes, lastOffsetDelta, baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence,
#: recordsCount (the same layout kafka-python's ``DefaultRecordBatch.HEADER_STRUCT`` unpacks).
HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
_LENGTH = struct.Struct(">i")
_ATTR_CODEC = 0x07
_ATTR_LOG_APPEND_TIME = 0x08
_ATTR_CONTROL = 0x20

_RecordFields = namedtuple(  # noqa: PYI024 - the C-level tuple getters are the point
    "_RecordFields", ["offset", "timestamp", "timestamp_type", "key", "value", "headers", "size_in_bytes"]
)
_AioRecordFields = namedtuple(  # noqa: PYI024
    "_AioRecordFields", ["offset", "timestamp", "timestamp_type", "key", "value", "headers"]
)


class _RecordMixin:
    __slots__ = ()

    #: Magic-2 records carry no per-record checksum (the batch CRC covers them).
    checksum = None

    def validate_crc(self) -> bool:
        """Always True: a magic-2 record has no CRC of its own (kafka-python answers the same)."""
        return True

    def __repr__(self) -> str:
        return (
            f"DefaultRecord(offset={self.offset!r}, timestamp={self.timestamp!r}, "  # type: ignore[attr-defined]
            f"timestamp_type={self.timestamp_type!r}, key={self.key!r}, value={self.value!r}, "  # type: ignore[attr-defined]
            f"headers={self.headers!r})"  # type: ignore[attr-defined]
        )


class FastRecord(_RecordMixin, _RecordFields):
    """One record of a magic-2 data batch, as kafka-python's fetcher reads it.

    A tuple subclass so that a whole batch of them is built by ``map(tuple.__new__, ...)`` without
    running Python code per record; attribute access goes through the C tuple getters.
    ``size_in_bytes`` is the record's ``length`` varint (kafka-python's ``DefaultRecord.size_in_bytes``).
    """

    __slots__ = ()


class AioRecord(_RecordMixin, _AioRecordFields):
    """One record of a magic-2 data batch, as aiokafka's fetcher reads it (no ``size_in_bytes``)."""

    __slots__ = ()


_new_record = tuple.__new__


def fast_entry(slice_: Any) -> bool:
    """True if a framed entry is a magic-2 *data* batch with a full header (the fast path's only input).

    Control batches (attribute bit 5), legacy messages (magic 0/1), unknown magics and entries too short
    for a batch header stay with the client's own classes.
    """
    return len(slice_) >= HEADER_SIZE and slice_[16] == 2 and not (slice_[22] & _ATTR_CONTROL)


# Zigzag varint sizes, vectorised: a value needs 1 + (number of thresholds <= its zigzag form) bytes.
_VARINT_THRESHOLDS = np.array([1 << (7 * k) for k in range(1, 10)], dtype=np.uint64)


def _varint_sizes(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.int64, copy=False)
    zigzag = ((x << 1) ^ (x >> 63)).view(np.uint64)
    out = np.ones(len(x), dtype=np.int64)
    if len(x):
        # Compare against the thresholds the largest value reaches (usually one or two): cheaper than
        # np.searchsorted, which costs ~7 ns per element here.
        top = zigzag.max()
        for threshold in _VARINT_THRESHOLDS:
            if threshold > top:
                break
            out += zigzag >= threshold
    return out


def _lengths(col: BinaryColumn, lo: int = 0, hi: int | None = None) -> np.ndarray:
    """Lengths of elements ``lo:hi`` with -1 for nulls (the wire's length prefix)."""
    if hi is None:
        hi = len(col)
    n = np.diff(col.offsets[lo : hi + 1]).astype(np.int64)
    if col.valid is not None:
        n[~col.valid[lo:hi]] = -1
    return n


def _encoded_sizes(col: BinaryColumn) -> np.ndarray:
    """Bytes a nullable ``bytes`` field takes inside a record: its varint length plus its data."""
    n = _lengths(col)
    sizes: np.ndarray = _varint_sizes(n) + np.maximum(n, 0)
    return sizes


def _walk_record_lengths(section: bytes, count: int) -> list[int] | None:
    """The ``length`` varint of each of ``count`` records in a records section, or None if malformed."""
    out = []
    pos = 0
    end = len(section)
    for _ in range(count):
        shift = 0
        value = 0
        while True:
            if pos >= end or shift > 63:
                return None
            b = section[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                break
            shift += 7
        length = (value >> 1) ^ -(value & 1)
        if length < 0:
            return None
        out.append(length)
        pos += length
    return out


class FetchColumns:
    """The columns of every magic-2 data batch from ``start`` to the end of one fetch buffer.

    Built once per fetched partition (the first time one of its data batches is iterated), or for a single
    batch when the whole-fetch decode was refused. :meth:`records` gives the records of the data batch
    that starts at a given buffer position. Columns are turned into Python lists a chunk of batches at a
    time (:attr:`CHUNK` records or one batch, whichever is more), so that fetches of many small batches do
    not pay numpy's per-call overhead once per batch.
    """

    __slots__ = ("cols", "sizes", "_ranges", "_bounds", "_chunk", "_none_timestamps")

    #: Records whose columns are converted to Python lists at a time.
    CHUNK = 2048

    def __init__(
        self,
        cols: RecordColumns,
        ranges: dict[int, tuple[int, int]],
        sizes: np.ndarray | None,
        bounds: list[int],
        none_timestamps: bool = False,
    ) -> None:
        self.cols = cols
        #: ``size_in_bytes`` per record (-1 where it has to be measured from the batch's bytes), or None
        #: when the client has no such attribute (aiokafka).
        self.sizes = sizes
        self._none_timestamps = none_timestamps
        self._ranges = ranges
        self._bounds = bounds
        self._chunk: _Chunk | None = None

    @classmethod
    def build(
        cls, buffer: Any, start: int, *, with_sizes: bool = True, none_timestamps: bool = False
    ) -> FetchColumns | None:
        """Decode ``buffer[start:]`` in one call and map its rows to the data batches they came from.

        ``with_sizes``: compute ``size_in_bytes`` (kafka-python) and build :class:`FastRecord` objects,
        else :class:`AioRecord` objects. ``none_timestamps``: report a timestamp of -1 (and its type) as
        None (what some aiokafka releases report; probed by the aiokafka adapter).

        Returns None when the compiled decoder refuses the bytes or its batches cannot be matched to the
        entries one to one; callers then decode batch by batch, or leave the batch to the client.
        """
        view = memoryview(buffer)
        if view.ndim != 1 or view.itemsize != 1:
            view = view.cast("B")
        try:
            cols = decode_records(view[start:], verify_crc=False)
        except Exception:
            # Anything the strict decoder refuses is the client's business: it may accept it (it is more
            # lenient in places) or raise its own error after yielding the good records before it.
            return None
        # Frame the entries the way the clients do (complete ones only) and keep the data batches that
        # produce rows: the decoder emits one batch row per non-empty data batch, legacy entries get rows
        # of their own (magic < 2) and control batches none.
        headers: list[tuple[Any, ...]] = []
        positions: list[int] = []
        pos, end = start, len(view)
        while end - pos >= 12:
            (length,) = _LENGTH.unpack_from(view, pos + 8)
            stop = pos + 12 + length
            if length < 0 or stop > end:
                break
            if stop - pos >= HEADER_SIZE and view[pos + 16] == 2 and not (view[pos + 22] & _ATTR_CONTROL):
                header = HEADER.unpack_from(view, pos)
                if header[12] > 0:
                    headers.append(header)
                    positions.append(pos)
            pos = stop
        magic2_rows = np.flatnonzero(cols.batch_magic == 2)
        if len(magic2_rows) != len(headers):
            return None
        bases = np.fromiter((h[0] for h in headers), dtype=np.int64, count=len(headers))
        if not np.array_equal(cols.batch_base_offset[magic2_rows], bases):
            return None
        nrows = cols.num_batches
        bounds_arr = np.searchsorted(cols.batch_index, np.arange(nrows + 1), side="left")
        bounds = bounds_arr.tolist()
        rows = magic2_rows.tolist()
        ranges = {}
        first_ts = np.zeros(nrows, dtype=np.int64)
        attrs = np.zeros(nrows, dtype=np.int64)
        section_len = np.full(nrows, -1, dtype=np.int64)
        for p, h, row in zip(positions, headers, rows):
            lo, hi = bounds[row], bounds[row + 1]
            if hi - lo != h[12]:
                return None
            ranges[p] = (lo, hi)
            first_ts[row] = h[7]
            attrs[row] = h[5]
            if not h[5] & _ATTR_CODEC:
                section_len[row] = h[1] + 12 - HEADER_SIZE
        sizes = None
        if with_sizes:
            sizes = record_sizes(cols, first_ts, attrs, section_len, bounds_arr.astype(np.int64))
            if sizes is None:
                return None
        return cls(cols, ranges, sizes, bounds, none_timestamps)

    def fields(self, pos: int, header: tuple[Any, ...], batch_bytes: Any) -> BatchFields | None:
        """The records of the data batch at buffer position ``pos`` as :class:`BatchFields`.

        None means "leave this batch to the client" (not decoded here, or not reproducible exactly).
        """
        rng = self._ranges.get(pos)
        if rng is None:
            # No rows: an empty batch (the decode succeeded, so it was well formed), else not ours.
            return BatchFields.empty() if header[12] == 0 else None
        lo, hi = rng
        chunk = self._chunk
        if chunk is None or not (chunk.lo <= lo and hi <= chunk.hi):
            chunk_hi = hi
            if hi - lo < self.CHUNK:
                # Extend to the batch boundary at or after lo + CHUNK (or the end of the fetch).
                bounds = self._bounds
                i = bisect_left(bounds, lo + self.CHUNK)
                chunk_hi = bounds[i] if i < len(bounds) else bounds[-1]
            chunk = self._chunk = _Chunk(self.cols, lo, chunk_hi, self.sizes, self._none_timestamps)
        sizes = None
        if chunk.sizes is not None and hi > lo and chunk.sizes[lo - chunk.lo] < 0:
            sizes = measure_sizes(batch_bytes, header)
            if sizes is None or len(sizes) != hi - lo:
                return None
        return chunk.fields(lo, hi, sizes)

    def records(self, pos: int, header: tuple[Any, ...], batch_bytes: Any) -> Iterator[Any] | None:
        """An iterator over the records of the data batch at ``pos`` (None: leave it to the client)."""
        fields = self.fields(pos, header, batch_bytes)
        return None if fields is None else fields.records()


def record_sizes(
    cols: RecordColumns,
    first_ts: np.ndarray,
    attrs: np.ndarray,
    section_len: np.ndarray,
    bounds: np.ndarray,
) -> np.ndarray | None:
    """Each record's ``length`` varint, recomputed from the columns (what ``size_in_bytes`` reports).

    Per batch row: ``first_ts`` the batch's base timestamp, ``attrs`` its attributes, ``section_len``
    the records section's size when it is not compressed (-1 otherwise), ``bounds`` the row → record
    ranges (``nrows + 1`` entries). A record's length is 1 (attributes) + the varints of its timestamp
    delta, offset delta, key, value and header count + the headers. With LogAppendTime the timestamp
    delta is gone from the columns (every record reports the batch max timestamp), and a producer may
    write non-minimal varints; such batches get -1 and are measured from their bytes when built.
    Returns None if a timestamp would have overflowed int64 in the decoder (the clients use Python ints).
    """
    n = len(cols)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    bi = cols.batch_index
    ts = cols.timestamp
    base = first_ts[bi]
    ts_delta = ts - base
    log_append = (attrs & _ATTR_LOG_APPEND_TIME) != 0
    # With CreateTime the decoder computed base + delta in int64 where the clients use Python ints: it
    # wrapped around iff base and delta share a sign that the sum does not (hostile input only).
    if np.any((((base ^ ts) & (ts_delta ^ ts)) < 0) & ~log_append[bi]):
        return None
    offset_delta = cols.offset - cols.batch_base_offset[bi]
    hoffs = cols.header_offsets.astype(np.int64)
    hcount = np.diff(hoffs)
    sizes: np.ndarray = (
        1
        + _varint_sizes(ts_delta)
        + _varint_sizes(offset_delta)
        + _encoded_sizes(cols.key)
        + _encoded_sizes(cols.value)
        + _varint_sizes(hcount)
    )
    if len(cols.header_key):
        per_header = _encoded_sizes(cols.header_key) + _encoded_sizes(cols.header_value)
        cum = np.concatenate(([0], np.cumsum(per_header)))
        sizes += cum[hoffs[1:]] - cum[hoffs[:-1]]
    # Uncompressed batches can be checked exactly: their records must fill the section to the byte.
    total = sizes + _varint_sizes(sizes)
    cum = np.concatenate(([0], np.cumsum(total)))
    per_row = cum[bounds[1:]] - cum[bounds[:-1]]
    unknown = log_append | ((section_len >= 0) & (per_row != section_len))
    if unknown.any():
        sizes[unknown[bi]] = -1
    return sizes


class _Binary:
    """One binary column over a chunk of records, as one ``bytes`` and a list of offsets into it."""

    __slots__ = ("raw", "offsets", "nulls", "all_null")

    def __init__(self, col: BinaryColumn, lo: int, hi: int) -> None:
        self.nulls: list[int] | None = None
        self.all_null = False
        if col.valid is not None:
            valid = col.valid[lo:hi]
            if not valid.any():
                self.all_null = True
            elif not valid.all():
                self.nulls = np.flatnonzero(~valid).tolist()
        offs = col.offsets[lo : hi + 1]
        start = int(offs[0])
        self.raw = col.data[start : int(offs[-1])].tobytes()
        self.offsets: list[int] = (offs - start).tolist() if start else offs.tolist()

    def items(self, a: int, b: int) -> Iterator[bytes | None]:
        """Elements ``a:b`` (chunk-relative), produced lazily unless some but not all are null."""
        if self.all_null:
            return repeat(None, b - a)
        o = self.offsets
        it = map(self.raw.__getitem__, map(slice, o[a:b], o[a + 1 : b + 1]))
        nulls = self.nulls
        if nulls is None:
            return it
        out: list[bytes | None] = list(it)
        for i in nulls[bisect_left(nulls, a) : bisect_left(nulls, b)]:
            out[i - a] = None
        return iter(out)


def _names(keys: _Binary, n: int) -> list[str]:
    """Header keys ``0:n`` of a chunk as ``str`` (UnicodeDecodeError if one is not UTF-8).

    ASCII keys (the usual case) are decoded once for the whole chunk and sliced: byte and character offsets
    agree. Decoding each key on its own was a Python call per header, the largest cost of the drop-in on
    records with three headers (issue 15).
    """
    raw = keys.raw
    if keys.nulls is None and not keys.all_null and raw.isascii():
        text = raw.decode("ascii")
        o = keys.offsets
        # Interned: a topic's header keys repeat, so a chunk keeps a few strings alive instead of one per header
        # (fewer objects for the garbage collector to traverse while the chunk is served).
        return list(map(intern, map(text.__getitem__, map(slice, o[:n], o[1 : n + 1]))))
    return [k.decode("utf-8") for k in keys.items(0, n)]  # type: ignore[union-attr]


class _Chunk:
    """Records ``lo:hi`` of a :class:`RecordColumns` turned into Python lists once, served per batch.

    Numbers become lists with one ``tolist()`` each, key/value/header bytes are sliced from one
    ``bytes`` per column on demand, and records are produced by C-level ``map``/``zip`` pipelines, so
    that nothing runs in Python per record and only the records being consumed are alive at a time.
    """

    __slots__ = (
        "lo", "hi", "offsets", "timestamps", "timestamp_types", "sizes", "key", "value", "_hdr", "_cols",
        "_wire_sizes",
    )  # fmt: skip

    def __init__(self, cols: RecordColumns, lo: int, hi: int, sizes: np.ndarray | None, none_timestamps: bool) -> None:
        self.lo, self.hi = lo, hi
        self._cols = cols
        self._wire_sizes: tuple[list[int], list[int], list[int]] | None = None
        self.offsets: list[int] = cols.offset[lo:hi].tolist()
        ts = cols.timestamp[lo:hi]
        self.timestamps: list[int | None] = ts.tolist()
        self.timestamp_types: list[int | None] = cols.timestamp_type[lo:hi].tolist()
        if none_timestamps and hi > lo and (ts == -1).any():
            for i in np.flatnonzero(ts == -1).tolist():
                self.timestamps[i] = self.timestamp_types[i] = None
        self.sizes: list[int] | None = None if sizes is None else sizes[lo:hi].tolist()
        self.key = _Binary(cols.key, lo, hi)
        self.value = _Binary(cols.value, lo, hi)
        hoffs = cols.header_offsets
        h_lo, h_hi = int(hoffs[lo]), int(hoffs[hi])
        # (per-record offsets into the header pairs, pairs or None if a key is not UTF-8, raw keys)
        # (per-record offsets into the chunk's headers, (keys, values) or None if a key is not UTF-8, raw keys,
        # raw values)
        self._hdr: tuple[list[int], tuple[list[str], list[bytes | None]] | None, _Binary, _Binary] | None = None
        if h_lo != h_hi:
            hkeys = _Binary(cols.header_key, h_lo, h_hi)
            hvals = _Binary(cols.header_value, h_lo, h_hi)
            ho = (hoffs[lo : hi + 1] - h_lo).tolist()
            try:
                # Keys and values as two lists of non-container objects; the (key, value) tuples are made per
                # record as it is pulled. Making a chunk's tuples up front (thousands of GC-tracked objects at
                # once) set off full garbage collections: ~40% of the drop-in's CPU time on records with three
                # headers (issue 15).
                kv: tuple[list[str], list[bytes | None]] | None = (
                    _names(hkeys, h_hi - h_lo), list(hvals.items(0, h_hi - h_lo))
                )
            except UnicodeDecodeError:
                kv = None
            self._hdr = (ho, kv, hkeys, hvals)

    def _headers(self, a: int, b: int) -> Iterator[list[tuple[str, bytes | None]]] | None:
        if self._hdr is None:
            # A fresh empty list per record, as the clients give (callers may mutate them).
            return map(list, repeat((), b - a))
        ho, kv, hkeys, hvals = self._hdr
        if kv is None:
            # Some header key in the chunk is not UTF-8: is it one of this batch's?
            h_a, h_b = ho[a], ho[b]
            try:
                names = [k.decode("utf-8") for k in hkeys.items(h_a, h_b)]  # type: ignore[union-attr]
            except UnicodeDecodeError:
                return None  # the clients raise their own error for it: leave the batch to them
            local = list(zip(names, hvals.items(h_a, h_b)))
            rel = [x - h_a for x in ho[a : b + 1]]
            return map(local.__getitem__, map(slice, rel[:-1], rel[1:]))
        names, values = kv
        starts, stops = ho[a:b], ho[a + 1 : b + 1]
        return map(list, map(zip, map(names.__getitem__, map(slice, starts, stops)),
                             map(values.__getitem__, map(slice, starts, stops))))  # fmt: skip

    def wire_sizes(self) -> tuple[list[int], list[int], list[int]]:
        """Per record: key length, value length (-1 for null) and header size (-1 without headers).

        The header size is what kafka-python's fetcher reports as ``serialized_header_size``: the sum of
        the UTF-8 key lengths and the value lengths (0 for a null value) of the record's headers.
        """
        if self._wire_sizes is None:
            cols, lo, hi = self._cols, self.lo, self.hi
            key_len = _lengths(cols.key, lo, hi)
            value_len = _lengths(cols.value, lo, hi)
            hoffs = cols.header_offsets[lo : hi + 1].astype(np.int64)
            h_lo, h_hi = int(hoffs[0]), int(hoffs[-1])
            if h_lo == h_hi:
                header_size = np.full(hi - lo, -1, dtype=np.int64)
            else:
                per_header = np.diff(cols.header_key.offsets[h_lo : h_hi + 1]).astype(np.int64)
                per_header += np.maximum(_lengths(cols.header_value, h_lo, h_hi), 0)
                cum = np.concatenate(([0], np.cumsum(per_header)))
                rel = hoffs - h_lo
                header_size = cum[rel[1:]] - cum[rel[:-1]]
                header_size[rel[1:] == rel[:-1]] = -1
            self._wire_sizes = (key_len.tolist(), value_len.tolist(), header_size.tolist())
        return self._wire_sizes

    def fields(self, lo: int, hi: int, sizes: list[int] | None = None) -> BatchFields | None:
        """The per-record fields of rows ``lo:hi`` (absolute); ``sizes`` overrides ``size_in_bytes``."""
        a, b = lo - self.lo, hi - self.lo
        headers = self._headers(a, b)
        if headers is None:
            return None
        if sizes is None and self.sizes is not None:
            sizes = self.sizes[a:b]
        return BatchFields(
            self, a, b, self.offsets[a:b], self.timestamps[a:b], self.timestamp_types[a:b],
            self.key.items(a, b), self.value.items(a, b), headers, sizes,
        )  # fmt: skip


class BatchFields:
    """The records of one batch as parallel iterables (lists for numbers, lazy iterators for objects).

    Each iterable may be consumed once. :meth:`records` zips them into record objects; kafka-python's
    fetcher fast path (:mod:`kafkawire.compat.kafka_python`) zips them straight into ConsumerRecords.
    """

    __slots__ = ("_chunk", "_a", "_b", "n", "offsets", "timestamps", "timestamp_types", "keys", "values",
                 "headers", "sizes")  # fmt: skip

    def __init__(
        self,
        chunk: _Chunk | None,
        a: int,
        b: int,
        offsets: list[int],
        timestamps: list[Any],
        timestamp_types: list[Any],
        keys: Iterator[bytes | None],
        values: Iterator[bytes | None],
        headers: Iterator[list[tuple[str, bytes | None]]],
        sizes: list[int] | None,
    ) -> None:
        self._chunk, self._a, self._b = chunk, a, b
        self.n = b - a
        self.offsets, self.timestamps, self.timestamp_types = offsets, timestamps, timestamp_types
        self.keys, self.values, self.headers, self.sizes = keys, values, headers, sizes

    @classmethod
    def empty(cls) -> BatchFields:
        return cls(None, 0, 0, [], [], [], iter(()), iter(()), iter(()), [])

    def wire_sizes(self) -> tuple[list[int], list[int], list[int]]:
        """Key sizes, value sizes and header sizes of these records (see :meth:`_Chunk.wire_sizes`)."""
        if self._chunk is None:
            return [], [], []
        k, v, h = self._chunk.wire_sizes()
        a, b = self._a, self._b
        return k[a:b], v[a:b], h[a:b]

    def records(self) -> Iterator[Any]:
        """:class:`FastRecord` objects (or :class:`AioRecord` when there are no sizes), built lazily."""
        columns = (self.offsets, self.timestamps, self.timestamp_types, self.keys, self.values, self.headers)
        if self.sizes is None:
            return map(_new_record, repeat(AioRecord, self.n), zip(*columns))
        return map(_new_record, repeat(FastRecord, self.n), zip(*columns, self.sizes))


def decode_batch_fields(
    batch_bytes: Any, header: tuple[Any, ...], *, with_sizes: bool = True, none_timestamps: bool = False
) -> BatchFields | None:
    """Decode one magic-2 data batch on its own (when the whole-fetch decode was refused).

    Returns None when the compiled decoder rejects it or the records cannot be reproduced exactly.
    """
    fetch = FetchColumns.build(batch_bytes, 0, with_sizes=with_sizes, none_timestamps=none_timestamps)
    return None if fetch is None else fetch.fields(0, header, batch_bytes)


def decode_batch(
    batch_bytes: Any, header: tuple[Any, ...], *, with_sizes: bool = True, none_timestamps: bool = False
) -> Iterator[Any] | None:
    """Like :func:`decode_batch_fields`, as an iterator of records."""
    fields = decode_batch_fields(batch_bytes, header, with_sizes=with_sizes, none_timestamps=none_timestamps)
    return None if fields is None else fields.records()


def measure_sizes(batch_bytes: Any, header: tuple[Any, ...]) -> list[int] | None:
    """Each record's ``length`` varint read from the batch's (decompressed) records section."""
    section: Any = memoryview(batch_bytes)[HEADER_SIZE:]
    codec = header[5] & _ATTR_CODEC
    try:
        section = decompress(codec, section, 2) if codec else section.tobytes()
    except Exception:
        return None
    return _walk_record_lengths(section, header[12])
