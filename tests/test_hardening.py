"""Hostile-input hardening (issue 7): every corruption class gives its documented KafkaWireError, forged
sizes cannot allocate, decodes do not leak, the client refuses oversized responses before reading them,
and a bounded pass of every fuzz target (``fuzz/``) runs in CI.

The long coverage-guided runs under ASan/UBSan are ``./dev fuzz``; docs/SECURITY.md lists the limits.
Runs against whichever codec implementation is active (the compiled core, or the pure reference when
``KAFKAWIRE_PURE=1``).
"""

from __future__ import annotations

import gc
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import tracemalloc
import zlib
from pathlib import Path

import pytest

import kafkawire
from kafkawire import compression, decode_records, encode_records
from kafkawire.errors import (
    CorruptRecordError,
    CrcMismatchError,
    DecompressionError,
    KafkaWireError,
    ProtocolError,
    RecordTooLargeError,
    UnsupportedCodecError,
    UnsupportedMagicError,
)
from kafkawire.protocol import FetchResponse, MetadataResponse

ROOT = Path(__file__).resolve().parent.parent
# The fuzz package lives beside tests/. Appended, not prepended: kafkawire itself must keep coming from
# wherever it was installed (a wheel, for cibuildwheel's test run), not from the source tree.
sys.path.append(str(ROOT))

from fuzz import corpus, targets  # noqa: E402
from fuzz.run import run_mutate  # noqa: E402
from fuzz.targets import fix_crcs, legacy_wrapper, v2_batch  # noqa: E402

# --------------------------------------------------------------------------------------------------
# Builders for hostile inputs
# --------------------------------------------------------------------------------------------------


def zz(n: int) -> bytes:
    """Zigzag varint/varlong, as record fields use."""
    u = (n << 1) ^ (n >> 63)
    u &= (1 << 64) - 1
    out = bytearray()
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def record(body: bytes) -> bytes:
    """A magic-2 record: zigzag length prefix + body (attributes onwards)."""
    return zz(len(body)) + body


def rec_body(key: bytes | None = b"k", value: bytes | None = b"v", headers: bytes = zz(0)) -> bytes:
    k = zz(-1) if key is None else zz(len(key)) + key
    v = zz(-1) if value is None else zz(len(value)) + value
    return b"\x00" + zz(0) + zz(0) + k + v + headers


GOOD_V2 = encode_records([b"a", b"bb", None], [b"k", None, b"kk"], timestamps=[1, 2, 3])
GOOD_V1 = encode_records([b"x", b"y"], timestamps=[5, 6], magic=1)


def set_v2_field(batch: bytes, fmt: str, at: int, value: int) -> bytes:
    """Overwrite a header field and repair the CRC, so the check under test is the one that fires."""
    b = bytearray(batch)
    struct.pack_into(fmt, b, at, value)
    return bytes(fix_crcs(b))


def legacy_msg(magic: int, attributes: int, key: bytes, value: bytes, offset: int = 0) -> bytes:
    """A legacy message with raw (possibly forged) key/value sections and a valid CRC."""
    body = bytes([magic, attributes]) + (struct.pack(">q", 7) if magic == 1 else b"") + key + value
    return struct.pack(">qiI", offset, 4 + len(body), zlib.crc32(body)) + body


def gzip_bomb(size: int) -> bytes:
    return compression.compress(1, b"\x00" * size, 2)


# --------------------------------------------------------------------------------------------------
# The corruption table: each class, the exception it must give
# --------------------------------------------------------------------------------------------------

_control_short_key = v2_batch(record(rec_body(key=b"\x00\x00")), 1, attributes=0x30, producer_id=1)

RECORD_CASES: list[tuple[str, bytes, type[KafkaWireError], dict]] = [
    # --- framing
    ("negative entry length", struct.pack(">qi", 0, -1) + b"\x00" * 60, CorruptRecordError, {}),
    ("entry length below 5", struct.pack(">qi", 0, 4) + b"\x00\x00\x00\x00\x02" + GOOD_V2, CorruptRecordError, {}),
    ("v2 entry shorter than its header", struct.pack(">qiib", 0, 30, 0, 2) + b"\x00" * 26, CorruptRecordError, {}),
    ("unknown magic byte", set_v2_field(GOOD_V2, ">b", 16, 3), UnsupportedMagicError, {}),
    ("negative magic byte", set_v2_field(GOOD_V2, ">b", 16, -1), UnsupportedMagicError, {}),
    ("truncated: no complete entry", GOOD_V2[:-1], RecordTooLargeError, {}),
    ("fewer than 12 bytes", GOOD_V2[:7], RecordTooLargeError, {}),
    # --- checksums
    ("v2 CRC32C mismatch", GOOD_V2[:-1] + bytes([GOOD_V2[-1] ^ 1]), CrcMismatchError, {}),
    ("legacy CRC32 mismatch", GOOD_V1[:-1] + bytes([GOOD_V1[-1] ^ 1]), CrcMismatchError, {}),
    # --- batch header fields
    ("codec id 5-7", set_v2_field(GOOD_V2, ">h", 21, 5), UnsupportedCodecError, {}),
    ("negative recordsCount", set_v2_field(GOOD_V2, ">i", 57, -1), CorruptRecordError, {}),
    ("forged recordsCount 2**31-1", set_v2_field(GOOD_V2, ">i", 57, 0x7FFFFFFF), CorruptRecordError, {}),
    ("recordsCount above the records present", set_v2_field(GOOD_V2, ">i", 57, 4), CorruptRecordError, {}),
    ("recordsCount below the records present (trailing bytes)", set_v2_field(GOOD_V2, ">i", 57, 2),
     CorruptRecordError, {}),
    # --- records
    ("record length varint of 6 bytes", v2_batch(b"\x80\x80\x80\x80\x80\x01" + b"\x00" * 8, 1), CorruptRecordError, {}),
    ("record length varint overflowing 32 bits", v2_batch(b"\xff\xff\xff\xff\x7f" + b"\x00" * 9, 1),
     CorruptRecordError, {}),
    ("negative record length", v2_batch(zz(-3) + rec_body(), 1), CorruptRecordError, {}),
    ("record length past the section", v2_batch(zz(40) + rec_body(), 1), CorruptRecordError, {}),
    ("record shorter than its fields", v2_batch(zz(3) + rec_body(), 1), CorruptRecordError, {}),
    ("record longer than its fields", v2_batch(zz(len(rec_body()) + 1) + rec_body() + b"\x00", 1),
     CorruptRecordError, {}),
    ("timestamp delta varlong of 11 bytes", v2_batch(record(b"\x00" + b"\xff" * 10 + b"\x01" + b"\x00" * 4), 1),
     CorruptRecordError, {}),
    ("key length below -1", v2_batch(record(b"\x00" + zz(0) + zz(0) + zz(-2) + zz(-1) + zz(0)), 1),
     CorruptRecordError, {}),
    ("key length past the record", v2_batch(record(b"\x00" + zz(0) + zz(0) + zz(50) + b"ab"), 1),
     CorruptRecordError, {}),
    ("value length below -1", v2_batch(record(b"\x00" + zz(0) + zz(0) + zz(-1) + zz(-7) + zz(0)), 1),
     CorruptRecordError, {}),
    ("negative header count", v2_batch(record(rec_body(headers=zz(-1))), 1), CorruptRecordError, {}),
    ("forged header count", v2_batch(record(rec_body(headers=zz(0x3FFFFFFF))), 1), CorruptRecordError, {}),
    ("null header key", v2_batch(record(rec_body(headers=zz(1) + zz(-1) + zz(-1))), 1), CorruptRecordError, {}),
    ("header value length below -1", v2_batch(record(rec_body(headers=zz(1) + zz(1) + b"h" + zz(-5))), 1),
     CorruptRecordError, {}),
    # --- compressed sections
    ("garbage gzip section", v2_batch(b"\x1f\x8b\x08garbage", 1, attributes=1), DecompressionError, {}),
    ("garbage snappy section", v2_batch(b"\xff\xff\xff\xff\x0fxx", 1, attributes=2), DecompressionError, {}),
    ("garbage lz4 section", v2_batch(b"\x04\x22\x4d\x18\x60\x40", 1, attributes=3), DecompressionError, {}),
    ("garbage zstd section", v2_batch(b"\x28\xb5\x2f\xfd\x00", 1, attributes=4), DecompressionError, {}),
    ("gzip bomb above the cap", v2_batch(gzip_bomb(3 << 20), 1, attributes=1), DecompressionError, {"cap": 1 << 20}),
    # --- control batches (read_committed parses the marker)
    ("control record key shorter than 4 bytes", _control_short_key, CorruptRecordError,
     {"isolation": "read_committed"}),
    # --- legacy (magic 0/1)
    ("legacy key length below -1", legacy_msg(1, 0, struct.pack(">i", -2), struct.pack(">i", -1)),
     CorruptRecordError, {}),
    ("legacy value past the message", legacy_msg(0, 0, struct.pack(">i", -1), struct.pack(">i", 9) + b"ab"),
     CorruptRecordError, {}),
    ("legacy message longer than its fields", legacy_msg(0, 0, struct.pack(">i", -1), struct.pack(">i", 1) + b"ab"),
     CorruptRecordError, {}),
    ("legacy zstd (codec 4 below magic 2)", legacy_wrapper(b"x", magic=1, attributes=4), UnsupportedCodecError, {}),
    ("legacy codec id 5-7", legacy_wrapper(b"x", magic=1, attributes=6), UnsupportedCodecError, {}),
    ("legacy wrapper with a null value", legacy_wrapper(None, magic=1, attributes=1), CorruptRecordError, {}),
    ("legacy wrapper with no inner message", legacy_wrapper(compression.compress(1, b"", 1), magic=1, attributes=1),
     CorruptRecordError, {}),
    ("nested legacy wrapper (two levels)",
     legacy_wrapper(compression.compress(1, encode_records([b"a"], magic=1, compression="gzip"), 1), magic=1,
                    attributes=1), CorruptRecordError, {}),
    ("inner message with a newer magic than its wrapper",
     legacy_wrapper(compression.compress(1, encode_records([b"a"], magic=1), 0), magic=0, attributes=1),
     CorruptRecordError, {}),
    ("inner magic byte 3",
     legacy_wrapper(compression.compress(1, fix_crcs(set_v2_field(GOOD_V1, ">b", 16, 3)), 1), magic=1, attributes=1),
     UnsupportedMagicError, {}),
    ("inner partial tail", legacy_wrapper(compression.compress(1, GOOD_V1[:-3], 1), magic=1, attributes=1),
     CorruptRecordError, {}),
    ("inner CRC mismatch",
     legacy_wrapper(compression.compress(1, GOOD_V1[:-1] + bytes([GOOD_V1[-1] ^ 1]), 1), magic=1, attributes=1),
     CrcMismatchError, {}),
    ("garbage in a legacy gzip wrapper", legacy_wrapper(b"\x1f\x8bnope", magic=0, attributes=1),
     DecompressionError, {}),
]


@pytest.fixture
def small_cap(monkeypatch):
    monkeypatch.setattr(compression, "MAX_DECOMPRESSED_SIZE", 1 << 20)


@pytest.mark.parametrize("name,data,exc,kw", RECORD_CASES, ids=[c[0] for c in RECORD_CASES])
def test_record_corruption_class(name, data, exc, kw, monkeypatch):
    kw = dict(kw)
    if "cap" in kw:
        monkeypatch.setattr(compression, "MAX_DECOMPRESSED_SIZE", kw.pop("cap"))
    with pytest.raises(exc) as info:
        decode_records(data, **kw)
    # The exact class, not a subclass standing in for another (CrcMismatchError is a CorruptRecordError).
    assert type(info.value) is exc


def test_crc_mismatch_ignored_when_not_verifying():
    bad = bytearray(GOOD_V2)
    bad[17] ^= 0xFF  # the stored CRC32C
    with pytest.raises(CrcMismatchError):
        decode_records(bytes(bad))
    cols = decode_records(bytes(bad), verify_crc=False)
    assert [cols.value[i] for i in range(3)] == [b"a", b"bb", None]


def test_partial_tail_is_not_an_error():
    cols = decode_records(GOOD_V2 + GOOD_V2[:20])
    assert len(cols.offset) == 3 and cols.valid_bytes == len(GOOD_V2)


def test_one_level_legacy_wrapper_decodes():
    """The positive twin of the nesting limit: one wrapper level is the normal compressed legacy set."""
    cols = decode_records(encode_records([b"a", b"b"], magic=1, compression="gzip", base_offset=10))
    assert [cols.value[i] for i in range(2)] == [b"a", b"b"] and list(cols.offset) == [10, 11]


def _lz4_frame(content_size: int | None, blocks: list[bytes]) -> bytes:
    flg = 0x60 | (0x08 if content_size is not None else 0)
    desc = bytes([flg, 0x40]) + (struct.pack("<Q", content_size) if content_size is not None else b"")
    out = b"\x04\x22\x4d\x18" + desc + bytes([compression._lz4_hc(desc)])
    for b in blocks:
        out += struct.pack("<I", len(b)) + b
    return out + b"\x00\x00\x00\x00"


def _zstd_frame(content_size: int, blocks: bytes) -> bytes:
    # FHD: FCS field 8 bytes (flag 3), single segment.
    return struct.pack("<I", 0xFD2FB528) + bytes([0xE0]) + struct.pack("<Q", content_size) + blocks


DECOMPRESS_CASES: list[tuple[str, int, int, bytes, type[KafkaWireError]]] = [
    ("gzip truncated", 1, 2, compression.compress(1, b"abc" * 50, 2)[:-6], DecompressionError),
    ("gzip trailing garbage", 1, 2, compression.compress(1, b"abc", 2) + b"junk", DecompressionError),
    ("gzip bomb", 1, 2, gzip_bomb(4 << 20), DecompressionError),
    ("snappy xerial block length past the payload", 2, 2, b"\x82SNAPPY\x00" + b"\x00" * 8 + struct.pack(">i", 99),
     DecompressionError),
    ("snappy xerial negative block length", 2, 2, b"\x82SNAPPY\x00" + b"\x00" * 8 + struct.pack(">i", -1),
     DecompressionError),
    ("snappy declared length above the cap", 2, 2, b"\xff\xff\xff\xff\x0f" + b"\x00" * 10, DecompressionError),
    ("snappy raw garbage", 2, 2, b"\x10\xff\xff\xff", DecompressionError),
    ("lz4 bad magic", 3, 2, b"\x05\x22\x4d\x18" + b"\x00" * 10, DecompressionError),
    ("lz4 truncated frame", 3, 2, compression.compress(3, b"abc" * 100, 2)[:-5], DecompressionError),
    ("lz4 declared content size above the cap", 3, 2, _lz4_frame(1 << 40, [b"\x00"]), DecompressionError),
    ("lz4 block larger than the frame maximum", 3, 2,
     b"\x04\x22\x4d\x18\x60\x40" + bytes([compression._lz4_hc(b"\x60\x40")]) + struct.pack("<I", 70000),
     DecompressionError),
    ("lz4 bomb (content size lies)", 3, 2, _lz4_frame(64 << 20, [b"\x1f\x00"]), DecompressionError),
    ("zstd reserved header bit", 4, 2, struct.pack("<I", 0xFD2FB528) + b"\x08" + b"\x00" * 8, DecompressionError),
    ("zstd declared content size above the cap", 4, 2, _zstd_frame(1 << 40, b"\x01\x00\x00"), DecompressionError),
    ("zstd content size above what its blocks hold", 4, 2, _zstd_frame(1000, b"\x09\x00\x00" + b"a"),
     DecompressionError),
    ("zstd bomb", 4, 2, compression.compress(4, b"\x00" * (4 << 20), 2), DecompressionError),
    ("zstd with magic 1", 4, 1, compression.compress(4, b"abc", 2), UnsupportedCodecError),
    ("unknown codec id", 6, 2, b"abc", UnsupportedCodecError),
]


@pytest.mark.parametrize("name,codec,magic,payload,exc", DECOMPRESS_CASES, ids=[c[0] for c in DECOMPRESS_CASES])
def test_decompression_corruption_class(name, codec, magic, payload, exc, small_cap):
    with pytest.raises(exc) as info:
        compression.decompress(codec, payload, magic)
    assert type(info.value) is exc


def _metadata_v1_forged_brokers(count: int) -> bytes:
    return struct.pack(">i", count) + b"\x00" * 8


PROTOCOL_CASES: list[tuple[str, type, int, bytes]] = [
    ("truncated body", MetadataResponse, 1, MetadataResponse().encode_body(1)[:-1]),
    ("forged array count 2**31-1", MetadataResponse, 1, _metadata_v1_forged_brokers(0x7FFFFFFF)),
    ("negative non-nullable array count", MetadataResponse, 1, _metadata_v1_forged_brokers(-2)),
    ("negative non-nullable string length",
     MetadataResponse, 1, struct.pack(">i", 1) + struct.pack(">ih", 1, -5) + b"\x00" * 12),
    ("string length past the body", MetadataResponse, 1, struct.pack(">i", 1) + struct.pack(">ih", 1, 300) + b"ab"),
    ("invalid UTF-8 in a string", MetadataResponse, 1,
     struct.pack(">i", 1) + struct.pack(">ih", 1, 2) + b"\xff\xfe" + struct.pack(">ih", 9, -1) + b"\x00" * 8),
    ("compact array count varint of 6 bytes", MetadataResponse, 9, b"\x00\x00\x00\x00" + b"\x80" * 6),
    ("compact count varint overflowing 32 bits", MetadataResponse, 9, b"\x00\x00\x00\x00" + b"\xff\xff\xff\xff\x7f"),
    ("tagged field size past the body", MetadataResponse, 9, MetadataResponse().encode_body(9)[:-1] + b"\x01\x05\x40"),
    ("bytes left after the body", MetadataResponse, 1, MetadataResponse().encode_body(1) + b"\x00"),
    ("version outside the API's range", MetadataResponse, 99, MetadataResponse().encode_body(1)),
    ("fetch records length past the body", FetchResponse, 4,
     FetchResponse(responses=[FetchResponse.FetchableTopicResponse(topic="t", partitions=[
         FetchResponse.PartitionData(records=b"\x00" * 16)])]).encode_body(4)[:-4]),
]


@pytest.mark.parametrize("name,cls,version,body", PROTOCOL_CASES, ids=[c[0] for c in PROTOCOL_CASES])
def test_protocol_corruption_class(name, cls, version, body):
    with pytest.raises(ProtocolError) as info:
        cls.decode(body, version)
    assert type(info.value) is ProtocolError


def test_forged_counts_are_checked_before_allocation():
    """A 2**31-1 count in a few bytes fails fast and allocates nothing of its size (Python + numpy heaps)."""
    inputs = [
        lambda: decode_records(set_v2_field(GOOD_V2, ">i", 57, 0x7FFFFFFF)),
        lambda: decode_records(v2_batch(record(rec_body(headers=zz(0x3FFFFFFF))), 1)),
        lambda: MetadataResponse.decode(_metadata_v1_forged_brokers(0x7FFFFFFF), 1),
        lambda: compression.decompress(2, b"\xff\xff\xff\xff\x0f" + b"\x00" * 10, 2),
    ]
    for fn in inputs:
        fn_ok = False
        tracemalloc.start()
        try:
            fn()
        except KafkaWireError:
            fn_ok = True
        finally:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        assert fn_ok
        assert peak < 1 << 20, peak


# The address-space limit catches every allocation, the compiled core's malloc included, touched or not.
_RLIMIT_SCRIPT = textwrap.dedent(
    """
    import resource, struct, sys
    sys.path.append({root!r})
    import kafkawire
    from kafkawire import compression, decode_records
    from kafkawire.errors import KafkaWireError
    from kafkawire.protocol import MetadataResponse
    from fuzz import corpus, targets
    import importlib.util
    spec = importlib.util.spec_from_file_location("hardening_cases", {here!r})
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    CASES = mod.{cases}
    for s in corpus.seeds("records")[:40]:      # warm-up: lazy imports, numpy, cramjam, pools
        targets.target_records(s)
    for s in corpus.seeds("decompress"):
        targets.target_decompress(s)
    compression.MAX_DECOMPRESSED_SIZE = {cap}
    cases = CASES()
    vm = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
    limit = vm + {headroom}
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    failures = []
    for name, fn, data in cases:
        try:
            fn(data)
        except KafkaWireError:
            pass
        except BaseException as exc:
            failures.append(f"{{name}}: {{type(exc).__name__}} {{exc}}")
    print("FAILURES", failures)
    sys.exit(1 if failures else 0)
    """
)


def HOSTILE_FOR_RLIMIT():  # noqa: N802 - imported by name from the subprocess above
    """(name, function, input): small inputs that forge large sizes; each call must raise a KafkaWireError.

    Inputs are built here, before the address-space limit is set (a bomb's *construction* needs memory).
    """
    lz4_max_blocks = b"\x04\x22\x4d\x18\x60\x40" + bytes([compression._lz4_hc(b"\x60\x40")])
    lz4_max_blocks += (struct.pack("<I", 0x7FFF) + b"\x00" * 0x7FFF) * 4 + b"\x00" * 4  # garbage blocks
    meta = MetadataResponse.decode
    zeros = b"\x00" * (64 << 20)
    return [
        ("v2 forged recordsCount", decode_records, set_v2_field(GOOD_V2, ">i", 57, 0x7FFFFFFF)),
        ("v2 forged header count", decode_records, v2_batch(record(rec_body(headers=zz(0x3FFFFFFF))), 1)),
        ("v2 forged key length", decode_records, v2_batch(record(b"\x00" + zz(0) + zz(0) + zz(0x3FFFFFFF)), 1)),
        ("legacy forged value length", decode_records,
         legacy_msg(1, 0, struct.pack(">i", -1), struct.pack(">i", 0x7FFFFFF0) + b"ab")),
        ("forged entry length (partial)", decode_records, struct.pack(">qi", 0, 0x7FFFFFF0) + b"\x00" * 64),
        ("gzip bomb 64 MiB", decode_records, v2_batch(gzip_bomb(64 << 20), 1, attributes=1)),
        ("zstd bomb 64 MiB", decode_records, v2_batch(compression.compress(4, zeros, 2), 1, attributes=4)),
        ("lz4 bomb 64 MiB", decode_records, v2_batch(compression.compress(3, zeros, 2), 1, attributes=3)),
        ("snappy forged length", lambda d: compression.decompress(2, d, 2), b"\xff\xff\xff\xff\x0f" + b"\x00" * 10),
        ("lz4 forged content size", lambda d: compression.decompress(3, d, 2), _lz4_frame(1 << 40, [b"\x00"])),
        ("lz4 garbage blocks", lambda d: compression.decompress(3, d, 2), lz4_max_blocks),
        ("zstd forged content size", lambda d: compression.decompress(4, d, 2), _zstd_frame(1 << 40, b"\x01\x00\x00")),
        ("protocol forged array count", lambda d: meta(d, 1), _metadata_v1_forged_brokers(0x7FFFFFFF)),
    ]


def test_forged_sizes_fit_in_a_small_address_space():
    """Under RLIMIT_AS = (current size + 48 MiB), forged sizes and bombs give KafkaWireError, never MemoryError.

    The cap is 16 MiB here: decompressed output (bounded by the cap) plus the columns it yields must fit.
    """
    _run_under_rlimit("HOSTILE_FOR_RLIMIT", cap=16 << 20, headroom=48 << 20)


def _run_under_rlimit(cases: str, cap: int, headroom: int) -> None:
    script = _RLIMIT_SCRIPT.format(root=str(ROOT), here=__file__, cap=cap, headroom=headroom, cases=cases)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    # cwd outside the source tree, so that `python -c` does not import kafkawire from it.
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120,
                          cwd=tempfile.gettempdir())
    assert proc.returncode == 0, proc.stdout + proc.stderr


def MANY_BOMBS():  # noqa: N802 - imported by name from the subprocess
    """One fetch of 8 batches, each a gzip bomb inflating to the 16 MiB cap (16 KiB each on the wire)."""
    bomb = gzip_bomb(16 << 20)
    data = b"".join(v2_batch(bomb, 1, attributes=1, base_offset=i) for i in range(8))
    return [("8 gzip bombs in one fetch", decode_records, data)]


def test_bombs_in_one_fetch_do_not_add_up():
    """The cap bounds one batch; N bombs in one fetch must not hold N x cap bytes at once.

    Both implementations inflate, parse and drop one batch at a time (peak ~ one cap). The compiled
    core used to inflate every batch in its first pass and keep the buffers for the second, so garbage
    cost N x cap before it was found (20 x 16 MiB bombs, 320 KiB on the wire -> +320 MiB RSS).
    """
    _run_under_rlimit("MANY_BOMBS", cap=16 << 20, headroom=48 << 20)


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_repeated_decodes_keep_rss_and_objects_flat():
    """1e5 decode calls (successes and errors alike) do not grow RSS or the live-object count."""
    n = 100_000 if kafkawire.compiled else 10_000  # the pure reference is ~50x slower; same property
    good = encode_records([b"value-%d" % i for i in range(8)], [b"k"] * 8, timestamps=list(range(8)),
                          headers=[[("h", b"x")]] * 8)
    gz = encode_records([b"z" * 50] * 4, timestamps=[1] * 4, compression="gzip")
    legacy = encode_records([b"a", b"b"], magic=1, compression="snappy")
    bad_crc = good[:-1] + bytes([good[-1] ^ 1])
    bad_count = set_v2_field(good, ">i", 57, 0x7FFFFFFF)
    meta = MetadataResponse().encode_body(9)

    def once(i: int) -> None:
        kind = i % 6
        try:
            if kind == 0:
                decode_records(good)
            elif kind == 1:
                decode_records(gz)
            elif kind == 2:
                decode_records(legacy, fetch_offset=1)
            elif kind == 3:
                decode_records(bad_crc)
            elif kind == 4:
                decode_records(bad_count)
            else:
                MetadataResponse.decode(meta[:-2], 9)
        except KafkaWireError:
            pass

    # Warm-up round: caches, the buffer pool and allocator arenas reach their steady state (inside a long
    # test session that can take a whole round: one-off growth is not a leak, so it is not measured).
    for i in range(n):
        once(i)
    gc.collect()
    rss0, objs0 = _rss_bytes(), len(gc.get_objects())
    for i in range(n):
        once(i)
    gc.collect()
    rss1, objs1 = _rss_bytes(), len(gc.get_objects())
    # A leak grows every round: even 40 bytes per call would be 4 MB here; allow allocator noise.
    assert rss1 - rss0 < 3 << 20, (rss0, rss1)
    assert objs1 - objs0 < 200, (objs0, objs1)


# --------------------------------------------------------------------------------------------------
# Client: the response size limit is enforced before the body is read
# --------------------------------------------------------------------------------------------------


class _OneShotServer:
    """A loopback server that answers the first request with ``reply`` and keeps the socket open."""

    def __init__(self, reply: bytes) -> None:
        self.reply = reply
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(self.reply)
            self.done.wait(10)

    def close(self) -> None:
        self.done.set()
        self.sock.close()
        self.thread.join(5)


def _send_and_receive(reply_for_cid, max_response_bytes: int):
    from kafkawire.client.net.connection import BrokerConnection

    server = _OneShotServer(reply_for_cid(1))
    try:
        conn = BrokerConnection("127.0.0.1", server.port, max_response_bytes=max_response_bytes,
                                request_timeout_ms=5000).connect(negotiate=False)
        cid = conn.next_correlation_id()
        assert cid == 1
        body = struct.pack(">hhi", 3, 0, cid) + b"\x00\x01x" + b"\x00\x00\x00\x00"
        conn.send_frame(struct.pack(">i", len(body)) + body, cid)
        t0 = time.monotonic()
        try:
            return conn.receive(cid), time.monotonic() - t0, conn
        except BaseException as exc:
            exc.elapsed = time.monotonic() - t0  # type: ignore[attr-defined]
            exc.conn = conn  # type: ignore[attr-defined]
            raise
    finally:
        server.close()


def test_client_refuses_an_oversized_response_before_reading_it():
    from kafkawire.client.errors import ResponseTooLargeError

    limit = 64 << 20
    tracemalloc.start()
    try:
        with pytest.raises(ResponseTooLargeError) as info:
            # Announce one byte over the limit, send only the correlation id: the body is never awaited.
            _send_and_receive(lambda cid: struct.pack(">ii", limit + 1, cid), limit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(info.value, ProtocolError)
    assert info.value.elapsed < 2.0  # not a 5 s wait for a body that never comes
    assert peak < 1 << 20  # nothing of the announced size was allocated
    assert not info.value.conn.connected  # the stream is out of sync: the connection is dropped


@pytest.mark.parametrize("size", [-1, 0, 3])
def test_client_rejects_response_sizes_below_a_correlation_id(size):
    with pytest.raises(ProtocolError):
        _send_and_receive(lambda cid: struct.pack(">i", size) + b"\x00" * 8, 1 << 20)


def test_client_allocation_follows_the_bytes_received():
    """Within the limit, a peer announcing N bytes and sending a handful should not cost N bytes of memory."""
    from kafkawire.client.errors import KafkaConnectionError

    limit = 64 << 20
    tracemalloc.start()
    try:
        with pytest.raises((KafkaConnectionError, KafkaWireError)):
            _send_and_receive(lambda cid: struct.pack(">ii", limit, cid), limit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, peak


# --------------------------------------------------------------------------------------------------
# Fuzz targets: a bounded pass of each (CI), and every crash found so far as a regression
# --------------------------------------------------------------------------------------------------

#: Inputs that once broke a target (file: fuzz/regressions.json, hex-encoded); each must now pass.
REGRESSIONS = json.loads((ROOT / "fuzz" / "regressions.json").read_text())


FIXED = [c for c in REGRESSIONS if "open" not in c]
OPEN = [c for c in REGRESSIONS if "open" in c]
#: Targets whose bounded pass still finds an open bug within seconds (strict xfail: flips when fixed).
OPEN_TARGETS = {c["target"] for c in OPEN}


def test_fuzz_regressions(small_cap):
    """Every fixed input in fuzz/regressions.json (crashes and invariant failures once found) passes."""
    for case in FIXED:
        assert case["target"] in targets.TARGETS, case
        try:
            targets.TARGETS[case["target"]](bytes.fromhex(case["input"]))
        except BaseException as exc:
            pytest.fail(f"regression {case['id']}: {type(exc).__name__}: {exc}")


if OPEN:  # only while fuzz/regressions.json lists open bugs (none at the moment)

    @pytest.mark.parametrize(
        "case",
        [pytest.param(c, marks=pytest.mark.xfail(strict=True, raises=targets.InvariantViolation, reason=c["open"]))
         for c in OPEN],
        ids=[c["id"] for c in OPEN],
    )
    def test_fuzz_open_bug(case, small_cap):
        """Bugs found by fuzzing in files this suite does not own: fails (xfail) until fixed, then
        XPASS-strict tells whoever fixed it to drop the "open" key from fuzz/regressions.json."""
        targets.TARGETS[case["target"]](bytes.fromhex(case["input"]))


@pytest.mark.parametrize(
    "target",
    [pytest.param(t, marks=pytest.mark.xfail(strict=True, raises=targets.InvariantViolation, reason="open bug"))
     if t in OPEN_TARGETS else t for t in sorted(targets.TARGETS)],
)
def test_fuzz_target_bounded_pass(target, small_cap):
    """Each target: its seed corpus, then deterministic mutations, for ~3 s (about 15 s for all five)."""
    pool = corpus.seeds(target)
    try:
        done = run_mutate(targets.TARGETS[target], pool, runs=200_000, max_time=3.0, seed=7)
    except targets.InvariantViolation as exc:
        if target in OPEN_TARGETS:
            raise
        pytest.fail(f"{target}: {exc}\ninput (hex): {exc.fuzz_input.hex()}")  # type: ignore[attr-defined]
    assert done >= len(pool)  # at least every seed ran (the pure reference is slower)


# --------------------------------------------------------------------------------------------------
# Arguments (not bytes): ValueError, the same in both implementations
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fetch_offset", [2**63, -(2**63) - 1])
def test_fetch_offset_outside_int64_is_a_value_error(fetch_offset):
    with pytest.raises(ValueError):
        decode_records(GOOD_V2, fetch_offset=fetch_offset)
