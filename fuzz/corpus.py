"""Seed corpora for the fuzz targets, built from real batches and responses.

Sources: the peer-written record vectors in ``tests/vectors/*.bin`` (kafka-python, aiokafka), batches
kafkawire encodes itself (every magic and codec, headers, transactions, control markers), and the
protocol vectors in ``tests/protocol/vectors/kafka_python.json`` plus a default-valued body for every
response API and version. Each seed starts with the option bytes its target reads (``fuzz/targets.py``).

``python -m fuzz.corpus [OUTDIR]`` writes ``OUTDIR/<target>/seed-NNNN`` (default ``build/fuzz-corpus``).
"""

from __future__ import annotations

import base64
import json
import struct
import sys
from pathlib import Path

import kafkawire
from kafkawire import compression

from .targets import RESPONSES, TARGETS, v2_batch

__all__ = ["seeds", "write_corpora"]

ROOT = Path(__file__).resolve().parent.parent
RECORD_VECTORS = ROOT / "tests" / "vectors"
PROTOCOL_VECTORS = ROOT / "tests" / "protocol" / "vectors" / "kafka_python.json"


def _sample_values(n: int) -> list[bytes | None]:
    return [None if i % 5 == 3 else (b"value-%d-" % i) * (i % 4 + 1) for i in range(n)]


def _encoded_sets() -> list[bytes]:
    """Record sets kafkawire writes itself: every magic/codec, keys, headers, producer fields."""
    out = []
    ts = [1_700_000_000_000 + 7 * i for i in range(6)]
    for magic in (0, 1, 2):
        for codec in (0, 1, 2, 3, 4):
            if codec == 4 and magic < 2:
                continue
            for n in (1, 6):
                keys = [b"k%d" % i if i % 2 else None for i in range(n)]
                headers = [[("h", b"x"), ("h2", None)] if i % 3 == 0 else [] for i in range(n)] if magic == 2 else None
                out.append(
                    kafkawire.encode_records(
                        _sample_values(n), keys, timestamps=ts[:n], headers=headers, magic=magic, compression=codec,
                        base_offset=40 + n,
                    )
                )
    out.append(
        kafkawire.encode_records(
            [b"t1", b"t2"], producer_id=3, producer_epoch=1, base_sequence=0, transactional=True, base_offset=10
        )
    )
    # A COMMIT (type 1) and an ABORT (type 0) control batch: key = int16 version 0, int16 type.
    for ctype in (0, 1):
        rec = b"\x00" + b"\x00" + b"\x00" + b"\x08" + struct.pack(">hh", 0, ctype) + b"\x0c" + b"\x00" * 6 + b"\x00"
        rec = bytes([len(rec) * 2]) + rec  # zigzag varint length (< 64)
        out.append(v2_batch(rec, 1, attributes=0x30, base_offset=12, producer_id=3))
    return out


def _record_files() -> list[bytes]:
    return [p.read_bytes() for p in sorted(RECORD_VECTORS.glob("*.bin"))]


def _seeds_records() -> list[bytes]:
    sets = _record_files() + _encoded_sets()
    out = []
    for i, s in enumerate(sets):
        opts = (0x01, 0x03, 0x06, 0x0B)[i % 4]
        out.append(bytes([opts, 11]) + s)
    # Concatenations (mixed magics) and a partial tail.
    out.append(b"\x01\x00" + sets[0] + sets[-3] + sets[-1][:30])
    out.append(b"\x05\x13" + b"".join(_encoded_sets()[-3:]))
    return out


def _seeds_changing() -> list[bytes]:
    """Fetches to rewrite while they decode: the small record seeds, and batches of >= 64 KiB (the size at
    which the compiled core checks CRCs and parses without the GIL)."""
    out = [bytes([0x01, 200, 0x5A]) + s for s in _encoded_sets()[:4]]
    big = [bytes([i % 251]) * 1000 for i in range(100)]  # ~100 KB: one batch above the GIL threshold
    fetch = kafkawire.encode_records(big) + kafkawire.encode_records(big[:70], base_offset=100, compression="gzip")
    for opts, where, mask in ((0x01, 128, 0x01), (0x01, 250, 0xFF), (0x03, 40, 0x10), (0x05, 0, 0x80)):
        out.append(bytes([opts, where, mask]) + fetch)
    return out


def _seeds_legacy() -> list[bytes]:
    out = []
    for magic in (0, 1):
        for n in (1, 3, 6):
            base = 0 if magic == 1 else 100  # magic-1 inner offsets are relative (KIP-31)
            inner = kafkawire.encode_records(_sample_values(n), timestamps=[5 + i for i in range(n)], magic=magic,
                                             base_offset=base)
            for codec in (1, 2, 3):
                opts = 0x01 | (magic << 4) | (codec << 5) | (0x80 if n == 3 and magic == 1 else 0)
                out.append(bytes([opts, n]) + inner)
    # A nested wrapper inside a wrapper (must be rejected: one level only).
    nested = kafkawire.encode_records([b"a", b"b"], magic=1, compression="gzip")
    out.append(bytes([0x01 | 0x10 | (1 << 5), 1]) + nested)
    return out


def _seeds_v2() -> list[bytes]:
    out = []
    for n in (1, 2, 6):
        batch = kafkawire.encode_records(
            _sample_values(n), timestamps=[9 + i for i in range(n)],
            headers=[[("k", b"v")] if i % 2 else [] for i in range(n)],
        )
        section = batch[61:]
        for codec in (0, 1, 2, 3, 4):
            out.append(bytes([codec | (0x08 if n == 2 else 0), n, n - 1]) + section)
    return out


def _seeds_decompress() -> list[bytes]:
    payloads = [b"", b"x", b"abc" * 100, bytes(range(256)) * 40, b"\x00" * 70000] + _encoded_sets()[:4]
    out = []
    for p in payloads:
        for codec in (1, 2, 3, 4):
            for magic in (0, 1, 2) if codec == 3 else (2,):
                out.append(bytes([codec | (magic << 3)]) + compression.compress(codec, p, magic))
    # Raw (non-xerial) snappy as librdkafka writes it.
    import cramjam

    out.append(b"\x12" + bytes(cramjam.snappy.compress_raw(b"raw snappy " * 20)))
    return out


def _seeds_protocol() -> list[bytes]:
    index = {(cls.__name__, v): i for i, (cls, v) in enumerate(RESPONSES)}
    out = []
    for i, (cls, v) in enumerate(RESPONSES):
        out.append(struct.pack(">H", i) + cls().encode_body(v))
    for vec in json.loads(PROTOCOL_VECTORS.read_text()):
        i = index.get((vec["message"], vec["version"]))
        if i is not None:
            out.append(struct.pack(">H", i) + base64.b64decode(vec["bytes"]))
    # Fetch responses carrying real record sets.
    from kafkawire.protocol import FetchResponse

    PD = FetchResponse.PartitionData  # type: ignore[attr-defined]
    for records in _record_files()[:6] + _encoded_sets()[-3:]:
        for v in (4, 11, 12, 16):
            msg = FetchResponse(
                responses=[FetchResponse.FetchableTopicResponse(topic="t", partitions=[PD(
                    partition_index=0, high_watermark=100, records=records,
                )])]
            )
            try:
                body = msg.encode_body(v)
            except kafkawire.KafkaWireError:
                continue
            out.append(struct.pack(">H", index[("FetchResponse", v)]) + body)
    return out


def _seeds_group() -> list[bytes]:
    from kafkawire.client.group.payloads import encode_assignment, encode_subscription

    out = [b"\x00" + encode_subscription(["t"]), b"\x00" + encode_subscription(["a", "topic-b"], b"user")]
    out.append(b"\x01" + encode_assignment({"t": [0, 1, 2]}))
    out.append(b"\x01" + encode_assignment({"a": [5], "b": []}, b"ud"))
    return out


_BUILDERS = {
    "records": _seeds_records,
    "legacy": _seeds_legacy,
    "v2": _seeds_v2,
    "changing": _seeds_changing,
    "decompress": _seeds_decompress,
    "protocol": _seeds_protocol,
    "group": _seeds_group,
    "avro": lambda: __import__("fuzz.avro_target", fromlist=["seeds"]).seeds(),
    "protobuf": lambda: __import__("fuzz.protobuf_target", fromlist=["seeds"]).seeds(),
}
assert set(_BUILDERS) == set(TARGETS)


def seeds(target: str) -> list[bytes]:
    """The seed inputs of ``target``."""
    return _BUILDERS[target]()


def write_corpora(outdir: Path, targets: list[str] | None = None) -> dict[str, Path]:
    """Write each target's seeds under ``outdir/<target>/`` (existing files are kept); return the dirs."""
    dirs = {}
    for name in targets or list(TARGETS):
        d = outdir / name
        d.mkdir(parents=True, exist_ok=True)
        for i, s in enumerate(seeds(name)):
            (d / f"seed-{i:04d}").write_bytes(s)
        dirs[name] = d
    return dirs


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "fuzz-corpus"
    for name, d in write_corpora(out).items():
        print(f"{name}: {len(list(d.iterdir()))} files in {d}")
