"""Fetch payloads for the drop-in differential tests, and traces that record everything a fetcher sees.

:func:`corpus` returns named ``records`` byte strings (what a FetchResponse carries for one partition):
data batches in every codec, headers, null and empty keys/values, LogAppendTime, transactional batches
with commit/abort markers, legacy message sets, empty batches, partial tails, CRC failures and corrupt
batches whose CRC was recomputed (so the corruption reaches the record parser).

:func:`trace_kafka_python` / :func:`trace_aiokafka` walk a ``MemoryRecords`` the way the clients' fetchers
do and return every observable (batch attributes, CRC results, record attributes, reprs, errors), so two
implementations can be compared with ``==``. This module also runs as a script: ``python
compat_corpus.py`` compares kafka-python's own ``MemoryRecords`` with kafkawire's over the whole corpus,
which is how the tests check older kafka-python releases in a subprocess.
"""

from __future__ import annotations

import json
import re
import struct
import sys
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

import kafkawire

HERE = Path(__file__).resolve().parent
VECTORS = HERE.parent / "vectors"
T0 = 1_700_000_000_000
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _patch_attributes(batch: bytes, set_bits: int = 0, clear_bits: int = 0) -> bytes:
    """Set/clear attribute bits of a magic-2 batch and recompute its CRC32C (so it stays valid)."""
    b = bytearray(batch)
    (attrs,) = struct.unpack_from(">h", b, 21)
    struct.pack_into(">h", b, 21, (attrs | set_bits) & ~clear_bits)
    return recrc(bytes(b))


def recrc(batch: bytes) -> bytes:
    """Recompute the CRC32C of a single magic-2 batch after editing it."""
    b = bytearray(batch)
    struct.pack_into(">I", b, 17, kafkawire.crc32c(bytes(b[21:])))
    return bytes(b)


def data_batch(
    n: int,
    base_offset: int,
    *,
    codec: str | None = None,
    headers: bool = False,
    null_keys: str = "some",
    value_size: int = 20,
    producer_id: int = -1,
    transactional: bool = False,
    timestamp: int = T0,
) -> bytes:
    """One magic-2 batch of ``n`` records with varied keys, values and headers."""
    keys: list[bytes | None] = []
    values: list[bytes | None] = []
    hdrs: list[list[tuple[str, bytes | None]] | None] = []
    for i in range(n):
        if null_keys == "all" or (null_keys == "some" and i % 3 == 0):
            keys.append(None)
        else:
            keys.append(b"key-%d" % i if i % 5 else b"")
        values.append(None if i % 7 == 3 else (b"v%d-" % i) * (value_size // 4 + i % 3))
        if headers and i % 2:
            hdrs.append([("trace", b"abc"), ("h\u00e9", None), ("trace", b"")])
        else:
            hdrs.append(None)
    return kafkawire.encode_records(
        values,
        keys,
        timestamps=[timestamp + 13 * i - (7 if i % 4 == 1 else 0) for i in range(n)],
        headers=hdrs if headers else None,
        base_offset=base_offset,
        compression=codec,
        producer_id=producer_id,
        producer_epoch=0 if producer_id >= 0 else -1,
        base_sequence=0 if producer_id >= 0 else -1,
        transactional=transactional,
        partition_leader_epoch=3,
    )


def control_batch(base_offset: int, producer_id: int, *, commit: bool, version: int = 0) -> bytes:
    """A transaction marker: key ``int16 version, int16 type`` (0 abort, 1 commit), control bit set."""
    key = struct.pack(">hh", version, 1 if commit else 0)
    value = struct.pack(">hi", 0, 5)  # version, coordinator epoch
    b = kafkawire.encode_records(
        [value],
        [key],
        timestamps=[T0 + 999],
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=0,
        base_sequence=-1,
        transactional=True,
        partition_leader_epoch=3,
    )
    return _patch_attributes(b, set_bits=0x20)


def empty_batch(base_offset: int, last_offset_delta: int = 4) -> bytes:
    """A magic-2 batch with no records left (what compaction can leave behind), offsets still spanned."""
    # baseOffset, batchLength (49: header only), leader epoch, magic, crc (set below); then attributes,
    # lastOffsetDelta, base/max timestamp, producer id/epoch, base sequence, recordsCount = 0.
    b = bytearray(struct.pack(">qiibI", base_offset, 49, 3, 2, 0))
    b += struct.pack(">hiqqqhii", 0, last_offset_delta, T0, T0, -1, -1, -1, 0)
    return recrc(bytes(b))


def _corrupt_record_length(batch: bytes) -> bytes:
    """Make the first record's length varint one larger (valid CRC): a structural error mid-batch."""
    b = bytearray(batch)
    b[61] += 2  # zigzag: +2 is +1 in value
    return recrc(bytes(b))


def _bad_header_key(n: int, base_offset: int) -> bytes:
    """A batch whose second record has a header key that is not UTF-8."""
    b = kafkawire.encode_records(
        [b"a", b"b", b"c"][:n],
        None,
        timestamps=[T0] * n,
        headers=[[("ok", b"1")], [(b"\xff", b"2")], None][:n],
        base_offset=base_offset,
    )
    return b


def _log_append(batch: bytes) -> bytes:
    return _patch_attributes(batch, set_bits=0x08)


def _vector(name: str) -> bytes:
    return (VECTORS / name).read_bytes()


def corpus() -> dict[str, bytes]:
    """Named fetch payloads (see module doc). Deterministic."""
    c: dict[str, bytes] = {}
    for codec in (None, "gzip", "snappy", "lz4", "zstd"):
        name = codec or "none"
        c[f"v2_{name}_headers"] = data_batch(50, 0, codec=codec, headers=True) + data_batch(
            30, 50, codec=codec, null_keys="none"
        )
        c[f"v2_{name}_many_small"] = b"".join(data_batch(1 + i % 3, 10 * i, codec=codec) for i in range(40))
        c[f"v2_{name}_log_append"] = _log_append(data_batch(20, 100, codec=codec, headers=True))
    c["v2_null_keys_all"] = data_batch(64, 7, null_keys="all")
    c["v2_big_values"] = data_batch(5, 0, value_size=300_000) + data_batch(3, 5, value_size=70_000, codec="lz4")
    c["v2_big_varints"] = kafkawire.encode_records(
        [b"x" * 200, b"y"],
        [b"k" * 20000, None],
        timestamps=[T0, T0 + 10**11],  # a timestamp delta that needs a 6-byte varlong
        base_offset=2**40,
    )
    c["v2_no_timestamp"] = kafkawire.encode_records([b"a", b"b"], timestamps=[-1, -1], base_offset=3)
    c["v2_gaps"] = data_batch(3, 0) + data_batch(2, 100) + empty_batch(102, 10) + data_batch(4, 113)
    c["v2_empty_batch_only"] = empty_batch(0)
    pid = 4242
    c["txn_commit"] = (
        data_batch(10, 0, producer_id=pid, transactional=True) + control_batch(10, pid, commit=True) + data_batch(5, 11)
    )
    c["txn_abort"] = (
        data_batch(10, 0, producer_id=pid, transactional=True, headers=True)
        + data_batch(4, 10, producer_id=77, transactional=True, codec="gzip")
        + control_batch(14, pid, commit=False)
        + control_batch(15, 77, commit=True)
        + data_batch(5, 16)
        + control_batch(21, 999, commit=False)  # a marker with no matching aborted transaction
        + data_batch(3, 22, producer_id=pid, transactional=True)
        + control_batch(25, pid, commit=False, version=1)  # unknown marker version
    )
    c["idempotent"] = data_batch(6, 0, producer_id=11) + data_batch(6, 6, producer_id=11, codec="snappy")
    c["control_only"] = control_batch(0, pid, commit=True)
    # Legacy message sets (magic 0/1), plain and compressed, from the shared test vectors.
    for f in sorted(VECTORS.glob("kafka-python_v[01]_*.bin")):
        c[f"legacy_{f.stem}"] = f.read_bytes()
    c["legacy_then_v2"] = _vector("kafka-python_v1_none.bin") + data_batch(5, 1000)
    c["v2_then_legacy"] = data_batch(5, 0) + _vector("kafka-python_v1_gzip.bin")
    for f in sorted(VECTORS.glob("*_v2_*.bin")):
        c[f"vector_{f.stem}"] = f.read_bytes()
    c["vector_mixed_partial_tail"] = _vector("mixed_fetch_partial_tail.bin")
    # Partial tails: a fetch cut short anywhere (the last entry is incomplete).
    base = data_batch(8, 0, headers=True) + data_batch(8, 8, codec="gzip") + data_batch(4, 16)
    for cut in (5, 11, 12, 30, 61, 200, len(base) - 1):
        c[f"partial_tail_{cut}"] = base[: len(base) - cut] if cut < len(base) else base[:cut]
    c["partial_first_entry"] = base[:40]
    c["empty"] = b""
    # CRC failures: a flipped byte inside the CRC-covered area.
    bad = bytearray(data_batch(6, 0))
    bad[-3] ^= 0x40
    c["crc_bad_first"] = bytes(bad)
    c["crc_bad_second"] = data_batch(6, 0) + bytes(bad).replace(bad[:8], struct.pack(">q", 6), 1)
    # Corrupt contents with a valid CRC: the record parser must fail the same way.
    c["corrupt_record_length"] = data_batch(4, 0) + _corrupt_record_length(data_batch(5, 4)) + data_batch(2, 9)
    trailing = bytearray(data_batch(3, 0))
    trailing += b"\x00\x00"
    struct.pack_into(">i", trailing, 8, len(trailing) - 12)
    c["corrupt_trailing_bytes"] = recrc(bytes(trailing))
    negative_count = bytearray(data_batch(3, 0))
    struct.pack_into(">i", negative_count, 57, -1)
    c["corrupt_negative_count"] = recrc(bytes(negative_count))
    big_count = bytearray(data_batch(3, 0))
    struct.pack_into(">i", big_count, 57, 5000)
    c["corrupt_count_too_big"] = recrc(bytes(big_count))
    bad_codec = _patch_attributes(data_batch(3, 0), set_bits=0x07)
    c["corrupt_codec_7"] = data_batch(2, 100) + bad_codec
    c["bad_header_key"] = data_batch(2, 0) + _bad_header_key(3, 2) + data_batch(2, 5)
    magic3 = bytearray(data_batch(2, 10))
    magic3[16] = 3
    c["magic_3"] = data_batch(2, 0) + bytes(magic3)
    tiny = struct.pack(">qi", 0, 5) + b"\x00" * 5
    c["tiny_entry"] = tiny + data_batch(2, 0)
    neg = struct.pack(">qi", 0, -20) + b"\x00" * 20
    c["negative_length"] = data_batch(2, 0) + neg
    c["truncated_header"] = data_batch(1, 0)[:40] + b""
    return c


@st.composite
def fetch_payloads(draw: st.DrawFn) -> bytes:
    """Random data batches (any codec, keys, values, headers, timestamps) cut at a random point."""
    out = b""
    offset = draw(st.integers(0, 2**40))
    for _ in range(draw(st.integers(1, 4))):
        n = draw(st.integers(1, 12))
        blobs = st.one_of(st.none(), st.binary(max_size=40))
        values = draw(st.lists(blobs, min_size=n, max_size=n))
        keys = draw(st.lists(blobs, min_size=n, max_size=n))
        header_lists = st.lists(st.tuples(st.text(max_size=6), blobs), max_size=3)
        headers = draw(st.one_of(st.none(), st.lists(header_lists, min_size=n, max_size=n)))
        stamps = draw(st.lists(st.integers(-1, 2**45), min_size=n, max_size=n))
        codec = draw(st.sampled_from([None, "gzip", "snappy", "lz4", "zstd"]))
        batch = kafkawire.encode_records(
            values, keys, timestamps=stamps, headers=headers, base_offset=offset, compression=codec
        )
        if draw(st.booleans()):
            batch = control_batch(offset + n, 5, commit=draw(st.booleans())) + batch
        out += batch
        offset += n + draw(st.integers(0, 3))
    cut = draw(st.integers(0, 80))
    return out[: len(out) - cut] if draw(st.booleans()) else out


# ----------------------------------------------------------------------------------------- traces


_KP_BATCH_ATTRS = (
    "base_offset",
    "size_in_bytes",
    "leader_epoch",
    "magic",
    "crc",
    "attributes",
    "last_offset_delta",
    "last_offset",
    "next_offset",
    "compression_type",
    "timestamp_type",
    "is_transactional",
    "is_control_batch",
    "first_timestamp",
    "max_timestamp",
    "producer_id",
    "producer_epoch",
    "base_sequence",
    "has_sequence",
    "last_sequence",
    "records_count",
)
_KP_RECORD_ATTRS = ("offset", "timestamp", "timestamp_type", "key", "value", "headers", "checksum", "size_in_bytes")


def _attrs(obj: Any, names: tuple[str, ...]) -> list[Any]:
    out = []
    for name in names:
        try:
            out.append((name, getattr(obj, name)))
        except Exception as e:  # e.g. a property a class does not have in this kafka-python version
            out.append((name, "raises", type(e).__name__))
    return out


def _has(record: Any, name: str) -> bool:
    """Whether kafka-python's own class for this record has ``name`` (2.0.x records lack some)."""
    cls = type(record)
    if cls.__module__.startswith("kafkawire"):
        from kafka.record.default_records import DefaultRecord as cls
    return hasattr(cls, name)


def _record_trace(r: Any) -> tuple[Any, ...]:
    extra = ()
    if hasattr(r, "abort"):
        extra = (("abort", r.abort), ("version", r.version), ("type", r.type))
    names = tuple(name for name in _KP_RECORD_ATTRS if _has(r, name))
    crc = r.validate_crc() if _has(r, "validate_crc") else None
    return ("record", _attrs(r, names), ("validate_crc", crc), _ADDRESS.sub("", repr(r)), extra)


def trace_kafka_python(cls: Any, data: bytes, *, check_crc: bool = True, peek: bool = False) -> list[Any]:
    """Everything a kafka-python fetcher can observe while walking ``cls(data)``.

    ``peek``: call ``next(batch)`` once before iterating (what the fetcher does on control batches).
    Errors are recorded as ``(type name, message)`` and end the walk, as they end a fetch.
    """
    out: list[Any] = []
    try:
        mr = cls(data)
        out.append(("size", mr.size_in_bytes(), mr.has_next()))
        while True:
            batch = mr.next_batch()
            if batch is None:
                break
            kind = next(k.__name__ for k in type(batch).__mro__ if k.__module__.startswith("kafka."))
            # str() only where kafka-python defines it (older releases print the default object repr).
            text = str(batch) if type(batch).__str__ is not object.__str__ else None
            out.append(("batch", kind, _attrs(batch, _KP_BATCH_ATTRS), text))
            if hasattr(batch, "has_producer_id"):
                out.append(("has_producer_id", batch.has_producer_id()))
            if check_crc:
                out.append(("crc_ok", batch.validate_crc()))
            if peek:
                out.append(("peek", _record_trace(next(batch))))
            for record in batch:
                out.append(_record_trace(record))
            out.append(("has_next", mr.has_next()))
        out.append(("valid_bytes", mr.valid_bytes()))
    except Exception as e:
        out.append(("error", type(e).__name__, str(e)))
    return out


_AIO_BATCH_ATTRS = (
    "base_offset",
    "magic",
    "crc",
    "attributes",
    "last_offset_delta",
    "next_offset",
    "compression_type",
    "timestamp_type",
    "is_transactional",
    "is_control_batch",
    "first_timestamp",
    "max_timestamp",
    "producer_id",
    "producer_epoch",
    "base_sequence",
)
_AIO_RECORD_ATTRS = ("offset", "timestamp", "timestamp_type", "key", "value", "headers", "checksum")


def trace_aiokafka(cls: Any, data: bytes, *, check_crc: bool = True, peek: bool = False) -> list[Any]:
    """Everything aiokafka's fetcher can observe while walking ``cls(data)`` (see :func:`trace_kafka_python`)."""
    out: list[Any] = []
    try:
        mr = cls(data)
        out.append(("size", mr.size_in_bytes()))
        while mr.has_next():
            batch = mr.next_batch()
            if batch is None:
                out.append(("none",))
                break
            legacy = "Legacy" in type(batch).__name__
            names = ("next_offset",) if legacy else _AIO_BATCH_ATTRS
            out.append(("batch", "legacy" if legacy else "default", _attrs(batch, names)))
            out.append(("flags", batch.is_control_batch, batch.is_transactional, batch.producer_id))
            if check_crc:
                out.append(("crc_ok", batch.validate_crc()))
            if peek:
                r = next(batch)
                out.append(("peek", _attrs(r, _AIO_RECORD_ATTRS)))
            for r in batch:
                out.append(("record", _attrs(r, _AIO_RECORD_ATTRS), _ADDRESS.sub("", repr(r))))
        out.append(("end", mr.has_next(), mr.next_batch() is None))
    except Exception as e:
        out.append(("error", type(e).__name__, str(e)))
    return out


def consume_partition_records(data: bytes, *, drop_in: bool, fast_path: bool = True, **options: Any) -> list[Any]:
    """Drive kafka-python's real ``Fetcher.PartitionRecords`` over ``data`` as ``poll()`` does.

    ``drop_in``: with kafkawire's MemoryRecords installed (else kafka-python's own); ``fast_path``: and
    kafkawire's fetcher loop.
    ``options`` go to ``PartitionRecords`` (``fetch_offset`` too); ``aborted_transactions`` may be given
    as ``(producer_id, first_offset)`` pairs. Returns the ConsumerRecords, errors and final position.
    """
    import collections

    from kafka.consumer.fetcher import Fetcher
    from kafka.record.memory_records import MemoryRecords as original
    from kafka.structs import TopicPartition

    from kafkawire.compat import kafka_python as adapter

    aborted = collections.namedtuple("aborted", ["producer_id", "first_offset"])
    options = dict(options)
    if options.get("aborted_transactions"):
        options["aborted_transactions"] = [aborted(*a) for a in options["aborted_transactions"]]
    fetch_offset = options.pop("fetch_offset", 0)
    out: list[Any] = []
    if drop_in:
        adapter.install(fetcher_fast_path=fast_path)
    try:
        cls = adapter.MemoryRecords if drop_in else original
        pr = Fetcher.PartitionRecords(fetch_offset, TopicPartition("topic", 3), cls(data), **options)
        for _ in range(10_000):
            if not pr:
                break
            try:
                got = pr.take(7)
            except Exception as e:
                out.append(("error", type(e).__name__, str(e)))
                continue
            out.extend(got)
            if not got:
                break
        out.append(("position", pr.next_fetch_offset, pr.bytes_read, pr.records_read))
    finally:
        adapter.uninstall()
    return out


class _Deserializer:
    """A kafka-python Deserializer (3.x calls it with headers, 2.x without)."""

    def deserialize(self, topic: str, *args: Any) -> Any:
        return (topic, len(args), args[-1])


def fetcher_options() -> dict[str, dict[str, Any]]:
    """Named PartitionRecords options covering the fetcher's branches (isolation per release)."""
    import kafka.consumer.fetcher as fetcher

    isolation = getattr(fetcher, "IsolationLevel", None)
    committed = isolation.READ_COMMITTED if isolation is not None else fetcher.READ_COMMITTED
    return {
        "defaults": {},
        "no-crc": {"check_crcs": False},
        "fetch-offset-5": {"fetch_offset": 5},
        "read-committed": {"isolation_level": committed},
        "read-committed-aborted": {"isolation_level": committed, "aborted_transactions": [(4242, 22), (4242, 0)]},
        "deserializers": {"key_deserializer": _Deserializer(), "value_deserializer": _Deserializer()},
    }


def compare(client: str) -> dict[str, Any]:
    """Compare a client's own ``MemoryRecords`` with kafkawire's drop-in over the whole corpus.

    ``client`` is ``"kafka-python"`` or ``"aiokafka"`` (whichever implementation of it is importable and
    active: an older kafka-python on ``PYTHONPATH``, aiokafka's pure classes under
    ``AIOKAFKA_NO_EXTENSIONS=1``...). Returns ``{"version", "cases", "failures"}``.
    """
    if client == "kafka-python":
        import kafka as module
        from kafka.record.memory_records import MemoryRecords as original

        from kafkawire.compat.kafka_python import MemoryRecords as drop_in

        trace = trace_kafka_python
    else:
        import aiokafka as module  # type: ignore[no-redef]
        from aiokafka.record.memory_records import MemoryRecords as original  # type: ignore[no-redef]

        from kafkawire.compat.aiokafka import MemoryRecords as drop_in  # type: ignore[no-redef]

        trace = trace_aiokafka  # type: ignore[assignment]
    failures = []
    cases = 0
    for name, data in corpus().items():
        for check_crc in (True, False):
            for peek in (False, True):
                cases += 1
                a = trace(original, data, check_crc=check_crc, peek=peek)
                b = trace(drop_in, data, check_crc=check_crc, peek=peek)
                if a != b:
                    diff = next((x, y) for x, y in zip(a + [None] * len(b), b + [None] * len(a)) if x != y)
                    failures.append({"case": name, "check_crc": check_crc, "peek": peek, "first_diff": repr(diff)})
    fetcher_cases = 0
    fast_path = False
    if client == "kafka-python":
        from kafkawire.compat.kafka_python import _unpack_records_variant

        fast_path = _unpack_records_variant() is not None
        # Releases whose fetcher loop the drop-in replaces: compare what the real fetcher hands out too.
        # (Older ones only see the MemoryRecords above, so the traces cover them.)
        if fast_path:
            for name, data in corpus().items():
                for label, options in fetcher_options().items():
                    fetcher_cases += 1
                    a = consume_partition_records(data, drop_in=False, **options)
                    b = consume_partition_records(data, drop_in=True, **options)
                    if a != b:
                        diff = next((x, y) for x, y in zip(a + [None] * len(b), b + [None] * len(a)) if x != y)
                        failures.append({"case": name, "fetcher": label, "first_diff": repr(diff)})
    return {
        "version": module.__version__,
        "original": repr(original),
        "cases": cases,
        "fetcher_cases": fetcher_cases,
        "fetcher_fast_path": fast_path,
        "failures": failures,
    }


def main() -> int:
    """``python compat_corpus.py [kafka-python|aiokafka]``: print :func:`compare`'s result as JSON."""
    result = compare(sys.argv[1] if len(sys.argv) > 1 else "kafka-python")
    print(json.dumps(result))
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
