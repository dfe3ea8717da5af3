"""Regenerate the interop byte vectors in this directory from other Kafka clients' record builders.

Run from the repository root (needs the ``test`` extra: kafka-python, aiokafka, lz4, python-snappy,
zstandard)::

    .venv/bin/python tests/vectors/make_vectors.py

It writes one ``<name>.bin`` per vector and ``manifest.json`` describing each: which library and builder
wrote it, the records that went in, any byte patch applied afterwards to imitate a broker (assigned
offsets, LogAppendTime, leader epoch, a control marker, a partial tail), and the records each peer
decoder returns from it (kafka-python's ``MemoryRecords``, aiokafka's Cython and pure-Python
``MemoryRecords``). The vectors are checked in so ``tests/test_codec_interop.py`` runs offline and keeps
checking against bytes real clients produced, even after those libraries change. Compressed payloads are
not byte-reproducible across library versions (gzip headers, compressor versions), so regenerating
rewrites them; the test only relies on the manifest matching the files, which this script guarantees.

Why the patches: producers never assign offsets, leader epochs, LogAppendTime or control batches; brokers
do, and a consumer decodes what the broker stored. Patching the fields the broker rewrites (and fixing the
CRC where the field is covered by it) is how these byte strings look after a real broker round trip.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import struct
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import crc32c

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.json"

CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
BASE_TS = 1_700_000_000_000

Header = tuple[str, bytes | None]
Rec = tuple[bytes | None, bytes | None, int, list[Header]]  # key, value, timestamp, headers


# --------------------------------------------------------------------------------------------------
# Inputs


def record_set(seed: int, n: int, with_headers: bool) -> list[Rec]:
    """Deterministic records covering nulls, empties, binary bytes, odd timestamps and duplicate headers.

    Values repeat a phrase so every codec actually shrinks the payload: both kafka-python and aiokafka
    silently send a v2 batch uncompressed when compression does not pay, which would defeat the vector.
    """
    rnd = random.Random(seed)
    out: list[Rec] = []
    for i in range(n):
        kind = i % 6
        key: bytes | None
        value: bytes | None
        if kind == 0:
            key, value = b"key-%d" % i, b"value %d " % i * 20
        elif kind == 1:
            key, value = None, b"null key, compressible value " * 8
        elif kind == 2:
            key, value = b"k%d" % i, None
        elif kind == 3:
            key, value = b"", b""
        elif kind == 4:
            key, value = bytes(rnd.randrange(256) for _ in range(9)), b"\x00\xff" * 40
        else:
            key, value = "ключ-%d".encode() % i, ("значение " * 10).encode()
        # Mostly increasing timestamps, one far behind the first (negative varlong delta) and one more
        # than 2**31 ms ahead (a delta that only fits a varlong: kafka-protocol-rs #158).
        ts = BASE_TS + 1000 * i + rnd.randrange(100)
        if i == 3:
            ts = BASE_TS - 86_400_000
        if i == n - 2:
            ts = BASE_TS + 2**33
        headers: list[Header] = []
        if with_headers:
            if kind == 0:
                headers = [("trace", b"abc"), ("trace", b"def")]  # duplicate keys are legal
            elif kind == 2:
                headers = [("ключ", None)]  # non-ASCII key, null value
            elif kind == 4:
                headers = [("", b""), ("bin", bytes(range(16)))]
        out.append((key, value, ts, headers))
    return out


# --------------------------------------------------------------------------------------------------
# Builders of each library


def _peer_modules() -> dict[str, dict[str, Any]]:
    from aiokafka.record import default_records as a_default
    from aiokafka.record import legacy_records as a_legacy
    from aiokafka.record._crecords import DefaultRecordBatchBuilder as ACDefaultBuilder
    from aiokafka.record._crecords import LegacyRecordBatchBuilder as ACLegacyBuilder
    from kafka.record.default_records import DefaultRecordBatchBuilder as KDefaultBuilder
    from kafka.record.legacy_records import LegacyRecordBatchBuilder as KLegacyBuilder

    return {
        "kafka-python": {"default": KDefaultBuilder, "legacy": KLegacyBuilder},
        "aiokafka-cython": {"default": ACDefaultBuilder, "legacy": ACLegacyBuilder},
        "aiokafka-pure": {
            "default": a_default._DefaultRecordBatchBuilderPy,
            "legacy": a_legacy._LegacyRecordBatchBuilderPy,
        },
    }


#: Legacy codecs each producer library can write: aiokafka refuses LZ4 on magic 0 (KAFKA-3160 framing).
LEGACY_CODECS = {
    "kafka-python": {0: (0, 1, 2, 3), 1: (0, 1, 2, 3)},
    "aiokafka-cython": {0: (0, 1, 2), 1: (0, 1, 2, 3)},
    "aiokafka-pure": {0: (0, 1, 2), 1: (0, 1, 2, 3)},
}


def build_v2(
    lib: str,
    recs: list[Rec],
    codec: int,
    *,
    producer: tuple[int, int, int] = (-1, -1, -1),
    transactional: bool = False,
) -> bytes:
    cls = _peer_modules()[lib]["default"]
    pid, epoch, seq = producer
    b = cls(2, codec, int(transactional), pid, epoch, seq, 10 * 1024 * 1024)
    for i, (k, v, ts, hs) in enumerate(recs):
        meta = b.append(i, timestamp=ts, key=k, value=v, headers=list(hs))
        assert meta is not None
    data = bytes(b.build())
    attrs = struct.unpack_from(">h", data, 21)[0]
    assert attrs & 7 == codec, f"{lib} wrote codec {attrs & 7}, wanted {codec}: make the payload compressible"
    return data


def build_legacy(lib: str, recs: list[Rec], magic: int, codec: int) -> bytes:
    cls = _peer_modules()[lib]["legacy"]
    b = cls(magic, codec, 10 * 1024 * 1024)
    for i, (k, v, ts, _hs) in enumerate(recs):
        meta = b.append(i, timestamp=ts, key=k, value=v)
        assert meta is not None
    data = bytes(b.build())
    assert data[17] & 7 == codec
    return data


# --------------------------------------------------------------------------------------------------
# Broker-side patches (fields a broker rewrites; CRCs fixed where the field is covered)


def fix_v2_crc(batch: bytearray, start: int = 0) -> None:
    length = struct.unpack_from(">i", batch, start + 8)[0]
    crc = crc32c.crc32c(bytes(batch[start + 21 : start + 12 + length]))
    struct.pack_into(">I", batch, start + 17, crc)


def patch_v2(
    data: bytes,
    *,
    base_offset: int | None = None,
    leader_epoch: int | None = None,
    log_append_time: int | None = None,
) -> bytes:
    """Assign what a broker assigns: base offset and leader epoch (outside the CRC), LogAppendTime (inside)."""
    b = bytearray(data)
    if base_offset is not None:
        struct.pack_into(">q", b, 0, base_offset)
    if leader_epoch is not None:
        struct.pack_into(">i", b, 12, leader_epoch)
    if log_append_time is not None:
        attrs = struct.unpack_from(">h", b, 21)[0] | 0x08
        struct.pack_into(">h", b, 21, attrs)
        struct.pack_into(">q", b, 35, log_append_time)  # the broker writes its clock into maxTimestamp
        fix_v2_crc(b)
    return bytes(b)


def patch_legacy_wrapper(data: bytes, *, offset: int | None = None, log_append_time: int | None = None) -> bytes:
    """Assign the wrapper offset (outside the CRC) and LogAppendTime (magic 1 only; inside the CRC)."""
    b = bytearray(data)
    if offset is not None:
        struct.pack_into(">q", b, 0, offset)
    if log_append_time is not None:
        assert b[16] == 1
        b[17] |= 0x08
        struct.pack_into(">q", b, 18, log_append_time)
        size = struct.unpack_from(">i", b, 8)[0]
        struct.pack_into(">I", b, 12, zlib.crc32(bytes(b[16 : 12 + size])))
    return bytes(b)


def control_batch(base_offset: int, producer_id: int, epoch: int, commit: bool, ts: int) -> bytes:
    """An end-transaction marker batch as a broker writes it (no builder in either library writes one).

    Key: int16 version 0, int16 type (0 abort, 1 commit); value: int16 version, int32 coordinator epoch.
    """
    from kafka.record.default_records import DefaultRecordBatchBuilder

    b = DefaultRecordBatchBuilder(2, 0, 1, producer_id, epoch, -1, 1 << 20)
    b.append(0, timestamp=ts, key=struct.pack(">hh", 0, 1 if commit else 0), value=struct.pack(">hi", 0, 7),
             headers=[])
    out = bytearray(b.build())
    attrs = struct.unpack_from(">h", out, 21)[0] | 0x20  # bit 5: control
    struct.pack_into(">h", out, 21, attrs)
    struct.pack_into(">q", out, 0, base_offset)
    fix_v2_crc(out)
    return bytes(out)


# --------------------------------------------------------------------------------------------------
# Decoders of each library: what they return from the bytes


def _peer_decoders() -> dict[str, Callable[[bytes], Any]]:
    from aiokafka.record._crecords import MemoryRecords as ACMemoryRecords
    from aiokafka.record.memory_records import _MemoryRecordsPy
    from kafka.record.memory_records import MemoryRecords as KMemoryRecords

    return {"kafka-python": KMemoryRecords, "aiokafka-cython": ACMemoryRecords, "aiokafka-pure": _MemoryRecordsPy}


def _b(x: bytes | None) -> str | None:
    return None if x is None else base64.b64encode(bytes(x)).decode("ascii")


def peer_decode(lib: str, data: bytes) -> dict[str, Any]:
    """Records (data batches only: consumers skip control batches) and batch facts one library reads."""
    mr = _peer_decoders()[lib](data)
    records: list[list[Any]] = []
    batches: list[dict[str, Any]] = []
    pos = 0  # aiokafka's legacy batches do not expose their magic: read it from the entry
    while mr.has_next():
        batch = mr.next_batch()
        if batch is None:
            break
        start, magic = pos, data[pos + 16]
        pos += 12 + struct.unpack_from(">i", data, pos + 8)[0]
        assert batch.validate_crc(), f"{lib}: CRC check failed on its own vector"
        control = bool(getattr(batch, "is_control_batch", False))
        info: dict[str, Any] = {"magic": magic, "control": control}
        if magic == 2:
            info.update(
                base_offset=batch.base_offset,
                next_offset=batch.next_offset,
                producer_id=batch.producer_id,
                producer_epoch=batch.producer_epoch,
                base_sequence=batch.base_sequence,
                transactional=bool(batch.is_transactional),
                codec=batch.compression_type,
            )
        else:
            info["codec"] = data[start + 17] & 7
        batches.append(info)
        if control:
            continue
        for r in batch:
            ts = r.timestamp
            tt = r.timestamp_type
            records.append(
                [
                    r.offset,
                    -1 if ts is None else ts,  # magic 0: no timestamp (None in both libraries)
                    -1 if tt is None else tt,
                    _b(r.key),
                    _b(r.value),
                    [[hk, _b(hv)] for hk, hv in r.headers],
                ]
            )
    return {"records": records, "batches": batches}


# --------------------------------------------------------------------------------------------------
# Assemble


def _inputs_json(recs: list[Rec], magic: int) -> list[list[Any]]:
    return [[_b(k), _b(v), ts if magic else -1, [[hk, _b(hv)] for hk, hv in hs]] for k, v, ts, hs in recs]


def generate() -> list[dict[str, Any]]:
    vectors: list[tuple[str, bytes, dict[str, Any]]] = []
    libs = list(_peer_modules())
    v2_recs = record_set(2, 12, with_headers=True)
    legacy_recs = record_set(1, 12, with_headers=False)

    for li, lib in enumerate(libs):
        for codec in range(5):
            data = build_v2(lib, v2_recs, codec)
            vectors.append(
                (
                    f"{lib}_v2_{CODEC_NAMES[codec]}",
                    data,
                    {"producer": lib, "magic": 2, "codec": codec, "inputs": _inputs_json(v2_recs, 2),
                     "patch": None},
                )
            )
        for magic in (0, 1):
            for codec in LEGACY_CODECS[lib][magic]:
                data = build_legacy(lib, legacy_recs, magic, codec)
                vectors.append(
                    (
                        f"{lib}_v{magic}_{CODEC_NAMES[codec]}",
                        data,
                        {"producer": lib, "magic": magic, "codec": codec,
                         "inputs": _inputs_json(legacy_recs, magic), "patch": None},
                    )
                )
        # Broker-assigned offsets / epoch / LogAppendTime, once per library on a compressed batch.
        codec = (1, 2, 3)[li % 3]
        data = patch_v2(build_v2(lib, v2_recs, codec), base_offset=1_000_000 + li, leader_epoch=5)
        vectors.append(
            (
                f"{lib}_v2_{CODEC_NAMES[codec]}_broker_offsets",
                data,
                {"producer": lib, "magic": 2, "codec": codec, "inputs": _inputs_json(v2_recs, 2),
                 "patch": {"base_offset": 1_000_000 + li, "leader_epoch": 5}},
            )
        )
        data = patch_v2(build_v2(lib, v2_recs, 4 - li), base_offset=77, log_append_time=BASE_TS + 5)
        vectors.append(
            (
                f"{lib}_v2_{CODEC_NAMES[4 - li]}_log_append_time",
                data,
                {"producer": lib, "magic": 2, "codec": 4 - li, "inputs": _inputs_json(v2_recs, 2),
                 "patch": {"base_offset": 77, "log_append_time": BASE_TS + 5}},
            )
        )
        data = build_v2(lib, v2_recs[:5], 1, producer=(4242, 3, 17), transactional=True)
        data = patch_v2(data, base_offset=500)
        data += control_batch(505, 4242, 3, commit=True, ts=BASE_TS + 9)
        vectors.append(
            (
                f"{lib}_v2_transaction_committed",
                data,
                {"producer": lib, "magic": 2, "codec": 1, "inputs": _inputs_json(v2_recs[:5], 2),
                 "patch": {"base_offset": 500, "producer": [4242, 3, 17], "transactional": True,
                           "control_commit_at": 505}},
            )
        )
        # Legacy v1 wrapper with the offset a broker assigns (inner offsets relative, KIP-31) and with
        # LogAppendTime on the wrapper (every inner record takes the wrapper timestamp).
        wrapper = build_legacy(lib, legacy_recs, 1, 1)
        last = 2_000_000 + len(legacy_recs) - 1
        vectors.append(
            (
                f"{lib}_v1_gzip_broker_offsets",
                patch_legacy_wrapper(wrapper, offset=last),
                {"producer": lib, "magic": 1, "codec": 1, "inputs": _inputs_json(legacy_recs, 1),
                 "patch": {"wrapper_offset": last}},
            )
        )
        vectors.append(
            (
                f"{lib}_v1_gzip_log_append_time",
                patch_legacy_wrapper(wrapper, offset=last, log_append_time=BASE_TS + 123),
                {"producer": lib, "magic": 1, "codec": 1, "inputs": _inputs_json(legacy_recs, 1),
                 "patch": {"wrapper_offset": last, "log_append_time": BASE_TS + 123}},
            )
        )

    # A fetch response mixing every format, as a topic upgraded across broker versions stores it, ending
    # in a partial batch (fetches are cut at max_bytes mid-batch).
    recs = legacy_recs[:4]
    parts = [
        build_legacy("kafka-python", recs, 0, 0),  # 4 uncompressed v0 messages at offsets 0..3
        patch_legacy_wrapper(build_legacy("kafka-python", recs, 1, 2), offset=7),  # v1 snappy, 4..7
        patch_v2(build_v2("aiokafka-cython", v2_recs, 3), base_offset=8),  # v2 lz4, 8..19
        patch_v2(build_v2("kafka-python", v2_recs[:3], 0), base_offset=20),  # v2 plain, 20..22
    ]
    # v0 messages carry their own offsets: rewrite them to 0..3 (the builder already did) and keep them.
    full = b"".join(parts)
    tail = patch_v2(build_v2("kafka-python", v2_recs, 4), base_offset=23)
    data = full + tail[: len(tail) // 2]
    vectors.append(
        (
            "mixed_fetch_partial_tail",
            data,
            {"producer": "mixed", "magic": None, "codec": None, "inputs": None,
             "patch": {"valid_bytes": len(full), "next_offset": 23}},
        )
    )

    manifest: list[dict[str, Any]] = []
    for name, data, meta in vectors:
        (HERE / f"{name}.bin").write_bytes(data)
        entry = {"name": name, "file": f"{name}.bin", "sha256": hashlib.sha256(data).hexdigest(), **meta}
        # Each distinct decode result is stored once; ``decoded_by`` maps a library to its result.
        results: list[dict[str, Any]] = []
        entry["decoded_by"] = {}
        for lib in _peer_decoders():
            try:
                result = peer_decode(lib, data)
            except Exception as exc:  # noqa: BLE001 - a peer's own limitation or bug: keep it on record
                result = {"error": f"{type(exc).__name__}: {exc}"}
            if result not in results:
                results.append(result)
            entry["decoded_by"][lib] = results.index(result)
        entry["results"] = results
        manifest.append(entry)
    return manifest


def main() -> int:
    import aiokafka
    import kafka

    for old in HERE.glob("*.bin"):
        old.unlink()
    manifest = generate()
    doc = {
        "generated_with": {"kafka-python": kafka.__version__, "aiokafka": aiokafka.__version__,
                           "python": sys.version.split()[0]},
        "vectors": manifest,
    }
    MANIFEST.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    total = sum(p.stat().st_size for p in HERE.iterdir() if p.is_file())
    print(f"wrote {len(manifest)} vectors, {total} bytes in {HERE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
