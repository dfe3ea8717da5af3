"""Registry-framed Avro values to Arrow columns and back: :func:`decode_avro`, :func:`encode_avro`.

Decoding is one compiled pass (:mod:`._avro`, or its pure-Python twin with ``KAFKAWIRE_PURE=1``) over the
values' bytes straight into Arrow buffers, with no Python object per value. The writer schema of each value
comes from its schema id; every writer schema is resolved against one reader schema (by default the
subject's latest version), so a topic whose schema evolved decodes into one table.
"""

from __future__ import annotations

import json
import os
import threading
import weakref
from typing import Any

import numpy as np

from .._optional import require
from ..binary import BinaryColumn
from ..errors import KafkaWireError
from . import avro_arrow
from .avro_encode import encode_value
from .avro_plan import OP_ERROR, Plan, compile_plan, new_plan
from .avro_schema import AvroSchemaError, Schema, parse, to_json
from .framing import frame, rows_as_struct_array, values_column
from .registered import Registry, as_registry, encoding_registry, visit_references
from .registry import RegisteredSchema, SchemaRegistry, SchemaRegistryError

__all__ = ["AvroDecodeError", "decode_avro", "encode_avro", "implementation"]

MODES = ("FAILFAST", "PERMISSIVE")
#: Name of the column PERMISSIVE mode adds: the reason a row is null (null where the row decoded).
ERROR_COLUMN = "_error"
# Schema references (Avro schemas that use types of other subjects) are followed this deep at most.


def _load_impl() -> tuple[Any, bool]:
    from . import _avro_pure

    if os.environ.get("KAFKAWIRE_PURE", "") not in ("", "0"):
        return _avro_pure, False
    try:
        from . import _avro  # type: ignore[attr-defined]

        return _avro, True
    except ImportError:
        if os.environ.get("KAFKAWIRE_REQUIRE_COMPILED", "") not in ("", "0"):
            raise
        return _avro_pure, False


_IMPL, COMPILED = _load_impl()


def implementation() -> str:
    """``"compiled"`` or ``"pure"``: which Avro decoder this process uses."""
    return "compiled" if COMPILED else "pure"


class AvroDecodeError(KafkaWireError, ValueError):
    """A value could not be decoded (FAILFAST): ``row``, ``offset`` and ``partition`` (when known),
    ``schema_id`` (when the header was readable) and ``cause``."""

    #: The encoding the message names (the JSON and Protobuf decoders' subclasses name theirs).
    kind = "Avro"

    def __init__(self, row: int, cause: str, *, schema_id: int | None = None, offset: int | None = None,
                 partition: int | None = None) -> None:
        where = f"row {row}"
        if partition is not None:
            where += f", partition {partition}"
        if offset is not None:
            where += f", offset {offset}"
        if schema_id is not None and schema_id >= 0:
            where += f", schema id {schema_id}"
        super().__init__(f"{self.kind} value at {where}: {cause}")
        self.row = row
        self.cause = cause
        self.schema_id = schema_id
        self.offset = offset
        self.partition = partition

    def __reduce__(self) -> Any:
        return (_rebuild, (self.row, self.cause, self.schema_id, self.offset, self.partition))


def _rebuild(row: int, cause: str, schema_id: int | None, offset: int | None,
             partition: int | None) -> AvroDecodeError:
    return AvroDecodeError(row, cause, schema_id=schema_id, offset=offset, partition=partition)


# ------------------------------------------------------------------------------------------ schemas

def _parse_registered(registry: Registry, rs: RegisteredSchema) -> Schema:
    """Parse a registered Avro schema, first parsing the schemas it references (by subject and version)."""
    named: dict[str, Schema] = {}

    def load(ref: Any, sub: RegisteredSchema, depth: int) -> None:
        if sub.schema_type != "AVRO":
            raise AvroSchemaError(f"reference {ref.name} is a {sub.schema_type} schema")
        # a referenced schema's named types become visible to the referring one
        parse(sub.schema, named=named)

    if rs.schema_type != "AVRO":
        raise AvroSchemaError(f"schema id {rs.schema_id} is a {rs.schema_type} schema, not Avro")
    visit_references(registry, rs.references, load, AvroSchemaError)
    return parse(rs.schema, named=named)


def _writer(registry: Registry, sid: int) -> Schema:
    if isinstance(registry, SchemaRegistry):
        return _parse_registered(registry, registry.get_schema(sid))
    text = registry.get(sid)
    if text is None:
        raise SchemaRegistryError("schema not found", registry="(mapping)", schema_id=sid, status=404)
    return parse(text)


def _schema_text(schema: Any) -> str:
    if isinstance(schema, str):
        return schema
    if isinstance(schema, Schema):
        return json.dumps(to_json(schema))
    if isinstance(schema, (dict, list)):
        return json.dumps(schema)
    raise TypeError(f"an Avro schema is JSON text or its decoded form, not {type(schema).__name__}")


class _Reader:
    """One reader schema's columns and the programs of the writer ids seen so far (reused across calls)."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.plan: Plan = new_plan(schema)
        self.lock = threading.Lock()
        self.arrays: tuple[np.ndarray, np.ndarray] | None = None

    def add(self, registry: Registry, sid: int) -> None:
        if sid in self.plan.roots:
            return
        try:
            writer = _writer(registry, sid)
            compile_plan(self.plan, sid, writer, self.schema)
        except SchemaRegistryError as e:
            if not e.not_found:
                raise  # an unreachable registry is not a property of the data: stop
            self._error(sid, f"unknown schema id {sid} (not in the registry)")
        except AvroSchemaError as e:
            self._error(sid, f"writer schema id {sid} cannot be read as the reader schema: {e}")
        self.arrays = None

    def _error(self, sid: int, message: str) -> None:
        plan = self.plan
        plan.blobs.append(message.encode("utf-8", "replace"))
        plan.nodes.append([OP_ERROR, -1, 0, 0, 0, 0, 0, len(plan.blobs) - 1])
        plan.roots[sid] = len(plan.nodes) - 1


_READERS: weakref.WeakKeyDictionary[Any, dict[str, _Reader]] = weakref.WeakKeyDictionary()
_READERS_LOCK = threading.Lock()


def _reader_for(registry: Registry, text: str) -> _Reader:
    if not isinstance(registry, SchemaRegistry):
        return _Reader(parse(text))
    with _READERS_LOCK:
        per = _READERS.setdefault(registry, {})
        reader = per.get(text)
        if reader is None:
            if len(per) >= 64:  # a bound for callers that pass a new inline schema every time
                per.clear()
            reader = per[text] = _Reader(parse(text))
        return reader


def _row_schema_id(col: BinaryColumn, row: int) -> int | None:
    value = col[row]
    if value is None or len(value) < 5 or value[0] != 0:
        return None
    return int.from_bytes(value[1:5], "big", signed=True)


def _reader_text(registry: Registry, subject: str | None, reader_schema: Any, ids: list[int]) -> str:
    if reader_schema is not None:
        return _schema_text(reader_schema)
    if subject is not None:
        if not isinstance(registry, SchemaRegistry):
            raise TypeError("subject= needs a SchemaRegistry (give reader_schema= with a mapping)")
        latest = registry.get_latest(subject)
        if latest.references:
            return json.dumps(to_json(_parse_registered(registry, latest)))
        return latest.schema
    known = sorted((i for i in ids if i >= 0), reverse=True)
    # Without a subject, the newest writer schema the registry knows (the highest id) is the reader; ids it
    # does not know fail their own rows later.
    for sid in known:
        if not isinstance(registry, SchemaRegistry):
            if sid in registry:
                return str(registry[sid])
            continue
        try:
            rs = registry.get_schema(int(sid))
        except SchemaRegistryError as e:
            if e.not_found:
                continue
            raise
        if rs.references:
            return json.dumps(to_json(_parse_registered(registry, rs)))
        return rs.schema
    raise ValueError("no value carries a schema id the registry knows: give subject= or reader_schema=")


# ------------------------------------------------------------------------------------------ decoding

def decode_avro(values: Any, registry: Any, *, subject: str | None = None, reader_schema: Any = None,
                mode: str = "FAILFAST", offsets: Any = None, partition: int | None = None) -> Any:
    """Decode Confluent-framed Avro ``values`` into an Arrow array (a ``StructArray`` for a record schema).

    ``values``: a :class:`~kafkawire.BinaryColumn` (``RecordColumns.value``) or a pyarrow binary array.
    ``registry``: a :class:`SchemaRegistry` (or its URL), or a mapping of schema id to schema text.
    The reader schema is ``reader_schema`` (JSON text or its decoded form) if given, else ``subject``'s
    latest version, else the writer schema with the highest id among the values. A null value is a null row.

    ``mode="FAILFAST"`` raises :class:`AvroDecodeError` at the first value that cannot be decoded, naming the
    row (and its ``offsets[row]`` and ``partition`` when given), the schema id and the cause;
    ``mode="PERMISSIVE"`` makes such rows null and adds a string field ``_error`` with the cause (a struct
    ``{value, _error}`` when the reader schema is not a record). An unreachable registry raises
    :class:`SchemaRegistryError` in both modes.
    """
    pa = require("pyarrow", "kafkawire.serde.decode_avro")
    if not isinstance(mode, str) or mode.upper() not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    permissive = mode.upper() == "PERMISSIVE"
    if subject is not None and not isinstance(subject, str):
        raise TypeError(f"subject must be a str, not {type(subject).__name__}")
    registry = as_registry(registry)
    col = values_column(values)
    ids = _IMPL.scan_ids(col.data, col.offsets, col.valid)
    reader = _reader_for(registry, _reader_text(registry, subject, reader_schema, ids))
    with reader.lock:
        for sid in ids:
            reader.add(registry, int(sid))
        plan = reader.plan
        if reader.arrays is None:
            reader.arrays = plan.arrays()
        nodes, kids = reader.arrays
        roots = dict(plan.roots)
        blobs = list(plan.blobs)
    cols = plan.columns
    raw, errors = _IMPL.decode(
        nodes, kids, blobs, [c.kind for c in cols], [c.width for c in cols], [list(c.children) for c in cols],
        plan.root_col, roots, col.data, col.offsets, col.valid, permissive)
    if errors and not permissive:
        row, cause = errors[0]
        offset = None
        if offsets is not None:
            offset = int(np.asarray(offsets)[row])
        raise AvroDecodeError(row, cause, schema_id=_row_schema_id(col, row), offset=offset, partition=partition)
    array = avro_arrow.build_arrays(cols, raw, plan.root_col)
    if not permissive:
        return array
    err = [None] * len(col)
    for row, cause in errors:
        err[row] = cause
    err_array = pa.array(err, pa.string())
    if isinstance(array, pa.StructArray):
        fields = [array.type.field(i) for i in range(array.type.num_fields)]
        children = [array.field(i) for i in range(array.type.num_fields)]
        return pa.StructArray.from_arrays(children + [err_array], fields=fields + [pa.field(ERROR_COLUMN, pa.string())],
                                          mask=array.is_null())
    return pa.StructArray.from_arrays([array, err_array], names=["value", ERROR_COLUMN])


# ------------------------------------------------------------------------------------------ encoding

def arrow_to_avro(typ: Any, name: str = "Record", *, nullable: bool = True, namespace: str = "kafkawire") -> Any:
    """An Avro schema (decoded JSON) for an Arrow type: what :func:`encode_avro` registers when the subject
    has no schema and none is given. Nullable fields become ``["null", T]`` with a null default."""
    pa = require("pyarrow", "kafkawire.serde.encode_avro")
    counter = [0]

    def conv(t: Any, name: str, nullable: bool) -> Any:
        a: Any
        if pa.types.is_boolean(t):
            a = "boolean"
        elif pa.types.is_integer(t):
            a = "long" if t.bit_width == 64 or (t.bit_width == 32 and pa.types.is_unsigned_integer(t)) else "int"
        elif pa.types.is_float32(t) or pa.types.is_float16(t):
            a = "float"
        elif pa.types.is_floating(t):
            a = "double"
        elif pa.types.is_string(t) or pa.types.is_large_string(t):
            a = "string"
        elif pa.types.is_fixed_size_binary(t):
            counter[0] += 1
            a = {"type": "fixed", "name": f"{name}_fixed{counter[0]}", "size": t.byte_width}
        elif pa.types.is_binary(t) or pa.types.is_large_binary(t):
            a = "bytes"
        elif pa.types.is_decimal(t):
            a = {"type": "bytes", "logicalType": "decimal", "precision": t.precision, "scale": t.scale}
        elif pa.types.is_date32(t) or pa.types.is_date64(t):
            a = {"type": "int", "logicalType": "date"}
        elif pa.types.is_timestamp(t):
            unit = {"s": "millis", "ms": "millis", "us": "micros", "ns": "nanos"}[t.unit]
            a = {"type": "long", "logicalType": f"{'' if t.tz else 'local-'}timestamp-{unit}"}
        elif pa.types.is_time32(t):
            a = {"type": "int", "logicalType": "time-millis"}
        elif pa.types.is_time64(t):
            a = {"type": "long", "logicalType": "time-micros"}
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            a = {"type": "array", "items": conv(t.value_type, name + "_item", t.value_field.nullable)}
        elif pa.types.is_map(t):
            a = {"type": "map", "values": conv(t.item_type, name + "_value", t.item_field.nullable)}
        elif pa.types.is_struct(t):
            counter[0] += 1
            fields = []
            for f in t:
                ft = conv(f.type, f"{name}_{f.name}", f.nullable)
                fd = {"name": f.name, "type": ft}
                if f.nullable:
                    fd["default"] = None
                fields.append(fd)
            a = {"type": "record", "name": name, "fields": fields}
            if counter[0] == 1:
                a["namespace"] = namespace
        elif pa.types.is_null(t):
            return "null"
        elif pa.types.is_dictionary(t):
            return conv(t.value_type, name, nullable)
        else:
            raise TypeError(f"no Avro type for Arrow {t}")
        return ["null", a] if nullable else a

    return conv(typ, name, nullable)


def encode_avro(struct_array_or_table: Any, registry: Any, *, subject: str, schema: Any = None) -> BinaryColumn:
    """Encode rows as Confluent-framed Avro values (a :class:`~kafkawire.BinaryColumn` for ``Client.produce``,
    ``Producer`` or a Spark write).

    ``struct_array_or_table``: a pyarrow ``StructArray``, ``Table`` or ``RecordBatch`` (one row per value; a
    null row is a null value). The schema is ``schema`` (registered under ``subject`` if it is not there yet),
    else ``subject``'s latest version, else one derived from the Arrow type (:func:`arrow_to_avro`),
    registered under ``subject``.
    """
    pa = require("pyarrow", "kafkawire.serde.encode_avro")
    reg = encoding_registry(registry, subject, "encode_avro", " to register or look up the schema")
    data = rows_as_struct_array(pa, struct_array_or_table)
    if schema is not None:
        text = _schema_text(schema)
        sid = reg.register(subject, text)
    else:
        try:
            latest = reg.get_latest(subject)
            text, sid = latest.schema, latest.schema_id
        except SchemaRegistryError as e:
            if not e.not_found:
                raise
            text = json.dumps(arrow_to_avro(data.type, nullable=False))
            sid = reg.register(subject, text)
    parsed = _parse_registered(reg, reg.get_schema(sid)) if schema is None else parse(text)
    bodies: list[bytes | None] = []
    valid = data.is_valid().to_pylist() if data.null_count else None
    for i, row in enumerate(data.to_pylist()):
        if valid is not None and not valid[i]:
            bodies.append(None)
            continue
        out = bytearray()
        try:
            encode_value(out, parsed, row)
        except (TypeError, ValueError, OverflowError, AvroSchemaError) as e:
            raise ValueError(f"row {i} does not fit the Avro schema of subject {subject!r}: {e}") from None
        bodies.append(bytes(out))
    return frame(sid, bodies)
