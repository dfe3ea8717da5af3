"""Turn a message schema at one version into a specialised encoder and decoder.

The walker does not interpret the schema per message: for each (message, version) it writes the Python
source of one straight-line encode function and one decode function (nested structs and arrays inlined,
runs of fixed-size fields packed by a single :class:`struct.Struct`), compiles them once and caches
them on the message class. This is what makes a generic, data-driven protocol layer fast in Python.

Decoding treats its input as hostile: every length and count is checked against the bytes that remain
before anything is sliced or allocated, and any failure surfaces as :class:`ProtocolError`.
"""

from __future__ import annotations

import linecache
import struct
import uuid
from collections.abc import Callable
from typing import Any

from .._impl import impl
from ..errors import ProtocolError
from .schema import FIXED, Field, MessageSchema, StructSchema

__all__ = ["compile_encoder", "compile_decoder", "write_uvarint", "read_uvarint"]

_UV1 = [bytes([i]) for i in range(128)]
# Longer ones: the codec's encoder (the records' varints and these are the same KIP-482 encoding).
_encode_uvarint: Callable[[int], bytes] = impl.encode_unsigned_varint
_NULL_COMPACT = b"\x00"
_NULL_STRING = b"\xff\xff"
_NULL_BYTES = b"\xff\xff\xff\xff"
# Compact lengths are stored as N+1 (0 = null, KIP-482); small values come from a table.
_CL = [bytes([i + 1]) for i in range(127)]


def write_uvarint(n: int) -> bytes:
    """Unsigned varint (KIP-482 compact lengths and tag headers); ``n`` must fit in uint32."""
    if n < 128:
        if n < 0:
            raise ProtocolError(f"unsigned varint cannot hold {n}")
        return _UV1[n]
    if n > 0xFFFFFFFF:
        raise ProtocolError(f"unsigned varint cannot hold {n}")
    return _encode_uvarint(n)


def read_uvarint(buf: Any, pos: int) -> tuple[int, int]:
    """Read an unsigned varint at ``pos``: at most 5 bytes, value within uint32."""
    result = 0
    shift = 0
    end = len(buf)
    for i in range(5):
        if pos >= end:
            raise ProtocolError("truncated unsigned varint")
        b = buf[pos]
        pos += 1
        if i == 4 and b > 0x0F:
            raise ProtocolError("unsigned varint overflows 32 bits")
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
    raise ProtocolError("unsigned varint longer than 5 bytes")


def _write_tags(w: Callable[[bytes], Any], known: list[tuple[int, Any]], unknown: dict[int, bytes] | None) -> None:
    """Write a tag section: count, then (tag, size, data) in ascending tag order (KIP-482)."""
    if unknown:
        merged = dict(unknown)
        for tag, data in known:
            merged[tag] = data  # a value set on a known field wins over stale raw bytes
        items = sorted(merged.items())
    else:
        items = known  # compiled in ascending tag order already
    w(write_uvarint(len(items)))
    for tag, data in items:
        w(write_uvarint(tag))
        w(write_uvarint(len(data)))
        w(bytes(data))


_ARRAY_STRUCTS: dict[tuple[str, int], struct.Struct] = {}


def _array_struct(code: str, n: int) -> struct.Struct:
    s = _ARRAY_STRUCTS.get((code, n))
    if s is None:
        s = struct.Struct(f">{n}{code}")
        if n <= 4096:
            _ARRAY_STRUCTS[(code, n)] = s
    return s


def _pack_array(code: str, seq: Any) -> bytes:
    return _array_struct(code, len(seq)).pack(*seq)


def _unpack_array(code: str, n: int, buf: Any, pos: int) -> list[Any]:
    return list(_array_struct(code, n).unpack_from(buf, pos))


def _raise(msg: str) -> None:
    raise ProtocolError(msg)


_BASE_NS: dict[str, Any] = {
    "_PE": ProtocolError,
    "_raise": _raise,
    "_uv": write_uvarint,
    "_ruv": read_uvarint,
    "_CL": _CL,
    "_wtags": _write_tags,
    "_parr": _pack_array,
    "_uarr": _unpack_array,
    "_UUID": uuid.UUID,
    "_H": struct.Struct(">h"),
    "_I": struct.Struct(">i"),
    "_EMPTY_TAGS": b"\x00",
    "_new": object.__new__,
}


class _Gen:
    """Accumulates generated source lines, fresh variable names and constants."""

    def __init__(self, classes: dict[int, type], records_encoder: Callable[[Any], Any] | None) -> None:
        self.lines: list[str] = []
        self.ns: dict[str, Any] = dict(_BASE_NS)
        self.ns["_recbytes"] = records_encoder or (lambda v: v)
        self.n = 0
        self.classes = classes
        self._consts: dict[Any, str] = {}

    def var(self, prefix: str = "v") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def const(self, value: Any) -> str:
        key = (type(value), value) if isinstance(value, (int, float, str, bytes, bool, type(None))) else id(value)
        name = self._consts.get(key)
        if name is None:
            name = f"K{len(self._consts)}"
            self._consts[key] = name
            self.ns[name] = value
        return name

    def emit(self, ind: int, line: str) -> None:
        self.lines.append("    " * ind + line)

    def cls(self, st: StructSchema) -> str:
        return self.const(self.classes[id(st)])

    def source(self) -> str:
        return "\n".join(self.lines)


def _default_cond(f: Field, expr: str, g: _Gen) -> str:
    """Python condition that is true when ``expr`` holds a non-default value for ``f`` (Kafka's rule for
    writing a tagged field and for refusing a field the version cannot carry)."""
    if f.struct is not None and not f.is_array and f.nullable.lo is None:
        # None stands for the default struct; a struct equal to a fresh default one is the default too
        return f"({expr} is not None and {expr} != {g.const(g.classes[id(f.struct)]())})"
    if f.default is None:
        return f"{expr} is not None"  # null default: any value, even an empty list, differs from it
    if f.is_array:
        if f.nullable.lo is not None:
            return f"({expr} is None or len({expr}) > 0)"  # null differs from the empty default
        return expr  # non-empty
    return f"{expr} != {g.const(f.default)}"


def _fixed_code(t: str) -> tuple[str, int]:
    return FIXED[t]


# ---------------------------------------------------------------------------------------------- encode


def _pack_line(g: _Gen, w: str, run: list[tuple[str, str]]) -> str:
    # The bound ``pack`` is the constant: no attribute lookup per call.
    s = g.const(struct.Struct(">" + "".join(c for c, _ in run)).pack)
    return f"{w}({s}({', '.join(e for _, e in run)}))"


def _enc_scalar(
    g: _Gen,
    t: str,
    nullable: bool,
    flex: bool,
    expr: str,
    w: str,
    ind: int,
    what: str,
    run: list[tuple[str, str]] | None = None,
) -> None:
    """Emit code appending one scalar. ``run`` holds pending fixed-size fields packed before it: a
    non-compact length is folded into that same ``pack`` call (one call per Produce partition)."""
    run = list(run or ())
    if t in FIXED:
        run.append((FIXED[t][0], f"{expr}{'.bytes' if t == 'uuid' else ''}"))
        g.emit(ind, _pack_line(g, w, run))
        return
    x = g.var("x")
    g.emit(ind, f"{x} = {expr}")
    if t == "records":
        # bytes pass straight through; RecordColumns / value lists are encoded into a batch
        if nullable and not flex:
            # The common case (a ready batch) first: one class check, then length and data.
            g.emit(ind, f"if {x}.__class__ is bytes:")
            g.emit(ind + 1, _pack_line(g, w, run + [("i", f"len({x})")]))
            g.emit(ind + 1, f"{w}({x})")
            g.emit(ind, f"elif {x} is None:")
            g.emit(ind + 1, _pack_line(g, w, run + [("i", "-1")]))
            g.emit(ind, "else:")
            g.emit(ind + 1, f"{x} = _recbytes({x})")
            g.emit(ind + 1, _pack_line(g, w, run + [("i", f"len({x})")]))
            g.emit(ind + 1, f"{w}({x})")
            return
        g.emit(ind, f"if {x}.__class__ is not bytes and {x} is not None: {x} = _recbytes({x})")
    lcode = "h" if t == "string" else "i"
    ind = _enc_null(g, w, ind, x, nullable, flex, run, lcode, what)
    if t == "string":
        g.emit(ind, f"{x} = {x}.encode('utf-8')")
    _enc_length(g, w, ind, x, flex, run, lcode)
    g.emit(ind, f"{w}({x})")


def _enc_null(
    g: _Gen, w: str, ind: int, x: str, nullable: bool, flex: bool, run: list[tuple[str, str]], lcode: str, what: str
) -> int:
    """Emit what a null string, bytes or array ``x`` writes after the pending ``run`` (a non-nullable one
    raises); returns the indentation of the code for a present value."""
    if not nullable:
        g.emit(ind, f"if {x} is None: _raise({g.const(f'{what} cannot be null in this version')})")
        return ind
    g.emit(ind, f"if {x} is None:")
    if flex:
        if run:
            g.emit(ind + 1, _pack_line(g, w, run))
        g.emit(ind + 1, f"{w}({g.const(_NULL_COMPACT)})")
    else:
        g.emit(ind + 1, _pack_line(g, w, run + [(lcode, "-1")]))
    g.emit(ind, "else:")
    return ind + 1


def _enc_length(g: _Gen, w: str, ind: int, x: str, flex: bool, run: list[tuple[str, str]], lcode: str) -> str:
    """Emit the pending ``run`` and the length of ``x`` (a compact varint in flexible versions, else an
    ``lcode`` int); returns the variable holding ``len(x)``."""
    n = g.var("n")
    g.emit(ind, f"{n} = len({x})")
    if flex:
        if run:
            g.emit(ind, _pack_line(g, w, run))
        g.emit(ind, f"{w}(_CL[{n}] if {n} < 127 else _uv({n} + 1))")
    else:
        g.emit(ind, _pack_line(g, w, run + [(lcode, n)]))
    return n


def _enc_value(
    g: _Gen,
    f: Field,
    v: int,
    flex: bool,
    expr: str,
    w: str,
    ind: int,
    what: str,
    run: list[tuple[str, str]] | None = None,
) -> None:
    nullable = v in f.nullable
    if f.is_array:
        x = g.var("a")
        g.emit(ind, f"{x} = {expr}")
        run = list(run or ())
        ind = _enc_null(g, w, ind, x, nullable, flex, run, "i", what)
        n = _enc_length(g, w, ind, x, flex, run, "i")
        if f.struct is not None:
            e = g.var("o")
            g.emit(ind, f"for {e} in {x}:")
            _enc_struct(g, f.struct, v, flex, e, w, ind + 1, what)
        elif f.type in FIXED and f.type != "uuid":
            g.emit(ind, f"if {n}: {w}(_parr({g.const(FIXED[f.type][0])}, {x}))")
        else:
            e = g.var("e")
            g.emit(ind, f"for {e} in {x}:")
            _enc_scalar(g, f.type, False, flex, e, w, ind + 1, what + "[]")
    elif f.struct is not None:
        if run:
            g.emit(ind, _pack_line(g, w, run))
        x = g.var("o")
        g.emit(ind, f"{x} = {expr}")
        if nullable:
            # A nullable struct (KIP-848's messages) is preceded by an int8: -1 for null, 1 when present.
            g.emit(ind, f"if {x} is None: {w}(b'\\xff')")
            g.emit(ind, "else:")
            g.emit(ind + 1, f"{w}(b'\\x01')")
            _enc_struct(g, f.struct, v, flex, x, w, ind + 1, what)
            return
        g.emit(ind, f"if {x} is None: {x} = {g.cls(f.struct)}()")
        _enc_struct(g, f.struct, v, flex, x, w, ind, what)
    else:
        _enc_scalar(g, f.type, nullable, flex, expr, w, ind, what, run)


def _enc_struct(g: _Gen, st: StructSchema, v: int, flex: bool, o: str, w: str, ind: int, path: str) -> None:
    run: list[tuple[str, str]] = []
    tagged: list[Field] = []
    for f in st.fields:
        what = f"{path}.{f.name}"
        if v not in f.versions:
            if not f.ignorable:
                cond = _default_cond(f, f"{o}.{f.name}", g)
                msg = g.const(f"{what} was set but version {v} cannot carry it")
                g.emit(ind, f"if {cond}: _raise({msg})")
            continue
        if f.tag is not None:
            tagged.append(f)
            continue
        if f.type in FIXED and not f.is_array and f.struct is None:
            code, _ = FIXED[f.type]
            run.append((code, f"{o}.{f.name}{'.bytes' if f.type == 'uuid' else ''}"))
            continue
        # the pending fixed-size run is written by (or just before) this field
        _enc_value(g, f, v, flex, f"{o}.{f.name}", w, ind, what, run)
        run = []
    if run:
        g.emit(ind, _pack_line(g, w, run))
    if not flex:
        return
    if not tagged:
        g.emit(ind, f"if {o}._unknown_tags is None: {w}(_EMPTY_TAGS)")
        g.emit(ind, f"else: _wtags({w}, [], {o}._unknown_tags)")
        return
    t = g.var("t")
    g.emit(ind, f"{t} = []")
    for f in sorted(tagged, key=lambda f: f.tag or 0):
        what = f"{path}.{f.name}"
        tv = g.var("tv")
        g.emit(ind, f"{tv} = {o}.{f.name}")
        g.emit(ind, f"if {_default_cond(f, tv, g)}:")
        tl, tw = g.var("tl"), g.var("tw")
        g.emit(ind + 1, f"{tl} = []")
        g.emit(ind + 1, f"{tw} = {tl}.append")
        _enc_value(g, f, v, True, tv, tw, ind + 1, what)
        g.emit(ind + 1, f"{t}.append(({f.tag}, b''.join({tl})))")
    g.emit(ind, f"_wtags({w}, {t}, {o}._unknown_tags)")


def compile_encoder(
    schema: MessageSchema, version: int, classes: dict[int, type], records_encoder: Callable[..., Any] | None = None
) -> Callable[[Any, Callable[[bytes], None]], None]:
    """Build ``encode(message, append)`` for ``schema`` at ``version``.

    The encoder hands ``append`` the body as a sequence of ``bytes`` chunks (record batches as they are,
    never copied), for the caller to ``b"".join`` once.
    """
    g = _Gen(classes, records_encoder)
    flex = schema.is_flexible(version)
    g.emit(0, "def encode(o0, w):")
    _enc_struct(g, schema.root, version, flex, "o0", "w", 1, schema.name)
    g.emit(1, "return None")
    return _finish(g, "encode", schema, version, "enc")


# ---------------------------------------------------------------------------------------------- decode


def _min_size(st: StructSchema, v: int, flex: bool) -> int:
    size = 1 if flex else 0  # the tag section's count
    for f in st.fields:
        if v not in f.versions or f.tag is not None:
            continue
        if f.is_array:
            size += 1 if flex else 4
        elif f.struct is not None:
            size += 1 if v in f.nullable else _min_size(f.struct, v, flex)
        elif f.type in FIXED:
            size += FIXED[f.type][1]
        elif f.type == "string":
            size += 1 if flex else 2
        else:
            size += 1 if flex else 4
    return size


def _dec_uvarint(g: _Gen, target: str, ind: int) -> None:
    g.emit(ind, f"{target} = buf[pos]")
    g.emit(ind, f"if {target} < 128: pos += 1")
    g.emit(ind, f"else: {target}, pos = _ruv(buf, pos)")


Run = list[tuple[str, str, str]]  # pending fixed-size reads: (struct code, target variable, type)


def _flush_reads(g: _Gen, run: Run, ind: int, extra: tuple[str, str] | None = None) -> None:
    """Read the pending fixed-size fields (and an ``extra`` (code, variable) such as the length prefix of
    the field that follows) with one ``unpack_from`` call."""
    items = [(c, x) for c, x, _ in run] + ([extra] if extra else [])
    if not items:
        return
    st = struct.Struct(">" + "".join(c for c, _ in items))
    g.emit(ind, f"{', '.join(x for _, x in items)}, = {g.const(st.unpack_from)}(buf, pos)")
    g.emit(ind, f"pos += {st.size}")
    for _, x, t in run:
        if t == "uuid":
            g.emit(ind, f"{x} = _UUID(bytes={x})")
    run.clear()


def _dec_length(g: _Gen, t: str, flex: bool, ind: int, run: Run) -> str:
    n = g.var("n")
    if flex:
        _flush_reads(g, run, ind)
        _dec_uvarint(g, n, ind)
        g.emit(ind, f"{n} -= 1")
    else:
        _flush_reads(g, run, ind, ("h" if t == "string" else "i", n))
    return n


def _dec_scalar(g: _Gen, t: str, nullable: bool, flex: bool, ind: int, what: str, run: Run) -> str:
    x = g.var("x")
    if t in FIXED:
        run.append((FIXED[t][0], x, t))
        _flush_reads(g, run, ind)
        return x
    n = _dec_length(g, t, flex, ind, run)
    g.emit(ind, f"if {n} < 0:")
    if nullable:
        g.emit(ind + 1, f"if {n} != -1: _raise({g.const(f'{what}: negative length')})")
        g.emit(ind + 1, f"{x} = None")
    else:
        g.emit(ind + 1, f"_raise({g.const(f'{what}: null or negative length where null is not allowed')})")
    g.emit(ind, "else:")
    g.emit(ind + 1, f"if {n} > end - pos: _raise({g.const(f'{what}: length exceeds the bytes left')})")
    if t == "string":
        g.emit(ind + 1, f"{x} = str(buf[pos:pos + {n}], 'utf-8')")
    elif t == "records":
        # Zero-copy: a slice of the response buffer, decoded later into RecordColumns.
        g.emit(ind + 1, f"{x} = buf[pos:pos + {n}]")
    else:
        g.emit(ind + 1, f"{x} = bytes(buf[pos:pos + {n}])")
    g.emit(ind + 1, f"pos += {n}")
    return x


def _dec_value(g: _Gen, f: Field, v: int, flex: bool, ind: int, what: str, run: Run) -> str:
    """Emit code reading field ``f``; pending fixed-size reads in ``run`` are done first (merged with the
    field's length prefix where possible). Returns the variable holding the value."""
    nullable = v in f.nullable
    if f.is_array:
        n = _dec_length(g, "array", flex, ind, run)
        x = g.var("a")
        g.emit(ind, f"if {n} < 0:")
        if nullable:
            g.emit(ind + 1, f"if {n} != -1: _raise({g.const(f'{what}: negative array length')})")
            g.emit(ind + 1, f"{x} = None")
        else:
            g.emit(ind + 1, f"_raise({g.const(f'{what}: null or negative array length where null is not allowed')})")
        g.emit(ind, "else:")
        ind += 1
        if f.struct is not None:
            esize = max(1, _min_size(f.struct, v, flex))
        elif f.type in FIXED:
            esize = FIXED[f.type][1]
        else:
            esize = 1 if flex else (2 if f.type == "string" else 4)
        # Checked before anything is allocated: a forged count cannot make us build a huge list.
        g.emit(ind, f"if {n} * {esize} > end - pos: _raise({g.const(f'{what}: element count exceeds the bytes left')})")
        if f.struct is None and f.type in FIXED and f.type != "uuid":
            g.emit(ind, f"{x} = _uarr({g.const(FIXED[f.type][0])}, {n}, buf, pos)")
            g.emit(ind, f"pos += {n} * {esize}")
        else:
            g.emit(ind, f"{x} = []")
            ap = g.var("ap")
            g.emit(ind, f"{ap} = {x}.append")
            g.emit(ind, f"for _ in range({n}):")
            if f.struct is not None:
                e = _dec_struct(g, f.struct, v, flex, ind + 1, what)
            else:
                e = _dec_scalar(g, f.type, False, flex, ind + 1, what + "[]", [])
            g.emit(ind + 1, f"{ap}({e})")
        return x
    if f.struct is not None:
        _flush_reads(g, run, ind)
        if nullable:  # int8 marker: -1 null, 1 present (see the encoder)
            x = g.var("s")
            g.emit(ind, f"if pos >= end: _raise({g.const(f'{what}: truncated')})")
            g.emit(ind, f"{x} = buf[pos]")
            g.emit(ind, "pos += 1")
            g.emit(ind, f"if {x} == 255: {x} = None")
            g.emit(ind, "else:")
            e = _dec_struct(g, f.struct, v, flex, ind + 1, what)
            g.emit(ind + 1, f"{x} = {e}")
            return x
        return _dec_struct(g, f.struct, v, flex, ind, what)
    return _dec_scalar(g, f.type, nullable, flex, ind, what, run)


def _default_expr(g: _Gen, f: Field) -> str:
    if f.is_array and f.default is not None:
        return "[]"
    return g.const(f.default)


def _dec_struct(g: _Gen, st: StructSchema, v: int, flex: bool, ind: int, path: str) -> str:
    vals: dict[str, str] = {}
    run: Run = []
    tagged: list[Field] = []
    for f in st.fields:
        if v not in f.versions:
            continue
        if f.tag is not None:
            tagged.append(f)
            continue
        if f.type in FIXED and not f.is_array and f.struct is None:
            x = g.var("x")
            run.append((FIXED[f.type][0], x, f.type))
            vals[f.name] = x
            continue
        vals[f.name] = _dec_value(g, f, v, flex, ind, f"{path}.{f.name}", run)
    _flush_reads(g, run, ind)
    unknown = None
    if flex:
        unknown = g.var("u")
        g.emit(ind, f"{unknown} = None")
        for f in tagged:
            x = g.var("x")
            vals[f.name] = x
            g.emit(ind, f"{x} = {_default_expr(g, f)}")
        nt = g.var("nt")
        _dec_uvarint(g, nt, ind)
        # An empty tag section (the common case) costs one comparison.
        g.emit(ind, f"if {nt}:")
        g.emit(ind + 1, f"for _ in range({nt}):")
        li = ind + 2
        tag, size, tend = g.var("tag"), g.var("sz"), g.var("te")
        _dec_uvarint(g, tag, li)
        _dec_uvarint(g, size, li)
        g.emit(li, f"if {size} > end - pos: _raise({g.const(f'{path}: tagged field exceeds the bytes left')})")
        g.emit(li, f"{tend} = pos + {size}")
        kw = "if"
        for f in tagged:
            g.emit(li, f"{kw} {tag} == {f.tag}:")
            kw = "elif"
            what = f"{path}.{f.name}"
            r = _dec_value(g, f, v, True, li + 1, what, [])
            g.emit(li + 1, f"{vals[f.name]} = {r}")
            g.emit(li + 1, f"if pos != {tend}: _raise({g.const(f'{what}: tagged field size mismatch')})")
        # Unknown tags are kept as raw bytes so that re-encoding writes them back (KIP-482).
        uind = li
        if tagged:
            g.emit(li, "else:")
            uind += 1
        g.emit(uind, f"if {unknown} is None: {unknown} = {{}}")
        g.emit(uind, f"{unknown}[{tag}] = bytes(buf[pos:{tend}])")
        g.emit(uind, f"pos = {tend}")
    # Built without calling __init__: a bare instance and one slot store per field is about twice as
    # fast, and decoding builds one object per partition.
    obj = g.var("r")
    g.emit(ind, f"{obj} = _new({g.cls(st)})")
    for f in st.fields:
        g.emit(ind, f"{obj}.{f.name} = {vals.get(f.name) or _default_expr(g, f)}")
    g.emit(ind, f"{obj}._unknown_tags = {unknown or 'None'}")
    return obj


def compile_decoder(schema: MessageSchema, version: int, classes: dict[int, type]) -> Callable[[Any], tuple[Any, int]]:
    """Build ``decode(memoryview) -> (message, end_position)`` for ``schema`` at ``version``."""
    g = _Gen(classes, None)
    flex = schema.is_flexible(version)
    g.emit(0, "def decode(buf):")
    g.emit(1, "end = len(buf)")
    g.emit(1, "pos = 0")
    r = _dec_struct(g, schema.root, version, flex, 1, schema.name)
    g.emit(1, f"return {r}, pos")
    return _finish(g, "decode", schema, version, "dec")


def _finish(g: _Gen, fname: str, schema: MessageSchema, version: int, kind: str) -> Callable[..., Any]:
    src = g.source()
    filename = f"<kafkawire {kind} {schema.name} v{version}>"
    # Registered so that tracebacks through generated code show its lines.
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    code = compile(src, filename, "exec")
    exec(code, g.ns)
    fn: Callable[..., Any] = g.ns[fname]
    fn.__source__ = src  # type: ignore[attr-defined]  # for debugging: FetchResponse._decoder(4).__source__
    return fn
