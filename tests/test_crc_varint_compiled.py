"""CRCs and varints of the codec implementations, with the compiled core's own code paths in mind.

* CRC32 / CRC32C against ``zlib.crc32`` / ``crc32c.crc32c`` for every length 0..4096 at every start
  alignment 0..7, across the 3-way block boundaries of the SSE4.2 loop, with running values, and again with
  the portable slicing-by-8 tables forced on (``_crc_force_software``, where the implementation has it).
* Varint encoders and decoders: boundaries, overflow of the last byte, truncation at every byte, every
  1- and 2-byte input, each compared with the pure reference.
* Decode paths that exist only because the compiled core makes two passes: errors found by the first pass
  must not overtake an earlier entry's error, header columns allocated lazily mid-batch, null masks.

``impl`` runs each test on every implementation that imports (pure, and compiled once built);
``candidate_impl`` is compared with ``reference`` (see conftest.py).
"""

from __future__ import annotations

import os
import random
import struct
import subprocess
import sys
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import crc32c
import numpy as np
import pytest

from kafkawire import BinaryColumn, CorruptRecordError, CrcMismatchError, KafkaWireError, RecordColumns

MAX_LEN = 4096
_RNG = random.Random(20240611)
_DATA = bytes(_RNG.getrandbits(8) for _ in range(MAX_LEN + 64))
# Sizes around the block structure of the compiled CRC32C (3 streams of 256 B, then 3 of 8 KiB) and the
# 64-byte folding step of the PCLMULQDQ CRC32.
_BIG_SIZES = [
    3 * 256 - 1,
    3 * 256,
    3 * 256 + 1,
    3 * 8192 - 1,
    3 * 8192,
    3 * 8192 + 7,
    65535,
    65536,
    65537,
    2 * 3 * 8192 + 3 * 256 + 13,
    (1 << 20) + 3,
]
_BIG = bytes(_RNG.getrandbits(8) for _ in range(max(_BIG_SIZES) + 8))

CRCS: list[tuple[str, Callable[..., int]]] = [("crc32", zlib.crc32), ("crc32c", crc32c.crc32c)]


@contextmanager
def software_crc(impl: ModuleType) -> Iterator[None]:
    """Force the portable CRC tables in implementations that have hardware paths (the compiled core)."""
    force = getattr(impl, "_crc_force_software", None)
    if force is None:
        yield
        return
    force(True)
    try:
        assert impl._crc_implementations() == ("slicing-by-8", "slicing-by-8")
        yield
    finally:
        force(False)


def _check_all_lengths(fn: Callable[..., int], expected: Callable[..., int], starts: range) -> None:
    mv = memoryview(_DATA)
    for start in starts:
        for n in range(MAX_LEN + 1):
            chunk = mv[start : start + n]
            got, want = fn(chunk), expected(chunk)
            if got != want:
                pytest.fail(f"{fn.__name__} wrong for start {start}, length {n}: {got:#010x} != {want:#010x}")


# ----------------------------------------------------------------------------------------------- CRCs


@pytest.mark.parametrize("name,expected", CRCS, ids=[c[0] for c in CRCS])
def test_crc_every_length_every_alignment(impl: ModuleType, name: str, expected: Callable[..., int]) -> None:
    _check_all_lengths(getattr(impl, name), expected, range(8))


@pytest.mark.parametrize("name,expected", CRCS, ids=[c[0] for c in CRCS])
def test_crc_portable_tables_every_length(impl: ModuleType, name: str, expected: Callable[..., int]) -> None:
    with software_crc(impl):
        _check_all_lengths(getattr(impl, name), expected, range(0, 8, 3))
        for size in _BIG_SIZES[:6]:
            assert getattr(impl, name)(_BIG[:size]) == expected(_BIG[:size])


def test_crc_hardware_paths_selected_on_this_cpu(impl: ModuleType) -> None:
    """On an x86 CPU with SSE4.2 and PCLMULQDQ, the compiled core must use them (not silently the tables)."""
    names = getattr(impl, "_crc_implementations", lambda: None)()
    if names is None:
        assert impl.__name__ == "kafkawire._pure.codec"  # the reference has no dispatch to check
        return
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith(("flags", "Features")):
                flags.update(line.split(":", 1)[1].split())
                break
    if {"sse4_2", "pclmulqdq"} <= flags:
        assert names == ("pclmulqdq", "sse4.2")
    elif "crc32" in flags:  # aarch64 "Features: ... crc32"
        assert names in (("armv8-crc", "armv8-crc"), ("slicing-by-8", "slicing-by-8"))
    else:
        assert names == ("slicing-by-8", "slicing-by-8")


@pytest.mark.parametrize("name,expected", CRCS, ids=[c[0] for c in CRCS])
@pytest.mark.parametrize("size", _BIG_SIZES)
def test_crc_large_and_block_boundaries(impl: ModuleType, name: str, expected: Callable[..., int], size: int) -> None:
    fn = getattr(impl, name)
    for start in (0, 1, 5):
        chunk = memoryview(_BIG)[start : start + size]
        assert fn(chunk) == expected(chunk)


@pytest.mark.parametrize("name,expected", CRCS, ids=[c[0] for c in CRCS])
def test_crc_running_value_and_buffer_types(impl: ModuleType, name: str, expected: Callable[..., int]) -> None:
    fn = getattr(impl, name)
    whole = _BIG[:100_003]
    for cut in (0, 1, 63, 64, 65, 4097, 50_000, 100_003):
        assert fn(whole[cut:], fn(whole[:cut])) == expected(whole)
    for value in (0, 1, 0xFFFFFFFF, 0xDEADBEEF, 2**32 + 5, -1):
        assert fn(_DATA[:777], value) == expected(_DATA[:777], value)
    arr = np.frombuffer(_DATA[:1000], dtype=np.uint8)
    for buf in (bytearray(_DATA[:1000]), memoryview(_DATA[:1000]), arr, arr.view(np.uint32)):
        assert fn(buf) == expected(_DATA[:1000])
    assert fn(b"123456789") == {"crc32": 0xCBF43926, "crc32c": 0xE3069283}[name]  # the check values


# --------------------------------------------------------------------------------------------- varints

VARINT_KINDS = [
    ("varint", -(2**31), 2**31 - 1, 5),
    ("varlong", -(2**63), 2**63 - 1, 10),
    ("unsigned_varint", 0, 2**32 - 1, 5),
]
KIND_IDS = [k[0] for k in VARINT_KINDS]


def _boundaries(lo: int, hi: int) -> list[int]:
    vals = {lo, lo + 1, hi - 1, hi, 0, 1}
    for bits in range(1, 64):
        for v in (2**bits - 1, 2**bits, -(2**bits), -(2**bits) - 1, 2**bits // 2):
            if lo <= v <= hi:
                vals.add(v)
    return sorted(vals)


def _result(fn: Callable[..., object], *args: object) -> object:
    try:
        return fn(*args)
    except (KafkaWireError, ValueError, TypeError) as exc:
        return type(exc)


@pytest.mark.parametrize("kind,lo,hi,maxlen", VARINT_KINDS, ids=KIND_IDS)
def test_varint_boundaries_roundtrip_and_match_reference(
    reference: ModuleType, candidate_impl: ModuleType, kind: str, lo: int, hi: int, maxlen: int
) -> None:
    enc, dec = getattr(candidate_impl, f"encode_{kind}"), getattr(candidate_impl, f"decode_{kind}")
    for v in _boundaries(lo, hi):
        b = enc(v)
        assert b == getattr(reference, f"encode_{kind}")(v)
        assert 1 <= len(b) <= maxlen
        assert dec(b) == (v, len(b))
        assert dec(b"\xaa" + b + b"\x00", 1) == (v, 1 + len(b))  # from the middle, extra bytes untouched
    assert len(enc(hi)) == maxlen and len(enc(lo)) == (maxlen if lo else 1)
    for bad in (lo - 1, hi + 1, 2**64, -(2**64)):
        with pytest.raises(ValueError):
            enc(bad)
    for bad_type in (1.0, "1", None):
        with pytest.raises(TypeError):
            enc(bad_type)
    assert enc(np.int64(5)) == enc(5) and enc(True) == enc(1)


@pytest.mark.parametrize("kind,lo,hi,maxlen", VARINT_KINDS, ids=KIND_IDS)
def test_varint_truncated_at_every_byte(
    reference: ModuleType, candidate_impl: ModuleType, kind: str, lo: int, hi: int, maxlen: int
) -> None:
    dec = getattr(candidate_impl, f"decode_{kind}")
    for v in (lo, hi, 300, 2**20):
        b = getattr(reference, f"encode_{kind}")(v)
        for cut in range(len(b)):
            with pytest.raises(CorruptRecordError):
                dec(b[:cut])
            with pytest.raises(CorruptRecordError):
                dec(b"\x00" * 3 + b[:cut], 3)


@pytest.mark.parametrize("kind,lo,hi,maxlen", VARINT_KINDS, ids=KIND_IDS)
def test_varint_overflow_of_last_byte(candidate_impl: ModuleType, kind: str, lo: int, hi: int, maxlen: int) -> None:
    dec = getattr(candidate_impl, f"decode_{kind}")
    limit = 0x0F if maxlen == 5 else 0x01  # payload bits left for the last byte of a 32/64-bit varint
    prefix = b"\xff" * (maxlen - 1)
    assert dec(prefix + bytes([limit]))[1] == maxlen
    for last in (limit + 1, 0x7F, 0x80, 0xFF):
        with pytest.raises(CorruptRecordError):
            dec(prefix + bytes([last]) + b"\x00" * 4)
    # The limit applies before zigzag: 0xFFFFFFFF is a valid raw value for every 5-byte kind.
    raw_max = dec(b"\xff\xff\xff\xff\x0f")[0]
    assert raw_max == {"varint": -(2**31), "unsigned_varint": 2**32 - 1}.get(kind, raw_max)


@pytest.mark.parametrize("kind", KIND_IDS)
def test_varint_positions(reference: ModuleType, candidate_impl: ModuleType, kind: str) -> None:
    dec = getattr(candidate_impl, f"decode_{kind}")
    with pytest.raises(ValueError):
        dec(b"\x02", -1)
    for pos in (1, 2, 100):
        with pytest.raises(CorruptRecordError):
            dec(b"\x02", pos)
    with pytest.raises(CorruptRecordError):
        dec(b"")
    buf = np.frombuffer(b"\x00\x96\x01", dtype=np.uint8)
    for b in (bytes(buf), bytearray(buf), memoryview(bytes(buf)), buf):
        assert dec(b, 1) == getattr(reference, f"decode_{kind}")(bytes(buf), 1)


@pytest.mark.parametrize("kind", KIND_IDS)
def test_varint_decoders_agree_on_every_short_input(
    reference: ModuleType, candidate_impl: ModuleType, kind: str
) -> None:
    ref, cand = getattr(reference, f"decode_{kind}"), getattr(candidate_impl, f"decode_{kind}")
    inputs = [bytes([a]) for a in range(256)] + [bytes([a, b]) for a in range(0x80, 256) for b in range(256)]
    rng = random.Random(7)
    for _ in range(3000):  # long inputs: mostly continuation bytes, so the 5th/10th byte rules are hit
        n = rng.randint(3, 12)
        inputs.append(bytes(rng.choice((0x80, 0xFF, 0x81, rng.getrandbits(8))) for _ in range(n)))
    for b in inputs:
        assert _result(cand, b) == _result(ref, b), b.hex()


# ---------------------------------------------------------------------------------- decode: two passes


def _batch(
    impl: ModuleType,
    values: list[bytes | None],
    base: int = 0,
    keys: list[bytes | None] | None = None,
    headers: list[list[tuple[bytes, bytes | None]]] | None = None,
) -> bytes:
    n = len(values)
    hoffs = hk = hv = None
    if headers is not None:
        hoffs = np.concatenate([[0], np.cumsum([len(h) for h in headers])]).astype(np.int32)
        hk = BinaryColumn.from_pylist([k for h in headers for k, _ in h])
        hv = BinaryColumn.from_pylist([v for h in headers for _, v in h])
    return impl.encode(
        BinaryColumn.from_pylist(values),
        None if keys is None else BinaryColumn.from_pylist(keys),
        np.arange(n, dtype=np.int64) + 1000,
        hoffs,
        hk,
        hv,
        base,
        2,
        0,
        -1,
        -1,
        -1,
        False,
        -1,
    )


def _outcome(impl: ModuleType, data: bytes, fetch_offset: int = -1) -> RecordColumns | type:
    try:
        return impl.decode(data, True, fetch_offset, False, [])
    except KafkaWireError as exc:
        return type(exc)


def _damage_record(batch: bytes) -> bytes:
    """Make the first record's length varint claim more than the batch holds, and fix the CRC."""
    b = bytearray(batch)
    b[61] = 0x7E  # zigzag 63: longer than what is left in a small batch
    struct.pack_into(">I", b, 17, crc32c.crc32c(bytes(b[21:])))
    return bytes(b)


def test_error_in_earlier_entry_wins_over_later_crc_mismatch(reference: ModuleType, candidate_impl: ModuleType) -> None:
    first = _damage_record(_batch(reference, [b"a", b"b"]))
    second = bytearray(_batch(reference, [b"c"], base=2))
    second[-1] ^= 0xFF  # CRC mismatch in the second entry only
    data = first + bytes(second)
    assert _outcome(reference, data) is CorruptRecordError
    assert _outcome(candidate_impl, data) is CorruptRecordError
    assert _outcome(candidate_impl, first + _batch(reference, [b"c"], base=2)) is CorruptRecordError
    assert _outcome(candidate_impl, _batch(reference, [b"x"]) + bytes(second)) is CrcMismatchError


def test_crc_mismatch_reported_before_header_checks_of_the_same_batch(
    reference: ModuleType, candidate_impl: ModuleType
) -> None:
    b = bytearray(_batch(reference, [b"v"] * 3))
    b[22] |= 0x07  # codec 7 (unsupported) without fixing the CRC: the CRC check comes first
    for impl in (reference, candidate_impl):
        assert _outcome(impl, bytes(b)) is CrcMismatchError
    b2 = bytearray(b)
    struct.pack_into(">i", b2, 57, 10**6)  # an impossible record count, CRC still stale
    for impl in (reference, candidate_impl):
        assert _outcome(impl, bytes(b2)) is CrcMismatchError


@pytest.mark.parametrize("fetch_offset", [-1, 0, 3, 5, 6])
def test_headers_first_seen_mid_batch_and_null_masks(
    reference: ModuleType, candidate_impl: ModuleType, fetch_offset: int
) -> None:
    data = _batch(reference, [b"a", None, b"c"], keys=[None, b"k", b""], headers=[[], [], []])
    data += _batch(
        reference,
        [b"d", b"e", None],
        base=3,
        keys=[b"k", None, None],
        headers=[[], [(b"h1", None), (b"h2", b"x")], [(b"h3", b"")]],
    )
    data += _batch(reference, [b"f"], base=6, headers=[[(b"h4", b"y")]])
    ref = reference.decode(data, True, fetch_offset, False, [])
    got = candidate_impl.decode(data, True, fetch_offset, False, [])
    assert got.equals(ref)
    assert [r.headers for r in got] == [r.headers for r in ref]
    assert got.header_offsets.dtype == np.int32 and len(got.header_offsets) == len(got) + 1
    if fetch_offset <= 0:
        assert got.key.to_pylist() == [None, b"k", b"", b"k", None, None, None]
        assert got.value.to_pylist() == [b"a", None, b"c", b"d", b"e", None, b"f"]
        assert got.header_offsets.tolist() == [0, 0, 0, 0, 0, 2, 3, 4]


def test_decoded_columns_are_independent_of_the_input(candidate_impl: ModuleType, reference: ModuleType) -> None:
    buf = bytearray(_batch(reference, [b"value-%d" % i for i in range(50)], keys=[b"k"] * 50))
    cols = candidate_impl.decode(buf, True, -1, False, [])
    buf[:] = b"\x00" * len(buf)  # the columns hold copies, not views of the caller's buffer
    assert cols.value[49] == b"value-49" and cols.key[0] == b"k"
    assert cols.value.data.flags.writeable and len(cols.value.data) == cols.value.nbytes


def _large_fetch(impl: ModuleType, seed: int, batches: int = 4) -> bytes:
    """About 300 KB of batches: large enough that the compiled core puts its columns on pooled buffers."""
    rng = random.Random(seed)
    return b"".join(
        _batch(
            impl,
            [rng.randbytes(rng.randint(50, 150)) for _ in range(500)],
            base=i * 500,
            keys=[rng.randbytes(16) for _ in range(500)],
        )
        for i in range(batches)
    )


def test_results_stay_intact_while_buffers_are_recycled(reference: ModuleType, candidate_impl: ModuleType) -> None:
    first = _large_fetch(reference, 1)
    kept = candidate_impl.decode(first, True, -1, False, [])
    expected_values, expected_offsets = kept.value.to_pylist(), kept.offset.tolist()
    for seed in range(2, 6):  # decode and drop other fetches: their buffers go back to the pool and out again
        other = candidate_impl.decode(_large_fetch(reference, seed), True, -1, False, [])
        assert other.equals(reference.decode(_large_fetch(reference, seed), True, -1, False, []))
        del other
    assert kept.value.to_pylist() == expected_values and kept.offset.tolist() == expected_offsets
    # Arrays kept alone (the rest of the result dropped) keep their own memory too.
    values, offsets = kept.value.data, kept.offset
    del kept
    for seed in range(6, 9):
        candidate_impl.decode(_large_fetch(reference, seed), True, -1, False, [])
    assert offsets.tolist() == expected_offsets
    assert bytes(values) == b"".join(expected_values)


def test_buffer_pool_limit(reference: ModuleType, candidate_impl: ModuleType, tmp_path: Path) -> None:
    pool = getattr(candidate_impl, "_buffer_pool", None)
    data = _large_fetch(reference, 11)
    expected = reference.decode(data, True, -1, False, [])
    if pool is None:  # the reference allocates per call; nothing to configure
        assert candidate_impl.decode(data, True, -1, False, []).equals(expected)
        return
    with pytest.raises(ValueError):
        pool(-1)
    default = 512 << 20
    try:
        assert pool(0) == 0
        got = candidate_impl.decode(data, True, -1, False, [])
        assert got.equals(expected)
        del got
        assert pool() == 0  # disabled: released buffers are freed, not kept
        pool(default)
        del_me = candidate_impl.decode(data, True, -1, False, [])
        del del_me
        cached = pool()
        assert 0 < cached <= default
        again = candidate_impl.decode(data, True, -1, False, [])
        assert pool() < cached  # the next decode of the same size took its buffers from the pool
        assert again.equals(expected)
    finally:
        pool(default)
    # The cap can also be set for a whole process (e.g. Spark executors) through the environment.
    code = (
        "import kafkawire._codec as c, sys;"
        "d = open(sys.argv[1], 'rb').read(); del_me = c.decode(d, True, -1, False, []); del del_me;"
        "print(c._buffer_pool())"
    )
    path = tmp_path / "fetch.bin"
    path.write_bytes(data)
    env = {**os.environ, "KAFKAWIRE_BUFFER_POOL": "0"}
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], env=env, cwd=root, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0"


@pytest.mark.parametrize("fetch_offset", [-1, 10**6])
def test_results_have_every_field_of_the_python_constructors(
    reference: ModuleType, candidate_impl: ModuleType, fetch_offset: int
) -> None:
    """The compiled core builds results without calling ``__init__``: no slot may be left unset."""
    data = _batch(reference, [b"a", None], keys=[b"k", None], headers=[[(b"h", b"v")], []])
    got = candidate_impl.decode(data, True, fetch_offset, False, [])  # 10**6 filters everything out
    for name in RecordColumns.__slots__:
        getattr(got, name)
    for name in RecordColumns.BINARY_COLUMNS:
        col = getattr(got, name)
        assert type(col) is BinaryColumn
        for slot in BinaryColumn.__slots__:
            getattr(col, slot)
        assert col.offsets.dtype == np.int32 and col.data.dtype == np.uint8
    assert type(got) is RecordColumns
    assert got.equals(reference.decode(data, True, fetch_offset, False, []))
    empty = candidate_impl.decode(b"", True, fetch_offset, False, [])
    assert empty.equals(RecordColumns.empty(fetch_offset, 0))
    for name in RecordColumns.RECORD_ARRAYS + RecordColumns.BATCH_ARRAYS:
        assert getattr(empty, name).dtype == getattr(RecordColumns.empty(), name).dtype
