"""Codec benchmarks: kafkawire against kafka-python and aiokafka on the same bytes, in the same run.

Run (about 3-4 minutes on 2 cores)::

    .venv/bin/python -m pytest benchmarks/bench_codec.py --benchmark-only

The terminal summary prints a Markdown table (records/s and cost relative to kafkawire per group); see
benchmarks/README.md for a recorded run. Decoding peers do what their consumers do with a fetch: iterate
``MemoryRecords`` batch by batch, check each batch's CRC (``check_crcs=True`` is both consumers'
default; "-nocrc" rows skip it), and read ``key``, ``value`` and ``headers`` of every record. kafkawire
decodes the whole fetch into columns in one call. kafka-python is pure Python and ~100x slower, so it
decodes a slice of the same bytes (the first batches) and is compared per record.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from functools import cache
from typing import Any

import cramjam
import crc32c
import numpy as np
import pytest
from aiokafka.record._crecords import DefaultRecordBatchBuilder as AioDefaultBuilder
from aiokafka.record._crecords import MemoryRecords as AioMemoryRecords
from kafka.record.default_records import DefaultRecordBatchBuilder as KafkaDefaultBuilder
from kafka.record.memory_records import MemoryRecords as KafkaMemoryRecords

import kafkawire
from kafkawire import BinaryColumn, decode_records, encode_records

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
TS0 = 1_700_000_000_000
PER_BATCH = 1000
PEER_ROUNDS = 3
KAFKA_PYTHON_RECORDS = 20_000  # kafka-python decodes ~30k records/s: a slice keeps a round under a second

# --------------------------------------------------------------------------------------------------
# Payloads (built once per session with kafkawire's encoder; the interop tests prove peers read them)

WORDS = [b"alpha", b"bravo", b"charlie", b"delta", b"echo", b"foxtrot", b"golf", b"hotel", b"india",
         b"juliet", b"kilo", b"lima", b"mike", b"november", b"oscar", b"papa"]


def text_values(n: int, size: int, seed: int) -> list[bytes]:
    """Log-line-like values: random words, so compression ratios are realistic (~2-3x), not degenerate."""
    rng = np.random.default_rng(seed)
    pool = [b" ".join(WORDS[j] for j in rng.integers(0, len(WORDS), size // 3))[:size].ljust(size, b".")
            for _ in range(4096)]
    picks = rng.integers(0, len(pool), n)
    return [pool[p][: size - 12] + b"%012d" % i for i, p in enumerate(picks.tolist())]


@cache
def records(n: int, value_size: int, headers: int) -> tuple[list[bytes], list[bytes], list | None]:
    keys = [b"user-%011d" % i for i in range(n)]  # 16 bytes
    values = text_values(n, value_size, n + value_size)
    hdrs = None
    if headers:
        hdrs = [[("trace-id", b"%016x" % i), ("source", b"svc-%04d" % (i % 1000))][:headers] for i in range(n)]
    return keys, values, hdrs


@cache
def fetch(n: int, value_size: int = 100, codec: str = "none", magic: int = 2, headers: int = 0) -> bytes:
    """``n`` records as a fetch response's records field: batches of 1000 (legacy uncompressed: messages)."""
    keys, values, hdrs = records(n, value_size, headers)
    ts = np.arange(TS0, TS0 + n, dtype=np.int64)
    out = []
    for lo in range(0, n, PER_BATCH):
        hi = min(n, lo + PER_BATCH)
        out.append(
            encode_records(values[lo:hi], keys[lo:hi], timestamps=ts[lo:hi], base_offset=lo, magic=magic,
                           compression=codec, headers=None if hdrs is None else hdrs[lo:hi])
        )
    return b"".join(out)


def prefix_entries(data: bytes, count: int) -> bytes:
    """The first ``count`` entries of a fetch (a slice of the same bytes for slow peers)."""
    pos = 0
    for _ in range(count):
        if pos >= len(data):
            break
        pos += 12 + struct.unpack_from(">i", data, pos + 8)[0]
    return data[:pos]


def entries(data: bytes) -> list[memoryview]:
    mv = memoryview(data)
    out, pos = [], 0
    while pos < len(data):
        end = pos + 12 + struct.unpack_from(">i", data, pos + 8)[0]
        out.append(mv[pos:end])
        pos = end
    return out


# --------------------------------------------------------------------------------------------------
# Decode: one test per (case, contender), since pytest-benchmark times one callable per test


def peer_decode(memory_records: Any, data: bytes, verify: bool) -> int:
    """What kafka-python's / aiokafka's fetcher does per fetch: iterate, check CRC, touch every field."""
    mr = memory_records(data)
    n = 0
    while mr.has_next():
        batch = mr.next_batch()
        if verify and not batch.validate_crc():
            raise AssertionError("CRC")
        for rec in batch:
            rec.key, rec.value, rec.headers  # noqa: B018 - reading the fields is the work being measured
            n += 1
    return n


def _xerial_decompress(p: memoryview) -> int:
    pos, total = 16, 0
    while pos < len(p):
        (length,) = struct.unpack_from(">i", p, pos)
        total += len(cramjam.snappy.decompress_raw(p[pos + 4 : pos + 4 + length]))
        pos += 4 + length
    return total


BARE: dict[str, Callable[[memoryview], int]] = {
    "gzip": lambda p: len(cramjam.gzip.decompress(p)),
    "snappy": _xerial_decompress,
    "lz4": lambda p: len(cramjam.lz4.decompress(p)),
    "zstd": lambda p: len(cramjam.zstd.decompress(p)),
}

#: case -> (records, value size, codec, magic, headers, records per entry, also measure without CRC)
DECODE_CASES: dict[str, tuple[int, int, str, int, int, int, bool]] = {
    **{f"1M x 116 B, {c}": (1_000_000, 100, c, 2, 0, PER_BATCH, c == "none") for c in CODECS},
    "100k x 1 KB, none": (100_000, 1024, "none", 2, 0, PER_BATCH, False),
    "200k x 2 headers, none": (200_000, 100, "none", 2, 2, PER_BATCH, False),
    "200k legacy v1, none": (200_000, 100, "none", 1, 0, 1, True),
    "200k legacy v0, none": (200_000, 100, "none", 0, 0, 1, False),
    "200k legacy v1, gzip": (200_000, 100, "gzip", 1, 0, PER_BATCH, False),
    "200k legacy v1, lz4": (200_000, 100, "lz4", 1, 0, PER_BATCH, False),
}


def _decode_params() -> list[Any]:
    out = []
    for case, (_, _, codec, magic, _, _, nocrc) in DECODE_CASES.items():
        names = ["kafkawire", "aiokafka-cython", "kafka-python"]
        if case == "1M x 116 B, none":
            names.append("kafkawire-pure")  # what a silent fallback to the reference would cost
        if nocrc:
            names += ["kafkawire-nocrc", "aiokafka-cython-nocrc", "kafka-python-nocrc"]
        if codec != "none" and magic == 2:
            names.append("cramjam bare decompression")
        out += [pytest.param(case, name, id=f"{case}-{name}") for name in names]
    return out


@pytest.mark.parametrize(("case", "contender"), _decode_params())
def test_decode(measure: Callable[..., Any], case: str, contender: str) -> None:
    n, value_size, codec, magic, headers, per_entry, _ = DECODE_CASES[case]
    data = fetch(n, value_size, codec, magic, headers)
    group = f"decode {case}"
    verify = not contender.endswith("-nocrc")
    if contender == "kafkawire-pure":
        from kafkawire._pure import codec as pure

        count = max(1, KAFKA_PYTHON_RECORDS // per_entry)  # ~30 us/record: the same slice as kafka-python
        part = prefix_entries(data, count)
        measure(group, contender, lambda: len(pure.decode(part, True, -1, False, [])),
                records=min(n, count * per_entry), nbytes=len(part), rounds=PEER_ROUNDS, warmup=0)
    elif contender.startswith("kafkawire"):
        assert len(decode_records(data, verify_crc=verify)) == n
        measure(group, contender, lambda: len(decode_records(data, verify_crc=verify)), records=n, nbytes=len(data))
    elif contender.startswith("aiokafka"):
        assert peer_decode(AioMemoryRecords, data, verify) == n
        measure(group, contender, lambda: peer_decode(AioMemoryRecords, data, verify), records=n, nbytes=len(data),
                rounds=PEER_ROUNDS)
    elif contender.startswith("kafka-python"):
        count = max(1, KAFKA_PYTHON_RECORDS // per_entry)  # a slice of the same bytes: first entries
        part = prefix_entries(data, count)
        measure(group, contender, lambda: peer_decode(KafkaMemoryRecords, part, verify),
                records=min(n, count * per_entry), nbytes=len(part), rounds=PEER_ROUNDS, warmup=0)
    else:
        # Only decompressing each batch's records section: the floor for decoding compressed batches.
        payloads = [e[61:] for e in entries(data)]
        bare = BARE[codec]
        assert sum(bare(p) for p in payloads) == len(fetch(n, value_size, "none", magic, headers)) - 61 * len(
            payloads
        )
        measure(group, contender, lambda: sum(bare(p) for p in payloads), records=n, nbytes=len(data))


# --------------------------------------------------------------------------------------------------
# CRCs


@pytest.fixture(scope="module")
def buf16m() -> bytes:
    return np.random.default_rng(1).integers(0, 256, 16 << 20, dtype=np.uint8).tobytes()


CRC_CONTENDERS = {
    "crc32c": {"kafkawire": lambda b: kafkawire.crc32c(b), "crc32c package": crc32c.crc32c},
    "crc32": {"kafkawire": lambda b: kafkawire.crc32(b), "zlib": zlib.crc32},
}


@pytest.mark.parametrize(
    ("kind", "contender"), [(k, c) for k, cs in CRC_CONTENDERS.items() for c in cs], ids=lambda x: str(x)
)
def test_crc(measure: Callable[..., Any], buf16m: bytes, kind: str, contender: str) -> None:
    fn = CRC_CONTENDERS[kind][contender]
    assert fn(buf16m) == (crc32c.crc32c(buf16m) if kind == "crc32c" else zlib.crc32(buf16m))
    measure(f"{kind} 16 MiB", contender, lambda: fn(buf16m), nbytes=len(buf16m), rounds=10)


# --------------------------------------------------------------------------------------------------
# Encode


def _peer_encode(builder_cls: Any, keys: list[bytes], values: list[bytes], codec_id: int) -> int:
    total = 0
    for lo in range(0, len(values), PER_BATCH):
        b = builder_cls(2, codec_id, 0, -1, -1, -1, 1 << 24)
        for i in range(lo, min(len(values), lo + PER_BATCH)):
            b.append(i - lo, timestamp=TS0 + i, key=keys[i], value=values[i], headers=[])
        total += len(b.build())
    return total


ENCODE_CONTENDERS = ["kafkawire", "kafkawire (from lists)", "aiokafka-cython", "kafka-python"]


@pytest.mark.parametrize("contender", ENCODE_CONTENDERS)
@pytest.mark.parametrize("codec", ["none", "lz4"])
def test_encode(measure: Callable[..., Any], codec: str, contender: str) -> None:
    """100k records (16 B key + 100 B value) into 1000-record v2 batches."""
    n = 100_000
    keys, values, _ = records(n, 100, 0)
    ts = np.arange(TS0, TS0 + n, dtype=np.int64)
    codec_id = kafkawire.codec_id(codec)
    group = f"encode 100k x 116 B, {codec}"
    if contender == "kafkawire":
        kcols = [BinaryColumn.from_pylist(keys[lo : lo + PER_BATCH]) for lo in range(0, n, PER_BATCH)]
        vcols = [BinaryColumn.from_pylist(values[lo : lo + PER_BATCH]) for lo in range(0, n, PER_BATCH)]
        tss = [ts[lo : lo + PER_BATCH] for lo in range(0, n, PER_BATCH)]

        def ours_columns() -> int:
            return sum(
                len(encode_records(v, k, timestamps=t, base_offset=j * PER_BATCH, compression=codec))
                for j, (k, v, t) in enumerate(zip(kcols, vcols, tss))
            )

        measure(group, contender, ours_columns, records=n)
    elif contender == "kafkawire (from lists)":

        def ours_lists() -> int:
            return sum(
                len(encode_records(values[lo : lo + PER_BATCH], keys[lo : lo + PER_BATCH],
                                   timestamps=ts[lo : lo + PER_BATCH], base_offset=lo, compression=codec))
                for lo in range(0, n, PER_BATCH)
            )

        measure(group, contender, ours_lists, records=n)
    elif contender == "aiokafka-cython":
        measure(group, contender, lambda: _peer_encode(AioDefaultBuilder, keys, values, codec_id), records=n,
                rounds=PEER_ROUNDS)
    else:
        kn = KAFKA_PYTHON_RECORDS
        measure(group, contender, lambda: _peer_encode(KafkaDefaultBuilder, keys[:kn], values[:kn], codec_id),
                records=kn, rounds=PEER_ROUNDS, warmup=0)
