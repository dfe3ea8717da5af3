"""Compile Avro schema resolution (writer schema -> reader schema) into a flat program of decoding steps.

The decoders (the compiled ``_avro`` extension and its pure-Python twin ``_avro_pure``) never look at a
schema: they run a *program*, a table of nodes that each read one writer value and append it to one
output column. Columns come from the reader schema (one per reader node, Arrow's nested layout); programs
come from each writer schema resolved against it, so records written under several schema versions
decode into the same columns. Resolution follows the Avro specification's "Schema Resolution": fields
matched by name or alias, reader defaults for fields the writer lacks (decoded from the default encoded
once in Avro binary), writer fields the reader lacks skipped, int -> long -> float -> double and
string <-> bytes promotion, enum symbols by name, unions resolved branch by branch.

A node is eight int64s: ``op, col, a0, a1, a2, kids_off, kids_n, blob`` (``col`` -1: skip the value);
``kids`` lists child node indices; ``blobs`` holds bytes a node needs (an enum's symbol map, a default's
encoding, an error message).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .avro_schema import AvroSchemaError, Schema

__all__ = ["Column", "Plan", "build_columns", "compile_plan"]

# ---- column storage kinds (how a decoder appends to a column)
K_NULL, K_FIXED, K_VAR, K_STRUCT, K_LIST, K_MAP, K_UNION = range(7)

# ---- ops
(OP_NULL, OP_BOOL, OP_INT, OP_LONG, OP_FLOAT, OP_DOUBLE, OP_BYTES, OP_FIXED, OP_ENUM, OP_DEC_BYTES, OP_DEC_FIXED,
 OP_DURATION, OP_RECORD, OP_ARRAY, OP_MAP, OP_UNION, OP_BRANCH, OP_DEFAULT, OP_ERROR) = range(19)
# numeric targets of OP_INT / OP_LONG / OP_FLOAT / OP_DOUBLE
T_I32, T_I64, T_F32, T_F64 = range(4)

NODE_WIDTH = 8


@dataclass
class Column:
    """One output column: ``kind`` (storage), ``width`` (bytes per slot of a K_FIXED column), ``children``
    (column indices), ``schema`` (the reader node it holds; None for a map's keys), ``arrow`` (a tag the
    Arrow layer turns into a type)."""

    kind: int
    width: int = 0
    children: list[int] = field(default_factory=list)
    schema: Schema | None = None
    arrow: str = ""
    union_codes: list[int] = field(default_factory=list)


def build_columns(reader: Schema) -> tuple[list[Column], int]:
    """The columns of ``reader`` (index 0 is the root). Recursive reader types cannot become Arrow types."""
    cols: list[Column] = []

    def add(c: Column) -> int:
        cols.append(c)
        return len(cols) - 1

    def build(s: Schema, stack: tuple[int, ...]) -> int:
        if s.type in ("record", "enum", "fixed", "union", "array", "map") and id(s) in stack and s.type == "record":
            raise AvroSchemaError(f"reader type {s.name!r} is recursive: Arrow columns cannot hold it "
                                  "(give a reader schema that stops the recursion)")
        t = s.type
        if t == "null":
            return add(Column(K_NULL, schema=s, arrow="null"))
        if t == "boolean":
            return add(Column(K_FIXED, 1, schema=s, arrow="bool"))
        if t == "int":
            return add(Column(K_FIXED, 4, schema=s, arrow=s.logical or "int32"))
        if t == "long":
            return add(Column(K_FIXED, 8, schema=s, arrow=s.logical or "int64"))
        if t == "float":
            return add(Column(K_FIXED, 4, schema=s, arrow="float32"))
        if t == "double":
            return add(Column(K_FIXED, 8, schema=s, arrow="float64"))
        if t in ("bytes", "string"):
            if s.logical == "decimal":
                return add(Column(K_FIXED, _dec_width(s), schema=s, arrow="decimal"))
            return add(Column(K_VAR, schema=s, arrow="string" if t == "string" else "binary"))
        if t == "fixed":
            if s.logical == "decimal":
                return add(Column(K_FIXED, _dec_width(s), schema=s, arrow="decimal"))
            if s.logical == "duration":
                return add(Column(K_FIXED, 16, schema=s, arrow="duration"))
            return add(Column(K_FIXED, s.size, schema=s, arrow="fixed"))
        if t == "enum":
            return add(Column(K_FIXED, 4, schema=s, arrow="enum"))
        if t == "record":
            i = add(Column(K_STRUCT, schema=s, arrow="struct"))
            cols[i].children = [build(f.type, stack + (id(s),)) for f in s.fields]
            return i
        if t == "array":
            i = add(Column(K_LIST, schema=s, arrow="list"))
            cols[i].children = [build(s.items, stack)]  # type: ignore[arg-type]
            return i
        if t == "map":
            i = add(Column(K_MAP, schema=s, arrow="map"))
            keys = add(Column(K_VAR, arrow="string"))
            cols[i].children = [keys, build(s.values, stack)]  # type: ignore[arg-type]
            return i
        assert t == "union"
        nonnull = [b for b in s.branches if b.type != "null"]
        if len(nonnull) == len(s.branches) == 1 or (len(nonnull) == 1 and len(s.branches) == 2):
            # ["null", T] is a nullable T, as in every Avro-to-columns mapping (Spark's from_avro too)
            return build(nonnull[0], stack)
        if not nonnull:
            return add(Column(K_NULL, schema=s, arrow="null"))
        i = add(Column(K_UNION, schema=s, arrow="union"))
        cols[i].children = [build(b, stack) for b in s.branches]
        cols[i].union_codes = list(range(len(s.branches)))
        return i

    root = build(reader, ())
    return cols, root


def _precision_limit(precision: int, width: int) -> bytes:
    """10**precision in ``width`` little-endian bytes: a decimal's unscaled value must stay below it (Arrow
    rejects a decimal128(p, s) array holding more than p digits)."""
    return int(10**precision).to_bytes(width, "little")


def _dec_width(s: Schema) -> int:
    return 16 if s.precision <= 38 else 32


@dataclass
class Plan:
    """Every writer schema's program over one set of reader columns."""

    columns: list[Column]
    root_col: int
    nodes: list[list[int]] = field(default_factory=list)
    kids: list[int] = field(default_factory=list)
    blobs: list[bytes] = field(default_factory=list)
    roots: dict[int, int] = field(default_factory=dict)  # writer schema id -> root node
    min_size: dict[int, int] = field(default_factory=dict)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        nodes = np.array(self.nodes, dtype=np.int64).reshape(-1, NODE_WIDTH)
        kids = np.array(self.kids or [0], dtype=np.int32)
        return nodes, kids


def _match_name(w: Schema, r: Schema) -> bool:
    if w.name is None or r.name is None:
        return False
    if w.name == r.name or w.name in r.aliases:
        return True
    short = w.name.rpartition(".")[2]
    return short == r.name.rpartition(".")[2] or any(a.rpartition(".")[2] == short for a in r.aliases)


_PROMOTE = {
    "int": ("int", "long", "float", "double"),
    "long": ("long", "float", "double"),
    "float": ("float", "double"),
    "double": ("double",),
    "string": ("string", "bytes"),
    "bytes": ("bytes", "string"),
    "boolean": ("boolean",),
    "null": ("null",),
}


def _matches(w: Schema, r: Schema, *, exact: bool) -> bool:
    if w.type in _PROMOTE:
        return r.type == w.type if exact else r.type in _PROMOTE[w.type]
    if w.type != r.type:
        return False
    if w.type in ("record", "enum", "fixed"):
        return _match_name(w, r) and (w.type != "fixed" or w.size == r.size)
    return True  # array, map: items/values resolved later


class _Compiler:
    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.skip_memo: dict[int, int] = {}
        self.min_memo: dict[int, int] = {}

    def node(self, op: int, col: int = -1, a0: int = 0, a1: int = 0, a2: int = 0, blob: bytes | None = None) -> int:
        b = -1
        if blob is not None:
            self.plan.blobs.append(blob)
            b = len(self.plan.blobs) - 1
        self.plan.nodes.append([op, col, a0, a1, a2, 0, 0, b])
        return len(self.plan.nodes) - 1

    def set_kids(self, n: int, kids: list[int]) -> None:
        self.plan.nodes[n][5] = len(self.plan.kids)
        self.plan.nodes[n][6] = len(kids)
        self.plan.kids.extend(kids)

    def error(self, message: str) -> int:
        return self.node(OP_ERROR, blob=message.encode("utf-8", "replace"))

    # -- minimum encoded size of a writer value (bounds array/map counts against the bytes left)
    def min_size(self, w: Schema) -> int:
        key = id(w)
        if key in self.min_memo:
            return self.min_memo[key]
        self.min_memo[key] = 0  # a recursive type's own size counts as 0 while it is computed
        t = w.type
        if t == "null":
            size = 0
        elif t in ("boolean", "int", "long", "bytes", "string", "enum", "array", "map"):
            size = 1
        elif t == "float":
            size = 4
        elif t == "double":
            size = 8
        elif t == "fixed":
            size = w.size
        elif t == "union":
            size = 1 + min(self.min_size(b) for b in w.branches)
        else:
            size = sum(self.min_size(f.type) for f in w.fields)
        self.min_memo[key] = size
        return size

    # -- skipping a writer value
    def skip(self, w: Schema) -> int:
        key = id(w)
        if key in self.skip_memo:
            return self.skip_memo[key]
        t = w.type
        if t == "null":
            n = self.node(OP_NULL)
        elif t == "boolean":
            n = self.node(OP_BOOL)
        elif t in ("int", "long"):
            n = self.node(OP_LONG, a0=T_I64)
        elif t == "float":
            n = self.node(OP_FLOAT, a0=T_F32)
        elif t == "double":
            n = self.node(OP_DOUBLE, a0=T_F64)
        elif t in ("bytes", "string"):
            n = self.node(OP_BYTES)
        elif t == "fixed":
            n = self.node(OP_FIXED, a0=w.size)
        elif t == "enum":
            n = self.node(OP_ENUM, a0=len(w.symbols), blob=np.arange(len(w.symbols), dtype=np.int32).tobytes())
        elif t == "record":
            n = self.node(OP_RECORD)
            self.skip_memo[key] = n
            self.set_kids(n, [self.skip(f.type) for f in w.fields])
        elif t == "array":
            n = self.node(OP_ARRAY, a0=self.min_size(w.items))  # type: ignore[arg-type]
            self.skip_memo[key] = n
            self.set_kids(n, [self.skip(w.items)])  # type: ignore[arg-type]
        elif t == "map":
            n = self.node(OP_MAP, a0=1 + self.min_size(w.values))  # type: ignore[arg-type]
            self.skip_memo[key] = n
            self.set_kids(n, [self.node(OP_BYTES), self.skip(w.values)])  # type: ignore[arg-type]
        else:
            n = self.node(OP_UNION)
            self.skip_memo[key] = n
            self.set_kids(n, [self.skip(b) for b in w.branches])
        self.skip_memo[key] = n
        return n

    # -- reading a writer value into a reader column
    def resolve(self, w: Schema, r: Schema, col: int) -> int:
        """The program node reading a value written as ``w`` into column ``col`` of reader type ``r``."""
        if w.type == "union":
            return self._writer_union(w, r, col)
        if r.type == "union":
            return self._reader_union(w, r, col)
        t, rt = w.type, r.type
        if t == "null":
            if rt != "null":
                raise AvroSchemaError(f"writer null cannot be read as {r.name or rt}")
            return self.node(OP_NULL, col)
        if t in _PROMOTE and rt not in _PROMOTE[t]:
            raise AvroSchemaError(f"writer {t} cannot be read as {r.name or rt}")
        if t == "array" or t == "map":
            return self._container(w, r, col)
        if t == "record":
            return self._record(w, r, col)
        return self._leaf(w, r, col)

    def _writer_union(self, w: Schema, r: Schema, col: int) -> int:
        n = self.node(OP_UNION)
        kids = []
        for b in w.branches:
            try:
                kids.append(self.resolve(b, r, col))
            except AvroSchemaError as e:
                # A branch the reader cannot take is an error only for the values that use it.
                kids.append(self.error(f"writer union branch {b.name or b.type} cannot be read: {e}"))
        self.set_kids(n, kids)
        return n

    def _reader_union(self, w: Schema, r: Schema, col: int) -> int:
        c = self.plan.columns[col]
        branch = next((i for i, b in enumerate(r.branches) if _matches(w, b, exact=True)), None)
        if branch is None:
            branch = next((i for i, b in enumerate(r.branches) if _matches(w, b, exact=False)), None)
        if branch is None:
            raise AvroSchemaError(f"writer type {w.name or w.type} matches no branch of the reader union")
        rb = r.branches[branch]
        if c.kind == K_UNION:
            n = self.node(OP_BRANCH, col, a0=branch)
            self.set_kids(n, [self.resolve(w, rb, c.children[branch])])
            return n
        # a nullable T (or a one-branch union): the column is T's own, null marks the null branch
        if rb.type == "null":
            return self.node(OP_NULL, col)
        return self.resolve(w, rb, col)

    def _leaf(self, w: Schema, r: Schema, col: int) -> int:
        """A value of one of the primitive types, a fixed or an enum (after the promotion check)."""
        cols = self.plan.columns
        t, rt = w.type, r.type
        if t == "boolean":
            return self.node(OP_BOOL, col)
        if t in ("int", "long", "float", "double"):
            target = {"int": T_I32, "long": T_I64, "float": T_F32, "double": T_F64}[rt]
            op = {"int": OP_INT, "long": OP_LONG, "float": OP_FLOAT, "double": OP_DOUBLE}[t]
            return self.node(op, col, a0=target)
        if t in ("bytes", "string"):
            if r.logical == "decimal":
                _check_scale(w, r)
                return self.node(OP_DEC_BYTES, col, a0=cols[col].width, a2=r.precision,
                                 blob=_precision_limit(r.precision, cols[col].width))
            return self.node(OP_BYTES, col, a0=1 if rt == "string" else 0)
        if t == "fixed":
            if rt != "fixed" or not _match_name(w, r) or w.size != r.size:
                raise AvroSchemaError(f"writer fixed {w.name} ({w.size} bytes) cannot be read as {r.name or rt}")
            if r.logical == "decimal":
                _check_scale(w, r)
                return self.node(OP_DEC_FIXED, col, a0=w.size, a1=cols[col].width, a2=r.precision,
                                 blob=_precision_limit(r.precision, cols[col].width))
            if r.logical == "duration":
                return self.node(OP_DURATION, col)
            return self.node(OP_FIXED, col, a0=w.size)
        assert t == "enum", t
        if rt != "enum" or not _match_name(w, r):
            raise AvroSchemaError(f"writer enum {w.name} cannot be read as {r.name or rt}")
        default = r.symbols.index(r.enum_default) if r.enum_default is not None else -1
        mapping = [r.symbols.index(s) if s in r.symbols else default for s in w.symbols]
        return self.node(OP_ENUM, col, a0=len(w.symbols), blob=np.array(mapping, dtype=np.int32).tobytes())

    def _container(self, w: Schema, r: Schema, col: int) -> int:
        """An array or a map: the block reader, with the items' (or values') program as its child."""
        cols = self.plan.columns
        if r.type != w.type:
            raise AvroSchemaError(f"writer {w.type} cannot be read as {r.name or r.type}")
        if w.type == "array":
            n = self.node(OP_ARRAY, col, a0=self.min_size(w.items))  # type: ignore[arg-type]
            self.set_kids(n, [self.resolve(w.items, r.items, cols[col].children[0])])  # type: ignore[arg-type]
            return n
        keys, values = cols[col].children
        n = self.node(OP_MAP, col, a0=1 + self.min_size(w.values))  # type: ignore[arg-type]
        self.set_kids(n, [self.node(OP_BYTES, keys, a0=1),
                          self.resolve(w.values, r.values, values)])  # type: ignore[arg-type]
        return n

    def _record(self, w: Schema, r: Schema, col: int) -> int:
        """A record: the writer's fields in its order (skipped when the reader has no such field), then the
        reader's fields the writer lacks, from their defaults."""
        cols = self.plan.columns
        if r.type != "record" or not _match_name(w, r):
            raise AvroSchemaError(f"writer record {w.name} cannot be read as {r.name or r.type}")
        n = self.node(OP_RECORD, col)
        kids = []
        taken: set[str] = set()
        by_name: dict[str, int] = {}
        for i, rf in enumerate(r.fields):
            by_name[rf.name] = i
            for a in rf.aliases:
                by_name.setdefault(a, i)
        for wf in w.fields:
            found = by_name.get(wf.name)
            if found is None or r.fields[found].name in taken:
                kids.append(self.skip(wf.type))
                continue
            rf = r.fields[found]
            taken.add(rf.name)
            try:
                kids.append(self.resolve(wf.type, rf.type, cols[col].children[found]))
            except AvroSchemaError as e:
                raise AvroSchemaError(f"field {r.name}.{rf.name}: {e}") from None
        for i, rf in enumerate(r.fields):
            if rf.name not in taken:
                kids.append(self._default(r, rf, cols[col].children[i]))
        self.set_kids(n, kids)
        return n

    def _default(self, r: Schema, rf: Any, col: int) -> int:
        """A reader field the writer lacks: its default, encoded once and read by its own program."""
        if not rf.has_default:
            raise AvroSchemaError(f"reader field {r.name}.{rf.name} is not in the writer schema and has no default")
        from .avro_encode import encode_default

        try:
            blob = encode_default(rf.type, rf.default)
        except (AvroSchemaError, ValueError, TypeError, OverflowError) as e:
            raise AvroSchemaError(f"default of {r.name}.{rf.name} does not match its type: {e}") from None
        d = self.node(OP_DEFAULT, blob=blob)
        self.set_kids(d, [self.resolve(rf.type, rf.type, col)])
        return d


def _check_scale(w: Schema, r: Schema) -> None:
    if w.logical == "decimal" and w.scale != r.scale:
        raise AvroSchemaError(f"decimal scale {w.scale} cannot be read as scale {r.scale}")


def new_plan(reader: Schema) -> Plan:
    columns, root = build_columns(reader)
    return Plan(columns, root)


def compile_plan(plan: Plan, schema_id: int, writer: Schema, reader: Schema) -> int:
    """Add the program reading ``writer`` (registered as ``schema_id``) into ``plan``'s columns; its root node."""
    node = _Compiler(plan).resolve(writer, reader, plan.root_col)
    plan.roots[schema_id] = node
    return node


def pack_i32(values: list[int]) -> bytes:
    return struct.pack(f"<{len(values)}i", *values)


def describe(plan: Plan) -> Any:  # pragma: no cover - a debugging aid
    names = ["NULL", "BOOL", "INT", "LONG", "FLOAT", "DOUBLE", "BYTES", "FIXED", "ENUM", "DEC_BYTES", "DEC_FIXED",
             "DURATION", "RECORD", "ARRAY", "MAP", "UNION", "BRANCH", "DEFAULT", "ERROR"]
    return [(i, names[n[0]], *n[1:]) for i, n in enumerate(plan.nodes)]
