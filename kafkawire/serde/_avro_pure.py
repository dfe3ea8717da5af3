"""The pure-Python reference of the Avro column decoder (``kafkawire/serde/_avro.pyx`` is the compiled one).

Both run the same program (:mod:`.avro_plan`) over Confluent-framed values and fill the same raw column
buffers, which :mod:`.avro_arrow` turns into Arrow arrays; both report the same errors in the same words.
Selected by ``KAFKAWIRE_PURE=1`` like the record codec (:mod:`kafkawire._impl`), and the oracle of the
differential tests.
"""

from __future__ import annotations

import struct
from array import array
from typing import Any

import numpy as np

from .avro_plan import (
    K_FIXED,
    K_LIST,
    K_MAP,
    K_NULL,
    K_STRUCT,
    K_UNION,
    K_VAR,
    OP_ARRAY,
    OP_BOOL,
    OP_BRANCH,
    OP_BYTES,
    OP_DEC_BYTES,
    OP_DEC_FIXED,
    OP_DEFAULT,
    OP_DOUBLE,
    OP_DURATION,
    OP_ENUM,
    OP_ERROR,
    OP_FIXED,
    OP_FLOAT,
    OP_INT,
    OP_LONG,
    OP_MAP,
    OP_NULL,
    OP_RECORD,
    OP_UNION,
    T_F32,
    T_F64,
    T_I32,
)

__all__ = ["MAX_DEPTH", "ZERO_SIZE_ITEMS", "decode"]

#: Values nested deeper than this (records, arrays, maps, unions inside each other) are refused.
MAX_DEPTH = 128
#: Items that take no bytes (nulls, empty records) one value may hold in all its arrays together: without a
#: bound, a 10-byte value could claim 2**63 of them.
ZERO_SIZE_ITEMS = 1 << 20
INT32_MAX = (1 << 31) - 1

_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")
_I32 = struct.Struct("<i")
_I64 = struct.Struct("<q")


class _Fail(Exception):
    pass


class _Col:
    __slots__ = ("kind", "width", "children", "length", "valid", "offsets", "data", "codes", "nulls")

    def __init__(self, kind: int, width: int, children: list[int]) -> None:
        self.kind = kind
        self.width = width
        self.children = children
        self.length = 0
        self.valid = bytearray()
        self.offsets = array("i", [0])
        self.data = bytearray()


class _Decoder:
    def __init__(self, nodes: np.ndarray, kids: np.ndarray, blobs: list[bytes], cols: list[_Col]) -> None:
        self.nodes = nodes.tolist()
        self.kids = kids.tolist()
        self.blobs = blobs
        self.cols = cols
        self.buf: bytes = b""
        self.pos = 0
        self.end = 0
        self.base = 0  # where the current value starts: error positions are relative to it
        self.zero_budget = ZERO_SIZE_ITEMS

    # -- reading
    def need(self, n: int) -> None:
        if n > self.end - self.pos:
            raise _Fail(f"value truncated: {n} bytes needed at byte {self.pos - self.base}, {self.end - self.pos} left")

    def long(self) -> int:
        b = self.buf
        z = 0
        shift = 0
        while True:
            if self.pos >= self.end:
                raise _Fail(f"value truncated: varint runs past the end at byte {self.pos - self.base}")
            c = b[self.pos]
            self.pos += 1
            if shift == 63 and c > 1:
                raise _Fail(f"varint overflows 64 bits at byte {self.pos - 1 - self.base}")
            z |= (c & 0x7F) << shift
            if c < 0x80:
                break
            shift += 7
        return (z >> 1) ^ -(z & 1)

    def read_int(self) -> int:
        start = self.pos
        v = self.long()
        if not -(1 << 31) <= v <= INT32_MAX:
            raise _Fail(f"int {v} out of range at byte {start - self.base}")
        return v

    def length(self) -> int:
        start = self.pos
        n = self.long()
        if n < 0:
            raise _Fail(f"negative length {n} at byte {start - self.base}")
        self.need(n)
        return n

    # -- appending
    def append_null(self, c: int) -> None:
        col = self.cols[c]
        col.length += 1
        col.valid.append(0)
        k = col.kind
        if k == K_FIXED:
            col.data += bytes(col.width)
        elif k in (K_VAR, K_LIST, K_MAP):
            col.offsets.append(col.offsets[-1])
        elif k == K_STRUCT:
            for ch in col.children:
                self.append_null(ch)
        elif k == K_UNION:
            col.data.append(0)
            col.offsets.append(self.cols[col.children[0]].length)
            self.append_null(col.children[0])

    def append_nulls(self, c: int, count: int) -> None:
        """``count`` times :meth:`append_null`; in one step for a column of the null type."""
        col = self.cols[c]
        if col.kind != K_NULL:
            for _ in range(count):
                self.append_null(c)
            return
        col.length += count
        col.valid += bytes(count)

    def fixed(self, c: int, raw: bytes) -> None:
        if c >= 0:
            col = self.cols[c]
            col.length += 1
            col.valid.append(1)
            col.data += raw

    def var_end(self, col: _Col) -> None:
        if len(col.data) > INT32_MAX:
            raise _Fail("a column exceeds 2 GiB of data: decode fewer values at a time")
        col.offsets.append(len(col.data))

    # -- the interpreter (as the compiled one: scalar ops in leaf(), structure in run())
    def leaf(self, op: int, c: int, a0: int, a1: int, a2: int, blob: int) -> bool:
        """Run a node that reads one scalar; False when ``op`` is not such a node."""
        if op == OP_NULL:
            if c >= 0:
                self.append_null(c)
        elif op == OP_BOOL:
            self.need(1)
            v = self.buf[self.pos]
            if v > 1:
                raise _Fail(f"boolean byte {v} is not 0 or 1 at byte {self.pos - self.base}")
            self.pos += 1
            self.fixed(c, bytes((v,)))
        elif op == OP_INT or op == OP_LONG:
            v = self.read_int() if op == OP_INT else self.long()
            if c >= 0:
                self.fixed(c, _num(v, a0))
        elif op == OP_FLOAT:
            self.need(4)
            raw = self.buf[self.pos:self.pos + 4]
            self.pos += 4
            if c >= 0:
                self.fixed(c, raw if a0 == T_F32 else _F64.pack(_F32.unpack(raw)[0]))
        elif op == OP_DOUBLE:
            self.need(8)
            raw = self.buf[self.pos:self.pos + 8]
            self.pos += 8
            self.fixed(c, raw)
        elif op == OP_BYTES:
            n_ = self.length()
            raw = self.buf[self.pos:self.pos + n_]
            start = self.pos
            self.pos += n_
            if a0:
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise _Fail(f"invalid UTF-8 in a string at byte {start - self.base}") from None
            if c >= 0:
                col = self.cols[c]
                col.length += 1
                col.valid.append(1)
                col.data += raw
                self.var_end(col)
        elif op == OP_FIXED:
            self.need(a0)
            raw = self.buf[self.pos:self.pos + a0]
            self.pos += a0
            self.fixed(c, raw)
        elif op == OP_ENUM:
            start = self.pos
            i = self.long()
            if not 0 <= i < a0:
                raise _Fail(f"invalid enum index {i} at byte {start - self.base} (the enum has {a0} symbols)")
            r = _I32.unpack_from(self.blobs[blob], 4 * i)[0]
            if r < 0:
                raise _Fail(f"enum symbol {i} at byte {start - self.base} is not in the reader enum, "
                            "which has no default")
            self.fixed(c, _I32.pack(r))
        elif op == OP_DEC_BYTES or op == OP_DEC_FIXED:
            self.decimal(op, c, a0, a1, a2)
        elif op == OP_DURATION:
            self.need(12)
            months, days, millis = struct.unpack_from("<III", self.buf, self.pos)
            self.pos += 12
            if c >= 0:
                self.fixed(c, struct.pack("<iiq", _wrap32(months), _wrap32(days), millis * 1_000_000))
        else:
            return False
        return True

    def decimal(self, op: int, c: int, a0: int, a1: int, a2: int) -> None:
        """A decimal from bytes or a fixed, stored little-endian in ``a0`` (bytes) / ``a1`` (fixed) bytes."""
        start = self.pos
        n_ = self.length() if op == OP_DEC_BYTES else a0
        if op == OP_DEC_FIXED:
            self.need(n_)
        raw = self.buf[self.pos:self.pos + n_]
        self.pos += n_
        width = a0 if op == OP_DEC_BYTES else a1
        if c >= 0:
            v = int.from_bytes(raw, "big", signed=True)
            if not -(1 << (8 * width - 1)) <= v < (1 << (8 * width - 1)):
                raise _Fail(f"decimal at byte {start - self.base} does not fit {width} bytes")
            if abs(v) >= 10 ** a2:
                raise _Fail(f"decimal at byte {start - self.base} has more than {a2} digits")
            self.fixed(c, v.to_bytes(width, "little", signed=True))

    def run(self, n: int, depth: int) -> None:
        op, c, a0, a1, a2, koff, kn, blob = self.nodes[n]
        if self.leaf(op, c, a0, a1, a2, blob):
            return
        if op == OP_RECORD:
            if depth >= MAX_DEPTH:
                raise _Fail(f"value nested deeper than {MAX_DEPTH} levels at byte {self.pos - self.base}")
            for k in range(koff, koff + kn):
                self.run(self.kids[k], depth + 1)
            if c >= 0:
                col = self.cols[c]
                col.length += 1
                col.valid.append(1)
        elif op == OP_ARRAY or op == OP_MAP:
            self.blocks(op, c, a0, koff, depth)
        elif op == OP_UNION:
            if depth >= MAX_DEPTH:
                raise _Fail(f"value nested deeper than {MAX_DEPTH} levels at byte {self.pos - self.base}")
            start = self.pos
            i = self.long()
            if not 0 <= i < kn:
                raise _Fail(f"invalid union index {i} at byte {start - self.base} (the union has {kn} branches)")
            self.run(self.kids[koff + i], depth + 1)
        elif op == OP_BRANCH:
            col = self.cols[c]
            child = col.children[a0]
            col.length += 1
            col.valid.append(1)
            col.data.append(a0)
            col.offsets.append(self.cols[child].length)
            self.run(self.kids[koff], depth + 1)
        elif op == OP_DEFAULT:
            saved = (self.buf, self.pos, self.end, self.base)
            self.buf, self.pos, self.end, self.base = self.blobs[blob], 0, len(self.blobs[blob]), 0
            try:
                self.run(self.kids[koff], depth + 1)
            finally:
                self.buf, self.pos, self.end, self.base = saved
        elif op == OP_ERROR:
            raise _Fail(self.blobs[blob].decode("utf-8", "replace"))
        else:  # pragma: no cover - plans are built by avro_plan
            raise _Fail(f"corrupt program: op {op}")

    def blocks(self, op: int, c: int, a0: int, koff: int, depth: int) -> None:
        """An array or a map: its blocks of items (of key and value), then the column's offset."""
        if depth >= MAX_DEPTH:
            raise _Fail(f"value nested deeper than {MAX_DEPTH} levels at byte {self.pos - self.base}")
        item = self.kids[koff + (1 if op == OP_MAP else 0)]
        while True:
            start = self.pos
            count = self.long()
            if count == 0:
                break
            if count < 0:
                if count == -(1 << 63):
                    raise _Fail(f"invalid block count {count} at byte {start - self.base}")
                count = -count
                self.long()  # the block's size in bytes: only a skipper needs it
            if a0 > 0:
                if count > (self.end - self.pos) // a0:
                    raise _Fail(f"block of {count} items at byte {start - self.base} is longer than the "
                                f"{self.end - self.pos} bytes left")
            else:
                if count > self.zero_budget:
                    raise _Fail(f"block of {count} items at byte {start - self.base} exceeds the limit of "
                                f"{ZERO_SIZE_ITEMS} empty items per value")
                self.zero_budget -= count
            item_op, item_col = self.nodes[item][0], self.nodes[item][1]
            if op == OP_ARRAY and item_op == OP_NULL:
                # Items that read nothing (the zero-size budget allows a million per value): at once, as the
                # compiled decoder's loop is fast enough not to need; one Python call each took seconds.
                if item_col >= 0:
                    self.append_nulls(item_col, count)
                continue
            for _ in range(count):
                if op == OP_MAP:
                    self.run(self.kids[koff], depth + 1)
                self.run(item, depth + 1)
        if c >= 0:
            col = self.cols[c]
            col.length += 1
            col.valid.append(1)
            child = self.cols[col.children[0 if op == OP_ARRAY else 0]]
            total = child.length
            if total > INT32_MAX:
                raise _Fail("a column exceeds 2**31 items: decode fewer values at a time")
            col.offsets.append(total)


def _wrap32(v: int) -> int:
    return v - (1 << 32) if v >= (1 << 31) else v


def _num(v: int, target: int) -> bytes:
    if target == T_I32:
        return _I32.pack(v)
    if target == T_F32:
        return np.array([v], dtype=np.int64).astype(np.float32).tobytes()
    if target == T_F64:
        return np.array([v], dtype=np.int64).astype(np.float64).tobytes()
    return _I64.pack(v)


def decode(
    nodes: np.ndarray,
    kids: np.ndarray,
    blobs: list[bytes],
    col_kinds: list[int],
    col_widths: list[int],
    col_children: list[list[int]],
    root_col: int,
    roots: dict[int, int],
    data: Any,
    offsets: np.ndarray,
    valid: np.ndarray | None,
    permissive: bool,
) -> tuple[list[tuple[int, bytes, bytes, bytes]], list[tuple[int, str]]]:
    """Decode every value; per column ``(length, validity bytes (one per slot), int32 offsets, data)`` and the
    ``(row, message)`` of each value that failed (PERMISSIVE; FAILFAST stops at the first and returns it alone).
    """
    cols = [_Col(k, w, ch) for k, w, ch in zip(col_kinds, col_widths, col_children)]
    d = _Decoder(nodes, kids, blobs, cols)
    buf = bytes(data)
    offs = offsets.tolist()
    nvalid = None if valid is None else valid.tolist()
    errors: list[tuple[int, str]] = []
    for row in range(len(offs) - 1):
        if nvalid is not None and not nvalid[row]:
            d.append_null(root_col)
            continue
        start, end = offs[row], offs[row + 1]
        snapshot = [(c.length, len(c.valid), len(c.offsets), len(c.data)) for c in cols] if permissive else None
        try:
            if end - start < 5:
                raise _Fail(f"value of {end - start} bytes is shorter than the 5-byte Confluent header")
            if buf[start] != 0:
                raise _Fail(f"bad magic byte {buf[start]} (the Confluent wire format starts with 0)")
            sid = int.from_bytes(buf[start + 1:start + 5], "big", signed=True)
            node = roots.get(sid)
            if node is None:
                raise _Fail(f"unknown schema id {sid}")
            d.buf, d.pos, d.end, d.base = buf, start + 5, end, start
            d.zero_budget = ZERO_SIZE_ITEMS
            d.run(node, 0)
        except _Fail as e:
            errors.append((row, str(e)))
            if not permissive:
                break
            assert snapshot is not None
            for c, (length, nv, no, nd) in zip(cols, snapshot):
                c.length = length
                del c.valid[nv:]
                del c.offsets[no:]
                del c.data[nd:]
            d.append_null(root_col)
    out = [(c.length, bytes(c.valid), c.offsets.tobytes(), bytes(c.data)) for c in cols]
    return out, errors



def scan_ids(data: Any, offsets: np.ndarray, valid: np.ndarray | None) -> list[int]:
    """The distinct schema ids of the framed values, in order of first appearance (nulls, values shorter
    than the header and a wrong magic byte skipped)."""
    buf = bytes(data)
    offs = offsets.tolist()
    nvalid = None if valid is None else valid.tolist()
    out: list[int] = []
    for row in range(len(offs) - 1):
        if nvalid is not None and not nvalid[row]:
            continue
        start = offs[row]
        if offs[row + 1] - start < 5 or buf[start] != 0:
            continue
        sid = int.from_bytes(buf[start + 1:start + 5], "big", signed=True)
        if sid not in out:
            out.append(sid)
    return out
