"""Round-trip properties of the public codec API: ``decode_records(encode_records(x))`` gives back ``x``.

Runs against whichever implementation ``kafkawire`` selected (CI runs this file once compiled, once with
``KAFKAWIRE_PURE=1``). Every magic x codec combination is covered, with null/empty keys and values,
duplicate and null-valued headers, extreme timestamps, producer fields, fetch offsets, and LogAppendTime
batches (which producers never write: a broker sets attribute bit 3 and rewrites the CRC, so the tests do
the same to the encoded bytes).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field, replace

import crc32c
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kafkawire
from kafkawire import BinaryColumn, RecordColumns, decode_records, encode_records

MAGIC_CODECS = [(m, c) for m in (0, 1) for c in range(4)] + [(2, c) for c in range(5)]
CODEC_NAMES = ["none", "gzip", "snappy", "lz4", "zstd"]

# --------------------------------------------------------------------------------------------------
# Strategies

small_bytes = st.binary(max_size=40)
nullable_bytes = st.none() | small_bytes
# Kafka timestamps: -1 means "none"; otherwise ms since the epoch. Deltas between any two must fit a
# varlong, and a few must not fit an int32 (kafka-protocol-rs #158 decoded timestampDelta as a varint).
timestamps = st.integers(min_value=0, max_value=2**52) | st.just(-1) | st.just(2**31 + 7)
header_keys = st.text(max_size=8)  # any Unicode, including "" and non-ASCII
headers_lists = st.lists(st.tuples(header_keys, nullable_bytes), max_size=4)


@dataclass
class Batch:
    """What the test asks ``encode_records`` to write."""

    values: list[bytes | None]
    keys: list[bytes | None] | None
    timestamps: list[int]
    headers: list[list[tuple[str, bytes | None]]] | None
    base_offset: int
    producer: dict[str, object] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.values)


@st.composite
def batches(draw: st.DrawFn, magic: int, max_records: int = 12) -> Batch:
    n = draw(st.integers(min_value=1, max_value=max_records))
    values = draw(st.lists(nullable_bytes, min_size=n, max_size=n))
    keys = draw(st.none() | st.lists(nullable_bytes, min_size=n, max_size=n))
    ts = draw(st.lists(timestamps, min_size=n, max_size=n))
    headers = None
    if magic == 2:
        headers = draw(st.none() | st.lists(headers_lists, min_size=n, max_size=n))
        # Duplicate keys are legal and must come back in wire order: force one in every few batches.
        if headers is not None and draw(st.booleans()):
            headers[0] = [*headers[0], ("dup", b"1"), ("dup", None), ("dup", b"")]
    base_offset = draw(st.integers(min_value=0, max_value=2**62))
    producer: dict[str, object] = {}
    if magic == 2 and draw(st.booleans()):
        producer = {
            "producer_id": draw(st.integers(min_value=0, max_value=2**63 - 1)),
            "producer_epoch": draw(st.integers(min_value=0, max_value=2**15 - 1)),
            "base_sequence": draw(st.integers(min_value=0, max_value=2**31 - 1)),
            "transactional": draw(st.booleans()),
            "partition_leader_epoch": draw(st.integers(min_value=-1, max_value=2**31 - 1)),
        }
    return Batch(values, keys, ts, headers, base_offset, producer)


def encode(batch: Batch, magic: int, codec: int) -> bytes:
    return encode_records(
        batch.values,
        batch.keys,
        timestamps=batch.timestamps,
        headers=batch.headers,
        base_offset=batch.base_offset,
        magic=magic,
        compression=CODEC_NAMES[codec],
        **batch.producer,  # type: ignore[arg-type]
    )


# --------------------------------------------------------------------------------------------------
# Broker-side rewrites


def set_log_append_time(data: bytes, when: int | None = None) -> bytes:
    """Mark every entry of ``data`` LogAppendTime the way a broker does, fixing each CRC.

    Magic 2: attribute bit 3, ``maxTimestamp`` = ``when`` (kept when None), CRC32C from +21.
    Magic 1: attribute bit 3 and the message timestamp (the wrapper's for compressed sets), CRC32 from +16.
    """
    b = bytearray(data)
    pos = 0
    while pos < len(b):
        length = struct.unpack_from(">i", b, pos + 8)[0]
        end = pos + 12 + length
        magic = b[pos + 16]
        if magic == 2:
            attrs = struct.unpack_from(">h", b, pos + 21)[0] | 0x08
            struct.pack_into(">h", b, pos + 21, attrs)
            if when is not None:
                struct.pack_into(">q", b, pos + 35, when)
            struct.pack_into(">I", b, pos + 17, crc32c.crc32c(bytes(b[pos + 21 : end])))
        elif magic == 1:
            b[pos + 17] |= 0x08
            if when is not None:
                struct.pack_into(">q", b, pos + 18, when)
            struct.pack_into(">I", b, pos + 12, zlib.crc32(bytes(b[pos + 16 : end])))
        pos = end
    return bytes(b)


# --------------------------------------------------------------------------------------------------
# Field-by-field comparison


def assert_decoded(
    got: RecordColumns,
    batch: Batch,
    magic: int,
    codec: int,
    data: bytes,
    *,
    log_append_time: int | None = None,
    fetch_offset: int | None = None,
) -> None:
    n = len(batch)
    first = 0 if fetch_offset is None else max(0, min(n, fetch_offset - batch.base_offset))
    keep = range(first, n)
    assert len(got) == len(keep)
    assert got.valid_bytes == len(data)
    assert got.next_offset == batch.base_offset + n
    np.testing.assert_array_equal(got.offset, np.arange(batch.base_offset + first, batch.base_offset + n))
    assert got.offset.dtype == np.int64 and got.timestamp.dtype == np.int64
    assert got.timestamp_type.dtype == np.int8

    if magic == 0:
        exp_ts, exp_tt = [-1] * n, [-1] * n
    elif log_append_time is not None:
        if magic == 2 or codec != 0:
            # One batch / one wrapper: every record takes the batch (wrapper) timestamp.
            exp_ts, exp_tt = [log_append_time] * n, [1] * n
        else:
            # Uncompressed v1: each message is its own entry and keeps its own timestamp, now type 1.
            exp_ts, exp_tt = list(batch.timestamps), [1] * n
    else:
        exp_ts, exp_tt = list(batch.timestamps), [0] * n
    assert got.timestamp.tolist() == exp_ts[first:]
    assert got.timestamp_type.tolist() == exp_tt[first:]

    assert got.value.to_pylist() == batch.values[first:]
    exp_keys = [None] * n if batch.keys is None else batch.keys
    assert got.key.to_pylist() == exp_keys[first:]
    exp_headers = [list(h) for h in (batch.headers or [[]] * n)]
    assert [got.headers_of(i) for i in range(len(got))] == exp_headers[first:]
    assert got.header_offsets.dtype == np.int32 and len(got.header_offsets) == len(got) + 1

    # Batch rows: one per v2 batch or compressed wrapper, one per message for uncompressed legacy sets.
    per_message = magic < 2 and codec == 0
    nb = len(keep) if per_message else (1 if keep else 0)
    assert got.num_batches == nb
    if nb:
        assert got.batch_index.tolist() == (list(range(nb)) if per_message else [0] * len(keep))
        assert got.batch_magic.tolist() == [magic] * nb
        assert got.batch_codec.tolist() == [codec] * nb
        if magic == 2:
            p = batch.producer
            assert got.batch_base_offset.tolist() == [batch.base_offset]
            assert got.batch_producer_id.tolist() == [p.get("producer_id", -1)]
            assert got.batch_producer_epoch.tolist() == [p.get("producer_epoch", -1)]
            assert got.batch_base_sequence.tolist() == [p.get("base_sequence", -1)]
            assert got.batch_transactional.tolist() == [p.get("transactional", False)]
            assert got.batch_partition_leader_epoch.tolist() == [p.get("partition_leader_epoch", -1)]
        else:
            expected_base = list(got.offset) if per_message else [batch.base_offset + first]
            assert got.batch_base_offset.tolist() == expected_base
            assert got.batch_producer_id.tolist() == [-1] * nb
            assert got.batch_producer_epoch.tolist() == [-1] * nb
            assert got.batch_base_sequence.tolist() == [-1] * nb
            assert got.batch_partition_leader_epoch.tolist() == [-1] * nb
            assert got.batch_transactional.tolist() == [False] * nb


# --------------------------------------------------------------------------------------------------
# Tests


@pytest.mark.parametrize(("magic", "codec"), MAGIC_CODECS, ids=[f"v{m}-{CODEC_NAMES[c]}" for m, c in MAGIC_CODECS])
@given(data=st.data())
def test_round_trip(magic: int, codec: int, data: st.DataObject) -> None:
    batch = data.draw(batches(magic))
    verify = data.draw(st.booleans())
    encoded = encode(batch, magic, codec)
    assert encoded[16] == magic
    assert_decoded(decode_records(encoded, verify_crc=verify), batch, magic, codec, encoded)


@pytest.mark.parametrize(
    ("magic", "codec"),
    [(m, c) for m, c in MAGIC_CODECS if m >= 1],
    ids=[f"v{m}-{CODEC_NAMES[c]}" for m, c in MAGIC_CODECS if m >= 1],
)
@given(data=st.data())
def test_round_trip_log_append_time(magic: int, codec: int, data: st.DataObject) -> None:
    batch = data.draw(batches(magic))
    broker_time = data.draw(st.integers(min_value=0, max_value=2**50))
    per_message = magic == 1 and codec == 0
    encoded = set_log_append_time(encode(batch, magic, codec), None if per_message else broker_time)
    got = decode_records(encoded, verify_crc=True)  # the rewritten CRC must be accepted
    assert_decoded(got, batch, magic, codec, encoded, log_append_time=broker_time)


@pytest.mark.parametrize(("magic", "codec"), MAGIC_CODECS, ids=[f"v{m}-{CODEC_NAMES[c]}" for m, c in MAGIC_CODECS])
@given(data=st.data())
def test_fetch_offset_drops_earlier_records(magic: int, codec: int, data: st.DataObject) -> None:
    """A fetch can start inside a batch or compressed wrapper: records before it are dropped."""
    batch = data.draw(batches(magic))
    fetch = batch.base_offset + data.draw(st.integers(min_value=-2, max_value=len(batch) + 2))
    encoded = encode(batch, magic, codec)
    got = decode_records(encoded, fetch_offset=fetch)
    assert_decoded(got, batch, magic, codec, encoded, fetch_offset=fetch)


@given(
    parts=st.lists(st.tuples(st.sampled_from(MAGIC_CODECS), batches(2, max_records=5)), min_size=1, max_size=5),
    cut=st.integers(min_value=1, max_value=60),
)
def test_concatenated_fetch_with_partial_tail(
    parts: list[tuple[tuple[int, int], Batch]], cut: int
) -> None:
    """A fetch mixing formats decodes to the concatenation, and a cut-off final entry is ignored."""
    chunks: list[bytes] = []
    expected: list[tuple] = []
    offset = 0
    for (magic, codec), drawn in parts:
        # Copies, not mutation: hypothesis may reuse drawn objects while shrinking.
        if magic < 2:
            batch = replace(drawn, base_offset=offset, headers=None, producer={})
        else:
            batch = replace(drawn, base_offset=offset)
        chunks.append(encode(batch, magic, codec))
        for i in range(len(batch)):
            ts = -1 if magic == 0 else batch.timestamps[i]
            key = None if batch.keys is None else batch.keys[i]
            hs = batch.headers[i] if batch.headers else []
            expected.append((offset + i, ts, key, batch.values[i], [tuple(h) for h in hs]))
        offset += len(batch)
    full = b"".join(chunks)
    got = decode_records(full)
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in got] == expected
    assert (got.next_offset, got.valid_bytes) == (offset, len(full))

    tail = chunks[-1][: min(cut, len(chunks[-1]) - 1)]
    # An uncompressed legacy set is one entry per record, so the cut may leave some of them complete.
    kept_entries, kept_bytes = complete_entries(tail)
    if len(chunks) == 1 and kept_entries == 0:
        with pytest.raises(kafkawire.RecordTooLargeError):
            decode_records(tail)
        return
    cut_last = decode_records(b"".join(chunks[:-1]) + tail)
    n_last = len(parts[-1][1])
    n_kept = len(expected) - n_last + kept_entries
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in cut_last] == expected[:n_kept]
    assert cut_last.valid_bytes == len(full) - len(chunks[-1]) + kept_bytes
    assert cut_last.next_offset == offset - n_last + kept_entries


def complete_entries(data: bytes) -> tuple[int, int]:
    """How many whole ``[offset][length][...]`` entries ``data`` starts with, and their total size."""
    pos = count = 0
    while len(data) - pos >= 12:
        end = pos + 12 + struct.unpack_from(">i", data, pos + 8)[0]
        if end > len(data):
            break
        pos, count = end, count + 1
    return count, pos


@given(batch=batches(2), codec=st.integers(min_value=0, max_value=4))
def test_column_inputs_encode_like_lists(batch: Batch, codec: int) -> None:
    """``BinaryColumn`` and pyarrow inputs are the zero-copy fast path: same bytes as Python lists."""
    import pyarrow as pa

    from_lists = encode(batch, 2, codec)
    cols = Batch(
        BinaryColumn.from_pylist(batch.values),  # type: ignore[arg-type]
        None if batch.keys is None else pa.array(batch.keys, pa.binary()),  # type: ignore[arg-type]
        batch.timestamps,
        batch.headers,
        batch.base_offset,
        batch.producer,
    )
    assert encode(cols, 2, codec) == from_lists
    got = decode_records(from_lists)
    rb = got.to_arrow()
    assert rb.column("value").to_pylist() == batch.values
    assert rb.column("offset").to_pylist() == list(range(batch.base_offset, batch.base_offset + len(batch)))


@pytest.mark.parametrize("codec", range(5), ids=CODEC_NAMES)
def test_large_batch_round_trip(codec: int) -> None:
    """Thousands of records with values of every size class (exercises buffer growth in both cores)."""
    rng = np.random.default_rng(codec)
    n = 3000
    sizes = rng.integers(0, 3000, n)
    values = [bytes(rng.integers(0, 4, s, dtype=np.uint8)) if s % 7 else None for s in sizes.tolist()]
    keys = [b"k%d" % i if i % 5 else None for i in range(n)]
    ts = (1_700_000_000_000 + rng.integers(-10**6, 10**6, n)).tolist()
    headers = [[("h", b"%d" % i)] * (i % 3) for i in range(n)]
    batch = Batch(values, keys, ts, headers, 10**12)
    encoded = encode(batch, 2, codec)
    assert_decoded(decode_records(encoded), batch, 2, codec, encoded)


@pytest.mark.parametrize("n", [-(2**31), -1, 0, 1, 63, 64, 2**31 - 1])
def test_varint_round_trip_edges(n: int) -> None:
    enc = kafkawire.encode_varint(n)
    assert kafkawire.decode_varint(enc + b"\xff", 0) == (n, len(enc))
    assert len(enc) <= 5


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1), st.binary(max_size=3))
def test_varlong_round_trip(n: int, prefix: bytes) -> None:
    enc = kafkawire.encode_varlong(n)
    assert len(enc) <= 10
    assert kafkawire.decode_varlong(prefix + enc, len(prefix)) == (n, len(prefix) + len(enc))


@given(st.integers(min_value=-(2**31), max_value=2**31 - 1))
def test_varint_round_trip(n: int) -> None:
    enc = kafkawire.encode_varint(n)
    assert kafkawire.decode_varint(enc) == (n, len(enc))
    # A varint is a varlong of the same value (zigzag is width independent for in-range values).
    assert kafkawire.decode_varlong(enc) == (n, len(enc))


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_unsigned_varint_round_trip(n: int) -> None:
    enc = kafkawire.encode_unsigned_varint(n)
    assert kafkawire.decode_unsigned_varint(enc) == (n, len(enc))
    assert enc[-1] < 0x80 and all(b >= 0x80 for b in enc[:-1])


@pytest.mark.parametrize(
    ("fn", "bad"),
    [
        ("encode_varint", 2**31),
        ("encode_varint", -(2**31) - 1),
        ("encode_varlong", 2**63),
        ("encode_varlong", -(2**63) - 1),
        ("encode_unsigned_varint", -1),
        ("encode_unsigned_varint", 2**32),
    ],
)
def test_varint_encode_out_of_range(fn: str, bad: int) -> None:
    with pytest.raises(ValueError):
        getattr(kafkawire, fn)(bad)


@given(st.binary(max_size=300), st.integers(min_value=0, max_value=2**32 - 1))
def test_crcs_match_reference_libraries(data: bytes, start: int) -> None:
    assert kafkawire.crc32(data) == zlib.crc32(data)
    assert kafkawire.crc32c(data) == crc32c.crc32c(data)
    assert kafkawire.crc32(data, start) == zlib.crc32(data, start)
    assert kafkawire.crc32c(data, start) == crc32c.crc32c(data, start)
    half = len(data) // 2  # running CRCs compose
    assert kafkawire.crc32c(data[half:], kafkawire.crc32c(data[:half])) == crc32c.crc32c(data)


def test_encode_rejects_what_the_format_cannot_carry() -> None:
    with pytest.raises(ValueError):
        encode_records([b"x"], magic=1, compression="zstd")  # zstd needs magic 2
    with pytest.raises(ValueError):
        encode_records([b"x"], magic=1, headers=[[("h", b"v")]])  # headers need magic 2
    with pytest.raises(ValueError):
        encode_records([], magic=2)
    with pytest.raises(ValueError):
        encode_records([b"x"], magic=3)
    with pytest.raises(ValueError):
        encode_records([b"x"], compression="brotli")
