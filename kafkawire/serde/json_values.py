"""Registry-framed JSON Schema values to Arrow columns and back: :func:`decode_json`, :func:`encode_json`.

A JSON Schema value in the Confluent wire format is magic byte 0, the schema id, then JSON text. The reader
schema (the subject's latest, or ``reader_schema=``) gives the Arrow type: ``object`` with ``properties`` ->
struct, ``object`` with only ``additionalProperties`` -> ``map<string, V>``, ``array`` -> list, ``string`` ->
string (``format: date-time`` -> timestamp[us, UTC], ``format: date`` -> date32), ``integer`` -> int64,
``number`` -> float64, ``boolean`` -> bool; ``"type": [T, "null"]`` and ``oneOf``/``anyOf`` with ``null`` make a
nullable T; local ``$ref`` (``#/definitions/...``, ``#/$defs/...``) are followed, a recursive one is refused.
Properties the schema does not name are ignored, missing ones are null.

The bodies are parsed by Arrow's JSON reader (C++, one pass over all values, no Python object per value):
the headers are cut off and the bodies joined with newlines in numpy. When a block fails to parse, the values
are parsed one by one to find the row at fault (FAILFAST raises naming it; PERMISSIVE makes it null and puts
the cause in the ``_error`` column).
"""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np

from .._optional import require
from ..binary import BinaryColumn
from ..errors import KafkaWireError
from .avro import MODES, AvroDecodeError
from .framing import frame, rows_as_struct_array, values_column
from .registered import as_registry, encoding_registry
from .registry import SchemaRegistry, SchemaRegistryError

__all__ = ["JsonDecodeError", "JsonSchemaError", "decode_json", "encode_json", "json_schema_to_arrow"]

ERROR_COLUMN = "_error"
_MAX_DEPTH = 64


class JsonSchemaError(KafkaWireError, ValueError):
    """A JSON Schema kafkawire cannot turn into Arrow columns (or is not JSON at all)."""


class JsonDecodeError(AvroDecodeError):
    """A JSON value could not be decoded (FAILFAST): ``row``, ``offset``, ``partition``, ``cause``."""

    kind = "JSON"


def json_schema_to_arrow(schema: Any) -> Any:
    """The Arrow type of values of a JSON Schema (text or decoded)."""
    pa = require("pyarrow", "kafkawire.serde.decode_json")
    if isinstance(schema, (str, bytes)):
        try:
            schema = json.loads(schema)
        except ValueError as e:
            raise JsonSchemaError(f"schema is not JSON: {e}") from None
    return _ArrowTypes(pa, schema).convert(schema, 0, ())


class _ArrowTypes:
    """JSON Schema -> Arrow types, within one root schema (for its local ``$ref``)."""

    def __init__(self, pa: Any, root: Any) -> None:
        self.pa = pa
        self.root = root

    def resolve(self, ref: str) -> Any:
        if not ref.startswith("#/"):
            raise JsonSchemaError(f"only local $ref are supported, not {ref!r}")
        node = self.root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                raise JsonSchemaError(f"$ref {ref!r} points nowhere")
            node = node[part]
        return node

    def convert(self, s: Any, depth: int, refs: tuple[str, ...]) -> Any:
        """The Arrow type of schema ``s`` (every field nullable: JSON values may leave any out)."""
        if depth > _MAX_DEPTH:
            raise JsonSchemaError(f"schema nested deeper than {_MAX_DEPTH} levels")
        if s is True or s == {}:
            return self.pa.string()  # anything: kept as its JSON text would need a per-value pass; text
        if not isinstance(s, dict):
            raise JsonSchemaError(f"a schema is an object, not {type(s).__name__}")
        if "$ref" in s:
            ref = s["$ref"]
            if not isinstance(ref, str):
                raise JsonSchemaError("$ref must be a string")
            if ref in refs:
                raise JsonSchemaError(f"recursive $ref {ref!r}: Arrow columns cannot hold it")
            return self.convert(self.resolve(ref), depth + 1, refs + (ref,))
        for key in ("oneOf", "anyOf"):
            if key in s:
                options = s[key]
                if not isinstance(options, list):
                    raise JsonSchemaError(f"{key} must be a list")
                nonnull = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
                if len(nonnull) != 1:
                    raise JsonSchemaError(f"{key} of several non-null schemas has no single Arrow type")
                return self.convert(nonnull[0], depth + 1, refs)
        t = s.get("type")
        if isinstance(t, list):
            kinds = [k for k in t if k != "null"]
            if len(kinds) != 1:
                raise JsonSchemaError(f"type {t!r} has no single Arrow type")
            t = kinds[0]
        if t is None and "properties" in s:
            t = "object"
        if t == "object":
            return self._object(s, depth, refs)
        if t == "array":
            return self.pa.list_(self.convert(s.get("items", {}), depth + 1, refs))
        return self._scalar(t, s)

    def _object(self, s: dict[str, Any], depth: int, refs: tuple[str, ...]) -> Any:
        props = s.get("properties")
        if isinstance(props, dict) and props:
            return self.pa.struct([self.pa.field(name, self.convert(sub, depth + 1, refs), nullable=True)
                                   for name, sub in props.items()])
        extra = s.get("additionalProperties")
        if isinstance(extra, dict):
            return self.pa.map_(self.pa.string(), self.convert(extra, depth + 1, refs))
        raise JsonSchemaError("an object schema needs properties (or additionalProperties with a schema)")

    def _scalar(self, t: Any, s: dict[str, Any]) -> Any:
        pa = self.pa
        if t == "string":
            fmt = s.get("format")
            if fmt == "date-time":
                return pa.timestamp("us", "UTC")
            if fmt == "date":
                return pa.date32()
            return pa.string()
        scalars = {"integer": pa.int64(), "number": pa.float64(), "boolean": pa.bool_(), "null": pa.null()}
        if isinstance(t, str) and t in scalars:
            return scalars[t]
        if "enum" in s and all(isinstance(x, str) for x in s["enum"]):
            return pa.string()
        raise JsonSchemaError(f"no Arrow type for JSON Schema type {t!r}")


def _bodies(col: BinaryColumn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The bodies of the framed values as newline-delimited JSON (one copy of the data: each header becomes a
    line break, each unusable value blanks), which rows are usable, and each row's header problem (0 none,
    1 shorter than the header, 2 bad magic byte)."""
    offsets = np.asarray(col.offsets, dtype=np.int64)
    data = np.asarray(col.data, dtype=np.uint8)
    n = len(offsets) - 1
    starts, ends = offsets[:-1], offsets[1:]
    lengths = ends - starts
    present = np.ones(n, dtype=bool) if col.valid is None else np.asarray(col.valid, dtype=bool)
    problem = np.zeros(n, dtype=np.int8)
    problem[present & (lengths < 5)] = 1
    ok = present & (lengths >= 5)
    idx = np.nonzero(ok)[0]
    bad_magic = idx[data[starts[idx]] != 0]
    problem[bad_magic] = 2
    ok[bad_magic] = False
    base = int(offsets[0]) if n else 0
    buf = data[base:int(offsets[-1]) if n else 0].copy()
    # blank every value that is not used (bad header, or null with bytes): whitespace between lines
    for row in np.nonzero(present & ~ok)[0].tolist():
        buf[starts[row] - base:ends[row] - base] = 32
    heads = starts[ok] - base
    for k in range(5):
        buf[heads + k] = 32
    buf[heads[1:]] = 10  # each usable value's header starts its line
    return buf, ok, problem


def decode_json(values: Any, registry: Any, *, subject: str | None = None, reader_schema: Any = None,
                mode: str = "FAILFAST", offsets: Any = None, partition: int | None = None) -> Any:
    """Decode Confluent-framed JSON Schema ``values`` into an Arrow array (a ``StructArray`` for an object
    schema). Arguments and modes as :func:`kafkawire.serde.decode_avro`; the reader schema is
    ``reader_schema`` or ``subject``'s latest version, else the schema of the highest id among the values."""
    pa = require("pyarrow", "kafkawire.serde.decode_json")
    import pyarrow.json as pajson

    if not isinstance(mode, str) or mode.upper() not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    permissive = mode.upper() == "PERMISSIVE"
    registry = as_registry(registry)
    col = values_column(values)
    typ = json_schema_to_arrow(_reader_text(registry, subject, reader_schema, col))
    wrapped = not pa.types.is_struct(typ)
    row_type = pa.struct([pa.field("value", typ)]) if wrapped else typ
    buf, ok, problem = _bodies(col)
    n = len(col)
    errors: dict[int, str] = {}
    for row in np.nonzero(problem)[0].tolist():
        magic = int(col.data[col.offsets[row]]) if problem[row] == 2 else 0
        errors[row] = ("value shorter than the 5-byte Confluent header" if problem[row] == 1
                       else f"bad magic byte {magic} (the Confluent wire format starts with 0)")
    parse = pajson.ParseOptions(explicit_schema=pa.schema(list(row_type)), unexpected_field_behavior="ignore",
                                newlines_in_values=False)
    usable = int(ok.sum())
    array = None
    if not wrapped and usable:
        try:
            table = pajson.read_json(io.BytesIO(buf.tobytes()), parse_options=parse,
                                     read_options=pajson.ReadOptions(use_threads=False, block_size=1 << 30))
            if table.num_rows == usable:  # else a body spans lines (pretty-printed JSON): parse one by one
                parsed = table.to_struct_array()
                if isinstance(parsed, pa.ChunkedArray):
                    parsed = parsed.combine_chunks()
                positions = np.cumsum(ok) - 1
                array = parsed.take(pa.array(positions, pa.int64(), mask=~ok))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            array = None  # a value that does not parse or fit: find it below
    elif not wrapped:
        array = pa.nulls(n, row_type)
    if array is None:
        rows_out: list[Any] = []
        for row, raw in enumerate(col.to_pylist()):
            if raw is None or row in errors:
                rows_out.append(None)
                continue
            try:
                doc = json.loads(raw[5:])
                one = pa.array([{"value": doc} if wrapped else doc], row_type)
                rows_out.append(one[0].as_py())
            except (ValueError, pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as e:
                errors[row] = f"not valid for the reader schema: {e}"
                rows_out.append(None)
        array = pa.array(rows_out, row_type)
    if errors and not permissive:
        row = min(errors)
        offset = int(np.asarray(offsets)[row]) if offsets is not None else None
        raise JsonDecodeError(row, errors[row], offset=offset, partition=partition)
    mask = ~ok
    for row in errors:
        mask[row] = True
    array = pa.StructArray.from_arrays([array.field(i) for i in range(array.type.num_fields)],
                                       fields=list(array.type), mask=pa.array(mask))
    if wrapped:
        array = array.field(0) if not permissive else array
    if not permissive:
        return array
    err = pa.array([errors.get(i) for i in range(n)], pa.string())
    if wrapped:
        return pa.StructArray.from_arrays([array.field(0), err], names=["value", ERROR_COLUMN], mask=pa.array(mask))
    return pa.StructArray.from_arrays([array.field(i) for i in range(array.type.num_fields)] + [err],
                                      fields=list(array.type) + [pa.field(ERROR_COLUMN, pa.string())],
                                      mask=pa.array(mask))


def _reader_text(registry: Any, subject: str | None, reader_schema: Any, col: BinaryColumn) -> Any:
    if reader_schema is not None:
        return reader_schema
    if subject is not None:
        if not isinstance(registry, SchemaRegistry):
            raise TypeError("subject= needs a SchemaRegistry (give reader_schema= with a mapping)")
        latest = registry.get_latest(subject)
        if latest.schema_type != "JSON":
            raise JsonSchemaError(f"subject {subject!r} holds a {latest.schema_type} schema, not a JSON Schema")
        return latest.schema
    from .avro import _IMPL

    ids = sorted((i for i in _IMPL.scan_ids(col.data, col.offsets, col.valid) if i >= 0), reverse=True)
    for sid in ids:
        if isinstance(registry, SchemaRegistry):
            try:
                return registry.get_schema(sid).schema
            except SchemaRegistryError as e:
                if not e.not_found:
                    raise
        elif sid in registry:
            return registry[sid]
    raise ValueError("no value carries a schema id the registry knows: give subject= or reader_schema=")


def encode_json(struct_array_or_table: Any, registry: Any, *, subject: str, schema: Any = None) -> BinaryColumn:
    """Encode rows as Confluent-framed JSON values under ``subject``'s schema (``schema``, registered if new,
    else the subject's latest; a schema derived from the Arrow type when the subject has none)."""
    pa = require("pyarrow", "kafkawire.serde.encode_json")
    reg = encoding_registry(registry, subject, "encode_json", " to register or look up the schema")
    data = rows_as_struct_array(pa, struct_array_or_table)
    if schema is not None:
        sid = reg.register(subject, schema if isinstance(schema, str) else json.dumps(schema), "JSON")
    else:
        try:
            sid = reg.get_latest(subject).schema_id
        except SchemaRegistryError as e:
            if not e.not_found:
                raise
            sid = reg.register(subject, json.dumps(arrow_to_json_schema(data.type)), "JSON")

    def default(o: Any) -> Any:
        if hasattr(o, "isoformat"):
            return o.isoformat()
        if isinstance(o, bytes):
            return o.decode("latin-1")
        return str(o)

    valid = data.is_valid().to_pylist() if data.null_count else None
    bodies = [None if valid is not None and not valid[i] else
              json.dumps(row, default=default, separators=(",", ":")).encode()
              for i, row in enumerate(data.to_pylist())]
    return frame(sid, bodies)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if isinstance(schema.get("type"), str):
        return {**schema, "type": [schema["type"], "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def arrow_to_json_schema(typ: Any) -> Any:
    """A JSON Schema for an Arrow type (what :func:`encode_json` registers when the subject has none)."""
    pa = require("pyarrow", "kafkawire.serde.encode_json")
    if pa.types.is_struct(typ):
        return {"type": "object", "properties": {f.name: _nullable(arrow_to_json_schema(f.type)) if f.nullable
                                                 else arrow_to_json_schema(f.type) for f in typ}}
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        return {"type": "array", "items": arrow_to_json_schema(typ.value_type)}
    if pa.types.is_map(typ):
        return {"type": "object", "additionalProperties": arrow_to_json_schema(typ.item_type)}
    if pa.types.is_integer(typ):
        return {"type": "integer"}
    if pa.types.is_floating(typ):
        return {"type": "number"}
    if pa.types.is_boolean(typ):
        return {"type": "boolean"}
    if pa.types.is_timestamp(typ):
        return {"type": "string", "format": "date-time"}
    if pa.types.is_date(typ):
        return {"type": "string", "format": "date"}
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return {"type": "string"}
    raise TypeError(f"no JSON Schema type for Arrow {typ}")
