"""Differential tests: the compiled core and the pure reference agree on everything (docs/CODEC-SPEC.md).

Encode: identical bytes. Decode: ``RecordColumns.equals`` (every column, dtype, scalar). Bad input
(mutated, truncated, spliced bytes): the same exception class from both, or the same result from both.
``candidate_impl`` is the compiled core; without it (a checkout that was not built, and
``KAFKAWIRE_REQUIRE_COMPILED`` unset) it is the reference itself, which still checks determinism.
"""

from __future__ import annotations

import struct
from types import ModuleType
from typing import Any

import crc32c
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kafkawire import BinaryColumn, KafkaWireError, RecordColumns

nullable = st.none() | st.binary(max_size=30)


@st.composite
def encode_args(draw: st.DrawFn, magic: int | None = None, codec: int | None = None) -> tuple[Any, ...]:
    """Positional arguments of ``impl.encode`` (see CODEC-SPEC "Encode"), valid for the drawn magic."""
    if magic is None:
        magic = draw(st.sampled_from([0, 1, 2]))
    if codec is None:
        codec = draw(st.integers(min_value=0, max_value=4 if magic == 2 else 3))
    n = draw(st.integers(min_value=1, max_value=10))
    values = BinaryColumn.from_pylist(draw(st.lists(nullable, min_size=n, max_size=n)))
    keys = None if draw(st.booleans()) else BinaryColumn.from_pylist(draw(st.lists(nullable, min_size=n, max_size=n)))
    ts = np.array(
        draw(st.lists(st.integers(min_value=-1, max_value=2**50), min_size=n, max_size=n)), dtype=np.int64
    )
    hoffs = hkeys = hvals = None
    if magic == 2 and draw(st.booleans()):
        counts = draw(st.lists(st.integers(min_value=0, max_value=3), min_size=n, max_size=n))
        hoffs = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
        total = int(hoffs[-1])
        hkeys = BinaryColumn.from_pylist(draw(st.lists(st.binary(max_size=6), min_size=total, max_size=total)))
        hvals = BinaryColumn.from_pylist(draw(st.lists(nullable, min_size=total, max_size=total)))
    base_offset = draw(st.integers(min_value=0, max_value=2**40))
    pid = draw(st.sampled_from([-1, 0, 7, 2**62]))
    epoch = -1 if pid < 0 else draw(st.integers(min_value=0, max_value=2**15 - 1))
    seq = -1 if pid < 0 else draw(st.integers(min_value=0, max_value=2**31 - 1))
    transactional = pid >= 0 and draw(st.booleans())
    leader_epoch = draw(st.integers(min_value=-1, max_value=2**31 - 1))
    return (values, keys, ts, hoffs, hkeys, hvals, base_offset, magic, codec, pid, epoch, seq, transactional,
            leader_epoch)


def outcome(impl: ModuleType, data: bytes, verify_crc: bool = True, fetch_offset: int = -1,
            read_committed: bool = False, aborted: list[tuple[int, int]] | None = None) -> RecordColumns | type:
    """The decode result, or the class of the exception (which must be a KafkaWireError)."""
    try:
        return impl.decode(data, verify_crc, fetch_offset, read_committed, aborted or [])
    except KafkaWireError as exc:
        return type(exc)


def assert_same_outcome(a: RecordColumns | type, b: RecordColumns | type) -> None:
    if isinstance(a, type) or isinstance(b, type):
        assert a is b, f"reference gave {a!r}, candidate gave {b!r}"
    else:
        assert a.equals(b), f"decoded columns differ: {a!r} vs {b!r}"


# --------------------------------------------------------------------------------------------------
# Encode and decode of valid input


@given(args=encode_args())
def test_encode_identical_and_decode_equal(reference: ModuleType, candidate_impl: ModuleType, args: tuple) -> None:
    ref_bytes = reference.encode(*args)
    assert candidate_impl.encode(*args) == ref_bytes
    for verify in (True, False):
        assert_same_outcome(outcome(reference, ref_bytes, verify), outcome(candidate_impl, ref_bytes, verify))


@pytest.mark.parametrize("magic,codec", [(m, c) for m in (0, 1, 2) for c in range(5 if m == 2 else 4)])
def test_every_codec_identical(reference: ModuleType, candidate_impl: ModuleType, magic: int, codec: int) -> None:
    """Compressed bytes are identical too (both go through kafkawire.compression with the same settings)."""
    n = 200
    values = BinaryColumn.from_pylist([b"value-%d " % i * (i % 9) for i in range(n)])
    keys = BinaryColumn.from_pylist([None if i % 4 == 0 else b"k%d" % i for i in range(n)])
    ts = np.arange(1_700_000_000_000, 1_700_000_000_000 + n, dtype=np.int64)
    args = (values, keys, ts, None, None, None, 42, magic, codec, -1, -1, -1, False, -1)
    data = reference.encode(*args)
    assert candidate_impl.encode(*args) == data
    assert reference.encode(*args) == data  # deterministic (no gzip mtime, no random dictionary)
    ref, cand = reference.decode(data, True, -1, False, []), candidate_impl.decode(data, True, -1, False, [])
    assert ref.equals(cand) and len(ref) == n


@given(args=encode_args(), fetch=st.integers(min_value=-1, max_value=2**40 + 12))
def test_fetch_offset_agrees(reference: ModuleType, candidate_impl: ModuleType, args: tuple, fetch: int) -> None:
    data = reference.encode(*args)
    base = args[6]
    for f in (fetch, base + fetch % 12):
        assert_same_outcome(outcome(reference, data, True, f), outcome(candidate_impl, data, True, f))


@given(args=encode_args(magic=2), base=st.integers(min_value=-(2**63), max_value=2**63 - 1))
@example(args=None, base=-(2**63))
def test_any_base_offset_agrees(reference: ModuleType, candidate_impl: ModuleType, args: tuple | None,
                                base: int) -> None:
    """The base offset is outside the CRC, so any int64 is a valid batch (offsets wrap as Java longs)."""
    if args is None:
        args = (BinaryColumn.from_pylist([b"a", b"b"]), None, np.zeros(2, np.int64), None, None, None, 0, 2, 0,
                -1, -1, -1, False, -1)
    data = bytearray(reference.encode(*args))
    struct.pack_into(">q", data, 0, base)
    ref = outcome(reference, bytes(data))
    assert isinstance(ref, RecordColumns) and len(ref) == len(args[0])  # no fetch offset: nothing dropped
    assert_same_outcome(ref, outcome(candidate_impl, bytes(data)))


# --------------------------------------------------------------------------------------------------
# Bad input: same exception class


@st.composite
def corrupted(draw: st.DrawFn) -> bytes:
    """A valid entry (or two) damaged the way networks, disks and hostile peers damage bytes."""
    data = bytearray(draw(st.builds(lambda a: _encode_ref(a), encode_args())))
    if draw(st.booleans()):
        data += _encode_ref(draw(encode_args()))
    kind = draw(st.sampled_from(["flip", "set", "truncate", "insert", "delete", "fix_crc"]))
    pos = draw(st.integers(min_value=0, max_value=len(data) - 1))
    if kind == "flip":
        data[pos] ^= draw(st.integers(min_value=1, max_value=255))
    elif kind == "set":
        width = draw(st.sampled_from([1, 2, 4]))
        pos = min(pos, len(data) - width)
        value = draw(st.sampled_from([0, 0x7F, 0x80, 0xFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]))
        data[pos : pos + width] = (value & ((1 << (8 * width)) - 1)).to_bytes(width, "big")
    elif kind == "truncate":
        del data[pos:]
    elif kind == "insert":
        data[pos:pos] = draw(st.binary(min_size=1, max_size=4))
    elif kind == "delete":
        del data[pos : pos + draw(st.integers(min_value=1, max_value=4))]
    else:
        # Damage past the CRC and then fix the CRC (a hostile peer): parsing must catch it.
        if len(data) > 61 and data[16] == 2:
            p = draw(st.integers(min_value=21, max_value=len(data) - 1))
            data[p] ^= draw(st.integers(min_value=1, max_value=255))
            end = 12 + struct.unpack_from(">i", data, 8)[0]
            if 21 <= end <= len(data):
                struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:end])))
    return bytes(data)


_REF: ModuleType | None = None


def _encode_ref(args: tuple) -> bytes:
    global _REF
    if _REF is None:
        import kafkawire._pure.codec as ref

        _REF = ref
    return _REF.encode(*args)


@settings(max_examples=300)
@given(data=corrupted(), verify=st.booleans())
@example(data=b"\x00" * 11, verify=True)
@example(data=b"\x00" * 12, verify=True)
@example(data=b"\x00" * 8 + b"\xff\xff\xff\xff" + b"\x00" * 60, verify=False)
def test_corrupt_input_same_exception(
    reference: ModuleType, candidate_impl: ModuleType, data: bytes, verify: bool
) -> None:
    assert_same_outcome(outcome(reference, data, verify), outcome(candidate_impl, data, verify))


@given(data=st.binary(max_size=200), verify=st.booleans())
def test_random_bytes_same_exception(
    reference: ModuleType, candidate_impl: ModuleType, data: bytes, verify: bool
) -> None:
    assert_same_outcome(outcome(reference, data, verify), outcome(candidate_impl, data, verify))


@given(buf=st.binary(max_size=14), pos=st.integers(min_value=0, max_value=3))
def test_varint_decoders_agree(reference: ModuleType, candidate_impl: ModuleType, buf: bytes, pos: int) -> None:
    for name in ("decode_varint", "decode_varlong", "decode_unsigned_varint"):
        results = []
        for impl in (reference, candidate_impl):
            try:
                results.append(getattr(impl, name)(buf, pos))
            except KafkaWireError as exc:  # past the end, too long, overflow: CorruptRecordError only
                results.append(type(exc))
        assert results[0] == results[1], name


@given(n=st.integers(min_value=-(2**64), max_value=2**64))
def test_varint_encoders_agree(reference: ModuleType, candidate_impl: ModuleType, n: int) -> None:
    for name in ("encode_varint", "encode_varlong", "encode_unsigned_varint"):
        results = []
        for impl in (reference, candidate_impl):
            try:
                results.append(getattr(impl, name)(n))
            except ValueError as exc:  # out of range is ValueError in both (CODEC-SPEC), never OverflowError
                results.append(type(exc))
        assert results[0] == results[1], name


@given(data=st.binary(max_size=2000), start=st.integers(min_value=0, max_value=2**32 - 1))
def test_crcs_agree(reference: ModuleType, candidate_impl: ModuleType, data: bytes, start: int) -> None:
    for name in ("crc32", "crc32c"):
        assert getattr(reference, name)(data, start) == getattr(candidate_impl, name)(data, start)
        assert getattr(reference, name)(data) == getattr(candidate_impl, name)(memoryview(data))


# --------------------------------------------------------------------------------------------------
# Transactions (read_committed)


def control_batch(impl: ModuleType, base_offset: int, pid: int, epoch: int, kind: int, version: int = 0) -> bytes:
    """An end-transaction marker as a broker writes it: key ``int16 version, int16 type`` (0 abort, 1 commit)."""
    key = BinaryColumn.from_pylist([struct.pack(">hh", version, kind)])
    value = BinaryColumn.from_pylist([struct.pack(">hi", 0, 1)])
    ts = np.array([1_700_000_000_000], dtype=np.int64)
    b = bytearray(impl.encode(value, key, ts, None, None, None, base_offset, 2, 0, pid, epoch, -1, True, -1))
    struct.pack_into(">h", b, 21, struct.unpack_from(">h", b, 21)[0] | 0x20)
    struct.pack_into(">I", b, 17, crc32c.crc32c(bytes(b[21:])))
    return bytes(b)


def txn_batch(impl: ModuleType, base_offset: int, pid: int, n: int, codec: int = 0) -> bytes:
    values = BinaryColumn.from_pylist([b"p%d-%d" % (pid, base_offset + i) for i in range(n)])
    ts = np.full(n, 1_700_000_000_000, dtype=np.int64)
    return impl.encode(values, None, ts, None, None, None, base_offset, 2, codec, pid, 0, 0, True, -1)


def txn_fetch(impl: ModuleType) -> tuple[bytes, list[tuple[int, int]]]:
    """Producers 1 (aborted at 0), 2 (committed), 3 (aborted at 10, interleaved), 4 (non-transactional)."""
    parts = [
        txn_batch(impl, 0, 1, 3),  # 0..2 aborted
        txn_batch(impl, 3, 2, 2),  # 3..4 committed
        control_batch(impl, 5, 1, 0, 0),  # 5 ABORT pid 1
        control_batch(impl, 6, 2, 0, 1),  # 6 COMMIT pid 2
        impl.encode(BinaryColumn.from_pylist([b"plain"]), None, np.array([1], np.int64), None, None, None,
                    7, 2, 0, 4, 0, 0, False, -1),  # 7 idempotent, not transactional
        txn_batch(impl, 8, 1, 2, codec=1),  # 8..9 pid 1 again, a new transaction that commits
        txn_batch(impl, 10, 3, 2, codec=3),  # 10..11 aborted
        control_batch(impl, 12, 1, 0, 1),  # 12 COMMIT pid 1
        control_batch(impl, 13, 3, 0, 0),  # 13 ABORT pid 3
        control_batch(impl, 14, 3, 0, 0, version=5),  # 14 unknown marker version: ignored
    ]
    return b"".join(parts), [(3, 10), (1, 0)]  # unsorted on purpose: the public API sorts, impls get sorted


def test_read_committed_semantics(impl: ModuleType) -> None:
    data, aborted = txn_fetch(impl)
    aborted = sorted(aborted, key=lambda e: e[1])
    uncommitted = impl.decode(data, True, -1, False, [])
    assert uncommitted.offset.tolist() == [0, 1, 2, 3, 4, 7, 8, 9, 10, 11]  # control batches never data
    committed = impl.decode(data, True, -1, True, aborted)
    assert committed.offset.tolist() == [3, 4, 7, 8, 9]
    assert committed.value.to_pylist() == [b"p2-3", b"p2-4", b"plain", b"p1-8", b"p1-9"]
    # KAFKA-5443: the next fetch starts after the trailing control batches.
    assert committed.next_offset == uncommitted.next_offset == 15
    assert committed.num_batches == 3 and committed.batch_index.tolist() == [0, 0, 1, 2, 2]


def test_read_committed_agrees(reference: ModuleType, candidate_impl: ModuleType) -> None:
    data, aborted = txn_fetch(reference)
    aborted = sorted(aborted, key=lambda e: e[1])
    for fetch in (-1, 1, 4, 9, 12, 15):
        for rc in (False, True):
            assert_same_outcome(
                outcome(reference, data, True, fetch, rc, aborted),
                outcome(candidate_impl, data, True, fetch, rc, aborted),
            )


@given(cut=st.integers(min_value=0, max_value=2000), flip=st.integers(min_value=0, max_value=2000))
def test_read_committed_damaged_agrees(
    reference: ModuleType, candidate_impl: ModuleType, cut: int, flip: int
) -> None:
    data, aborted = txn_fetch(reference)
    b = bytearray(data[: cut % (len(data) + 1)])
    if b:
        b[flip % len(b)] ^= 0x41
    for verify in (True, False):
        assert_same_outcome(
            outcome(reference, bytes(b), verify, -1, True, sorted(aborted, key=lambda e: e[1])),
            outcome(candidate_impl, bytes(b), verify, -1, True, sorted(aborted, key=lambda e: e[1])),
        )


# --------------------------------------------------------------------------------------------------
# Heavier runs (marked slow: CI runs them, a quick local loop can use -m "not slow")


@pytest.mark.slow
@settings(max_examples=2000)
@given(data=corrupted(), verify=st.booleans())
def test_corrupt_input_same_exception_many(
    reference: ModuleType, candidate_impl: ModuleType, data: bytes, verify: bool
) -> None:
    assert_same_outcome(outcome(reference, data, verify), outcome(candidate_impl, data, verify))


@pytest.mark.slow
@pytest.mark.parametrize("magic,codec", [(m, c) for m in (0, 1, 2) for c in range(5 if m == 2 else 4)])
def test_large_fetch_agrees(reference: ModuleType, candidate_impl: ModuleType, magic: int, codec: int) -> None:
    """20k records in 1000-record batches (buffer growth, many batch rows), encode and decode agree."""
    rng = np.random.default_rng(magic * 10 + codec)
    parts = []
    for b in range(20):
        n = 1000
        sizes = rng.integers(0, 200, n)
        values = BinaryColumn.from_pylist([None if s == 0 else bytes(rng.integers(0, 8, s, np.uint8)) for s in sizes])
        keys = BinaryColumn.from_pylist([b"key-%d" % (b * n + i) for i in range(n)])
        ts = 1_700_000_000_000 + rng.integers(-(10**6), 10**6, n)
        hoffs = hk = hv = None
        if magic == 2:
            counts = rng.integers(0, 3, n)
            hoffs = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
            hk = BinaryColumn.from_pylist([b"h%d" % i for i in range(int(hoffs[-1]))])
            hv = BinaryColumn.from_pylist([None if i % 5 == 0 else b"v" for i in range(int(hoffs[-1]))])
        args = (values, keys, ts.astype(np.int64), hoffs, hk, hv, b * n, magic, codec, -1, -1, -1, False, -1)
        data = reference.encode(*args)
        assert candidate_impl.encode(*args) == data
        parts.append(data)
    fetch = b"".join(parts)
    for verify, fetch_offset in ((True, -1), (False, 12_345)):
        ref = reference.decode(fetch, verify, fetch_offset, False, [])
        assert ref.equals(candidate_impl.decode(fetch, verify, fetch_offset, False, []))
        assert len(ref) == 20_000 - max(fetch_offset, 0)


@given(
    aborted=st.lists(st.tuples(st.integers(min_value=0, max_value=5), st.integers(min_value=0, max_value=16)),
                     max_size=6),
    fetch=st.integers(min_value=-1, max_value=16),
)
def test_read_committed_any_abort_list_agrees(
    reference: ModuleType, candidate_impl: ModuleType, aborted: list[tuple[int, int]], fetch: int
) -> None:
    """Any aborted-transactions list (duplicates, unknown producers, offsets past the data) gives the same rows."""
    data, _ = txn_fetch(reference)
    listed = sorted(aborted, key=lambda e: (e[1], e[0]))  # what records.py passes down
    ref = outcome(reference, data, True, fetch, True, listed)
    assert isinstance(ref, RecordColumns) and ref.next_offset == 15
    assert_same_outcome(ref, outcome(candidate_impl, data, True, fetch, True, listed))


def _ratio_batch(impl: ModuleType, magic: int, codec: int, base: int, n: int, value_size: int,
                 headers: int = 0, fill: bytes = b"\x00") -> bytes:
    """n records whose values are ``value_size`` repeats of ``fill``: compresses far past 4x."""
    values = BinaryColumn.from_pylist([None if i % 7 == 3 else fill * value_size for i in range(n)])
    keys = BinaryColumn.from_pylist([None if i % 5 == 0 else b"key-%d" % i for i in range(n)])
    ts = np.arange(1_700_000_000_000, 1_700_000_000_000 + n, dtype=np.int64)
    hoffs = hk = hv = None
    if headers:
        hoffs = np.arange(0, (n + 1) * headers, headers, dtype=np.int32)
        hk = BinaryColumn.from_pylist([b"h" * (i % 40) for i in range(n * headers)])
        hv = BinaryColumn.from_pylist([None if i % 3 == 0 else fill * (i % 300) for i in range(n * headers)])
    return impl.encode(values, keys, ts, hoffs, hk, hv, base, magic, codec, -1, -1, -1, False, -1)


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_columns_grow_past_the_inflate_guess(reference: ModuleType, candidate_impl: ModuleType, codec: int) -> None:
    """Compressed entries that inflate far past pass 1's reservation, mixed with uncompressed ones.

    The compiled core reserves a guess for compressed entries and grows its columns (records, keys,
    values, header counts and header bytes) while parsing; the result must still equal the reference,
    whatever the order of small and huge entries, with and without a fetch offset.
    """
    legacy_codec = 1 if codec == 4 else codec  # zstd needs magic 2
    parts = [
        _ratio_batch(reference, 2, 0, 0, 10, 20, headers=1),                 # plain, with headers
        _ratio_batch(reference, 2, codec, 10, 300, 4000),                    # ~1000x, no headers yet
        _ratio_batch(reference, 2, codec, 310, 200, 50, headers=3, fill=b"ab"),  # headers appear compressed
        _ratio_batch(reference, 1, 0, 510, 5, 10),                           # legacy plain messages
        _ratio_batch(reference, 1, legacy_codec, 515, 400, 3000),            # legacy wrapper, ~1000x
        _ratio_batch(reference, 0, legacy_codec, 915, 50, 9000),
        _ratio_batch(reference, 2, codec, 965, 2000, 1, headers=2),          # many small records
        _ratio_batch(reference, 2, 0, 2965, 30, 100, headers=2),             # plain again, after growth
    ]
    fetch = b"".join(parts)
    for verify, fetch_offset in ((True, -1), (False, 400), (True, 2964)):
        ref = reference.decode(fetch, verify, fetch_offset, False, [])
        got = candidate_impl.decode(fetch, verify, fetch_offset, False, [])
        assert got.equals(ref)
        assert len(ref) == 2995 - max(fetch_offset, 0)
    # Truncated anywhere inside the big compressed batches: same partial result (or error) from both.
    for cut in range(len(parts[0]) + 1, len(fetch), len(fetch) // 37):
        assert_same_outcome(outcome(reference, fetch[:cut]), outcome(candidate_impl, fetch[:cut]))


def _v2_raw(section: bytes, count: int, codec: int, base_offset: int) -> bytes:
    """A magic-2 batch around a records section written by hand (compressed here with ``codec``)."""
    from kafkawire import compression

    packed = compression.compress(codec, section, 2) if codec else section
    body = struct.pack(">hiqqqhii", codec, count - 1, 1_700_000_000_000, 1_700_000_000_000, -1, -1, -1, count)
    body += packed
    return struct.pack(">qiib", base_offset, 9 + len(body), 0, 2) + struct.pack(">I", crc32c.crc32c(body)) + body


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_record_columns_grow_past_the_guess(reference: ModuleType, candidate_impl: ModuleType, codec: int) -> None:
    """Identical 7-byte records (offset delta 0, null key and value) compress far below 7/4 bytes per
    record, so the record count outgrows pass 1's reservation and the record columns grow too."""
    record = bytes([12, 0, 0, 0, 1, 1, 0])  # length 6, attrs, ts delta 0, offset delta 0, key -1, value -1, 0 headers
    n = 30_000
    fetch = (_v2_raw(record * 10, 10, 0, 0) + _v2_raw(record * n, n, codec, 10)
             + _v2_raw(record * n, n, codec, 20) + _v2_raw(record * 3, 3, 0, 30))
    ref = reference.decode(fetch, True, -1, False, [])
    assert len(ref) == 2 * n + 13
    assert candidate_impl.decode(fetch, True, -1, False, []).equals(ref)


def _gzip_variants(section: bytes) -> list[bytes]:
    """gzip payloads around one records section: one plain member (ours, Python's), optional header fields,
    several members, and members whose trailer lies (ISIZE off by one or huge, CRC wrong)."""
    import gzip
    import io

    from kafkawire import compression

    ours = compression.compress(1, section, 2)
    named = io.BytesIO()
    with gzip.GzipFile(filename="records", mode="wb", fileobj=named, mtime=0) as f:
        f.write(section)
    empty = compression.compress(1, b"", 2)
    half = len(section) // 2
    two = compression.compress(1, section[:half], 2) + compression.compress(1, section[half:], 2)
    out = [ours, gzip.compress(section, mtime=0), named.getvalue(), empty + ours, ours + empty, two,
           ours + b"\x1f\x8b", ours + b"\x00", ours[:-1], ours[:-4], ours[:20]]
    for isize in (len(section) - 1, len(section) + 1, 0, 0xFFFFFFFF, 2 * len(section)):
        out.append(ours[:-4] + struct.pack("<I", isize))
    for i in list(range(10)) + list(range(len(ours) - 8, len(ours))):  # header and trailer, each bit
        for bit in (0x01, 0x08, 0x10, 0x40, 0x80):
            out.append(ours[:i] + bytes([ours[i] ^ bit]) + ours[i + 1:])
    return out


def _frame_variants(codec: int) -> list[bytes]:
    """gzip (codec 1), LZ4 (codec 3) or zstd (codec 4) payloads around one records section: the standard
    frame our encoder writes, the frames other libraries write (content size, checksums, several frames),
    and hostile framings (lying sizes, truncation, trailing bytes, skippable frames)."""
    import cramjam

    from kafkawire import compression

    record = bytes([12, 0, 0, 0, 1, 1, 0])
    section = record * 500
    if codec == 1:
        return _gzip_variants(section)
    ours = compression.compress(codec, section, 2)
    other = bytes(cramjam.lz4.compress(section)) if codec == 3 else bytes(cramjam.zstd.compress(section, level=1))
    skippable = struct.pack("<II", 0x184D2A50, 3) + b"abc"
    out = [ours, other, ours + other[:0], other + other, skippable + ours, ours + skippable, ours + b"\x00",
           ours[:-1], ours[:9], other[:-3]]
    for i in range(min(len(ours), 24)):  # every header byte and the first block's length, each bit
        for bit in (0x01, 0x08, 0x10, 0x40, 0x80):
            out.append(ours[:i] + bytes([ours[i] ^ bit]) + ours[i + 1:])
    return out


@pytest.mark.parametrize("codec", [1, 3, 4])
def test_frame_fast_path_agrees(reference: ModuleType, candidate_impl: ModuleType, codec: int) -> None:
    """The compiled core sizes single plain gzip members and standard LZ4/zstd frames in C (kw_frames.h)
    and inflates them into a reused buffer; on every framing, standard or not, valid or not, it must give
    what the reference gives. Each payload is decoded second in its fetch (pass 2 is where the fast path runs)."""
    record = bytes([12, 0, 0, 0, 1, 1, 0])
    first = _v2_raw(record * 500, 500, codec, 0)
    for payload in _frame_variants(codec):
        body = struct.pack(">hiqqqhii", codec, 499, 1_700_000_000_000, 1_700_000_000_000, -1, -1, -1, 500) + payload
        batch = struct.pack(">qiib", 500, 9 + len(body), 0, 2) + struct.pack(">I", crc32c.crc32c(body)) + body
        fetch = first + batch + first
        for verify in (True, False):
            assert_same_outcome(outcome(reference, fetch, verify), outcome(candidate_impl, fetch, verify))
