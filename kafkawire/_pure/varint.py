"""Kafka varints: zigzag int32/int64 (record fields) and unsigned int32 (KIP-482 compact lengths).

Every byte is bounds-checked against ``end`` (the end of the enclosing record, or of the buffer), and a
final byte that would overflow the type is rejected, as Java's ``ByteUtils`` does.
"""

from __future__ import annotations

from typing import Any

from ..errors import CorruptRecordError

__all__ = [
    "encode_varint",
    "decode_varint",
    "encode_varlong",
    "decode_varlong",
    "encode_unsigned_varint",
    "decode_unsigned_varint",
    "read_uvarint32",
    "read_varint",
    "read_varlong",
]

_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_UINT32_MAX = (1 << 32) - 1


def _check_int(n: Any, lo: int, hi: int, what: str) -> int:
    if not isinstance(n, int) or isinstance(n, bool):
        try:
            n = n.__index__()
        except AttributeError:
            raise TypeError(f"{what} must be an integer, not {type(n).__name__}") from None
    if not lo <= n <= hi:
        raise ValueError(f"{n} is out of range for {what} [{lo}, {hi}]")
    return int(n)


_ONE_BYTE = [bytes([u]) for u in range(0x80)]


def _encode_unsigned(u: int) -> bytes:
    # Most varints in a batch (deltas, lengths, counts) take one or two bytes: skip the loop for them.
    if u < 0x80:
        return _ONE_BYTE[u]
    if u < 0x4000:
        return bytes(((u & 0x7F) | 0x80, u >> 7))
    out = bytearray()
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def _read_unsigned(buf: Any, pos: int, end: int, last_shift: int, last_max: int, what: str) -> tuple[int, int]:
    """Read an unsigned varint of at most ``last_shift // 7 + 1`` bytes; the last byte may carry at most
    ``last_max`` (the bits left of the width), else it is overlong or overflows: CorruptRecordError."""
    if pos >= end:
        raise CorruptRecordError(f"{what} runs past the end of its buffer")
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    result = b & 0x7F
    shift = 7
    pos += 1
    while True:
        if pos >= end:
            raise CorruptRecordError(f"{what} runs past the end of its buffer")
        b = buf[pos]
        pos += 1
        if shift == last_shift:
            if b > last_max:
                raise CorruptRecordError(f"{what} longer than {last_shift // 7 + 1} bytes or overflowing")
            return result | (b << last_shift), pos
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def read_uvarint32(buf: Any, pos: int, end: int) -> tuple[int, int]:
    """Read an unsigned 32-bit varint from ``buf[pos:end]``: ``(value, new_pos)``.

    At most 5 bytes; the 5th may only carry the top 4 bits (``<= 0x0F``), else the value overflows
    (or the varint is longer than 5 bytes): :class:`CorruptRecordError`.
    """
    return _read_unsigned(buf, pos, end, 28, 0x0F, "varint")


def _read_uvarint64(buf: Any, pos: int, end: int) -> tuple[int, int]:
    # At most 10 bytes; the 10th may only carry bit 63.
    return _read_unsigned(buf, pos, end, 63, 0x01, "varlong")


def read_varint(buf: Any, pos: int, end: int) -> tuple[int, int]:
    """Read a zigzag int32 varint from ``buf[pos:end]``: ``(value, new_pos)``."""
    u, pos = read_uvarint32(buf, pos, end)
    return (u >> 1) ^ -(u & 1), pos


def read_varlong(buf: Any, pos: int, end: int) -> tuple[int, int]:
    """Read a zigzag int64 varlong from ``buf[pos:end]``: ``(value, new_pos)``."""
    u, pos = _read_uvarint64(buf, pos, end)
    return (u >> 1) ^ -(u & 1), pos


def _as_indexable(buf: Any, pos: int) -> Any:
    if pos < 0:
        raise ValueError(f"pos must be >= 0, not {pos}")
    if isinstance(buf, (bytes, bytearray)):
        return buf
    mv = memoryview(buf)
    return mv if mv.format == "B" and mv.ndim == 1 else mv.cast("B")


def encode_varint(n: int) -> bytes:
    """Zigzag-encode a signed 32-bit integer (1-5 bytes); ``ValueError`` outside the int32 range."""
    if type(n) is not int or not _INT32_MIN <= n <= _INT32_MAX:
        n = _check_int(n, _INT32_MIN, _INT32_MAX, "varint (int32)")
    return _encode_unsigned(((n << 1) ^ (n >> 31)) & _UINT32_MAX)


def decode_varint(buf: Any, pos: int = 0) -> tuple[int, int]:
    """Decode a zigzag int32 varint at ``buf[pos]``: ``(value, new_pos)``.

    :class:`~kafkawire.CorruptRecordError` when it runs past the end, is longer than 5 bytes or
    overflows 32 bits.
    """
    buf = _as_indexable(buf, pos)
    return read_varint(buf, pos, len(buf))


def encode_varlong(n: int) -> bytes:
    """Zigzag-encode a signed 64-bit integer (1-10 bytes); ``ValueError`` outside the int64 range."""
    if type(n) is not int or not _INT64_MIN <= n <= _INT64_MAX:
        n = _check_int(n, _INT64_MIN, _INT64_MAX, "varlong (int64)")
    return _encode_unsigned(((n << 1) ^ (n >> 63)) & ((1 << 64) - 1))


def decode_varlong(buf: Any, pos: int = 0) -> tuple[int, int]:
    """Decode a zigzag int64 varlong at ``buf[pos]``: ``(value, new_pos)`` (at most 10 bytes)."""
    buf = _as_indexable(buf, pos)
    return read_varlong(buf, pos, len(buf))


def encode_unsigned_varint(n: int) -> bytes:
    """Encode an unsigned 32-bit integer without zigzag (KIP-482); ``ValueError`` outside uint32."""
    return _encode_unsigned(_check_int(n, 0, _UINT32_MAX, "unsigned varint (uint32)"))


def decode_unsigned_varint(buf: Any, pos: int = 0) -> tuple[int, int]:
    """Decode an unsigned 32-bit varint (no zigzag) at ``buf[pos]``: ``(value, new_pos)``."""
    buf = _as_indexable(buf, pos)
    return read_uvarint32(buf, pos, len(buf))
