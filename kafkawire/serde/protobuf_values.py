"""Registry-framed Protobuf values to Arrow columns and back: :func:`decode_protobuf`, :func:`encode_protobuf`.

A Protobuf value in the Confluent wire format is magic byte 0, the schema id, the *message indexes* (a
zig-zag varint count, then that many zig-zag varint indexes, the path from the file's top-level messages
down to nested ones; a single 0 byte stands for ``[0]``), then the message. Schemas come from the registry
in either form it holds them (base64 descriptors or ``.proto`` text: :mod:`kafkawire.serde.protobuf_schema`).

This is the first, unoptimised stretch: messages are parsed by the ``protobuf`` runtime (upb, in C) one
value at a time and converted to rows, then built into Arrow in one call. Types: scalars as their Arrow
counterparts, ``bytes`` -> binary, enums -> string (the symbol), messages -> struct, ``repeated`` -> list,
``map<K, V>`` -> map; a message field that is not set is null, and so is a scalar with presence (proto3
``optional``, oneof members, proto2); other unset scalars are their defaults.
"""

from __future__ import annotations

from typing import Any

from .._optional import require
from ..binary import BinaryColumn
from .avro import MODES, AvroDecodeError
from .framing import frame, values_column
from .protobuf_schema import SERIALIZED, ProtobufSchema, ProtobufSchemaError
from .registered import as_registry, encoding_registry
from .registry import SchemaRegistry, SchemaRegistryError

__all__ = ["ProtobufDecodeError", "ProtobufSchemaError", "decode_protobuf", "encode_protobuf"]

ERROR_COLUMN = "_error"
_MAX_INDEXES = 64


class ProtobufDecodeError(AvroDecodeError):
    """A Protobuf value could not be decoded (FAILFAST): ``row``, ``offset``, ``partition``, ``cause``."""

    kind = "Protobuf"


def _pb() -> Any:
    return require("google.protobuf", "kafkawire.serde.decode_protobuf", extra="protobuf")


def _repeated(f: Any) -> bool:
    """Whether a field is repeated (protobuf 6+ has ``is_repeated``; ``label`` went away in 7)."""
    flag = getattr(f, "is_repeated", None)
    if flag is not None:
        return bool(flag)
    return bool(f.label == f.LABEL_REPEATED)


def _arrow_type(desc: Any, depth: int = 0) -> Any:
    pa = require("pyarrow", "kafkawire.serde.decode_protobuf")
    from google.protobuf.descriptor import FieldDescriptor as F

    if depth > 32:
        raise ProtobufSchemaError(f"message {desc.full_name} nests deeper than 32 levels (recursive?)")
    scalar = {F.TYPE_DOUBLE: pa.float64(), F.TYPE_FLOAT: pa.float32(), F.TYPE_INT64: pa.int64(),
              F.TYPE_UINT64: pa.uint64(), F.TYPE_INT32: pa.int32(), F.TYPE_FIXED64: pa.uint64(),
              F.TYPE_FIXED32: pa.uint32(), F.TYPE_BOOL: pa.bool_(), F.TYPE_STRING: pa.string(),
              F.TYPE_BYTES: pa.binary(), F.TYPE_UINT32: pa.uint32(), F.TYPE_SFIXED32: pa.int32(),
              F.TYPE_SFIXED64: pa.int64(), F.TYPE_SINT32: pa.int32(), F.TYPE_SINT64: pa.int64(),
              F.TYPE_ENUM: pa.string()}

    def field_type(f: Any) -> Any:
        if f.type in (F.TYPE_MESSAGE, F.TYPE_GROUP):
            md = f.message_type
            if md.GetOptions().map_entry:
                return pa.map_(field_type(md.fields_by_name["key"]), field_type(md.fields_by_name["value"]))
            return _arrow_type(md, depth + 1)
        return scalar[f.type]

    fields = []
    for f in desc.fields:
        t = field_type(f)
        is_map = f.type == F.TYPE_MESSAGE and f.message_type.GetOptions().map_entry
        if _repeated(f) and not is_map:
            t = pa.list_(t)
        fields.append(pa.field(f.name, t))
    return pa.struct(fields)


def _row(msg: Any) -> dict[str, Any]:
    from google.protobuf.descriptor import FieldDescriptor as F

    out: dict[str, Any] = {}
    for f in msg.DESCRIPTOR.fields:
        v = getattr(msg, f.name)
        if f.type in (F.TYPE_MESSAGE, F.TYPE_GROUP):
            if f.message_type.GetOptions().map_entry:
                vf = f.message_type.fields_by_name["value"]
                if vf.type == F.TYPE_MESSAGE:
                    out[f.name] = [(k, _row(x)) for k, x in v.items()]
                elif vf.type == F.TYPE_ENUM:
                    out[f.name] = [(k, vf.enum_type.values_by_number[x].name
                                    if x in vf.enum_type.values_by_number else str(x)) for k, x in v.items()]
                else:
                    out[f.name] = list(v.items())
            elif _repeated(f):
                out[f.name] = [_row(x) for x in v]
            else:
                out[f.name] = _row(v) if msg.HasField(f.name) else None
        elif not _repeated(f) and f.has_presence and not msg.HasField(f.name):
            out[f.name] = None  # proto3 optional, oneof members, proto2: unset is null, not the default
        elif f.type == F.TYPE_ENUM:
            names = f.enum_type.values_by_number
            out[f.name] = ([_symbol(names, x) for x in v] if _repeated(f) else _symbol(names, v))
        elif _repeated(f):
            out[f.name] = list(v)
        else:
            out[f.name] = v
    return out


def _symbol(names: Any, number: int) -> str:
    """An enum value's name; a number the schema does not know (open enums, proto3) as its digits."""
    return str(names[number].name) if number in names else str(number)


def _indexes(raw: bytes) -> tuple[list[int], int]:
    """The message indexes after the header, and where the message starts."""
    pos = 5

    def varint() -> int:
        nonlocal pos
        z = shift = 0
        while True:
            if pos >= len(raw):
                raise ValueError("message indexes run past the end of the value")
            c = raw[pos]
            pos += 1
            z |= (c & 0x7F) << shift
            if c < 0x80:
                break
            shift += 7
            if shift > 63:
                raise ValueError("message index varint longer than 10 bytes")
        return (z >> 1) ^ -(z & 1)

    count = varint()
    if count == 0:
        return [0], pos
    if not 0 < count <= _MAX_INDEXES:
        raise ValueError(f"message index count {count} is not between 1 and {_MAX_INDEXES}")
    return [varint() for _ in range(count)], pos


class _WriterSchemas:
    """Writer schemas by id, fetched once; an id the registry does not know (or cannot be parsed) is
    remembered with its reason, which every value carrying it raises as a ValueError."""

    def __init__(self, registry: SchemaRegistry) -> None:
        self.registry = registry
        self._by_id: dict[int, ProtobufSchema | str] = {}

    def get(self, sid: int) -> ProtobufSchema:
        got = self._by_id.get(sid)
        if got is None:
            try:
                got = ProtobufSchema(self.registry, self.registry.get_schema(sid, format=SERIALIZED))
            except SchemaRegistryError as e:
                if not e.not_found:
                    raise
                got = f"unknown schema id {sid} (not in the registry)"
            except ProtobufSchemaError as e:
                got = str(e)
            self._by_id[sid] = got
        if isinstance(got, str):
            raise ValueError(got)
        return got


def _reader_message(writers: _WriterSchemas, raws: list[Any], subject: str | None, message: str | None) -> Any:
    """The reader message: ``message`` of ``subject``'s latest schema (else of the highest writer id among the
    values); without ``message``, the one the first value's indexes name."""

    def pick(schema: ProtobufSchema) -> Any:
        if message is not None:
            return schema.named(message)[0]
        for raw in raws:
            if raw is not None and len(raw) >= 5 and raw[0] == 0:
                try:
                    return schema.message(_indexes(raw)[0])
                except ValueError:
                    continue
        return schema.only()[0]

    if subject is not None:
        return pick(ProtobufSchema(writers.registry, writers.registry.get_latest(subject, format=SERIALIZED)))
    ids = sorted({int.from_bytes(r[1:5], "big", signed=True) for r in raws
                  if r is not None and len(r) >= 5 and r[0] == 0}, reverse=True)
    reasons = []
    for sid in ids:
        try:
            return pick(writers.get(sid))
        except ValueError as e:
            reasons.append(str(e))
    raise ValueError("no value carries a schema id the registry knows: give subject="
                     + (f" ({'; '.join(reasons[:3])})" if reasons else ""))


def _parse_rows(raws: list[Any], writers: _WriterSchemas, permissive: bool) -> tuple[list[Any], dict[int, str]]:
    """Each value parsed with its own writer schema and message indexes, as a dict (None: a null value or, with
    its reason in the errors, a bad one; FAILFAST stops at the first)."""
    from google.protobuf.message import DecodeError

    rows: list[Any] = []
    errors: dict[int, str] = {}
    for row, raw in enumerate(raws):
        if raw is None:
            rows.append(None)
            continue
        try:
            if len(raw) < 5:
                raise ValueError(f"value of {len(raw)} bytes is shorter than the 5-byte Confluent header")
            if raw[0] != 0:
                raise ValueError(f"bad magic byte {raw[0]} (the Confluent wire format starts with 0)")
            schema = writers.get(int.from_bytes(raw[1:5], "big", signed=True))
            indexes, start = _indexes(raw)
            msg = schema.message_class(schema.message(indexes)).FromString(raw[start:])
            rows.append(_row(msg))
        except (ValueError, DecodeError, RecursionError) as e:
            errors[row] = str(e) or type(e).__name__
            rows.append(None)
            if not permissive:
                break
    return rows, errors


def _rows_to_arrow(pa: Any, rows: list[Any], typ: Any, reader: Any, errors: dict[int, str]) -> Any:
    """The rows as one Arrow array of the reader's type; a row whose writer fields do not fit it becomes null
    with its reason added to ``errors``."""
    try:
        return pa.array(rows, typ)
    except (pa.ArrowInvalid, pa.ArrowTypeError, KeyError):
        pass
    # a writer message whose fields do not fit the reader's types: find the rows
    array_rows = []
    for row, r in enumerate(rows):
        try:
            pa.array([r], typ)
            array_rows.append(r)
        except (pa.ArrowInvalid, pa.ArrowTypeError, KeyError) as e:
            errors[row] = f"does not fit the reader message {reader.full_name}: {e}"
            array_rows.append(None)
    return pa.array(array_rows, typ)


def decode_protobuf(values: Any, registry: Any, *, subject: str | None = None, message: str | None = None,
                    mode: str = "FAILFAST", offsets: Any = None, partition: int | None = None) -> Any:
    """Decode Confluent-framed Protobuf ``values`` into a ``pyarrow.StructArray``.

    The reader type is ``message`` (full or short name) of ``subject``'s latest schema (else of the highest
    writer id among the values); without ``message``, the message the first value's indexes name. Each value
    is parsed with its own writer schema and message indexes, and its fields are matched to the reader's by
    name. Modes and errors as :func:`kafkawire.serde.decode_avro`.
    """
    pa = require("pyarrow", "kafkawire.serde.decode_protobuf")
    _pb()
    if not isinstance(mode, str) or mode.upper() not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    permissive = mode.upper() == "PERMISSIVE"
    reg = as_registry(registry)
    if not isinstance(reg, SchemaRegistry):
        raise TypeError("decode_protobuf needs a SchemaRegistry (Protobuf schemas come with references)")
    raws = values_column(values).to_pylist()
    writers = _WriterSchemas(reg)
    reader = _reader_message(writers, raws, subject, message)
    typ = _arrow_type(reader)
    rows, errors = _parse_rows(raws, writers, permissive)
    if not errors or permissive:
        array = _rows_to_arrow(pa, rows, typ, reader, errors)
    if errors and not permissive:
        row = min(errors)
        raise ProtobufDecodeError(row, errors[row], offset=int(offsets[row]) if offsets is not None else None,
                                  partition=partition)
    if not permissive:
        return array
    err = pa.array([errors.get(i) for i in range(len(rows))], pa.string())
    return pa.StructArray.from_arrays([array.field(i) for i in range(typ.num_fields)] + [err],
                                      fields=list(typ) + [pa.field(ERROR_COLUMN, pa.string())],
                                      mask=array.is_null())


def encode_protobuf(struct_array_or_table: Any, registry: Any, *, subject: str,
                    message: str | None = None) -> BinaryColumn:
    """Encode rows as Confluent-framed Protobuf values of ``message`` (full or short name; default: the one
    top-level message) of ``subject``'s latest schema. Struct fields are matched to message fields by name."""
    pa = require("pyarrow", "kafkawire.serde.encode_protobuf")
    _pb()
    reg = encoding_registry(registry, subject, "encode_protobuf", "")
    latest = reg.get_latest(subject, format=SERIALIZED)
    schema = ProtobufSchema(reg, latest)
    desc, indexes = schema.named(message) if message is not None else schema.only()
    cls = schema.message_class(desc)
    header = bytearray()
    if indexes == [0]:
        header.append(0)  # the single 0 byte that stands for [0]
    else:
        for n in [len(indexes), *indexes]:
            z = (n << 1) ^ (n >> 63)
            while z > 0x7F:
                header.append((z & 0x7F) | 0x80)
                z >>= 7
            header.append(z)
    data = struct_array_or_table
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        data = data.to_struct_array()
    if isinstance(data, pa.ChunkedArray):
        data = data.combine_chunks()
    bodies: list[bytes | None] = []
    for i, row in enumerate(data.to_pylist()):
        if row is None:
            bodies.append(None)
            continue
        try:
            msg = cls(**_fields(desc, row))
        except (TypeError, ValueError) as e:
            raise ValueError(f"row {i} does not fit message {desc.full_name}: {e}") from None
        bodies.append(bytes(header) + msg.SerializeToString())
    return frame(latest.schema_id, bodies)


def _fields(desc: Any, row: dict[str, Any]) -> dict[str, Any]:
    from google.protobuf.descriptor import FieldDescriptor as F

    out: dict[str, Any] = {}
    for f in desc.fields:
        v = row.get(f.name)
        if v is None:
            continue
        if f.type == F.TYPE_MESSAGE and f.message_type.GetOptions().map_entry:
            vf = f.message_type.fields_by_name["value"]
            items = v.items() if isinstance(v, dict) else v
            out[f.name] = {k: (_fields(vf.message_type, x) if vf.type == F.TYPE_MESSAGE else x) for k, x in items}
        elif f.type == F.TYPE_MESSAGE:
            if _repeated(f):
                out[f.name] = [_fields(f.message_type, x) for x in v]
            else:
                out[f.name] = _fields(f.message_type, v)
        else:
            out[f.name] = v
    return out
