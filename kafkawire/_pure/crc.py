"""CRC32 (IEEE, legacy messages) and CRC32C (Castagnoli, magic 2 batches).

CRC32 is :func:`zlib.crc32`. CRC32C uses the ``crc32c`` package (a runtime dependency with a hardware
implementation) and falls back to a table-driven pure-Python version when it is missing.
"""

from __future__ import annotations

import zlib
from typing import Any

__all__ = ["crc32", "crc32c", "crc32c_python"]


def crc32(data: Any, value: int = 0) -> int:
    """IEEE CRC32 of ``data`` continuing from ``value`` (= :func:`zlib.crc32`)."""
    return zlib.crc32(data, value) & 0xFFFFFFFF


def _make_table() -> list[int]:
    poly = 0x82F63B78  # Castagnoli polynomial, reflected
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _make_table()


def crc32c_python(data: Any, value: int = 0) -> int:
    """CRC32C of ``data`` continuing from ``value``, one table lookup per byte (the fallback)."""
    table = _TABLE
    crc = ~value & 0xFFFFFFFF
    for b in bytes(data):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return ~crc & 0xFFFFFFFF


try:
    from crc32c import crc32c as _crc32c_native
except ImportError:  # pragma: no cover - the package is a declared dependency
    _crc32c_native = None  # type: ignore[assignment]  # checked before use


def crc32c(data: Any, value: int = 0) -> int:
    """Castagnoli CRC32C of ``data`` continuing from ``value`` (= ``crc32c.crc32c``)."""
    if _crc32c_native is not None:
        return _crc32c_native(data, value)
    return crc32c_python(data, value)
