"""kafkawire: the Apache Kafka wire protocol at compiled speed, with records as numpy/Arrow columns.

The codec (``decode_records``, ``encode_records``, varints, CRCs) runs in a compiled Cython core when it
is built, else in a pure-Python reference with identical results; ``kafkawire.compiled`` says which and
``kafkawire.codec_status`` why. Falling back to the reference without an opt-in (``KAFKAWIRE_PURE=1``)
warns once at import (:class:`PureCodecWarning`), naming the cause and the fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _impl
from .columns import BinaryColumn, Record, RecordColumns
from .errors import (
    CorruptRecordError,
    CrcMismatchError,
    DecompressionError,
    KafkaWireError,
    ProtocolError,
    PureCodecWarning,
    RecordTooLargeError,
    UnsupportedCodecError,
    UnsupportedMagicError,
)
from .records import CODECS, codec_id, decode_records, encode_records

__version__ = "0.1.0"

#: True when the compiled core (``kafkawire._codec``) is active, False for the pure-Python reference.
compiled: bool = _impl.compiled
#: Which codec runs and why (:class:`kafkawire._impl.CodecStatus`: interpreter, package directory, reason).
codec_status = _impl.status
#: The active implementation module.
implementation = _impl.impl

crc32 = _impl.impl.crc32
crc32c = _impl.impl.crc32c
encode_varint = _impl.impl.encode_varint
decode_varint = _impl.impl.decode_varint
encode_varlong = _impl.impl.encode_varlong
decode_varlong = _impl.impl.decode_varlong
encode_unsigned_varint = _impl.impl.encode_unsigned_varint
decode_unsigned_varint = _impl.impl.decode_unsigned_varint

if TYPE_CHECKING:  # one class for type checkers; at run time the compiled one when the core is built
    from ._pure.recview import RecordView
else:
    #: One record of a RecordColumns, read from the columns when a field is asked for (what iterating
    #: RecordColumns and a Consumer yields).
    RecordView = _impl.views.RecordView

_LAZY = {"Client": "client", "Consumer": "client", "Producer": "client"}

if TYPE_CHECKING:  # type checkers see the real classes; at run time __getattr__ imports them on first use
    from .client import Client, Consumer, Producer


def __getattr__(name: str) -> object:
    # The client (and the protocol layer under it) loads on first use: `import kafkawire` for the codec
    # alone stays cheap, while `kafkawire.Client` works as the issue-level public name.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'kafkawire' has no attribute {name!r}")


__all__ = [
    "BinaryColumn",
    "Client",
    "Consumer",
    "Producer",
    "CODECS",
    "CorruptRecordError",
    "CrcMismatchError",
    "DecompressionError",
    "KafkaWireError",
    "ProtocolError",
    "PureCodecWarning",
    "Record",
    "RecordColumns",
    "RecordView",
    "RecordTooLargeError",
    "UnsupportedCodecError",
    "UnsupportedMagicError",
    "codec_id",
    "codec_status",
    "compiled",
    "crc32",
    "crc32c",
    "decode_records",
    "decode_unsigned_varint",
    "decode_varint",
    "decode_varlong",
    "encode_records",
    "encode_unsigned_varint",
    "encode_varint",
    "encode_varlong",
    "implementation",
]
