"""The ``avro`` fuzz target: hostile Avro bodies (and schemas) into :func:`kafkawire.serde.decode_avro`.

``data[0]`` picks the variant:

* bit 7 clear: the rest is the body of one Confluent-framed value decoded with one of :data:`SCHEMAS`
  (``data[0] % len(SCHEMAS)``); bit 6 reads it with the schema's evolved reader instead (fields skipped,
  defaults filled, numbers promoted), so the resolution and skip programs see hostile bytes too.
* bit 7 set: the rest is ``schema JSON, 0x00, body``: a hostile *schema*, used as writer and reader.

Invariant (docs/SECURITY.md): only :class:`kafkawire.KafkaWireError` subclasses (``AvroDecodeError``,
``AvroSchemaError``), output bounded by a multiple of the input plus the per-value budget of zero-byte items,
and the compiled decoder and the pure reference agree (same rows, or the same error) on small inputs.
"""

from __future__ import annotations

import json
from typing import Any

from kafkawire.errors import KafkaWireError

__all__ = ["SCHEMAS", "seeds", "target_avro"]

_ALL = {"type": "record", "name": "All", "namespace": "f", "fields": [
    {"name": "b", "type": "boolean"}, {"name": "i", "type": "int"}, {"name": "l", "type": "long"},
    {"name": "f", "type": "float"}, {"name": "d", "type": "double"}, {"name": "s", "type": "string"},
    {"name": "y", "type": "bytes"}, {"name": "n", "type": "null"},
    {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}},
    {"name": "x", "type": {"type": "fixed", "name": "X", "size": 3}},
    {"name": "a", "type": {"type": "array", "items": ["null", "long", "string"]}},
    {"name": "m", "type": {"type": "map", "values": {"type": "array", "items": "int"}}},
    {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 4}},
    {"name": "decf", "type": {"type": "fixed", "name": "DF", "size": 5, "logicalType": "decimal",
                              "precision": 11, "scale": 1}},
    {"name": "dur", "type": {"type": "fixed", "name": "DU", "size": 12, "logicalType": "duration"}},
    {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "dt", "type": {"type": "int", "logicalType": "date"}},
    {"name": "u", "type": {"type": "string", "logicalType": "uuid"}},
    {"name": "r", "type": ["null", {"type": "record", "name": "In", "fields": [{"name": "q", "type": "double"}]}]},
]}
_ALL_READER = {"type": "record", "name": "All", "namespace": "f", "fields": [
    {"name": "l", "type": "double"}, {"name": "i", "type": "long"}, {"name": "s", "type": "bytes"},
    {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["C", "A"], "default": "A"}},
    {"name": "a", "type": {"type": "array", "items": ["null", "double", "string"]}},
    {"name": "extra", "type": {"type": "map", "values": "string"}, "default": {"k": "v"}},
]}
_LIST = {"type": "record", "name": "Node", "fields": [
    {"name": "v", "type": "int"}, {"name": "next", "type": ["null", "Node"]}]}
_LIST_READER = {"type": "record", "name": "Node", "fields": [{"name": "v", "type": "long"}]}
_DEEP: Any = "null"
for _ in range(20):
    _DEEP = {"type": "array", "items": _DEEP}
_UNIONS = {"type": "map", "values": ["null", "boolean", "int", "string", "bytes",
                                     {"type": "record", "name": "R", "fields": [{"name": "z", "type": "string"}]}]}

#: (writer, evolved reader) pairs the target decodes with.
SCHEMAS: list[tuple[Any, Any]] = [
    (_ALL, _ALL_READER),
    (_LIST, _LIST_READER),
    (_DEEP, _DEEP),
    (_UNIONS, _UNIONS),
    ("string", "bytes"),
]

# Outputs above this many bytes per input byte (plus the zero-byte-item budget) mean a forged count
# turned into an allocation.
_OUTPUT_FACTOR = 64
_OUTPUT_SLACK = 48 << 20


_PLANS: dict[tuple[str, str], Any] = {}


def _plan(writer: str, reader: str) -> Any:
    """The compiled program for (writer, reader), cached: the hostile surface is the decoder, and building
    the program per execution made each run ~10x slower under ASan."""
    from kafkawire.serde.avro_plan import compile_plan, new_plan
    from kafkawire.serde.avro_schema import parse

    key = (writer, reader)
    got = _PLANS.get(key)
    if got is None:
        r = parse(reader)
        plan = new_plan(r)
        compile_plan(plan, 1, parse(writer), r)
        nodes, kids = plan.arrays()
        cols = plan.columns
        got = (plan, nodes, kids, list(plan.blobs), [c.kind for c in cols], [c.width for c in cols],
               [list(c.children) for c in cols])
        if len(_PLANS) >= 512:
            _PLANS.clear()
        _PLANS[key] = got
    return got


def _run(impl: Any, planned: Any, value: bytes) -> Any:
    import numpy as np

    plan, nodes, kids, blobs, kinds, widths, children = planned
    half = value[:len(value) // 2]
    data = np.frombuffer(value + half, dtype=np.uint8)
    offsets = np.array([0, len(value), len(value) + len(half)], dtype=np.int32)
    return impl.decode(nodes, kids, blobs, kinds, widths, children, plan.root_col, dict(plan.roots), data, offsets,
                       None, True)


def target_avro(data: bytes) -> None:
    import zlib

    from fuzz.targets import InvariantViolation
    from kafkawire.serde import _avro_pure, avro
    from kafkawire.serde.avro_arrow import build_arrays

    if not data:
        return
    opt, rest = data[0], data[1:]
    if opt & 0x80:
        text, sep, body = rest.partition(b"\x00")
        if not sep:
            return
        try:
            writer = reader = text.decode("utf-8")
        except UnicodeDecodeError:
            return
    else:
        w, r = SCHEMAS[opt % len(SCHEMAS)]
        writer, reader = json.dumps(w), json.dumps(r if opt & 0x40 else w)
        body = rest
    value = b"\x00\x00\x00\x00\x01" + body
    try:
        planned = _plan(writer, reader)
        raw, errors = _run(avro._IMPL, planned, value)
    except KafkaWireError:
        return  # an unusable schema: a typed error is the contract
    except BaseException as exc:  # anything else breaks the invariant
        raise InvariantViolation(f"avro: {type(exc).__name__}: {exc!r}") from exc
    out = sum(len(v) + len(o) + len(d) for _, v, o, d in raw)
    if out > _OUTPUT_FACTOR * len(data) + _OUTPUT_SLACK:
        raise InvariantViolation(f"avro: {len(data)} input bytes decoded into {out} bytes")
    if zlib.crc32(data) & 7:
        return
    # one input in eight: the Arrow arrays are built and validated, and the pure reference must agree
    plan = planned[0]
    try:
        build_arrays(plan.columns, raw, plan.root_col).validate(full=True)
    except BaseException as exc:
        raise InvariantViolation(f"avro: decoded buffers do not make a valid Arrow array: {exc!r}") from exc
    # The pure reference only where its run stays short: a few bytes of nulls in nested arrays legitimately
    # decode to a million items (the per-value budget), which takes the pure decoder seconds under ASan.
    # Such items are nulls that fill no buffer, so the item count is bounded too, not only the bytes (a
    # 165-byte input of 20-deep arrays of nulls took the pure decoder 1.3 s, >10 s under ASan: a libFuzzer
    # timeout of the reference, not of the decoder under test).
    items = sum(n for n, _, _, _ in raw)
    if avro.COMPILED and len(data) <= 256 and out <= 1 << 16 and items <= 1 << 14:
        pure_raw, pure_errors = _run(_avro_pure, planned, value)
        # byte for byte: both fill the same buffers (to_pylist would also trip on values Python cannot hold,
        # e.g. an Avro date of year 10000, which Arrow's date32 holds)
        same = [(n, bytes(v), bytes(o), bytes(d)) for n, v, o, d in raw] == [
            (n, bytes(v), bytes(o), bytes(d)) for n, v, o, d in pure_raw]
        if errors != pure_errors or not same:
            raise InvariantViolation(f"avro: compiled and pure differ: {errors} vs {pure_errors}, buffers "
                                     f"{'equal' if same else 'differ'}")


def _deep_value(levels: int) -> Any:
    value: Any = [None, None]
    for _ in range(levels - 1):
        value = [value]
    return value


def seeds() -> list[bytes]:
    """A valid body per schema (written by kafkawire's reference encoder), in both reader variants, and a
    few schema-mode seeds."""
    from kafkawire.serde.avro_encode import encode_value
    from kafkawire.serde.avro_schema import parse

    samples: list[Any] = [
        {"b": True, "i": -3, "l": 1 << 40, "f": 1.5, "d": -2.25, "s": "héllo", "y": b"\x00\xff", "n": None,
         "e": "B", "x": b"abc", "a": [None, 7, "x"], "m": {"k": [1, 2], "": []}, "dec": b"\x01\x00",
         "decf": b"\x00\x00\x00\x30\x39", "dur": b"\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00",
         "ts": 1_700_000_000_000_000, "dt": 19000, "u": "12345678-1234-5678-1234-567812345678",
         "r": {"q": 0.5}},
        {"v": 1, "next": {"v": 2, "next": {"v": 3, "next": None}}},
        _deep_value(20),
        {"a": None, "b": True, "c": 5, "d": "s", "e": b"b", "f": {"z": "zz"}},
        "text",
    ]
    out = []
    for i, ((w, _), sample) in enumerate(zip(SCHEMAS, samples)):
        body = bytearray()
        encode_value(body, parse(json.dumps(w)), sample)
        out.append(bytes([i]) + bytes(body))
        out.append(bytes([i | 0x40]) + bytes(body))
    out.append(b"\x80" + json.dumps(_LIST).encode() + b"\x00" + b"\x02\x02\x04\x00")
    nested = b'{"type": "array", "items": {"type": "map", "values": "long"}}'
    out.append(b"\x80" + nested + b"\x00\x02\x02\x02a\x02\x00\x00")
    return out
