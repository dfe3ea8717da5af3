"""Registry-framed Protobuf values to Arrow columns and back: :func:`decode_protobuf`, :func:`encode_protobuf`.

A Protobuf value in the Confluent wire format is magic byte 0, the schema id, the *message indexes* (a
zig-zag varint count, then that many zig-zag varint indexes, the path from the file's top-level messages
down to nested ones; a single 0 byte stands for ``[0]``), then the message. Schemas come from the registry
in either form it holds them (base64 descriptors or ``.proto`` text: :mod:`kafkawire.serde.protobuf_schema`).

Decoding is one compiled pass (:mod:`._protobuf`, or its pure-Python twin with ``KAFKAWIRE_PURE=1``) running
the program :mod:`.protobuf_plan` builds from the writer and reader descriptors. Types: scalars as their Arrow
counterparts, ``bytes`` -> binary, enums -> string (the symbol), messages -> struct, ``repeated`` -> list,
``map<K, V>`` -> map; a message field that is not set is null, and so is a scalar with presence (proto3
``optional``, oneof members, proto2); other unset scalars are their defaults.
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any

import numpy as np

from .._optional import require
from ..binary import BinaryColumn
from .avro import MODES, AvroDecodeError
from .framing import frame, values_column
from .protobuf_plan import Program, build_arrays, build_columns, compile_program
from .protobuf_schema import SERIALIZED, ProtobufSchema, ProtobufSchemaError
from .registered import as_registry, encoding_registry
from .registry import SchemaRegistry, SchemaRegistryError

__all__ = ["ProtobufDecodeError", "ProtobufSchemaError", "decode_protobuf", "encode_protobuf"]

ERROR_COLUMN = "_error"


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


def _load_impl() -> tuple[Any, bool]:
    from . import _protobuf_pure

    if os.environ.get("KAFKAWIRE_PURE", "") not in ("", "0"):
        return _protobuf_pure, False
    try:
        from . import _protobuf  # type: ignore[attr-defined]

        return _protobuf, True
    except ImportError:
        if os.environ.get("KAFKAWIRE_REQUIRE_COMPILED", "") not in ("", "0"):
            raise
        return _protobuf_pure, False


_IMPL, COMPILED = _load_impl()

# Writer schemas by registry client and id (an id's schema never changes): one descriptor pool each, built
# (and .proto text compiled) once per process, not once per call.
_SCHEMAS: weakref.WeakKeyDictionary[SchemaRegistry, dict[int, ProtobufSchema | str]] = weakref.WeakKeyDictionary()
_SCHEMAS_LOCK = threading.Lock()


class _WriterSchemas:
    """Writer schemas by id, fetched once; an id the registry does not know (or cannot be parsed) is
    remembered with its reason, which every value carrying it raises as a ValueError."""

    def __init__(self, registry: SchemaRegistry) -> None:
        self.registry = registry
        with _SCHEMAS_LOCK:
            self._by_id = _SCHEMAS.setdefault(registry, {})

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


def _index_list(idx: bytes) -> list[int]:
    """Message index bytes (the zig-zag count, then the indexes) as the indexes; ``[0]`` for a count of 0."""
    out: list[int] = []
    z = shift = 0
    for c in idx:
        z |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            out.append((z >> 1) ^ -(z & 1))
            z = shift = 0
    return out[1:] if out and out[0] else [0]


def _reader_message(writers: _WriterSchemas, heads: list[tuple[int, bytes]], subject: str | None,
                    message: str | None) -> Any:
    """The reader message: ``message`` of ``subject``'s latest schema (else of the highest writer id among the
    values); without ``message``, the one the first value's indexes name."""

    def pick(schema: ProtobufSchema) -> Any:
        if message is not None:
            return schema.named(message)[0]
        for _, idx in heads:
            try:
                return schema.message(_index_list(idx))
            except ValueError:
                continue
        return schema.only()[0]

    if subject is not None:
        return pick(writers.get(writers.registry.get_latest(subject, format=SERIALIZED).schema_id))
    reasons = []
    for sid in sorted({sid for sid, _ in heads}, reverse=True):
        try:
            return pick(writers.get(sid))
        except ValueError as e:
            reasons.append(str(e))
    raise ValueError("no value carries a schema id the registry knows: give subject="
                     + (f" ({'; '.join(reasons[:3])})" if reasons else ""))


def decode_protobuf(values: Any, registry: Any, *, subject: str | None = None, message: str | None = None,
                    mode: str = "FAILFAST", offsets: Any = None, partition: int | None = None) -> Any:
    """Decode Confluent-framed Protobuf ``values`` into a ``pyarrow.StructArray`` in one compiled pass.

    The reader type is ``message`` (full or short name) of ``subject``'s latest schema (else of the highest
    writer id among the values); without ``message``, the message the first value's indexes name. Each value
    is decoded with its own writer message (schema id and message indexes), whose fields are matched to the
    reader's by name (a field of the same name and another type makes that writer's values errors). Types
    and presence as :mod:`kafkawire.serde.protobuf_plan` says. Modes and errors as
    :func:`kafkawire.serde.decode_avro`.
    """
    pa = require("pyarrow", "kafkawire.serde.decode_protobuf")
    _pb()
    if not isinstance(mode, str) or mode.upper() not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    permissive = mode.upper() == "PERMISSIVE"
    reg = as_registry(registry)
    if not isinstance(reg, SchemaRegistry):
        raise TypeError("decode_protobuf needs a SchemaRegistry (Protobuf schemas come with references)")
    col = values_column(values)
    heads = _IMPL.scan_heads(col.data, col.offsets, col.valid)
    writers = _WriterSchemas(reg)
    reader = _reader_message(writers, heads, subject, message)
    try:
        cols, root_col = build_columns(reader)
    except ValueError as e:
        raise ProtobufSchemaError(str(e)) from None
    prog = Program()
    roots: dict[tuple[int, bytes], Any] = {}
    for sid, idx in heads:
        try:
            roots[(sid, idx)] = compile_program(prog, cols, writers.get(sid).message(_index_list(idx)), reader,
                                                root_col)
        except ValueError as e:
            roots[(sid, idx)] = f"schema id {sid}: {e}"
    msgs, slots, lookup = prog.arrays()
    raw, errors = _IMPL.decode(msgs, slots, lookup, list(prog.blobs), [c.kind for c in cols],
                               [c.width for c in cols], [list(c.children) for c in cols], root_col, roots,
                               col.data, col.offsets, col.valid, permissive)
    if errors and not permissive:
        row, cause = errors[0]
        raise ProtobufDecodeError(row, cause, offset=int(np.asarray(offsets)[row]) if offsets is not None else None,
                                  partition=partition)
    array = build_arrays(cols, raw, root_col)
    if not permissive:
        return array
    err: list[str | None] = [None] * len(col)
    for row, cause in errors:
        err[row] = cause
    typ = array.type
    return pa.StructArray.from_arrays([array.field(i) for i in range(typ.num_fields)] + [pa.array(err, pa.string())],
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
