"""Decoding of fetched record bytes into :class:`~kafkawire.columns.RecordColumns` (reference version).

The input is what a Fetch response carries for one partition: entries ``[int64 offset][int32 length]
[length bytes]`` with the magic byte at +16, magic 2 record batches and legacy magic 0/1 messages mixed,
possibly ending in a partial entry. docs/CODEC-SPEC.md is the contract; comments below name the rule
or the Kafka issue behind each check.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from .. import compression
from ..columns import BinaryColumn, RecordColumns
from ..errors import (
    CorruptRecordError,
    CrcMismatchError,
    RecordTooLargeError,
    UnsupportedCodecError,
    UnsupportedMagicError,
)
from .crc import crc32, crc32c
from .varint import read_varint, read_varlong

_Bytes = bytes | memoryview  # record bytes: a fetch buffer, or a zero-copy view of decompressed data

__all__ = ["decode"]

# Entry framing shared by every magic: [int64 offset][int32 length].
_ENTRY = struct.Struct(">qi")
# Magic 2 batch header (61 bytes): baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes,
# lastOffsetDelta, baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, recordsCount.
_BATCH_HEADER = struct.Struct(">qiibIhiqqqhii")
BATCH_HEADER_SIZE = 61
# Legacy message: offset, size, crc, magic, attributes (magic 1 adds an int64 timestamp).
_LEGACY_V0 = struct.Struct(">qiIbb")
_LEGACY_V1 = struct.Struct(">qiIbbq")
_INT32 = struct.Struct(">i")
_CONTROL_KEY = struct.Struct(">hh")

#: Smallest ``length`` field per magic (bytes after the int32 length): the fixed header plus empty
#: key/value lengths.
MIN_ENTRY_LENGTH = {0: 14, 1: 22, 2: 49}
#: The smallest possible v2 record is 7 bytes (length, attributes, timestampDelta, offsetDelta, keyLength,
#: valueLength, headerCount: one byte each), so a count above ``len // 7`` is a lie.
MIN_RECORD_SIZE = 7

_ATTR_CODEC = 0x07
_ATTR_LOG_APPEND_TIME = 0x08
_ATTR_TRANSACTIONAL = 0x10
_ATTR_CONTROL = 0x20

_CONTROL_ABORT = 0


def _wrap64(x: int) -> int:
    """Two's-complement int64 wrap-around, as Java's ``long`` arithmetic (hostile bases and deltas)."""
    if -(1 << 63) <= x < (1 << 63):
        return x
    return ((x + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)


class _Columns:
    """Accumulates decoded rows in Python lists and turns them into numpy columns once at the end."""

    def __init__(self) -> None:
        self.offset: list[int] = []
        self.timestamp: list[int] = []
        self.timestamp_type: list[int] = []
        self.key: list[_Bytes | None] = []
        self.value: list[_Bytes | None] = []
        self.header_offsets: list[int] = [0]
        self.header_key: list[_Bytes] = []
        self.header_value: list[_Bytes | None] = []
        self.batch_index: list[int] = []
        # One tuple per batch row: base offset, producer id, epoch, base sequence, leader epoch,
        # transactional, magic, codec, entry start.
        self.batches: list[tuple[int, int, int, int, int, bool, int, int, int]] = []
        # Where the entry being decoded starts in the input (set by the entry walk; stored with each batch row).
        self.entry_start = 0

    def add_batch(
        self, base: int, pid: int, epoch: int, seq: int, leader: int, txn: bool, magic: int, codec: int
    ) -> None:
        self.batches.append((base, pid, epoch, seq, leader, txn, magic, codec, self.entry_start))

    def add_record(
        self,
        offset: int,
        timestamp: int,
        ttype: int,
        key: _Bytes | None,
        value: _Bytes | None,
        headers: list[tuple[_Bytes, _Bytes | None]],
    ) -> None:
        self.offset.append(offset)
        self.timestamp.append(timestamp)
        self.timestamp_type.append(ttype)
        self.key.append(key)
        self.value.append(value)
        for hk, hv in headers:
            self.header_key.append(hk)
            self.header_value.append(hv)
        self.header_offsets.append(len(self.header_key))
        self.batch_index.append(len(self.batches) - 1)

    def finish(self, next_offset: int, valid_bytes: int) -> RecordColumns:
        b = self.batches
        return RecordColumns(
            offset=np.array(self.offset, dtype=np.int64),
            timestamp=np.array(self.timestamp, dtype=np.int64),
            timestamp_type=np.array(self.timestamp_type, dtype=np.int8),
            key=BinaryColumn.from_pylist(self.key),
            value=BinaryColumn.from_pylist(self.value),
            header_offsets=np.array(self.header_offsets, dtype=np.int32),
            header_key=BinaryColumn.from_pylist(self.header_key),
            header_value=BinaryColumn.from_pylist(self.header_value),
            batch_index=np.array(self.batch_index, dtype=np.int32),
            batch_base_offset=np.array([r[0] for r in b], dtype=np.int64),
            batch_producer_id=np.array([r[1] for r in b], dtype=np.int64),
            batch_producer_epoch=np.array([r[2] for r in b], dtype=np.int16),
            batch_base_sequence=np.array([r[3] for r in b], dtype=np.int32),
            batch_partition_leader_epoch=np.array([r[4] for r in b], dtype=np.int32),
            batch_transactional=np.array([r[5] for r in b], dtype=bool),
            batch_magic=np.array([r[6] for r in b], dtype=np.int8),
            batch_codec=np.array([r[7] for r in b], dtype=np.int8),
            batch_start=np.array([r[8] for r in b], dtype=np.int64),
            next_offset=next_offset,
            valid_bytes=valid_bytes,
        )


class _AbortedTransactions:
    """Read-committed filtering as the Java consumer does it (``CompletedFetch``).

    Aborted transactions (``(producer_id, first_offset)`` sorted by first offset) become "active" once
    a batch reaching their first offset is seen; an ABORT control marker of that producer ends it.
    """

    def __init__(self, aborted: list[tuple[int, int]]) -> None:
        self.aborted = aborted
        self.next = 0
        self.producer_ids: set[int] = set()

    def consume_up_to(self, last_offset: int) -> None:
        aborted = self.aborted
        while self.next < len(aborted) and aborted[self.next][1] <= last_offset:
            self.producer_ids.add(aborted[self.next][0])
            self.next += 1


def _as_bytes(data: Any) -> bytes:
    if type(data) is bytes:
        return data
    mv = memoryview(data)
    return (mv if mv.format == "B" and mv.ndim == 1 else mv.cast("B")).tobytes()


def not_an_entry(buf: bytes) -> str | None:
    """Why ``buf``, which holds no complete entry, cannot start with a cut-off one (None when it can).

    Decides between "the first batch is larger than the fetch" (RecordTooLargeError, the caller raises
    the fetch size) and "these bytes are not record data" (CorruptRecordError, issue 12): the header
    fields present are checked as a real batch or message has them. Only for input with no complete
    entry: a partial tail after complete entries stays silent (CODEC-SPEC, "Decode").
    """
    n = len(buf)
    if n < 8:
        return None
    (offset,) = struct.unpack_from(">q", buf, 0)
    if n < 12:
        return f"not a record batch: base offset {offset} is negative" if offset < 0 else None
    (length,) = struct.unpack_from(">i", buf, 8)
    head = f"not a record batch: length field {length} exceeds the {n} bytes present, and"
    if offset < 0:
        return f"{head} the base offset {offset} is negative"
    if length < MIN_ENTRY_LENGTH[0]:
        return f"{head} is below the {MIN_ENTRY_LENGTH[0]} bytes of the smallest entry"
    if n < 17:
        return None
    magic = struct.unpack_from("b", buf, 16)[0]
    if not 0 <= magic <= 2:
        return f"{head} the magic byte {magic} is not 0, 1 or 2"
    if length < MIN_ENTRY_LENGTH[magic]:
        return f"{head} is below the {MIN_ENTRY_LENGTH[magic]} bytes of a magic {magic} entry"
    (leader_epoch,) = struct.unpack_from(">i", buf, 12)
    if magic == 2 and leader_epoch < -1:
        return f"{head} the partition leader epoch {leader_epoch} is below -1"
    return None


def decode(
    data: Any, verify_crc: bool, fetch_offset: int, read_committed: bool, aborted: list[tuple[int, int]]
) -> RecordColumns:
    """Decode a partition's fetched record bytes (see docs/CODEC-SPEC.md, "Decode")."""
    buf = _as_bytes(data)
    n = len(buf)
    cols = _Columns()
    txn = _AbortedTransactions(aborted) if read_committed else None
    pos = 0
    next_offset: int | None = None
    while n - pos >= 12:
        _, length = _ENTRY.unpack_from(buf, pos)
        if length < 0:
            raise CorruptRecordError(f"negative entry length {length} at byte {pos}")
        if 12 + length > n - pos:
            break  # partial tail: a fetch may cut the last entry, that is normal
        if length < 5:
            raise CorruptRecordError(f"entry length {length} at byte {pos} is too short for a magic byte")
        magic = buf[pos + 16]
        if magic > 2:
            raise UnsupportedMagicError(f"unsupported magic byte {struct.unpack('b', bytes([magic]))[0]}")
        if length < MIN_ENTRY_LENGTH[magic]:
            raise CorruptRecordError(f"magic {magic} entry length {length} below the minimum")
        end = pos + 12 + length
        cols.entry_start = pos
        if magic == 2:
            next_offset = _decode_batch(buf, pos, end, verify_crc, fetch_offset, txn, cols)
        else:
            next_offset = _decode_legacy(buf, pos, end, magic, verify_crc, fetch_offset, cols)
        pos = end
    if next_offset is None:
        if n:
            why = not_an_entry(buf)
            if why is not None:
                raise CorruptRecordError(why)
            first = _ENTRY.unpack_from(buf, 0) if n >= 12 else None
            offset = struct.unpack_from(">q", buf, 0)[0] if n >= 8 else None
            raise RecordTooLargeError(offset, None if first is None else 12 + first[1], n)
        next_offset = fetch_offset
    return cols.finish(next_offset, pos)


# --------------------------------------------------------------------------------------------------
# Magic 2
# --------------------------------------------------------------------------------------------------


def _decode_batch(
    buf: bytes,
    pos: int,
    end: int,
    verify_crc: bool,
    fetch_offset: int,
    txn: _AbortedTransactions | None,
    cols: _Columns,
) -> int:
    (
        base,
        _,
        leader_epoch,
        _,
        stored_crc,
        attributes,
        last_delta,
        base_ts,
        max_ts,
        producer_id,
        producer_epoch,
        base_sequence,
        count,
    ) = _BATCH_HEADER.unpack_from(buf, pos)
    last_offset = _wrap64(base + last_delta)
    if verify_crc:
        computed = crc32c(memoryview(buf)[pos + 21 : end])
        if computed != stored_crc:
            raise CrcMismatchError(base, last_offset, stored_crc, computed)
    codec = attributes & _ATTR_CODEC
    if codec > 4:
        raise UnsupportedCodecError(f"unknown compression codec {codec} in batch at offset {base}")
    if count < 0:
        raise CorruptRecordError(f"negative record count {count} in batch at offset {base}")
    # KAFKA-5443: the next fetch starts after the batch even if nothing in it is returned.
    batch_next = _wrap64(last_offset + 1)
    is_control = bool(attributes & _ATTR_CONTROL)
    transactional = bool(attributes & _ATTR_TRANSACTIONAL)

    if txn is not None and producer_id >= 0:
        txn.consume_up_to(last_offset)
        if is_control:
            if count > 0 and _is_abort_marker(buf, pos, end, codec):
                txn.producer_ids.discard(producer_id)
        elif transactional and producer_id in txn.producer_ids:
            return batch_next  # aborted transaction: dropped without decompressing
    if is_control:
        return batch_next

    records = _records_section(buf, pos, end, codec)
    section_end = len(records)
    if count > section_end // MIN_RECORD_SIZE:
        raise CorruptRecordError(f"record count {count} cannot fit in {section_end} bytes (offset {base})")
    log_append = bool(attributes & _ATTR_LOG_APPEND_TIME)
    filtering = fetch_offset >= 0
    row_added = False
    p = 0
    for _ in range(count):
        ts_delta, offset_delta, key, value, headers, p = _read_record(records, p, section_end)
        offset = _wrap64(base + offset_delta)
        if filtering and offset < fetch_offset:
            continue  # parsed and validated, but below the requested offset
        if log_append:
            ts, ttype = max_ts, 1
        else:
            ts, ttype = _wrap64(base_ts + ts_delta), 0
        if not row_added:
            cols.add_batch(base, producer_id, producer_epoch, base_sequence, leader_epoch, transactional, 2, codec)
            row_added = True
        cols.add_record(offset, ts, ttype, key, value, headers)
    if p != section_end:
        raise CorruptRecordError(f"{section_end - p} trailing bytes after the records of batch at offset {base}")
    return batch_next


def _records_section(buf: bytes, pos: int, end: int, codec: int) -> _Bytes:
    if codec == 0:
        return buf[pos + BATCH_HEADER_SIZE : end]
    return compression.decompress(codec, memoryview(buf)[pos + BATCH_HEADER_SIZE : end], 2)


def _is_abort_marker(buf: bytes, pos: int, end: int, codec: int) -> bool:
    """True if the first record of a control batch is an ABORT marker (key version 0, type 0)."""
    records = _records_section(buf, pos, end, codec)
    key = _read_record(records, 0, len(records))[2]
    if key is None or len(key) < 4:
        raise CorruptRecordError("control record key shorter than 4 bytes")
    version, kind = _CONTROL_KEY.unpack_from(key, 0)
    # An unknown key version is not an abort (librdkafka skips them too).
    return bool(version == 0 and kind == _CONTROL_ABORT)


def _read_record(
    rb: _Bytes, p: int, limit: int
) -> tuple[int, int, _Bytes | None, _Bytes | None, list[tuple[_Bytes, _Bytes | None]], int]:
    """Parse one v2 record at ``rb[p:]``: (timestampDelta, offsetDelta, key, value, headers, end)."""
    length, p = read_varint(rb, p, limit)
    if length < 0 or length > limit - p:
        raise CorruptRecordError(f"record length {length} exceeds the {limit - p} bytes left in the batch")
    end = p + length
    if p >= end:
        raise CorruptRecordError("record too short for its attributes")
    p += 1  # attributes: unused by every released Kafka version
    ts_delta, p = read_varlong(rb, p, end)
    offset_delta, p = read_varint(rb, p, end)
    key, p = _read_bytes(rb, p, end, "key")
    value, p = _read_bytes(rb, p, end, "value")
    header_count, p = read_varint(rb, p, end)
    if header_count < 0:
        raise CorruptRecordError(f"negative header count {header_count}")
    headers: list[tuple[_Bytes, _Bytes | None]] = []
    for _ in range(header_count):
        hkey, p = _read_bytes(rb, p, end, "header key")
        if hkey is None:
            raise CorruptRecordError("null header key")  # header keys are non-nullable strings
        hvalue, p = _read_bytes(rb, p, end, "header value")
        headers.append((hkey, hvalue))
    if p != end:
        raise CorruptRecordError(f"record ends {end - p} bytes before its declared length")
    return ts_delta, offset_delta, key, value, headers, p


def _read_bytes(rb: _Bytes, p: int, end: int, what: str) -> tuple[_Bytes | None, int]:
    n, p = read_varint(rb, p, end)
    if n < 0:
        if n == -1:
            return None, p
        raise CorruptRecordError(f"{what} length {n}")
    if n > end - p:
        raise CorruptRecordError(f"{what} length {n} runs past the end of its record")
    return rb[p : p + n], p + n


# --------------------------------------------------------------------------------------------------
# Magic 0/1
# --------------------------------------------------------------------------------------------------


class _Message:
    __slots__ = ("offset", "magic", "attributes", "timestamp", "key", "value")

    def __init__(
        self, offset: int, magic: int, attributes: int, timestamp: int, key: _Bytes | None, value: _Bytes | None
    ) -> None:
        self.offset = offset
        self.magic = magic
        self.attributes = attributes
        self.timestamp = timestamp
        self.key = key
        self.value = value


def _read_message(buf: _Bytes, pos: int, end: int, magic: int, verify_crc: bool, inner: bool) -> _Message:
    """Parse the legacy message ``buf[pos:end]`` (its entry starts at ``pos``), CRC and codec checked."""
    if magic == 0:
        offset, _, stored_crc, _, attributes = _LEGACY_V0.unpack_from(buf, pos)
        timestamp = -1
        p = pos + 18
    else:
        offset, _, stored_crc, _, attributes, timestamp = _LEGACY_V1.unpack_from(buf, pos)
        p = pos + 26
    if verify_crc:
        computed = crc32(memoryview(buf)[pos + 16 : end])
        if computed != stored_crc:
            raise CrcMismatchError(offset, offset, stored_crc, computed)
    codec = attributes & _ATTR_CODEC
    if inner:
        if codec != 0:
            raise CorruptRecordError(f"compressed message nested in a compressed wrapper (offset {offset})")
    elif codec > 4:
        raise UnsupportedCodecError(f"unknown compression codec {codec} in message at offset {offset}")
    elif codec == 4:
        raise UnsupportedCodecError(f"zstd in a magic {magic} message (offset {offset}) needs magic 2")
    key, p = _read_sized(buf, p, end, "key")
    value, p = _read_sized(buf, p, end, "value")
    if p != end:
        raise CorruptRecordError(f"{end - p} trailing bytes in message at offset {offset}")
    return _Message(offset, magic, attributes, timestamp, key, value)


def _read_sized(buf: _Bytes, p: int, end: int, what: str) -> tuple[_Bytes | None, int]:
    if end - p < 4:
        raise CorruptRecordError(f"message {what} length runs past the end of the message")
    (n,) = _INT32.unpack_from(buf, p)
    p += 4
    if n < 0:
        if n == -1:
            return None, p
        raise CorruptRecordError(f"message {what} length {n}")
    if n > end - p:
        raise CorruptRecordError(f"message {what} length {n} runs past the end of the message")
    return buf[p : p + n], p + n


def _legacy_timestamp(msg: _Message) -> tuple[int, int]:
    if msg.magic == 0:
        return -1, -1  # magic 0 has no timestamp
    return msg.timestamp, (msg.attributes >> 3) & 1


def _decode_legacy(
    buf: bytes, pos: int, end: int, magic: int, verify_crc: bool, fetch_offset: int, cols: _Columns
) -> int:
    msg = _read_message(buf, pos, end, magic, verify_crc, inner=False)
    codec = msg.attributes & _ATTR_CODEC
    filtering = fetch_offset >= 0
    if codec == 0:
        if not (filtering and msg.offset < fetch_offset):
            ts, ttype = _legacy_timestamp(msg)
            cols.add_batch(msg.offset, -1, -1, -1, -1, False, magic, 0)
            cols.add_record(msg.offset, ts, ttype, msg.key, msg.value, [])
        return _wrap64(msg.offset + 1)

    if msg.value is None:
        raise CorruptRecordError(f"compressed wrapper at offset {msg.offset} has a null value")
    inner_bytes = compression.decompress(codec, msg.value, magic)
    inner = _read_inner_messages(inner_bytes, magic, verify_crc)
    if not inner:
        # Java: "Found invalid compressed record set with no inner records".
        raise CorruptRecordError(f"compressed wrapper at offset {msg.offset} holds no messages")

    wrapper_offset = msg.offset
    last_inner = inner[-1].offset
    # KIP-31: magic 1 inner offsets are relative to the wrapper, which carries the last absolute offset.
    # A wrapper offset of 0 comes from producers that never filled it in: the inner offsets stand.
    relative = magic == 1 and wrapper_offset != 0
    log_append = magic == 1 and bool(msg.attributes & _ATTR_LOG_APPEND_TIME)
    row_added = False
    absolute = 0
    for m in inner:
        absolute = _wrap64(wrapper_offset - last_inner + m.offset) if relative else m.offset
        if filtering and absolute < fetch_offset:
            continue  # a wrapper can start before the fetch offset
        if log_append:
            ts, ttype = msg.timestamp, 1  # the broker stamped the wrapper only
        else:
            ts, ttype = _legacy_timestamp(m)
        if not row_added:
            cols.add_batch(absolute, -1, -1, -1, -1, False, magic, codec)
            row_added = True
        cols.add_record(absolute, ts, ttype, m.key, m.value, [])
    return _wrap64(max(wrapper_offset, absolute) + 1)


def _read_inner_messages(data: _Bytes, wrapper_magic: int, verify_crc: bool) -> list[_Message]:
    """Walk a decompressed wrapper value: like the outer walk, but every defect is corruption."""
    out = []
    n = len(data)
    pos = 0
    while pos < n:
        if n - pos < 12:
            raise CorruptRecordError("partial message inside a compressed wrapper")
        _, length = _ENTRY.unpack_from(data, pos)
        if length < 0 or 12 + length > n - pos:
            raise CorruptRecordError(f"inner message length {length} does not fit its wrapper")
        if length < 5:
            raise CorruptRecordError(f"inner message length {length} is too short for a magic byte")
        magic = data[pos + 16]
        if magic > 2:
            raise UnsupportedMagicError(f"unsupported magic byte {struct.unpack('b', bytes([magic]))[0]}")
        if magic > wrapper_magic:
            raise CorruptRecordError(f"magic {magic} message inside a magic {wrapper_magic} wrapper")
        if length < MIN_ENTRY_LENGTH[magic]:
            raise CorruptRecordError(f"magic {magic} inner message length {length} below the minimum")
        end = pos + 12 + length
        out.append(_read_message(data, pos, end, magic, verify_crc, inner=True))
        pos = end
    return out
