"""The pure-Python Protobuf column decoder: the reference twin of the compiled ``_protobuf`` extension.

It runs the program of :mod:`kafkawire.serde.protobuf_plan` over Confluent-framed values and returns, per
column, ``(length, validity bytes, int32 offsets, data)``, exactly as the compiled decoder does, with the same
error messages (the differential tests compare them). Wire semantics as the spec and the ``protobuf``
runtime: last one wins for a repeated occurrence of a singular field, message fields merge (decoded from the
concatenation of their occurrences), repeated scalars packed or not, unknown fields skipped (groups too),
a field whose wire type is not its type's is unknown, a varint of more than 10 bytes is an error, int32 and
enums are the low 32 bits of the varint.
"""

from __future__ import annotations

import struct
from array import array
from typing import Any

from .protobuf_plan import (
    F_EMPTY_MESSAGE,
    F_PACKABLE,
    F_PRESENCE,
    F_REPEATED,
    K_FIXED,
    K_LIST,
    K_MAP,
    K_STRUCT,
    K_VAR,
    O_BOOL,
    O_BYTES,
    O_DURATION,
    O_ENUM,
    O_FIXED32,
    O_FIXED64,
    O_INT32,
    O_INT64,
    O_MAP,
    O_MSG,
    O_SINT32,
    O_SINT64,
    O_STRING,
    O_TIMESTAMP,
    O_UINT32,
    O_UINT64,
    OP_WIRE,
)

__all__ = ["decode", "scan_heads"]

# Keep equal to _protobuf.pyx: the differential tests compare error messages word for word.
MAX_DEPTH = 100
MAX_INDEXES = 64
INT32_MAX = 2147483647
MAX_SECONDS = 9223372036854  # |seconds| * 10**6 fits an int64
_M64 = (1 << 64) - 1


class _Fail(Exception):
    pass


class _Col:
    __slots__ = ("kind", "width", "children", "length", "valid", "offs", "data")

    def __init__(self, kind: int, width: int, children: list[int]) -> None:
        self.kind, self.width, self.children = kind, width, children
        self.length = 0
        self.valid = bytearray()
        self.offs = array("i", [0])
        self.data = bytearray()


def _s64(u: int) -> int:
    return u - (1 << 64) if u >= 1 << 63 else u


def _s32(u: int) -> int:
    u &= 0xFFFFFFFF
    return u - (1 << 32) if u >= 1 << 31 else u


class _Run:
    def __init__(self, msgs: Any, slots: Any, lookup: Any, blobs: list[bytes], cols: list[_Col]) -> None:
        self.msgs = [list(map(int, r)) for r in msgs]
        self.slots = [list(map(int, r)) for r in slots]
        self.lookup = [int(x) for x in lookup]
        self.blobs = blobs
        self.cols = cols
        self.buf = b""

    # ------------------------------------------------------------------ reading
    def varint(self, pos: int, end: int) -> tuple[int, int]:
        z = 0
        for i in range(10):
            if pos + i >= end:
                raise _Fail(f"value truncated: varint runs past the end at byte {pos + i}")
            c = self.buf[pos + i]
            z |= (c & 0x7F) << (7 * i)
            if c < 0x80:
                return z & _M64, pos + i + 1
        raise _Fail(f"varint longer than 10 bytes at byte {pos}")

    def length(self, pos: int, end: int) -> tuple[int, int]:
        n, p = self.varint(pos, end)
        if n > end - p:
            raise _Fail(f"length {_s64(n)} at byte {pos} runs past the end of its message ({end - p} bytes left)")
        return n, p

    def skip(self, wt: int, num: int, pos: int, end: int, tagpos: int, depth: int) -> int:
        """Skip an unknown field's value of wire type ``wt``; where the next tag starts."""
        if wt == 0:
            return self.varint(pos, end)[1]
        if wt == 1 or wt == 5:
            n = 8 if wt == 1 else 4
            if n > end - pos:
                raise _Fail(f"value truncated: {n} bytes needed at byte {pos}, {end - pos} left")
            return pos + n
        if wt == 2:
            n, p = self.length(pos, end)
            return p + n
        if wt == 3:
            if depth >= MAX_DEPTH:
                raise _Fail(f"message nested deeper than {MAX_DEPTH} levels at byte {tagpos}")
            p = pos
            while True:
                if p >= end:
                    raise _Fail(f"group of field {num} at byte {tagpos} is not closed")
                tp = p
                tag, p = self.varint(p, end)
                fnum, fwt = tag >> 3, tag & 7
                if fwt == 4:
                    if fnum != num:
                        raise _Fail(f"unexpected end-group tag at byte {tp}")
                    return p
                if fnum == 0 or fnum > 0x1FFFFFFF:
                    raise _Fail(f"invalid field number {fnum} at byte {tp}")
                p = self.skip(fwt, fnum, p, end, tp, depth + 1)
        if wt == 4:
            raise _Fail(f"unexpected end-group tag at byte {tagpos}")
        raise _Fail(f"invalid wire type {wt} at byte {tagpos}")

    # ------------------------------------------------------------------ writing
    def push_fixed(self, c: int, raw: bytes) -> None:
        col = self.cols[c]
        col.valid.append(1)
        col.length += 1
        col.data += raw

    def push_var(self, c: int, raw: bytes) -> None:
        col = self.cols[c]
        if len(col.data) + len(raw) > INT32_MAX:
            raise _Fail("a column exceeds 2 GiB of data: decode fewer values at a time")
        col.valid.append(1)
        col.length += 1
        col.data += raw
        col.offs.append(len(col.data))

    def push_null(self, c: int) -> None:
        col = self.cols[c]
        col.valid.append(0)
        col.length += 1
        if col.kind == K_FIXED:
            col.data += bytes(col.width)
        elif col.kind in (K_VAR, K_LIST, K_MAP):
            col.offs.append(col.offs[-1])
        elif col.kind == K_STRUCT:
            for ch in col.children:
                self.push_null(ch)

    def close_list(self, c: int) -> None:
        col = self.cols[c]
        col.valid.append(1)
        col.length += 1
        total = self.cols[col.children[0]].length
        if total > INT32_MAX:
            raise _Fail("a column exceeds 2**31 items: decode fewer values at a time")
        col.offs.append(total)

    def put(self, sl: list[int], c: int, v: int, a: int, b: int, depth: int) -> None:
        """Slot ``sl``'s value (``v`` the varint or fixed bits; ``a``..``b`` a length-delimited payload)
        into column ``c``."""
        op = sl[1]
        if op == O_INT32 or op == O_ENUM:
            self.push_fixed(c, struct.pack("<i", _s32(v)))
        elif op == O_INT64 or op == O_UINT64 or op == O_FIXED64:
            self.push_fixed(c, struct.pack("<Q", v & _M64))
        elif op == O_UINT32 or op == O_FIXED32:
            self.push_fixed(c, struct.pack("<I", v & 0xFFFFFFFF))
        elif op == O_SINT32:
            z = v & 0xFFFFFFFF
            self.push_fixed(c, struct.pack("<i", (z >> 1) ^ -(z & 1)))
        elif op == O_SINT64:
            self.push_fixed(c, struct.pack("<q", (v >> 1) ^ -(v & 1)))
        elif op == O_BOOL:
            self.push_fixed(c, b"\x01" if v else b"\x00")
        elif op == O_STRING or op == O_BYTES:
            raw = bytes(self.buf[a:b])
            if op == O_STRING:
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise _Fail(f"invalid UTF-8 in a string at byte {a}") from None
            self.push_var(c, raw)
        elif op == O_MSG or op == O_MAP:
            self.message(sl[4], a, b, depth + 1)
        else:
            self.push_fixed(c, struct.pack("<q", self.instant(a, b)))

    def instant(self, a: int, b: int) -> int:
        """A Timestamp / Duration payload as microseconds (seconds * 10**6 + nanos / 1000, as Spark)."""
        seconds = nanos = 0
        p = a
        while p < b:
            tp = p
            tag, p = self.varint(p, b)
            num, wt = tag >> 3, tag & 7
            if num == 0 or num > 0x1FFFFFFF:
                raise _Fail(f"invalid field number {num} at byte {tp}")
            if wt == 0 and num in (1, 2):
                v, p = self.varint(p, b)
                if num == 1:
                    seconds = _s64(v)
                else:
                    nanos = _s32(v)
            else:
                p = self.skip(wt, num, p, b, tp, 1)
        if not -MAX_SECONDS <= seconds <= MAX_SECONDS:
            raise _Fail(f"timestamp or duration of {seconds} seconds at byte {a} is out of range")
        return seconds * 1000000 + int(nanos / 1000)

    def message(self, m: int, start: int, end: int, depth: int) -> None:
        """Decode message ``m`` from ``start``..``end``: scan, then write every slot."""
        if depth >= MAX_DEPTH:
            raise _Fail(f"message nested deeper than {MAX_DEPTH} levels at byte {start}")
        col, off, n, loff, ln = self.msgs[m]
        slots = self.slots[off:off + n]
        # per slot: [count, v, a, b, merged payloads (a bytes, when a message field came more than once)]
        rec: list[list[Any]] = [[0, 0, 0, 0, None] for _ in range(n)]
        p = start
        while p < end:
            tp = p
            tag, p = self.varint(p, end)
            num, wt = tag >> 3, tag & 7
            if num == 0 or num > 0x1FFFFFFF:
                raise _Fail(f"invalid field number {num} at byte {tp}")
            k = -1
            if ln >= 0:
                if num < ln:
                    k = self.lookup[loff + num]
            else:
                for j, sl in enumerate(slots):
                    if sl[0] == num:
                        k = j
                        break
            if k < 0:
                p = self.skip(wt, num, p, end, tp, depth)
                continue
            sl = slots[k]
            op, flags = sl[1], sl[3]
            expect = OP_WIRE[op]
            if flags & F_REPEATED:
                item = sl[2] if op == O_MAP else self.cols[sl[2]].children[0]
                if wt == expect:
                    p, v, a, b = self.value(wt, p, end)
                    self.put(sl, item, v, a, b, depth)
                elif wt == 2 and flags & F_PACKABLE:
                    ln2, p = self.length(p, end)
                    q, pend = p, p + ln2
                    if expect != 0 and ln2 % (4 if expect == 5 else 8):
                        raise _Fail(f"packed field at byte {tp} does not end on a value boundary")
                    while q < pend:
                        q, v, a, b = self.value(expect, q, pend)
                        self.put(sl, item, v, a, b, depth)
                    p = pend
                else:
                    p = self.skip(wt, num, p, end, tp, depth)
                continue
            if wt != expect:
                p = self.skip(wt, num, p, end, tp, depth)
                continue
            p, v, a, b = self.value(wt, p, end)
            r = rec[k]
            if op in (O_MSG, O_TIMESTAMP, O_DURATION) and r[0]:
                if r[4] is None:
                    r[4] = bytes(self.buf[r[2]:r[3]])
                r[4] += bytes(self.buf[a:b])
            r[0] += 1
            r[1], r[2], r[3] = v, a, b
            if sl[5] >= 0:  # a oneof member clears the others
                for j, other in enumerate(slots):
                    if j != k and other[5] == sl[5]:
                        rec[j] = [0, 0, 0, 0, None]
        for k, sl in enumerate(slots):
            op, c, flags = sl[1], sl[2], sl[3]
            r = rec[k]
            if flags & F_REPEATED:
                self.close_list(c)
            elif r[0]:
                if r[4] is not None:  # merged: decode the concatenation
                    saved = self.buf
                    self.buf = r[4]
                    try:
                        self.put(sl, c, 0, 0, len(r[4]), depth)
                    finally:
                        self.buf = saved
                else:
                    self.put(sl, c, r[1], r[2], r[3], depth)
            elif flags & F_EMPTY_MESSAGE:  # a map entry's unset message value: the empty message
                self.put(sl, c, 0, end, end, depth)
            elif flags & F_PRESENCE or op in (O_MSG, O_TIMESTAMP, O_DURATION):
                self.push_null(c)
            elif op == O_STRING or op == O_BYTES:
                self.push_var(c, self.blobs[sl[7]] if sl[7] >= 0 else b"")
            else:
                self.put(sl, c, sl[6] & _M64, 0, 0, depth)
        if col >= 0:
            own = self.cols[col]
            own.valid.append(1)
            own.length += 1

    def value(self, wt: int, p: int, end: int) -> tuple[int, int, int, int]:
        """One value of wire type ``wt`` at ``p``: (next, varint/fixed bits, payload start, payload end)."""
        if wt == 0:
            v, q = self.varint(p, end)
            return q, v, 0, 0
        if wt == 5 or wt == 1:
            n = 4 if wt == 5 else 8
            if n > end - p:
                raise _Fail(f"value truncated: {n} bytes needed at byte {p}, {end - p} left")
            return p + n, int.from_bytes(self.buf[p:p + n], "little"), 0, 0
        n, q = self.length(p, end)
        return q + n, 0, q, q + n


def _header(raw: bytes) -> tuple[int, bytes, int]:
    """(schema id, message index bytes, where the message starts) of a framed value."""
    if len(raw) < 5:
        raise _Fail(f"value of {len(raw)} bytes is shorter than the 5-byte Confluent header")
    if raw[0] != 0:
        raise _Fail(f"bad magic byte {raw[0]} (the Confluent wire format starts with 0)")
    sid = int.from_bytes(raw[1:5], "big", signed=True)
    pos = 5

    def varint() -> int:
        nonlocal pos
        z = 0
        for i in range(10):
            if pos >= len(raw):
                raise _Fail("message indexes run past the end of the value")
            c = raw[pos]
            pos += 1
            z |= (c & 0x7F) << (7 * i)
            if c < 0x80:
                return z & _M64
        raise _Fail("message indexes run past the end of the value")

    z = varint()
    count = (z >> 1) ^ -(z & 1)
    if count != 0:
        if not 0 < count <= MAX_INDEXES:
            raise _Fail(f"message index count {count} is not between 1 and {MAX_INDEXES}")
        for _ in range(count):
            varint()
    return sid, bytes(raw[5:pos]), pos


def scan_heads(data: Any, offsets: Any, valid: Any) -> list[tuple[int, bytes]]:
    """The distinct (schema id, message index bytes) of the framed values (``data`` sliced by ``offsets``), in
    order of first appearance; nulls and values whose header does not parse are left to decode()."""
    buf = bytes(memoryview(data).cast("B")) if not isinstance(data, bytes) else data
    offs = [int(x) for x in offsets]
    seen: dict[tuple[int, bytes], None] = {}
    for row in range(len(offs) - 1):
        if valid is not None and not valid[row]:
            continue
        try:
            sid, idx, _ = _header(buf[offs[row]:offs[row + 1]])
        except _Fail:
            continue
        seen.setdefault((sid, idx), None)
    return list(seen)


def decode(msgs: Any, slots: Any, lookup: Any, blobs: list[bytes], col_kinds: list[int], col_widths: list[int],
           col_children: list[list[int]], root_col: int, roots: dict[tuple[int, bytes], Any], data: Any,
           offsets: Any, valid: Any, permissive: bool) -> tuple[list[tuple[int, bytes, bytes, bytes]],
                                                               list[tuple[int, str]]]:
    """Decode every framed value (``data`` sliced by int32 ``offsets``; ``valid`` None or one byte per value)
    with the program of its (schema id, message indexes) in ``roots`` (a message, or an error text)."""
    cols = [_Col(k, w, list(ch)) for k, w, ch in zip(col_kinds, col_widths, col_children)]
    run = _Run(msgs, slots, lookup, blobs, cols)
    buf = bytes(memoryview(data).cast("B")) if not isinstance(data, bytes) else data
    offs = [int(x) for x in offsets]
    errors: list[tuple[int, str]] = []
    for row in range(len(offs) - 1):
        if valid is not None and not valid[row]:
            run.push_null(root_col)
            continue
        snap = [(c.length, len(c.valid), len(c.offs), len(c.data)) for c in cols]
        raw = buf[offs[row]:offs[row + 1]]
        try:
            sid, idx, start = _header(raw)
            root = roots.get((sid, idx))
            if root is None:
                raise _Fail(f"no program for schema id {sid}")
            if isinstance(root, str):
                raise _Fail(root)
            run.buf = raw
            run.message(root, start, len(raw), 0)
        except _Fail as e:
            errors.append((row, str(e)))
            if not permissive:
                break
            for c, (length, nv, no, nd) in zip(cols, snap):
                c.length = length
                del c.valid[nv:]
                del c.offs[no:]
                del c.data[nd:]
            run.push_null(root_col)
    return [(c.length, bytes(c.valid), c.offs.tobytes(), bytes(c.data)) for c in cols], errors
