"""Correctness of the pure-Python reference codec (``kafkawire._pure.codec``) against docs/CODEC-SPEC.md.

Byte layouts are pinned with batches and messages built by hand (``struct``, ``zlib.crc32`` and the
``crc32c`` package, independent of the code under test); interoperability is checked against
kafka-python's record builders and readers. The public API is exercised with the reference forced in
(``kafkawire._impl.impl`` patched), so these tests check the reference whichever core is built.
"""

from __future__ import annotations

import random
import struct
import zlib
from collections.abc import Sequence

import crc32c as crc32c_pkg
import numpy as np
import pytest
from kafka.record import MemoryRecords
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.util import decode_varint as kp_decode_varlong
from kafka.record.util import encode_varint as kp_encode_varlong

import kafkawire
from kafkawire import (
    BinaryColumn,
    CorruptRecordError,
    CrcMismatchError,
    DecompressionError,
    RecordColumns,
    RecordTooLargeError,
    UnsupportedCodecError,
    UnsupportedMagicError,
    _impl,
    compression,
)
from kafkawire._pure import codec as pure
from kafkawire._pure import crc as pure_crc

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
MAGIC_CODECS = [(m, c) for m in (0, 1, 2) for c in CODECS if not (m < 2 and c == "zstd")]


@pytest.fixture(autouse=True)
def force_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """Route the public API (``decode_records`` / ``encode_records``) to the pure reference."""
    monkeypatch.setattr(_impl, "impl", pure)


def decode(data: bytes, **kwargs) -> RecordColumns:
    return kafkawire.decode_records(data, **kwargs)


def rows(rc: RecordColumns) -> list[tuple]:
    return [(r.offset, r.timestamp, r.timestamp_type, r.key, r.value, r.headers) for r in rc]


# --------------------------------------------------------------------------------------------------
# Hand-built wire format (independent of the code under test)
# --------------------------------------------------------------------------------------------------


def uvarint(u: int) -> bytes:
    out = bytearray()
    while True:
        if u < 0x80:
            out.append(u)
            return bytes(out)
        out.append((u & 0x7F) | 0x80)
        u >>= 7


def zz(n: int) -> bytes:
    """Zigzag varint/varlong (the 64-bit formula is also right for int32 values)."""
    return uvarint(((n << 1) ^ (n >> 63)) & ((1 << 64) - 1))


def vbytes(b: bytes | None) -> bytes:
    return zz(-1) if b is None else zz(len(b)) + b


def record_v2(
    offset_delta: int,
    ts_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: Sequence[tuple[bytes, bytes | None]] = (),
) -> bytes:
    body = b"\x00" + zz(ts_delta) + zz(offset_delta) + vbytes(key) + vbytes(value) + zz(len(headers))
    body += b"".join(zz(len(k)) + k + vbytes(v) for k, v in headers)
    return zz(len(body)) + body


def batch_v2(
    base_offset: int,
    records: Sequence[bytes],
    *,
    last_offset_delta: int | None = None,
    count: int | None = None,
    attributes: int = 0,
    base_ts: int = 1000,
    max_ts: int = 1000,
    pid: int = -1,
    epoch: int = -1,
    seq: int = -1,
    leader: int = -1,
    body: bytes | None = None,
    crc: int | None = None,
) -> bytes:
    """A magic 2 batch; ``body`` replaces the records section (e.g. compressed), ``crc`` forges the CRC."""
    section = b"".join(records) if body is None else body
    count = len(records) if count is None else count
    lod = (len(records) - 1 if records else 0) if last_offset_delta is None else last_offset_delta
    after_crc = struct.pack(">hiqqqhii", attributes, lod, base_ts, max_ts, pid, epoch, seq, count) + section
    real_crc = crc32c_pkg.crc32c(after_crc)
    head = struct.pack(">qiib", base_offset, 49 + len(section), leader, 2)
    return head + struct.pack(">I", real_crc if crc is None else crc) + after_crc


def control_batch(base_offset: int, pid: int, abort: bool, *, version: int = 0, epoch: int = 0) -> bytes:
    key = struct.pack(">hh", version, 0 if abort else 1)
    value = struct.pack(">hi", 0, 0)  # version, coordinator epoch
    return batch_v2(base_offset, [record_v2(0, 0, key, value)], attributes=0x30, pid=pid, epoch=epoch)


def message(
    offset: int, magic: int, key: bytes | None, value: bytes | None, *, attributes: int = 0, timestamp: int = 0
) -> bytes:
    """A legacy magic 0/1 message entry (offset, size, crc, magic, attributes, [timestamp], key, value)."""
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    for field in (key, value):
        body += struct.pack(">i", -1) if field is None else struct.pack(">i", len(field)) + field
    return struct.pack(">qiI", offset, 4 + len(body), zlib.crc32(body)) + body


def reseal_v2(batch: bytes, attributes: int | None = None) -> bytes:
    """Change a magic 2 batch's attributes and recompute its CRC."""
    b = bytearray(batch)
    if attributes is not None:
        struct.pack_into(">h", b, 21, attributes)
    struct.pack_into(">I", b, 17, crc32c_pkg.crc32c(bytes(b[21:])))
    return bytes(b)


def reseal_legacy(msg: bytes, attributes: int | None = None) -> bytes:
    b = bytearray(msg)
    if attributes is not None:
        b[17] = attributes & 0xFF
    struct.pack_into(">I", b, 12, zlib.crc32(bytes(b[16:])))
    return bytes(b)


# --------------------------------------------------------------------------------------------------
# Varints
# --------------------------------------------------------------------------------------------------

VARINT_VECTORS = [
    (0, "00"),
    (-1, "01"),
    (1, "02"),
    (-2, "03"),
    (63, "7e"),
    (-64, "7f"),
    (64, "8001"),
    (-65, "8101"),
    (300, "d804"),
    (2**31 - 1, "feffffff0f"),
    (-(2**31), "ffffffff0f"),
]
VARLONG_VECTORS = VARINT_VECTORS + [
    (2**31, "8080808010"),
    (2**63 - 1, "feffffffffffffffff01"),
    (-(2**63), "ffffffffffffffffff01"),
]
UNSIGNED_VECTORS = [(0, "00"), (1, "01"), (127, "7f"), (128, "8001"), (16384, "808001"), (2**32 - 1, "ffffffff0f")]


@pytest.mark.parametrize("value,hexbytes", VARINT_VECTORS)
def test_varint_vectors(value: int, hexbytes: str) -> None:
    raw = bytes.fromhex(hexbytes)
    assert pure.encode_varint(value) == raw
    assert pure.decode_varint(raw) == (value, len(raw))
    assert pure.decode_varint(b"\xaa" + raw + b"\xbb", 1) == (value, 1 + len(raw))


@pytest.mark.parametrize("value,hexbytes", VARLONG_VECTORS)
def test_varlong_vectors(value: int, hexbytes: str) -> None:
    raw = bytes.fromhex(hexbytes)
    assert pure.encode_varlong(value) == raw
    assert pure.decode_varlong(memoryview(raw)) == (value, len(raw))


@pytest.mark.parametrize("value,hexbytes", UNSIGNED_VECTORS)
def test_unsigned_varint_vectors(value: int, hexbytes: str) -> None:
    raw = bytes.fromhex(hexbytes)
    assert pure.encode_unsigned_varint(value) == raw
    assert pure.decode_unsigned_varint(bytearray(raw)) == (value, len(raw))


def test_varlong_matches_kafka_python() -> None:
    rng = random.Random(5)
    values = [rng.randint(-(2**63), 2**63 - 1) >> rng.randint(0, 63) for _ in range(2000)]
    for v in values:
        out = bytearray()
        kp_encode_varlong(v, out.append)
        assert pure.encode_varlong(v) == bytes(out)
        assert pure.decode_varlong(bytes(out)) == kp_decode_varlong(bytes(out), 0) == (v, len(out))


def test_varint_round_trip_random() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        v = rng.randint(-(2**31), 2**31 - 1) >> rng.randint(0, 31)
        assert pure.decode_varint(pure.encode_varint(v)) == (v, len(pure.encode_varint(v)))
        u = rng.randint(0, 2**32 - 1) >> rng.randint(0, 31)
        assert pure.decode_unsigned_varint(pure.encode_unsigned_varint(u))[0] == u


@pytest.mark.parametrize(
    "func,value",
    [
        (pure.encode_varint, 2**31),
        (pure.encode_varint, -(2**31) - 1),
        (pure.encode_varlong, 2**63),
        (pure.encode_varlong, -(2**63) - 1),
        (pure.encode_unsigned_varint, -1),
        (pure.encode_unsigned_varint, 2**32),
    ],
)
def test_varint_encode_out_of_range(func, value: int) -> None:
    with pytest.raises(ValueError):
        func(value)


@pytest.mark.parametrize(
    "func,hexbytes",
    [
        (pure.decode_varint, ""),  # empty
        (pure.decode_varint, "80"),  # runs past the end
        (pure.decode_varint, "ffffffff"),
        (pure.decode_varint, "ffffffff10"),  # 5th byte overflows 32 bits
        (pure.decode_varint, "ffffffff8f01"),  # 6 bytes
        (pure.decode_unsigned_varint, "8080808010"),
        (pure.decode_unsigned_varint, "808080808000"),
        (pure.decode_varlong, "ffffffffffffffffff"),  # 9 bytes, continuation set, then nothing
        (pure.decode_varlong, "ffffffffffffffffff02"),  # 10th byte overflows 64 bits
        (pure.decode_varlong, "80808080808080808080" + "00"),  # 11 bytes
    ],
)
def test_varint_decode_corrupt(func, hexbytes: str) -> None:
    with pytest.raises(CorruptRecordError):
        func(bytes.fromhex(hexbytes))


def test_varint_decode_accepts_max_length_forms_and_bad_pos() -> None:
    assert pure.decode_varint(bytes.fromhex("ffffffff0f")) == (-(2**31), 5)
    assert pure.decode_unsigned_varint(bytes.fromhex("8080808000")) == (0, 5)  # padded, still 5 bytes
    with pytest.raises(CorruptRecordError):
        pure.decode_varint(b"\x02", 1)  # pos at the end
    with pytest.raises(ValueError):
        pure.decode_varint(b"\x02", -1)


# --------------------------------------------------------------------------------------------------
# CRCs
# --------------------------------------------------------------------------------------------------


def test_crc_check_values() -> None:
    assert pure.crc32(b"123456789") == 0xCBF43926
    assert pure.crc32c(b"123456789") == 0xE3069283
    assert pure_crc.crc32c_python(b"123456789") == 0xE3069283


def test_crc_running_value_and_buffers() -> None:
    data = bytes(range(256)) * 40
    for func in (pure.crc32, pure.crc32c, pure_crc.crc32c_python):
        whole = func(data)
        assert func(data[1000:], func(data[:1000])) == whole
        assert func(memoryview(data)) == whole == func(bytearray(data))
    assert pure_crc.crc32c_python(data) == crc32c_pkg.crc32c(data)
    assert pure.crc32(data, 12345) == zlib.crc32(data, 12345)


# --------------------------------------------------------------------------------------------------
# Magic 2: byte layout pinned by hand-built batches
# --------------------------------------------------------------------------------------------------


def test_encode_v2_matches_hand_built_batch() -> None:
    got = kafkawire.encode_records(
        [b"v0", None, b""],
        [None, b"k1", b""],
        timestamps=[1000, 1500, 900],
        headers=[[("h", b"1"), ("h", None)], None, []],
        base_offset=42,
        producer_id=7,
        producer_epoch=3,
        base_sequence=11,
        transactional=True,
        partition_leader_epoch=5,
    )
    want = batch_v2(
        42,
        [
            record_v2(0, 0, None, b"v0", [(b"h", b"1"), (b"h", None)]),
            record_v2(1, 500, b"k1", None),
            record_v2(2, -100, b"", b""),
        ],
        attributes=0x10,
        base_ts=1000,
        max_ts=1500,
        pid=7,
        epoch=3,
        seq=11,
        leader=5,
    )
    assert got == want


def test_decode_v2_every_field() -> None:
    data = batch_v2(
        42,
        [
            record_v2(0, 0, None, b"v0", [(b"h", b"1"), (b"h", None), (b"g", b"")]),
            record_v2(1, 500, b"k1", None),
            record_v2(2, -100, b"", b""),
        ],
        attributes=0x10 | 1 * 0,
        base_ts=1000,
        max_ts=1500,
        pid=7,
        epoch=3,
        seq=11,
        leader=5,
    )
    rc = pure.decode(data, True, -1, False, [])
    assert rows(rc) == [
        (42, 1000, 0, None, b"v0", [("h", b"1"), ("h", None), ("g", b"")]),
        (43, 1500, 0, b"k1", None, []),
        (44, 900, 0, b"", b"", []),
    ]
    # nulls and empties are distinct in the columns themselves
    assert rc.key.to_pylist() == [None, b"k1", b""] and rc.value.to_pylist() == [b"v0", None, b""]
    assert rc.key.is_null(0) and not rc.key.is_null(2)
    assert rc.header_offsets.tolist() == [0, 3, 3, 3]
    assert rc.header_key.to_pylist() == [b"h", b"h", b"g"]
    assert rc.header_value.to_pylist() == [b"1", None, b""]
    assert rc.batch_index.tolist() == [0, 0, 0]
    assert rc.batch_base_offset.tolist() == [42]
    assert rc.batch_producer_id.tolist() == [7]
    assert rc.batch_producer_epoch.tolist() == [3]
    assert rc.batch_base_sequence.tolist() == [11]
    assert rc.batch_partition_leader_epoch.tolist() == [5]
    assert rc.batch_transactional.tolist() == [True]
    assert rc.batch_magic.tolist() == [2]
    assert rc.batch_codec.tolist() == [0]
    assert rc.next_offset == 45 and rc.valid_bytes == len(data)


def test_column_dtypes() -> None:
    rc = decode(kafkawire.encode_records([b"a", b"b"], timestamps=[1, 2], headers=[[("x", b"y")], None]))
    want = {
        "offset": np.int64,
        "timestamp": np.int64,
        "timestamp_type": np.int8,
        "header_offsets": np.int32,
        "batch_index": np.int32,
        "batch_base_offset": np.int64,
        "batch_producer_id": np.int64,
        "batch_producer_epoch": np.int16,
        "batch_base_sequence": np.int32,
        "batch_partition_leader_epoch": np.int32,
        "batch_transactional": np.bool_,
        "batch_magic": np.int8,
        "batch_codec": np.int8,
    }
    for name, dtype in want.items():
        assert getattr(rc, name).dtype == dtype, name
    for name in RecordColumns.BINARY_COLUMNS:
        col = getattr(rc, name)
        assert col.offsets.dtype == np.int32 and col.data.dtype == np.uint8
    assert rc.equals(RecordColumns.empty()) is False
    empty = decode(b"")
    assert empty.equals(RecordColumns.empty()) and empty.next_offset == -1 and empty.valid_bytes == 0


def test_log_append_time_uses_max_timestamp() -> None:
    data = batch_v2(
        0, [record_v2(0, 0, None, b"a"), record_v2(1, 7, None, b"b")], attributes=0x08, base_ts=100, max_ts=999_999
    )
    rc = decode(data)
    assert rc.timestamp.tolist() == [999_999, 999_999]
    assert rc.timestamp_type.tolist() == [1, 1]
    create = decode(reseal_v2(data, attributes=0))
    assert create.timestamp.tolist() == [100, 107] and create.timestamp_type.tolist() == [0, 0]


def test_offset_deltas_need_not_be_dense() -> None:
    # Compacted topics keep the batch but drop records: deltas 0, 5 with lastOffsetDelta 9.
    data = batch_v2(100, [record_v2(0, 0, None, b"a"), record_v2(5, 0, None, b"b")], last_offset_delta=9)
    rc = decode(data)
    assert rc.offset.tolist() == [100, 105]
    assert rc.next_offset == 110


def test_empty_batch_moves_next_offset() -> None:
    # A batch with no records (compaction can leave one) advances the fetch position (KAFKA-5443).
    rc = decode(batch_v2(10, [], last_offset_delta=4) + batch_v2(15, [record_v2(0, 0, None, b"x")]))
    assert rc.offset.tolist() == [15] and rc.num_batches == 1 and rc.next_offset == 16


def test_fetch_offset_filters_records_and_batches() -> None:
    data = batch_v2(0, [record_v2(i, 0, None, b"a%d" % i) for i in range(3)]) + batch_v2(
        3, [record_v2(i, 0, None, b"b%d" % i) for i in range(3)]
    )
    rc = decode(data, fetch_offset=4)
    assert rc.offset.tolist() == [4, 5]
    assert rc.batch_base_offset.tolist() == [3]  # the first batch contributed nothing: no row
    assert rc.batch_index.tolist() == [0, 0]
    assert rc.next_offset == 6
    everything_filtered = decode(data, fetch_offset=100)
    assert len(everything_filtered) == 0 and everything_filtered.num_batches == 0
    assert everything_filtered.next_offset == 6 and everything_filtered.valid_bytes == len(data)


def test_records_below_fetch_offset_are_still_validated() -> None:
    bad_header = b"\x00" + zz(0) + zz(0) + vbytes(None) + vbytes(b"x") + zz(1) + zz(-1) + zz(-1)
    data = batch_v2(0, [zz(len(bad_header)) + bad_header, record_v2(1, 0, None, b"ok")])
    with pytest.raises(CorruptRecordError):
        decode(data, fetch_offset=1)


# --------------------------------------------------------------------------------------------------
# Control batches and transactions
# --------------------------------------------------------------------------------------------------


def txn_batch(base: int, pid: int, values: Sequence[bytes], codec: int = 0) -> bytes:
    recs = [record_v2(i, 0, None, v) for i, v in enumerate(values)]
    body = None if codec == 0 else compression.compress(codec, b"".join(recs), 2)
    return batch_v2(base, recs, body=body, attributes=0x10 | codec, pid=pid, epoch=0, seq=0)


def test_control_batches_are_skipped_and_advance_next_offset() -> None:
    data = txn_batch(0, 5, [b"a", b"b"]) + control_batch(2, 5, abort=False)
    rc = decode(data)
    assert rc.offset.tolist() == [0, 1] and rc.num_batches == 1
    assert rc.next_offset == 3  # past the commit marker
    only_marker = decode(control_batch(7, 5, abort=True))
    assert len(only_marker) == 0 and only_marker.next_offset == 8 and only_marker.num_batches == 0


def transaction_log() -> bytes:
    return b"".join(
        [
            txn_batch(0, 1, [b"p1-aborted-0", b"p1-aborted-1"]),  # producer 1, aborted
            txn_batch(2, 2, [b"p2-committed-2"]),  # producer 2, committed
            txn_batch(3, 1, [b"p1-aborted-3"], codec=1),  # still producer 1's aborted transaction (gzip)
            control_batch(4, 1, abort=True),
            control_batch(5, 2, abort=False),
            txn_batch(6, 1, [b"p1-committed-6"]),  # producer 1's next transaction: not aborted
            batch_v2(7, [record_v2(0, 0, None, b"plain-7")]),  # non-transactional
            txn_batch(8, 3, [b"p3-aborted-8"]),
            control_batch(9, 3, abort=True),
            control_batch(10, 1, abort=False),
        ]
    )


def test_read_committed_drops_aborted_transactions() -> None:
    data = transaction_log()
    aborted = [(1, 0), (3, 8)]
    rc = decode(data, isolation="read_committed", aborted_transactions=aborted)
    assert rc.value.to_pylist() == [b"p2-committed-2", b"p1-committed-6", b"plain-7"]
    assert rc.offset.tolist() == [2, 6, 7]
    assert rc.next_offset == 11
    uncommitted = decode(data, aborted_transactions=aborted)  # read_uncommitted ignores the list
    assert len(uncommitted) == 7 and uncommitted.next_offset == 11
    # the pure module directly, as the spec defines it (list sorted by first offset)
    assert pure.decode(data, True, -1, True, aborted).equals(rc)


def test_read_committed_unsorted_aborted_list_in_any_form() -> None:
    data = transaction_log()
    sorted_rc = decode(data, isolation="read_committed", aborted_transactions=[(1, 0), (3, 8)])

    class Entry:
        def __init__(self, producer_id: int, first_offset: int) -> None:
            self.producer_id, self.first_offset = producer_id, first_offset

    for aborted in (
        [(3, 8), (1, 0)],
        [{"producer_id": 3, "first_offset": 8}, {"producer_id": 1, "first_offset": 0}],
        [Entry(3, 8), Entry(1, 0)],
    ):
        assert decode(data, isolation="read_committed", aborted_transactions=aborted).equals(sorted_rc)


def test_read_committed_abort_marker_without_entry_and_late_entry() -> None:
    # An abort marker with no matching aborted-transaction entry is tolerated; an entry whose first offset
    # lies beyond the fetched batches does not affect them.
    data = txn_batch(0, 1, [b"a"]) + control_batch(1, 1, abort=True) + txn_batch(2, 1, [b"b"])
    rc = decode(data, isolation="read_committed", aborted_transactions=[(1, 50)])
    assert rc.value.to_pylist() == [b"a", b"b"]


def test_read_committed_aborted_batch_is_not_decompressed() -> None:
    # Aborted batches are dropped unread (spec): a corrupt payload in one raises nothing.
    bad = batch_v2(0, [b"\x00" * 7], body=b"\x1f\x8bnot gzip at all", attributes=0x10 | 1, pid=9, epoch=0, seq=0)
    data = bad + control_batch(1, 9, abort=True)
    rc = decode(data, isolation="read_committed", aborted_transactions=[(9, 0)])
    assert len(rc) == 0 and rc.next_offset == 2
    with pytest.raises(DecompressionError):
        decode(data)


def test_control_marker_key_rules() -> None:
    short_key = batch_v2(0, [record_v2(0, 0, b"\x00\x00", b"")], attributes=0x30, pid=1, epoch=0)
    with pytest.raises(CorruptRecordError):
        decode(short_key, isolation="read_committed")
    assert len(decode(short_key)) == 0  # not parsed outside read_committed
    # unknown key version: not an abort, so producer 1's aborted batch after it stays dropped
    data = txn_batch(0, 1, [b"x"]) + control_batch(1, 1, abort=True, version=1) + txn_batch(2, 1, [b"y"])
    rc = decode(data, isolation="read_committed", aborted_transactions=[(1, 0)])
    assert len(rc) == 0 and rc.next_offset == 3


# --------------------------------------------------------------------------------------------------
# Legacy magic 0/1
# --------------------------------------------------------------------------------------------------


def test_encode_legacy_uncompressed_matches_hand_built() -> None:
    for magic in (0, 1):
        got = kafkawire.encode_records([b"v", None], [None, b"k"], timestamps=[11, 22], base_offset=5, magic=magic)
        assert got == message(5, magic, None, b"v", timestamp=11) + message(6, magic, b"k", None, timestamp=22)


@pytest.mark.parametrize("magic", [0, 1])
def test_encode_legacy_compressed_layout(magic: int) -> None:
    got = kafkawire.encode_records(
        [b"a", b"b", b"c"], timestamps=[30, 10, 20], base_offset=100, magic=magic, compression="gzip"
    )
    inner_offsets = [0, 1, 2] if magic == 1 else [100, 101, 102]  # KIP-31 relative offsets for magic 1
    inner = b"".join(
        message(o, magic, None, v, timestamp=t) for o, v, t in zip(inner_offsets, [b"a", b"b", b"c"], [30, 10, 20])
    )
    want = message(102, magic, None, compression.compress(1, inner, magic), attributes=1, timestamp=30)
    assert got == want


def test_decode_legacy_v0_and_v1_fields() -> None:
    data = (
        message(0, 0, b"k", b"v")
        + message(1, 1, None, b"w", timestamp=77)
        + message(2, 1, b"", None, attributes=0x08, timestamp=88)
    )
    rc = decode(data)
    assert rows(rc) == [(0, -1, -1, b"k", b"v", []), (1, 77, 0, None, b"w", []), (2, 88, 1, b"", None, [])]
    assert rc.batch_base_offset.tolist() == [0, 1, 2]
    assert rc.batch_magic.tolist() == [0, 1, 1]
    assert rc.batch_producer_id.tolist() == [-1] * 3 and rc.batch_producer_epoch.tolist() == [-1] * 3
    assert rc.batch_base_sequence.tolist() == [-1] * 3 and rc.batch_partition_leader_epoch.tolist() == [-1] * 3
    assert rc.batch_transactional.tolist() == [False] * 3 and rc.batch_codec.tolist() == [0] * 3
    assert rc.next_offset == 3 and rc.valid_bytes == len(data)
    assert rows(decode(data, fetch_offset=2)) == [(2, 88, 1, b"", None, [])]


def wrapper(
    offset: int, magic: int, inner: bytes, codec: int = 1, *, attributes: int | None = None, timestamp: int = 0
) -> bytes:
    return message(
        offset,
        magic,
        None,
        compression.compress(codec, inner, magic),
        attributes=codec if attributes is None else attributes,
        timestamp=timestamp,
    )


def test_legacy_v1_relative_offsets() -> None:
    inner = b"".join(message(i, 1, None, b"m%d" % i, timestamp=10 + i) for i in range(3))
    rc = decode(wrapper(52, 1, inner))
    assert rc.offset.tolist() == [50, 51, 52]
    assert rc.timestamp.tolist() == [10, 11, 12] and rc.timestamp_type.tolist() == [0, 0, 0]
    assert rc.batch_base_offset.tolist() == [50] and rc.batch_codec.tolist() == [1]
    assert rc.next_offset == 53


def test_legacy_v1_wrapper_offset_zero_keeps_inner_offsets() -> None:
    # Old producers left the wrapper offset at 0: the inner offsets are used as written.
    inner = b"".join(message(i + 7, 1, None, b"m", timestamp=0) for i in range(3))
    rc = decode(wrapper(0, 1, inner))
    assert rc.offset.tolist() == [7, 8, 9]
    assert rc.next_offset == 10  # max(wrapper offset, last inner offset) + 1


def test_legacy_v0_inner_offsets_absolute() -> None:
    inner = b"".join(message(o, 0, None, b"m") for o in (20, 21, 22))
    rc = decode(wrapper(22, 0, inner, codec=2))
    assert rc.offset.tolist() == [20, 21, 22]
    assert rc.timestamp.tolist() == [-1] * 3 and rc.timestamp_type.tolist() == [-1] * 3
    assert rc.next_offset == 23


def test_legacy_v1_log_append_time_wrapper() -> None:
    inner = b"".join(message(i, 1, None, b"m", timestamp=5) for i in range(2))
    rc = decode(wrapper(11, 1, inner, attributes=0x08 | 1, timestamp=123_456))
    assert rc.timestamp.tolist() == [123_456, 123_456] and rc.timestamp_type.tolist() == [1, 1]


def test_fetch_offset_inside_a_wrapper() -> None:
    inner = b"".join(message(i, 1, None, b"m%d" % i) for i in range(5))
    data = wrapper(104, 1, inner, codec=3)
    rc = decode(data, fetch_offset=102)
    assert rc.offset.tolist() == [102, 103, 104]
    assert rc.value.to_pylist() == [b"m2", b"m3", b"m4"]
    assert rc.batch_base_offset.tolist() == [102]  # first *returned* offset
    assert rc.next_offset == 105
    past = decode(data, fetch_offset=200)
    assert len(past) == 0 and past.num_batches == 0 and past.next_offset == 105


def test_legacy_wrapper_errors() -> None:
    inner_ok = message(0, 1, None, b"x")
    with pytest.raises(CorruptRecordError):  # null wrapper value
        decode(message(0, 1, None, None, attributes=1))
    with pytest.raises(CorruptRecordError):  # nested compression
        decode(wrapper(0, 1, wrapper(0, 1, inner_ok)))
    with pytest.raises(CorruptRecordError):  # partial inner message
        decode(wrapper(0, 1, inner_ok + inner_ok[:15]))
    with pytest.raises(CorruptRecordError):  # empty wrapper
        decode(wrapper(0, 1, b""))
    with pytest.raises(CorruptRecordError):  # inner magic above the wrapper's
        decode(wrapper(0, 0, inner_ok))
    inner_bad_crc = bytearray(inner_ok)
    inner_bad_crc[-1] ^= 1
    with pytest.raises(CrcMismatchError):
        decode(wrapper(0, 1, bytes(inner_bad_crc)))
    assert len(decode(wrapper(0, 1, bytes(inner_bad_crc)), verify_crc=False)) == 1
    with pytest.raises(UnsupportedCodecError):  # zstd needs magic 2
        decode(message(0, 1, None, compression.compress(4, inner_ok, 2), attributes=4))
    with pytest.raises(UnsupportedCodecError):
        decode(reseal_legacy(message(0, 1, None, b"x"), attributes=5))


# --------------------------------------------------------------------------------------------------
# Round trips for every magic x codec
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("magic,codec", MAGIC_CODECS)
def test_round_trip(magic: int, codec: str) -> None:
    values = [b"value-%d" % i * (i % 4) for i in range(50)]
    values[3], values[4] = None, b""
    keys = [None if i % 3 == 0 else b"key-%d" % i for i in range(50)]
    keys[5] = b""
    ts = np.arange(50, dtype=np.int64) * 7 + 1_700_000_000_000
    ts[10] = ts[0] - 5000  # out of order: negative timestamp delta
    headers = [[("dup", b"1"), ("dup", b"2"), ("n", None)] if i % 5 == 0 else None for i in range(50)]
    data = kafkawire.encode_records(
        values,
        keys,
        timestamps=ts,
        base_offset=1000,
        magic=magic,
        compression=codec,
        headers=headers if magic == 2 else None,
    )
    rc = decode(data)
    assert rc.value.to_pylist() == values and rc.key.to_pylist() == keys
    assert rc.offset.tolist() == list(range(1000, 1050))
    if magic == 0:
        assert rc.timestamp.tolist() == [-1] * 50 and rc.timestamp_type.tolist() == [-1] * 50
    else:
        assert rc.timestamp.tolist() == ts.tolist() and rc.timestamp_type.tolist() == [0] * 50
    if magic == 2:
        assert [rc.headers_of(i) for i in range(50)] == [
            [("dup", b"1"), ("dup", b"2"), ("n", None)] if i % 5 == 0 else [] for i in range(50)
        ]
    assert rc.batch_codec.tolist() == [CODECS[codec]] * rc.num_batches
    assert rc.batch_magic.tolist() == [magic] * rc.num_batches
    assert rc.num_batches == (50 if magic < 2 and codec == "none" else 1)
    assert rc.next_offset == 1050 and rc.valid_bytes == len(data)
    # identical bytes when encoded again: compression is deterministic
    assert data == kafkawire.encode_records(
        values,
        keys,
        timestamps=ts,
        base_offset=1000,
        magic=magic,
        compression=codec,
        headers=headers if magic == 2 else None,
    )


def test_producer_fields_round_trip() -> None:
    data = kafkawire.encode_records(
        [b"x"],
        timestamps=[1],
        producer_id=2**40,
        producer_epoch=2**15 - 1,
        base_sequence=2**31 - 1,
        transactional=True,
        partition_leader_epoch=9,
        compression="zstd",
    )
    rc = decode(data)
    assert rc.batch_producer_id.tolist() == [2**40] and rc.batch_producer_epoch.tolist() == [2**15 - 1]
    assert rc.batch_base_sequence.tolist() == [2**31 - 1] and rc.batch_transactional.tolist() == [True]
    assert rc.batch_partition_leader_epoch.tolist() == [9]


def test_mixed_magics_in_one_fetch() -> None:
    data = (
        kafkawire.encode_records([b"a"], timestamps=[1], base_offset=0, magic=0)
        + kafkawire.encode_records([b"b", b"c"], timestamps=[2, 3], base_offset=1, magic=1, compression="snappy")
        + kafkawire.encode_records([b"d"], timestamps=[4], base_offset=3, magic=2, compression="lz4")
    )
    rc = decode(data)
    assert rc.value.to_pylist() == [b"a", b"b", b"c", b"d"] and rc.offset.tolist() == [0, 1, 2, 3]
    assert rc.batch_magic.tolist() == [0, 1, 2] and rc.batch_index.tolist() == [0, 1, 1, 2]
    assert rc.next_offset == 4


# --------------------------------------------------------------------------------------------------
# Partial tails and RecordTooLargeError
# --------------------------------------------------------------------------------------------------


def test_partial_tail_is_ignored() -> None:
    first = batch_v2(0, [record_v2(0, 0, None, b"a")])
    second = batch_v2(1, [record_v2(0, 0, None, b"b" * 100)])
    for cut in (1, 11, 12, 17, 61, len(second) - 1):
        rc = decode(first + second[:cut])
        assert rc.value.to_pylist() == [b"a"]
        assert rc.valid_bytes == len(first) and rc.next_offset == 1


def test_record_too_large() -> None:
    big = batch_v2(77, [record_v2(0, 0, None, b"x" * 1000)])
    with pytest.raises(RecordTooLargeError) as info:
        decode(big[:500])
    assert (info.value.offset, info.value.size, info.value.available) == (77, len(big), 500)
    with pytest.raises(RecordTooLargeError) as info:
        decode(big[:10])
    assert (info.value.offset, info.value.size, info.value.available) == (77, None, 10)
    with pytest.raises(RecordTooLargeError) as info:
        decode(big[:5])
    assert (info.value.offset, info.value.size, info.value.available) == (None, None, 5)
    rc = pure.decode(b"", True, 33, False, [])
    assert len(rc) == 0 and rc.next_offset == 33  # nothing fetched: stay at the fetch offset


# --------------------------------------------------------------------------------------------------
# Corruption (the classes the spec prescribes)
# --------------------------------------------------------------------------------------------------


def good_batch() -> bytes:
    return batch_v2(10, [record_v2(0, 0, b"k", b"v", [(b"h", b"x")]), record_v2(1, 1, None, b"w")])


def test_crc_mismatch_names_the_batch() -> None:
    data = bytearray(good_batch())
    data[-2] ^= 0xFF  # the last value, b"w"
    with pytest.raises(CrcMismatchError) as info:
        decode(bytes(data))
    err = info.value
    assert (err.base_offset, err.last_offset) == (10, 11)
    assert err.stored == struct.unpack_from(">I", data, 17)[0]
    assert err.computed == crc32c_pkg.crc32c(bytes(data[21:]))
    assert decode(bytes(data), verify_crc=False).value.to_pylist() == [b"v", b"\x88"]
    msg = bytearray(message(3, 1, None, b"v"))
    msg[-1] ^= 1
    with pytest.raises(CrcMismatchError) as info:
        decode(bytes(msg))
    assert (info.value.base_offset, info.value.last_offset) == (3, 3)


def corrupt_cases() -> dict[str, tuple[bytes, type]]:
    rec = record_v2(0, 0, None, b"v")
    body = rec[1:]  # without its length varint
    return {
        "negative entry length": (struct.pack(">qi", 0, -1) + b"\x00" * 20, CorruptRecordError),
        "length below 5": (struct.pack(">qi", 0, 4) + b"\x00" * 4, CorruptRecordError),
        "magic 3": (struct.pack(">qiib", 0, 60, 0, 3) + b"\x00" * 56, UnsupportedMagicError),
        "magic -1": (struct.pack(">qiib", 0, 60, 0, -1) + b"\x00" * 56, UnsupportedMagicError),
        "v2 below minimum length": (struct.pack(">qiib", 0, 48, 0, 2) + b"\x00" * 44, CorruptRecordError),
        "v1 below minimum length": (struct.pack(">qiIbb", 0, 21, 0, 1, 0) + b"\x00" * 15, CorruptRecordError),
        "v0 below minimum length": (struct.pack(">qiIbb", 0, 13, 0, 0, 0) + b"\x00" * 7, CorruptRecordError),
        "codec 5": (batch_v2(0, [rec], attributes=5), UnsupportedCodecError),
        "codec 7 legacy": (reseal_legacy(message(0, 1, None, b"v"), attributes=7), UnsupportedCodecError),
        "negative count": (batch_v2(0, [rec], count=-1), CorruptRecordError),
        "count too large": (batch_v2(0, [rec], count=2), CorruptRecordError),
        "count far too large": (batch_v2(0, [rec], count=2**31 - 1), CorruptRecordError),
        "trailing bytes": (batch_v2(0, [rec], body=rec + b"\x00" * 7), CorruptRecordError),
        "record length past section": (batch_v2(0, [rec], body=zz(100) + body), CorruptRecordError),
        "negative record length": (batch_v2(0, [rec], body=zz(-2) + body + b"\x00"), CorruptRecordError),
        "record longer than its fields": (
            batch_v2(0, [rec], body=zz(len(body) + 1) + body + b"\x00"),
            CorruptRecordError,
        ),
        "field past record end": (batch_v2(0, [rec], body=zz(len(body) - 1) + body[:-1] + b"\x00"), CorruptRecordError),
        "key length -2": (batch_v2(0, [b"\x0e\x00\x00\x00\x03" + b"\x00" * 9]), CorruptRecordError),
        "null header key": (batch_v2(0, [zz(7) + b"\x00\x00\x00\x01\x01\x02\x01" + b"\x00" * 2]), CorruptRecordError),
        "negative header count": (batch_v2(0, [zz(6) + b"\x00\x00\x00\x01\x01\x01" + b"\x00" * 2]), CorruptRecordError),
        "varint overflow": (batch_v2(0, [b"\xff\xff\xff\xff\x7f" + b"\x00" * 9]), CorruptRecordError),
        "legacy key length -2": (
            reseal_legacy(message(0, 1, b"k", b"v")[:26] + struct.pack(">i", -2) + message(0, 1, b"k", b"v")[30:]),
            CorruptRecordError,
        ),
        "legacy trailing bytes": (
            reseal_legacy(
                struct.pack(">qi", 0, len(message(0, 1, None, b"v")) - 11) + message(0, 1, None, b"v")[12:] + b"\x00"
            ),
            CorruptRecordError,
        ),
        "gzip garbage": (batch_v2(0, [rec], body=b"\x1f\x8b" + b"\x00" * 20, attributes=1), DecompressionError),
        "zstd garbage": (batch_v2(0, [rec], body=b"\x28\xb5\x2f\xfd" + b"\xff" * 20, attributes=4), DecompressionError),
    }


@pytest.mark.parametrize("name", list(corrupt_cases()))
def test_corrupt_input(name: str) -> None:
    data, exc = corrupt_cases()[name]
    with pytest.raises(exc) as info:
        pure.decode(data, True, -1, False, [])
    assert type(info.value) is exc, f"{name}: got {type(info.value).__name__}: {info.value}"


def test_corrupt_entry_after_good_one_is_an_error_not_a_tail() -> None:
    with pytest.raises(CorruptRecordError):
        decode(good_batch() + batch_v2(2, [record_v2(0, 0, None, b"v")], count=-1))


def test_decompression_cap_applies_to_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    data = kafkawire.encode_records([b"x" * 10_000] * 10, timestamps=[0] * 10, compression="zstd")
    assert len(decode(data)) == 10
    monkeypatch.setattr(compression, "MAX_DECOMPRESSED_SIZE", 50_000)
    with pytest.raises(DecompressionError, match="MAX_DECOMPRESSED_SIZE"):
        decode(data)


def test_hostile_offsets_wrap_like_java() -> None:
    data = batch_v2(2**63 - 1, [record_v2(0, 0, None, b"a"), record_v2(1, 0, None, b"b")], base_ts=2**63 - 1)
    rc = decode(data)
    assert rc.offset.tolist() == [2**63 - 1, -(2**63)]
    assert rc.next_offset == -(2**63) + 1


# --------------------------------------------------------------------------------------------------
# Encode argument errors
# --------------------------------------------------------------------------------------------------


def enc(**overrides):
    args = dict(
        values=BinaryColumn.from_pylist([b"a"]),
        keys=None,
        timestamps=np.zeros(1, np.int64),
        header_offsets=None,
        header_keys=None,
        header_values=None,
        base_offset=0,
        magic=2,
        codec=0,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        transactional=False,
        partition_leader_epoch=-1,
    )
    args.update(overrides)
    return pure.encode(**args)


@pytest.mark.parametrize(
    "overrides",
    [
        {"values": BinaryColumn.from_pylist([])},
        {"magic": 3},
        {"codec": 5},
        {"magic": 1, "codec": 4},
        {"producer_epoch": 2**15},
        {"base_offset": 2**63},
        {"timestamps": np.zeros(2, np.int64)},
        {"keys": BinaryColumn.from_pylist([b"a", b"b"])},
        {
            "magic": 1,
            "header_offsets": np.array([0, 1], np.int32),
            "header_keys": BinaryColumn.from_pylist([b"h"]),
            "header_values": BinaryColumn.from_pylist([b"v"]),
        },
        {
            "header_offsets": np.array([0, 1], np.int32),
            "header_keys": BinaryColumn.from_pylist([None]),
            "header_values": BinaryColumn.from_pylist([b"v"]),
        },
    ],
)
def test_encode_rejects_bad_arguments(overrides: dict) -> None:
    with pytest.raises(ValueError):
        enc(**overrides)


def test_encode_accepts_arrow_and_columns() -> None:
    import pyarrow as pa

    want = enc(values=BinaryColumn.from_pylist([b"a", None]), timestamps=np.array([1, 2], np.int64))
    got = kafkawire.encode_records(pa.array([b"a", None], pa.binary()), timestamps=[1, 2])
    assert got == want


# --------------------------------------------------------------------------------------------------
# Interoperability with kafka-python's record builders and readers
# --------------------------------------------------------------------------------------------------


def kafka_python_rows(data: bytes) -> list[tuple]:
    out = []
    records = MemoryRecords(data)
    while True:
        batch = records.next_batch()
        if batch is None:
            return out
        for r in batch:
            ts = -1 if r.timestamp is None else r.timestamp
            tt = -1 if r.timestamp_type is None else r.timestamp_type
            out.append((r.offset, ts, tt, r.key, r.value, [(k, v) for k, v in r.headers]))


SAMPLE = [(b"k%d" % i if i % 4 else None, b"value %d " % i * (i % 9) if i % 7 else None) for i in range(40)]


@pytest.mark.parametrize("codec", list(CODECS))
def test_decode_kafka_python_v2_batches(codec: str) -> None:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=CODECS[codec],
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=2**20,
    )
    for i, (k, v) in enumerate(SAMPLE):
        builder.append(
            i,
            timestamp=1_600_000_000_000 + i * 3,
            key=k,
            value=v,
            headers=[("a", b"1"), ("a", None)] if i % 3 == 0 else [],
        )
    data = bytes(builder.build())
    rc = decode(data)
    assert rows(rc) == kafka_python_rows(data)
    assert len(rc) == len(SAMPLE) and rc.batch_codec.tolist() == [CODECS[codec]]


@pytest.mark.parametrize("magic,codec", [(m, c) for m, c in MAGIC_CODECS if m < 2])
def test_decode_kafka_python_legacy_message_sets(magic: int, codec: str) -> None:
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=CODECS[codec], batch_size=2**20)
    for i, (k, v) in enumerate(SAMPLE):
        builder.append(i, timestamp=1_600_000_000_000 + i, key=k, value=v)
    data = bytes(builder.build())
    rc = decode(data)
    assert rows(rc) == kafka_python_rows(data)
    assert rc.offset.tolist() == list(range(len(SAMPLE)))  # kafka-python writes wrapper offset 0
    assert rc.next_offset == len(SAMPLE)


@pytest.mark.parametrize("magic,codec", MAGIC_CODECS)
def test_kafka_python_reads_what_we_encode(magic: int, codec: str) -> None:
    keys = [k for k, _ in SAMPLE]
    values = [v for _, v in SAMPLE]
    ts = [1_600_000_000_000 + 11 * i for i in range(len(SAMPLE))]
    headers = [[("h", b"%d" % i), ("h", None)] for i in range(len(SAMPLE))] if magic == 2 else None
    data = kafkawire.encode_records(
        values, keys, timestamps=ts, headers=headers, magic=magic, compression=codec, base_offset=500
    )
    theirs = kafka_python_rows(data)
    assert theirs == rows(decode(data))
    assert [r[0] for r in theirs] == list(range(500, 500 + len(SAMPLE)))
    assert [r[3] for r in theirs] == keys and [r[4] for r in theirs] == values


@pytest.mark.parametrize("magic", [0, 1, 2])
def test_uncompressed_bytes_identical_to_kafka_python(magic: int) -> None:
    if magic == 2:
        builder = DefaultRecordBatchBuilder(
            magic=2,
            compression_type=0,
            is_transactional=False,
            producer_id=-1,
            producer_epoch=-1,
            base_sequence=-1,
            batch_size=2**20,
        )
    else:
        builder = LegacyRecordBatchBuilder(magic=magic, compression_type=0, batch_size=2**20)
    ts = [1_600_000_000_000 + 5 * i for i in range(len(SAMPLE))]
    for i, (k, v) in enumerate(SAMPLE):
        if magic == 2:
            builder.append(i, timestamp=ts[i], key=k, value=v, headers=[])
        else:
            builder.append(i, timestamp=ts[i], key=k, value=v)
    theirs = bytes(builder.build())
    ours = kafkawire.encode_records(
        [v for _, v in SAMPLE], [k for k, _ in SAMPLE], timestamps=ts, magic=magic, partition_leader_epoch=0
    )  # kafka-python leaves the leader epoch at 0
    assert ours == theirs


def test_decode_accepts_any_contiguous_buffer() -> None:
    data = good_batch() + message(12, 1, b"k", b"v")
    want = pure.decode(data, True, -1, False, [])
    assert len(want) == 3
    for variant in (
        bytearray(data),
        memoryview(data),
        np.frombuffer(data, dtype=np.uint8),
        memoryview(data + b"\x00" * 4)[: len(data)],
    ):
        assert pure.decode(variant, True, -1, False, []).equals(want)
