"""The pure-Python record codec: the module interface of docs/CODEC-SPEC.md.

This module is the reference the compiled core (``kafkawire._codec``) is checked against; it only
re-exports the functions, which live in :mod:`.decode`, :mod:`.encode`, :mod:`.varint` and :mod:`.crc`.
"""

from __future__ import annotations

from .crc import crc32, crc32c
from .decode import decode
from .encode import encode
from .varint import (
    decode_unsigned_varint,
    decode_varint,
    decode_varlong,
    encode_unsigned_varint,
    encode_varint,
    encode_varlong,
)

__all__ = [
    "decode",
    "encode",
    "crc32",
    "crc32c",
    "encode_varint",
    "decode_varint",
    "encode_varlong",
    "decode_varlong",
    "encode_unsigned_varint",
    "decode_unsigned_varint",
]
