"""Compile a Protobuf message descriptor (writer) against the reader's into a decoder program, and its Arrow.

The decoders (the compiled ``_protobuf`` extension and its pure-Python twin ``_protobuf_pure``) never look at
a descriptor: they run a *program*. Columns come from the reader message (one per reader field, Arrow's nested
layout: message -> struct, ``repeated`` -> list, ``map<K, V>`` -> map); programs come from each writer
message (schema id + message indexes) matched to the reader's fields by name, so values written under several
schema versions decode into the same columns. A program is a table of *messages* (``col, slots_off,
nslots, lookup_off, lookup_n``), each with one *slot* per reader field (``number`` (the writer's field number,
-1 when the writer lacks the field), ``op, col, flags, child, oneof, default, blob``) and a lookup from field
number to slot. Decoding a message scans its fields, keeping the last occurrence of each singular one (the
spec's last-one-wins; message fields merge, as concatenation does) and appending repeated ones as they come
(packed or not; a map key that comes twice keeps both entries, where the runtime keeps the last), then writes
every slot: the value, else null when the field has presence (messages, proto3
``optional``, oneof members, proto2), else the field's default.

Types as Spark's ``from_protobuf`` gives them: enums as their symbol (a number the enum does not name, as its
digits), ``google.protobuf.Timestamp`` as ``timestamp[us, UTC]``, ``Duration`` as ``duration[us]``; wrappers
stay structs of one ``value`` (Spark's default, ``unwrap.primitive.wrapper.types=false``).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Column", "Program", "build_arrays", "build_columns", "compile_program"]

# column kinds
K_FIXED, K_VAR, K_STRUCT, K_LIST, K_MAP = range(5)
# ops (the value a slot holds); wire type: OP_WIRE
(O_INT32, O_INT64, O_UINT32, O_UINT64, O_SINT32, O_SINT64, O_BOOL, O_ENUM, O_FIXED32, O_FIXED64, O_STRING,
 O_BYTES, O_MSG, O_MAP, O_TIMESTAMP, O_DURATION) = range(16)
OP_WIRE = [0, 0, 0, 0, 0, 0, 0, 0, 5, 1, 2, 2, 2, 2, 2, 2]
# slot flags
F_REPEATED, F_PRESENCE, F_PACKABLE, F_EMPTY_MESSAGE = 1, 2, 4, 8
MSG_WIDTH, SLOT_WIDTH = 5, 8
MAX_LOOKUP = 4096
MAX_SCHEMA_DEPTH = 32

_WKT = {"google.protobuf.Timestamp": O_TIMESTAMP, "google.protobuf.Duration": O_DURATION}


@dataclass
class Column:
    """One output column: ``kind``, ``width`` (bytes per K_FIXED slot), ``children``, ``arrow`` (a tag),
    ``names`` (a struct's field names), ``enum`` (an enum's (number, symbol) pairs)."""

    kind: int
    width: int = 0
    children: list[int] = field(default_factory=list)
    arrow: str = ""
    names: list[str] = field(default_factory=list)
    enum: list[tuple[int, str]] = field(default_factory=list)


def _repeated(f: Any) -> bool:
    flag = getattr(f, "is_repeated", None)
    return bool(flag) if flag is not None else bool(f.label == f.LABEL_REPEATED)


def _is_map(f: Any) -> bool:
    return bool(f.type == f.TYPE_MESSAGE and f.message_type.GetOptions().map_entry)


def _op(f: Any) -> int:
    """The op of field ``f``'s values."""
    from google.protobuf.descriptor import FieldDescriptor as F

    t = f.type
    if t in (F.TYPE_MESSAGE, F.TYPE_GROUP):
        if t == F.TYPE_GROUP:
            raise ValueError(f"field {f.full_name} is a group (proto2 groups are not decoded)")
        if _is_map(f):
            return O_MAP
        return _WKT.get(f.message_type.full_name, O_MSG)
    return {F.TYPE_INT32: O_INT32, F.TYPE_INT64: O_INT64, F.TYPE_UINT32: O_UINT32, F.TYPE_UINT64: O_UINT64,
            F.TYPE_SINT32: O_SINT32, F.TYPE_SINT64: O_SINT64, F.TYPE_BOOL: O_BOOL, F.TYPE_ENUM: O_ENUM,
            F.TYPE_FIXED32: O_FIXED32, F.TYPE_SFIXED32: O_FIXED32, F.TYPE_FLOAT: O_FIXED32,
            F.TYPE_FIXED64: O_FIXED64, F.TYPE_SFIXED64: O_FIXED64, F.TYPE_DOUBLE: O_FIXED64,
            F.TYPE_STRING: O_STRING, F.TYPE_BYTES: O_BYTES}[t]


_SCALAR = {O_INT32: (4, "int32"), O_INT64: (8, "int64"), O_UINT32: (4, "uint32"), O_UINT64: (8, "uint64"),
           O_SINT32: (4, "int32"), O_SINT64: (8, "int64"), O_BOOL: (1, "bool"), O_ENUM: (4, "enum"),
           O_TIMESTAMP: (8, "timestamp"), O_DURATION: (8, "duration")}


def _value_column(cols: list[Column], f: Any, op: int, depth: int) -> int:
    """The column of one value of field ``f`` (an item of it when repeated)."""
    from google.protobuf.descriptor import FieldDescriptor as F

    def add(c: Column) -> int:
        cols.append(c)
        return len(cols) - 1

    if op in _SCALAR:
        width, tag = _SCALAR[op]
        enum = [(v.number, v.name) for v in f.enum_type.values] if op == O_ENUM else []
        return add(Column(K_FIXED, width, arrow=tag, enum=enum))
    if op == O_FIXED32:
        return add(Column(K_FIXED, 4, arrow={F.TYPE_FLOAT: "float32", F.TYPE_SFIXED32: "int32"}.get(f.type, "uint32")))
    if op == O_FIXED64:
        return add(Column(K_FIXED, 8, arrow={F.TYPE_DOUBLE: "float64", F.TYPE_SFIXED64: "int64"}.get(f.type, "uint64")))
    if op in (O_STRING, O_BYTES):
        return add(Column(K_VAR, arrow="string" if op == O_STRING else "binary"))
    if op == O_MAP:
        entry = f.message_type
        k = _value_column(cols, entry.fields_by_name["key"], _op(entry.fields_by_name["key"]), depth + 1)
        v = _value_column(cols, entry.fields_by_name["value"], _op(entry.fields_by_name["value"]), depth + 1)
        return add(Column(K_MAP, children=[k, v], arrow="map"))
    return message_columns(cols, f.message_type, depth + 1)


def message_columns(cols: list[Column], desc: Any, depth: int = 0) -> int:
    """The struct column of message ``desc`` (and its fields' columns); its index."""
    if depth > MAX_SCHEMA_DEPTH:
        raise ValueError(f"message {desc.full_name} nests deeper than {MAX_SCHEMA_DEPTH} levels (recursive?): "
                         "Arrow columns cannot hold it")
    children = []
    for f in desc.fields:
        op = _op(f)
        c = _value_column(cols, f, op, depth)
        if _repeated(f) and op != O_MAP:
            cols.append(Column(K_LIST, children=[c], arrow="list"))
            c = len(cols) - 1
        children.append(c)
    cols.append(Column(K_STRUCT, children=children, arrow="struct", names=[f.name for f in desc.fields]))
    return len(cols) - 1


def build_columns(reader: Any) -> tuple[list[Column], int]:
    """The columns of reader message ``reader`` and the root's index."""
    cols: list[Column] = []
    root = message_columns(cols, reader)
    return cols, root


@dataclass
class Program:
    """The decoder program: ``msgs`` (n x MSG_WIDTH), ``slots`` (n x SLOT_WIDTH), ``lookup`` (int32),
    ``blobs``; ``roots`` maps (schema id, message index bytes) to a message (or an error text)."""

    msgs: list[list[int]] = field(default_factory=list)
    slots: list[list[int]] = field(default_factory=list)
    lookup: list[int] = field(default_factory=list)
    blobs: list[bytes] = field(default_factory=list)
    memo: dict[tuple[Any, Any, int], int] = field(default_factory=dict)

    def arrays(self) -> tuple[Any, Any, Any]:
        msgs = np.array(self.msgs or [[0] * MSG_WIDTH], dtype=np.int64).reshape(-1, MSG_WIDTH)
        slots = np.array(self.slots or [[0] * SLOT_WIDTH], dtype=np.int64).reshape(-1, SLOT_WIDTH)
        return msgs, slots, np.array(self.lookup or [0], dtype=np.int32)


def _default(f: Any, op: int) -> int:
    """A scalar field's default as the raw value a slot holds (varint value, or the fixed bits)."""
    v = f.default_value
    if op == O_ENUM:
        return int(v)
    if op == O_BOOL:
        return int(bool(v))
    if op == O_FIXED32:
        fmt = {f.TYPE_FLOAT: "<f", f.TYPE_SFIXED32: "<i"}.get(f.type, "<I")
        return int(struct.unpack("<I", struct.pack(fmt, float(v) if fmt == "<f" else int(v)))[0])
    if op == O_FIXED64:
        fmt = {f.TYPE_DOUBLE: "<d", f.TYPE_SFIXED64: "<q"}.get(f.type, "<Q")
        return int(struct.unpack("<q", struct.pack(fmt, float(v) if fmt == "<d" else int(v)))[0])
    if op in (O_INT32, O_INT64, O_UINT32, O_UINT64):
        n = int(v)
    elif op in (O_SINT32, O_SINT64):
        n = (int(v) << 1) ^ (int(v) >> 63)  # stored zig-zagged, as the wire holds it
    else:
        return 0
    n &= (1 << 64) - 1
    return n - (1 << 64) if n >= 1 << 63 else n  # the varint's 64 bits as an int64


def _same_type(w: Any, r: Any) -> bool:
    if _op(w) != _op(r) or _repeated(w) != _repeated(r) or w.type != r.type:
        return False
    return True


def compile_program(prog: Program, cols: list[Column], writer: Any, reader: Any, col: int, depth: int = 0) -> int:
    """The program message that decodes writer message ``writer`` into reader ``reader``'s column ``col``;
    a ValueError when a field of the same name has another type."""
    key = (writer, reader, col)
    if key in prog.memo:
        return prog.memo[key]
    if depth > MAX_SCHEMA_DEPTH:
        raise ValueError(f"message {reader.full_name} nests deeper than {MAX_SCHEMA_DEPTH} levels")
    m = len(prog.msgs)
    prog.msgs.append([col, 0, 0, 0, 0])
    prog.memo[key] = m
    struct_col = cols[col] if col >= 0 else None
    rows: list[list[int]] = []
    for i, rf in enumerate(reader.fields):
        wf = writer.fields_by_name.get(rf.name)
        if wf is not None and not _same_type(wf, rf):
            raise ValueError(f"field {rf.name!r} of {writer.full_name} is not of the reader's type")
        op = _op(rf)
        c = struct_col.children[i] if struct_col is not None else _entry_cols(cols, col, i)
        flags = 0
        rep = _repeated(rf) and op != O_MAP
        if rep or op == O_MAP:
            flags |= F_REPEATED
        if rep and op in _SCALAR or rep and op in (O_FIXED32, O_FIXED64):
            flags |= F_PACKABLE
        if not (rep or op == O_MAP) and rf.has_presence and struct_col is not None:
            flags |= F_PRESENCE
        child = -1
        item = cols[c].children[0] if rep else c
        if op == O_MSG:
            child = compile_program(prog, cols, wf.message_type if wf else rf.message_type, rf.message_type, item,
                                    depth + 1)
        elif op == O_MAP:
            child = compile_program(prog, cols, wf.message_type if wf else rf.message_type, rf.message_type,
                                    -1 - c, depth + 1)
        oneof = rf.containing_oneof.index if rf.containing_oneof is not None else -1
        blob = -1
        if op in (O_STRING, O_BYTES) and not rep and rf.default_value:
            d = rf.default_value
            prog.blobs.append(d.encode() if isinstance(d, str) else bytes(d))
            blob = len(prog.blobs) - 1
        dflt = 0 if rep or op in (O_MSG, O_MAP, O_STRING, O_BYTES, O_TIMESTAMP, O_DURATION) else _default(rf, op)
        rows.append([wf.number if wf is not None else -1, op, c, flags, child, oneof, dflt, blob])
    if struct_col is None and reader.GetOptions().map_entry and reader.fields_by_name["value"].type == 11:
        rows[1][3] |= F_EMPTY_MESSAGE  # a map entry without its value holds the empty message, not null
    numbers = [r[0] for r in rows if r[0] > 0]
    top = max(numbers, default=0)
    lookup_off, lookup_n = len(prog.lookup), 0
    if top <= MAX_LOOKUP:
        table = [-1] * (top + 1)
        for k, r in enumerate(rows):
            if r[0] > 0:
                table[r[0]] = k
        prog.lookup.extend(table)
        lookup_n = top + 1
    prog.msgs[m] = [col, len(prog.slots), len(rows), lookup_off, lookup_n if top <= MAX_LOOKUP else -1]
    prog.slots.extend(rows)
    return m


def _entry_cols(cols: list[Column], col: int, i: int) -> int:
    """A map entry's key (i=0) or value (i=1) column; a map entry's message is given ``col`` = -1 - map column."""
    return cols[-1 - col].children[i]


# ---------------------------------------------------------------------------------------------------- Arrow
def _pa() -> Any:
    from .._optional import require

    return require("pyarrow", "kafkawire.serde.decode_protobuf")


def arrow_type(cols: list[Column], i: int) -> Any:
    pa = _pa()
    c = cols[i]
    tag = c.arrow
    simple = {"int32": pa.int32(), "int64": pa.int64(), "uint32": pa.uint32(), "uint64": pa.uint64(),
              "float32": pa.float32(), "float64": pa.float64(), "bool": pa.bool_(), "enum": pa.string(),
              "string": pa.string(), "binary": pa.binary(), "timestamp": pa.timestamp("us", "UTC"),
              "duration": pa.duration("us")}
    if tag in simple:
        return simple[tag]
    if tag == "struct":
        return pa.struct([pa.field(n, arrow_type(cols, ch)) for n, ch in zip(c.names, c.children)])
    if tag == "list":
        return pa.list_(arrow_type(cols, c.children[0]))
    assert tag == "map"
    return pa.map_(arrow_type(cols, c.children[0]), arrow_type(cols, c.children[1]))


def _bitmap(valid: Any, length: int) -> tuple[Any, int]:
    pa = _pa()
    v = np.frombuffer(valid, dtype=np.uint8, count=length)
    nulls = int(length - np.count_nonzero(v))
    if nulls == 0:
        return None, 0
    return pa.py_buffer(np.packbits(v, bitorder="little")), nulls


def build_arrays(cols: list[Column], raw: list[tuple[int, Any, Any, Any]], i: int) -> Any:
    """The Arrow array of column ``i`` from the decoder's raw buffers (length, validity bytes, offsets, data)."""
    pa = _pa()
    c = cols[i]
    length, valid, offsets, data = raw[i]
    typ = arrow_type(cols, i)
    bitmap, nulls = _bitmap(valid, length)
    if c.kind == K_FIXED:
        if c.arrow == "bool":
            values = pa.py_buffer(np.packbits(np.frombuffer(data, dtype=np.uint8, count=length), bitorder="little"))
            return pa.Array.from_buffers(pa.bool_(), length, [bitmap, values], nulls)
        if c.arrow == "enum":
            return _enum_symbols(pa, c, np.frombuffer(data, dtype=np.int32, count=length), bitmap, nulls, length)
        return pa.Array.from_buffers(typ, length, [bitmap, pa.py_buffer(data)], nulls)
    if c.kind == K_VAR:
        return pa.Array.from_buffers(typ, length, [bitmap, pa.py_buffer(offsets), pa.py_buffer(data)], nulls)
    if c.kind == K_STRUCT:
        children = [build_arrays(cols, raw, ch) for ch in c.children]
        return pa.Array.from_buffers(typ, length, [bitmap], nulls, children=children)
    if c.kind == K_LIST:
        child = build_arrays(cols, raw, c.children[0])
        return pa.Array.from_buffers(typ, length, [bitmap, pa.py_buffer(offsets)], nulls, children=[child])
    keys = build_arrays(cols, raw, c.children[0])
    values = build_arrays(cols, raw, c.children[1])
    entries = pa.StructArray.from_arrays([keys, values], fields=[pa.field("key", keys.type, nullable=False),
                                                                 pa.field("value", values.type)])
    return pa.Array.from_buffers(typ, length, [bitmap, pa.py_buffer(offsets)], nulls, children=[entries])


def _enum_symbols(pa: Any, c: Column, numbers: Any, bitmap: Any, nulls: int, length: int) -> Any:
    """Enum numbers as their symbols (the first name of a number; a number the enum lacks as its digits)."""
    known: dict[int, str] = {}
    for n, name in c.enum:
        known.setdefault(n, name)
    keys = np.array(sorted(known), dtype=np.int32)
    symbols = [known[int(k)] for k in keys]
    pos = np.searchsorted(keys, numbers) if len(keys) else np.zeros(length, dtype=np.int64)
    pos = np.minimum(pos, max(len(keys) - 1, 0))
    hit = (keys[pos] == numbers) if len(keys) else np.zeros(length, dtype=bool)
    unknown = np.flatnonzero(~hit)
    index = pos.astype(np.int32)
    if len(unknown):
        extra = sorted({int(numbers[j]) for j in unknown})
        symbols = symbols + [str(n) for n in extra]
        where = {n: len(keys) + k for k, n in enumerate(extra)}
        for j in unknown:
            index[j] = where[int(numbers[j])]
    if not symbols:
        symbols = [""]
    indices = pa.Array.from_buffers(pa.int32(), length, [bitmap, pa.py_buffer(index.tobytes())], nulls)
    return pa.DictionaryArray.from_arrays(indices, pa.array(symbols, pa.string())).cast(pa.string())
