"""Hostile and damaged input: every failure is a specific ``KafkaWireError`` subclass, never a crash.

Each test runs against both implementations (the ``impl`` fixture). Covered:

* every byte of a v2 batch header and of a legacy v0/v1 message flipped, with and without CRC
  verification (without it the parsing paths behind the CRC check see the damage);
* truncation at every byte of a small multi-entry fetch: a clean partial result or
  ``RecordTooLargeError``, nothing else;
* forged counts and lengths (record count 2**31-1, key length 2**31-1, huge header count, negative
  lengths), overlong and overflowing varints/varlongs, unknown magic and codec ids, bad compressed
  payloads and decompression bombs;
* memory: decoding a ~1 KB forged input must not allocate more than a few MB (tracemalloc in-process;
  peak RSS in a fresh subprocess), i.e. nothing is preallocated from a count the peer sent.
"""

from __future__ import annotations

import gzip
import json
import os
import struct
import subprocess
import sys
import tracemalloc
import zlib
from types import ModuleType

import crc32c
import numpy as np
import pytest

import kafkawire.compression as compression
from kafkawire import (
    BinaryColumn,
    CorruptRecordError,
    CrcMismatchError,
    DecompressionError,
    KafkaWireError,
    RecordColumns,
    RecordTooLargeError,
    UnsupportedCodecError,
    UnsupportedMagicError,
)

TS = 1_700_000_000_000
OK = "ok"  # expected outcome: decodes without error

# --------------------------------------------------------------------------------------------------
# Byte builders (independent of both implementations, so a shared bug cannot hide itself)


def zz32(n: int) -> int:
    return ((n << 1) ^ (n >> 31)) & 0xFFFFFFFF


def zz64(n: int) -> int:
    return ((n << 1) ^ (n >> 63)) & 0xFFFFFFFFFFFFFFFF


def uvarint(u: int) -> bytes:
    out = bytearray()
    while True:
        if u < 0x80:
            out.append(u)
            return bytes(out)
        out.append((u & 0x7F) | 0x80)
        u >>= 7


def varint(n: int) -> bytes:
    return uvarint(zz32(n))


def varlong(n: int) -> bytes:
    return uvarint(zz64(n))


def v2_record(
    offset_delta: int = 0,
    key: bytes | None = b"k",
    value: bytes | None = b"v",
    headers: list[tuple[bytes, bytes | None]] = (),  # type: ignore[assignment]
    ts_delta: int = 0,
) -> bytes:
    body = b"\x00" + varlong(ts_delta) + varint(offset_delta)
    body += varint(-1) if key is None else varint(len(key)) + key
    body += varint(-1) if value is None else varint(len(value)) + value
    body += varint(len(headers))
    for hk, hv in headers:
        body += varint(len(hk)) + hk
        body += varint(-1) if hv is None else varint(len(hv)) + hv
    return varint(len(body)) + body


def v2_batch(
    records: bytes,
    count: int,
    *,
    base_offset: int = 0,
    attributes: int = 0,
    last_offset_delta: int | None = None,
    producer: tuple[int, int, int] = (-1, -1, -1),
    fix_crc: bool = True,
) -> bytes:
    """A magic 2 batch around an arbitrary records section (lengths and CRC computed, nothing checked)."""
    lod = max(count - 1, 0) if last_offset_delta is None else last_offset_delta
    after_crc = struct.pack(">hiqqqhii", attributes, lod, TS, TS + 10, *producer, count) + records
    crc = crc32c.crc32c(after_crc) if fix_crc else 0
    body = struct.pack(">ibI", -1, 2, crc) + after_crc
    return struct.pack(">qi", base_offset, len(body)) + body


def legacy_message(
    offset: int, key: bytes | None, value: bytes | None, *, magic: int = 1, attributes: int = 0, ts: int = TS
) -> bytes:
    body = struct.pack(">bb", magic, attributes) + (struct.pack(">q", ts) if magic == 1 else b"")
    body += struct.pack(">i", -1) if key is None else struct.pack(">i", len(key)) + key
    body += struct.pack(">i", -1) if value is None else struct.pack(">i", len(value)) + value
    msg = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(msg)) + msg


def legacy_raw(offset: int, after_crc: bytes) -> bytes:
    """A legacy entry around arbitrary bytes from the magic byte on (size and CRC32 computed, nothing checked)."""
    return struct.pack(">qiI", offset, 4 + len(after_crc), zlib.crc32(after_crc)) + after_crc


def gzip_wrapper(offset: int, inner: bytes, magic: int = 1) -> bytes:
    return legacy_message(offset, None, gzip.compress(inner, mtime=0), magic=magic, attributes=1)


def fix_legacy_crc(msg: bytearray, start: int = 0) -> None:
    size = struct.unpack_from(">i", msg, start + 8)[0]
    struct.pack_into(">I", msg, start + 12, zlib.crc32(bytes(msg[start + 16 : start + 12 + size])))


def fix_v2_crc(batch: bytearray) -> None:
    length = struct.unpack_from(">i", batch, 8)[0]
    struct.pack_into(">I", batch, 17, crc32c.crc32c(bytes(batch[21 : 12 + length])))


def sample_v2() -> bytes:
    recs = v2_record(0, b"key", b"value", [(b"h", b"1")]) + v2_record(1, None, b"") + v2_record(2, b"", None)
    return v2_batch(recs, 3, base_offset=100)


def decode(impl: ModuleType, data: bytes, verify_crc: bool = True) -> RecordColumns:
    return impl.decode(data, verify_crc, -1, False, [])


def outcome(impl: ModuleType, data: bytes, verify_crc: bool = True) -> str | type:
    """``OK`` or the exception class; anything that is not a KafkaWireError propagates and fails the test."""
    try:
        decode(impl, data, verify_crc)
    except KafkaWireError as exc:
        return type(exc)
    return OK


# --------------------------------------------------------------------------------------------------
# Every header byte flipped


def expected_v2_flip(data: bytes, pos: int, mask: int, verify: bool) -> str | type | set[str | type]:
    """The outcome CODEC-SPEC prescribes when byte ``pos`` of the single batch ``data`` is XORed with ``mask``."""
    b = bytearray(data)
    b[pos] ^= mask
    if pos < 8 or 12 <= pos < 16:  # base offset, partition leader epoch: outside the CRC, any value is valid
        return OK
    if pos < 12:  # batch length
        length = struct.unpack_from(">i", b, 8)[0]
        if length < 0:
            return CorruptRecordError
        if 12 + length > len(b):
            return RecordTooLargeError  # looks like a partial batch, and nothing before it is complete
        if length < 49:
            return CorruptRecordError
        # A shorter entry: the CRC no longer matches, or (unverified) the records overrun the entry end.
        return CrcMismatchError if verify else CorruptRecordError
    if pos == 16:
        return UnsupportedMagicError if b[16] not in (0, 1) else ({CrcMismatchError} if verify else None)
    if verify:
        return CrcMismatchError  # everything from the CRC field on is covered by it
    if pos < 21:  # the CRC field itself, not checked
        return OK
    if pos == 21:  # attribute bits 8-15 are unused
        return OK
    if pos == 22:
        codec = b[22] & 7
        if codec > 4:
            return UnsupportedCodecError
        if codec:
            return DecompressionError  # plain records are not a valid compressed payload
        return OK  # timestamp type / transactional / control bits: still parseable (control = no rows)
    if pos < 57:  # lastOffsetDelta, timestamps, producer fields: any value is valid
        return OK
    if pos < 61:  # record count: negative, too large for the bytes, or a count/content mismatch
        return CorruptRecordError
    return {OK, CorruptRecordError}  # record bytes: either still well-formed data or corrupt


@pytest.mark.parametrize("verify", [True, False], ids=["verify", "noverify"])
@pytest.mark.parametrize("mask", [0xFF, 0x01, 0x80])
def test_v2_every_byte_flipped(impl: ModuleType, verify: bool, mask: int) -> None:
    data = sample_v2()
    good = decode(impl, data)
    for pos in range(len(data)):
        b = bytearray(data)
        b[pos] ^= mask
        got = outcome(impl, bytes(b), verify)
        want = expected_v2_flip(data, pos, mask, verify)
        if want is None:  # magic flipped to 0/1: parsed as a legacy message whose fields are nonsense
            assert got in (CorruptRecordError, OK), (pos, got)
        elif isinstance(want, set):
            assert got in want, (pos, got)
        else:
            assert got == want, (pos, got, want)
        if got == OK and (pos < 8 or pos >= 17 and pos < 21):
            res = decode(impl, bytes(b), verify)
            assert res.value.to_pylist() == good.value.to_pylist()


def test_v2_crc_error_carries_offsets(impl: ModuleType) -> None:
    b = bytearray(sample_v2())
    b[70] ^= 1
    with pytest.raises(CrcMismatchError) as info:
        decode(impl, bytes(b))
    err = info.value
    stored = struct.unpack_from(">I", b, 17)[0]
    assert (err.base_offset, err.last_offset, err.stored) == (100, 102, stored)
    assert err.computed == crc32c.crc32c(bytes(b[21:]))


def expected_legacy_flip(data: bytes, pos: int, mask: int, verify: bool) -> object:
    """The outcome CODEC-SPEC prescribes for a single legacy message (plain or a compressed wrapper)."""
    magic, codec = data[16], data[17] & 7
    # Damage in the fields after the header: still valid, corrupt, or (wrapper) a bad compressed payload.
    body_outcomes = {OK, CorruptRecordError} | ({DecompressionError} if codec else set())
    key_at = 18 if magic == 0 else 26
    b = bytearray(data)
    b[pos] ^= mask
    if pos < 8:
        return OK
    if pos < 12:
        size = struct.unpack_from(">i", b, 8)[0]
        if size < 0:
            return CorruptRecordError
        if 12 + size > len(b):
            return RecordTooLargeError
        if size < (14 if magic == 0 else 22):
            return CorruptRecordError
        return CrcMismatchError if verify else CorruptRecordError  # message no longer ends at its end
    if pos == 16 and b[16] > 2:
        return UnsupportedMagicError
    if verify and pos >= 12:
        return CrcMismatchError
    if pos < 16:
        return OK
    if pos == 16:
        return body_outcomes  # re-read as another magic: fields shift
    if pos == 17:
        new_codec = b[17] & 7
        if new_codec > 3:  # 5-7 unknown, 4 (zstd) not allowed below magic 2
            return UnsupportedCodecError
        if new_codec in (0, codec):
            return OK  # unused bits / timestamp type; or a wrapper read as one plain message
        return DecompressionError  # the value is not a payload of that codec
    if pos < key_at:
        return OK  # timestamp
    return body_outcomes


@pytest.mark.parametrize("kind", ["plain", "gzip-wrapper"])
@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("verify", [True, False], ids=["verify", "noverify"])
@pytest.mark.parametrize("mask", [0xFF, 0x01, 0x80])
def test_legacy_every_byte_flipped(impl: ModuleType, kind: str, magic: int, verify: bool, mask: int) -> None:
    if kind == "plain":
        data = legacy_message(7, b"key", b"some value", magic=magic)
    else:
        inner = legacy_message(0, b"a", b"first", magic=magic) + legacy_message(1, None, b"second", magic=magic)
        data = gzip_wrapper(8, inner, magic=magic)
    assert len(decode(impl, data)) == (1 if kind == "plain" else 2)
    for pos in range(len(data)):
        b = bytearray(data)
        b[pos] ^= mask
        got = outcome(impl, bytes(b), verify)
        want = expected_legacy_flip(data, pos, mask, verify)
        if isinstance(want, set):
            assert got in want, (pos, got)
        else:
            assert got == want, (pos, got, want)


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_compressed_payload_bytes_flipped(impl: ModuleType, codec: int) -> None:
    """Damage inside a compressed records section (CRC not checked): decompression or parsing fails cleanly."""
    values = BinaryColumn.from_pylist([b"value %d " % i * 5 for i in range(20)])
    ts = np.full(20, TS, dtype=np.int64)
    data = impl.encode(values, None, ts, None, None, None, 0, 2, codec, -1, -1, -1, False, -1)
    seen = set()
    for pos in range(61, len(data)):
        for mask in (0x01, 0xFF):
            b = bytearray(data)
            b[pos] ^= mask
            got = outcome(impl, bytes(b), False)
            assert got in (OK, CorruptRecordError, DecompressionError), (pos, got)
            seen.add(got)
            assert outcome(impl, bytes(b), True) is CrcMismatchError
    assert DecompressionError in seen


# --------------------------------------------------------------------------------------------------
# Truncation at every byte


def small_fetch() -> tuple[bytes, list[int], list[int]]:
    """Five entries of every kind; returns the bytes, each entry's end, and each entry's first offset."""
    v2 = sample_v2()  # offsets 100..102
    v2_gzip = bytearray(v2_batch(v2_record(0, b"a", b"b" * 30) + v2_record(1, b"c", b"d" * 30), 2, base_offset=103))
    # gzip the records section with the shared compression module and fix up length, codec and CRC
    recs = bytes(v2_gzip[61:])
    v2_gzip = bytearray(v2_gzip[:61]) + compression.compress(1, recs, 2)
    struct.pack_into(">i", v2_gzip, 8, len(v2_gzip) - 12)
    struct.pack_into(">h", v2_gzip, 21, 1)
    fix_v2_crc(v2_gzip)
    plain_v1 = legacy_message(105, b"k1", b"v1") + legacy_message(106, None, b"v2")
    inner = legacy_message(0, b"x", b"y", magic=0) + legacy_message(1, b"z", None, magic=0)
    # magic 0 inner offsets are absolute: rewrite to 107, 108
    inner_b = bytearray(inner)
    struct.pack_into(">q", inner_b, 0, 107)
    struct.pack_into(">q", inner_b, 12 + struct.unpack_from(">i", inner_b, 8)[0], 108)
    v0_wrapper = gzip_wrapper(108, bytes(inner_b), magic=0)
    v1_inner = legacy_message(0, b"r", b"s") + legacy_message(1, b"t", b"u")
    v1_wrapper = gzip_wrapper(110, v1_inner)  # relative: 109, 110
    data = v2 + bytes(v2_gzip) + plain_v1 + v0_wrapper + v1_wrapper
    ends, firsts = [], []
    pos = 0
    while pos < len(data):
        firsts.append(struct.unpack_from(">q", data, pos)[0])
        pos += 12 + struct.unpack_from(">i", data, pos + 8)[0]
        ends.append(pos)
    return data, ends, firsts


def test_small_fetch_decodes(impl: ModuleType) -> None:
    data, ends, _ = small_fetch()
    got = decode(impl, data)
    assert got.offset.tolist() == list(range(100, 111))
    assert got.next_offset == 111 and got.valid_bytes == len(data) and len(ends) == 6


@pytest.mark.parametrize("verify", [True, False], ids=["verify", "noverify"])
def test_truncated_at_every_byte(impl: ModuleType, verify: bool) -> None:
    data, ends, _ = small_fetch()
    full = decode(impl, data, verify)
    for cut in range(len(data) + 1):
        part = data[:cut]
        complete = [e for e in ends if e <= cut]
        if not part:
            got = decode(impl, part, verify)
            assert len(got) == 0 and got.valid_bytes == 0 and got.next_offset == -1
        elif not complete:
            with pytest.raises(RecordTooLargeError) as info:
                decode(impl, part, verify)
            err = info.value
            assert err.offset == (100 if cut >= 8 else None)
            assert err.size == (ends[0] if cut >= 12 else None)
            assert err.available == cut
        else:
            got = decode(impl, part, verify)
            boundary = complete[-1]
            assert got.valid_bytes == boundary, cut
            assert got.equals(decode(impl, data[:boundary], verify))
            n = len(got)
            assert got.offset.tolist() == full.offset.tolist()[:n]
            assert got.value.to_pylist() == full.value.to_pylist()[:n]
            assert got.next_offset == int(full.offset[n - 1]) + 1


# --------------------------------------------------------------------------------------------------
# Forged fields


def _rec_with(raw_fields: bytes, declared_len: int | None = None) -> bytes:
    return varint(len(raw_fields) if declared_len is None else declared_len) + raw_fields


FIELDS_OK = b"\x00" + varlong(0) + varint(0)  # attributes, timestampDelta, offsetDelta


def lz4_frame_claiming(content_size: int, block: bytes) -> bytes:
    """A well-formed LZ4 frame with one stored block whose header *declares* ``content_size`` bytes."""
    desc = bytes([0x68, 0x40]) + struct.pack("<Q", content_size)  # FLG: v01, independent, content size
    hc = compression._lz4_hc(desc)
    return b"\x04\x22\x4d\x18" + desc + bytes([hc]) + struct.pack("<I", len(block) | 0x80000000) + block + b"\0" * 4


def zstd_frame_claiming(content_size: int, block: bytes) -> bytes:
    """A zstd frame (single segment, 4-byte content size) with one raw block, declaring ``content_size``."""
    header = struct.pack("<IBI", 0xFD2FB528, 0xA0, content_size)
    return header + ((len(block) << 3) | 1).to_bytes(3, "little") + block

FORGED: dict[str, tuple[bytes, type]] = {
    # record counts
    "count 2**31-1": (v2_batch(v2_record(), 2**31 - 1), CorruptRecordError),
    "count -1": (v2_batch(v2_record(), -1), CorruptRecordError),
    "count -2**31": (v2_batch(v2_record(), -(2**31)), CorruptRecordError),
    "count larger than records": (v2_batch(v2_record() * 2, 3), CorruptRecordError),
    "count smaller than records (trailing bytes)": (v2_batch(v2_record() * 2, 1), CorruptRecordError),
    # record lengths
    "record length 2**31-1": (v2_batch(_rec_with(FIELDS_OK + varint(-1) * 2 + varint(0), 2**31 - 1), 1),
                              CorruptRecordError),
    "record length -1": (v2_batch(_rec_with(FIELDS_OK + varint(-1) * 2 + varint(0), -1), 1), CorruptRecordError),
    "record length short": (v2_batch(_rec_with(FIELDS_OK + varint(-1) * 2 + varint(0), 4), 1), CorruptRecordError),
    "record length long": (v2_batch(_rec_with(FIELDS_OK + varint(-1) * 2 + varint(0), 7) + b"\x00", 1),
                           CorruptRecordError),
    # key / value lengths
    "key length 2**31-1": (v2_batch(_rec_with(FIELDS_OK + varint(2**31 - 1) + b"kk" + varint(-1) + varint(0)), 1),
                           CorruptRecordError),
    "key length -2": (v2_batch(_rec_with(FIELDS_OK + varint(-2) + varint(-1) + varint(0)), 1), CorruptRecordError),
    "value length 2**31-1": (v2_batch(_rec_with(FIELDS_OK + varint(-1) + varint(2**31 - 1) + b"v" + varint(0)), 1),
                             CorruptRecordError),
    "value length -2**31": (v2_batch(_rec_with(FIELDS_OK + varint(-1) + varint(-(2**31)) + varint(0)), 1),
                            CorruptRecordError),
    # headers
    "header count 2**31-1": (v2_batch(_rec_with(FIELDS_OK + varint(-1) * 2 + varint(2**31 - 1) + varint(1) + b"h"
                                                + varint(-1)), 1), CorruptRecordError),
    "header count -1": (v2_batch(_rec_with(FIELDS_OK + varint(-1) * 2 + varint(-1)), 1), CorruptRecordError),
    "header key length -1 (null key)": (v2_batch(_rec_with(FIELDS_OK + varint(-1) * 2 + varint(1) + varint(-1)
                                                           + varint(-1)), 1), CorruptRecordError),
    "header key length 2**31-1": (v2_batch(_rec_with(FIELDS_OK + varint(-1) * 2 + varint(1) + varint(2**31 - 1)
                                                     + b"h" + varint(-1)), 1), CorruptRecordError),
    "header value length -7": (v2_batch(_rec_with(FIELDS_OK + varint(-1) * 2 + varint(1) + varint(1) + b"h"
                                                  + varint(-7)), 1), CorruptRecordError),
    # varints
    "6-byte varint record length": (v2_batch(b"\x80\x80\x80\x80\x80\x00" + FIELDS_OK, 1), CorruptRecordError),
    "5th varint byte overflows": (v2_batch(b"\xff\xff\xff\xff\x1f" + FIELDS_OK, 1), CorruptRecordError),
    "varint runs off the end": (v2_batch(b"\x00" * 6 + b"\x80\x80", 1), CorruptRecordError),
    "11-byte varlong timestamp delta": (v2_batch(_rec_with(b"\x00" + b"\x80" * 10 + b"\x00" + varint(0)
                                                           + varint(-1) * 2 + varint(0)), 1), CorruptRecordError),
    "10th varlong byte overflows": (v2_batch(_rec_with(b"\x00" + b"\xff" * 9 + b"\x02" + varint(0) + varint(-1) * 2
                                                       + varint(0)), 1), CorruptRecordError),
    "6-byte varint key length": (v2_batch(_rec_with(FIELDS_OK + b"\x81\x80\x80\x80\x80\x00" + varint(-1)
                                                    + varint(0)), 1), CorruptRecordError),
    # batch framing
    "batch length -1": (struct.pack(">qi", 0, -1) + b"\x00" * 60, CorruptRecordError),
    "batch length -2**31": (struct.pack(">qi", 0, -(2**31)) + b"\x00" * 60, CorruptRecordError),
    "batch length 3": (struct.pack(">qi", 0, 3) + b"\x00\x00\x00", CorruptRecordError),
    "batch length below v2 header": (struct.pack(">qiib", 0, 40, 0, 2) + b"\x00" * 35, CorruptRecordError),
    "legacy v1 size below header": (struct.pack(">qiIbb", 0, 10, 0, 1, 0) + b"\x00" * 4, CorruptRecordError),
    "legacy v0 size below header": (struct.pack(">qiIbb", 0, 8, 0, 0, 0) + b"\x00" * 2, CorruptRecordError),
    "magic 3": (struct.pack(">qiib", 0, 60, 0, 3) + b"\x00" * 55, UnsupportedMagicError),
    "magic -1": (struct.pack(">qiib", 0, 60, 0, -1) + b"\x00" * 55, UnsupportedMagicError),
    "codec 5": (v2_batch(v2_record(), 1, attributes=5), UnsupportedCodecError),
    "codec 7": (v2_batch(v2_record(), 1, attributes=7), UnsupportedCodecError),
    "legacy codec 4 (zstd on v1)": (legacy_message(0, None, b"x", attributes=4), UnsupportedCodecError),
    "legacy codec 6": (legacy_message(0, None, b"x", attributes=6), UnsupportedCodecError),
    # legacy fields
    "legacy key length 2**31-1": (legacy_raw(0, b"\x01\x00" + struct.pack(">qi", TS, 2**31 - 1) + b"k"
                                             + struct.pack(">i", 1) + b"v"), CorruptRecordError),
    "legacy key length -2": (legacy_raw(0, b"\x01\x00" + struct.pack(">qi", TS, -2) + b"k"
                                        + struct.pack(">i", 1) + b"v"), CorruptRecordError),
    "legacy value length 2**31-1": (legacy_raw(0, b"\x00\x00" + struct.pack(">ii", -1, 2**31 - 1) + b"v"),
                                    CorruptRecordError),
    "legacy trailing bytes": (legacy_raw(0, b"\x00\x00" + struct.pack(">ii", -1, 1) + b"v!"), CorruptRecordError),
    # compressed payloads
    "gzip garbage": (v2_batch(b"\x1f\x8b" + b"\x00" * 40, 1, attributes=1), DecompressionError),
    "snappy garbage": (v2_batch(b"\xff" * 40, 1, attributes=2), DecompressionError),
    "lz4 garbage": (v2_batch(b"\x04\x22\x4d\x18" + b"\xff" * 40, 1, attributes=3), DecompressionError),
    "zstd garbage": (v2_batch(b"\x28\xb5\x2f\xfd" + b"\xff" * 40, 1, attributes=4), DecompressionError),
    "empty lz4 payload": (v2_batch(b"", 1, attributes=3), DecompressionError),
    # Frames whose headers promise 200 MB but hold one small record: nothing may be sized from the promise.
    "lz4 frame declaring 200 MB": (v2_batch(lz4_frame_claiming(200 << 20, v2_record()), 1, attributes=3),
                                   DecompressionError),
    "zstd frame declaring 200 MB": (v2_batch(zstd_frame_claiming(200 << 20, v2_record()), 1, attributes=4),
                                    DecompressionError),
    "legacy wrapper with null value": (legacy_message(5, None, None, attributes=1), CorruptRecordError),
    "legacy wrapper, inner compressed (nested)": (
        gzip_wrapper(1, legacy_message(0, None, gzip.compress(legacy_message(0, None, b"x"), mtime=0), attributes=1)),
        CorruptRecordError,
    ),
    "legacy wrapper, inner magic above wrapper": (gzip_wrapper(1, legacy_message(0, None, b"x", magic=1), magic=0),
                                                  CorruptRecordError),
    "legacy wrapper, partial inner message": (gzip_wrapper(1, legacy_message(0, None, b"xyz")[:-2]),
                                              CorruptRecordError),
    "legacy wrapper, inner CRC wrong": (
        gzip_wrapper(1, legacy_message(0, None, b"xyz")[:12] + b"\x00" * 4 + legacy_message(0, None, b"xyz")[16:]),
        CrcMismatchError,
    ),
    "control batch with a 2-byte key": (
        v2_batch(v2_record(0, b"\x00\x00", b""), 1, attributes=0x30, producer=(1, 0, -1)),
        CorruptRecordError,
    ),
}


@pytest.mark.parametrize("name", list(FORGED))
def test_forged_input(impl: ModuleType, name: str) -> None:
    data, exc_class = FORGED[name]
    assert len(data) < 1100
    read_committed = name.startswith("control")  # marker keys are parsed only under read_committed
    tracemalloc.start()
    try:
        with pytest.raises(KafkaWireError) as info:
            impl.decode(data, True, -1, read_committed, [])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert type(info.value) is exc_class, f"{name}: {type(info.value).__name__}: {info.value}"
    assert peak < 4 * 1024 * 1024, f"{name}: decoding {len(data)} bytes allocated {peak} bytes"


def test_forged_count_with_many_tiny_records_is_fine(impl: ModuleType) -> None:
    """The count bound (7 bytes per record) must not reject legitimate minimum-size records."""
    tiny = b"".join(_rec_with(b"\x00" + varlong(0) + varint(i) + varint(-1) * 2 + varint(0)) for i in range(50))
    got = decode(impl, v2_batch(tiny, 50))
    assert len(got) == 50 and got.key.null_count == 50 and got.value.null_count == 50


def test_decompression_bomb(impl: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """A payload that decompresses past MAX_DECOMPRESSED_SIZE is refused while decompressing."""
    monkeypatch.setattr(compression, "MAX_DECOMPRESSED_SIZE", 1 << 20)
    zeros = b"\x00" * (4 << 20)
    for codec in (1, 2, 3, 4):
        data = v2_batch(compression.compress(codec, zeros, 2), 1, attributes=codec)
        with pytest.raises(DecompressionError):
            decode(impl, data)


@pytest.mark.parametrize(
    ("fn", "buf"),
    [
        ("decode_varint", b"\x80\x80\x80\x80\x80\x00"),  # 6 bytes
        ("decode_varint", b"\xff\xff\xff\xff\x10"),  # 5th byte > 0x0F
        ("decode_varint", b"\x80"),  # runs off the end
        ("decode_varint", b""),
        ("decode_unsigned_varint", b"\xff\xff\xff\xff\x10"),
        ("decode_unsigned_varint", b"\x80\x80\x80\x80\x80\x00"),
        ("decode_varlong", b"\x80" * 10 + b"\x00"),  # 11 bytes
        ("decode_varlong", b"\xff" * 9 + b"\x02"),  # 10th byte > 0x01
        ("decode_varlong", b"\xff" * 5),
    ],
)
def test_varint_decoders_reject(impl: ModuleType, fn: str, buf: bytes) -> None:
    with pytest.raises(CorruptRecordError) as info:
        getattr(impl, fn)(buf, 0)
    assert type(info.value) is CorruptRecordError


def test_varint_decode_at_maximum_length(impl: ModuleType) -> None:
    assert impl.decode_varint(b"\xfe\xff\xff\xff\x0f", 0) == (2**31 - 1, 5)
    assert impl.decode_varint(b"\xff\xff\xff\xff\x0f", 0) == (-(2**31), 5)
    assert impl.decode_unsigned_varint(b"\xff\xff\xff\xff\x0f", 0) == (2**32 - 1, 5)
    assert impl.decode_varlong(b"\xfe" + b"\xff" * 8 + b"\x01", 0) == (2**63 - 1, 10)
    assert impl.decode_varlong(b"\xff" * 9 + b"\x01", 0) == (-(2**63), 10)


# --------------------------------------------------------------------------------------------------
# Peak RSS in a fresh process: catches allocations tracemalloc cannot see (C malloc in the compiled core)

_RSS_PROBE = r"""
import json, resource, sys
import kafkawire._pure.codec as pure
impls = {"pure": pure}
try:
    import kafkawire._codec as compiled
    impls["compiled"] = compiled
except ImportError:
    pass
cases = json.loads(sys.stdin.read())
out = {}
for name, mod in impls.items():
    for label, (hexdata, rc) in cases.items():
        try:
            mod.decode(bytes.fromhex(hexdata), True, -1, rc, [])  # warm up imports and caches
        except Exception:
            pass
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for name, mod in impls.items():
    for label, (hexdata, rc) in cases.items():
        try:
            mod.decode(bytes.fromhex(hexdata), True, -1, rc, [])
            result = "ok"
        except Exception as exc:
            result = type(exc).__name__
        out[name + ":" + label] = [result, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base]
print(json.dumps(out))
"""


def test_forged_inputs_peak_rss() -> None:
    """Decode every forged input in a fresh interpreter; its peak RSS must grow by less than 16 MB."""
    cases = {name: (data.hex(), name.startswith("control")) for name, (data, _) in FORGED.items()}
    env = dict(os.environ)
    proc = subprocess.run(
        [sys.executable, "-c", _RSS_PROBE], input=json.dumps(cases), capture_output=True, text=True,
        timeout=120, env=env, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads(proc.stdout)
    for key, (result, grew_kb) in results.items():
        label = key.split(":", 1)[1]
        assert result == FORGED[label][1].__name__, key
        assert grew_kb < 16 * 1024, f"{key}: peak RSS grew by {grew_kb} KB"
