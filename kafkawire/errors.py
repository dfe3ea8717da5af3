"""The exception hierarchy of kafkawire.

Everything kafkawire raises on purpose derives from :class:`KafkaWireError`::

    KafkaWireError
    ├── CorruptRecordError        malformed record/batch bytes (bad length, count, varint, trailing bytes)
    │   ├── CrcMismatchError      stored and computed checksums differ (names the offsets)
    │   └── DecompressionError    a compressed payload does not decompress, or exceeds the size cap
    ├── UnsupportedMagicError     a magic byte other than 0, 1 or 2
    ├── UnsupportedCodecError     a compression codec id kafkawire does not know (or zstd below magic 2)
    ├── RecordTooLargeError       not even one complete entry fits in the fetched bytes
    ├── ProtocolError             a malformed request/response frame (protocol layer)
    └── (broker error codes and client errors live in kafkawire.protocol.errors / kafkawire.client)

:class:`PureCodecWarning` (a ``RuntimeWarning``) says that the pure-Python codec runs though nobody chose it.

The compiled core and the pure-Python reference raise the same classes on the same input.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "KafkaWireError",
    "CorruptRecordError",
    "CrcMismatchError",
    "DecompressionError",
    "UnsupportedMagicError",
    "UnsupportedCodecError",
    "RecordTooLargeError",
    "ProtocolError",
    "PureCodecWarning",
]


class KafkaWireError(Exception):
    """Root of every exception kafkawire raises deliberately."""


class CorruptRecordError(KafkaWireError):
    """Record or batch bytes that violate the format (forged lengths, counts, varints, trailing bytes)."""


class CrcMismatchError(CorruptRecordError):
    """The checksum stored in a batch or message differs from the one computed over its bytes.

    Attributes: ``base_offset`` and ``last_offset`` of the entry, ``stored`` and ``computed`` CRC values.
    """

    def __init__(self, base_offset: int, last_offset: int, stored: int, computed: int) -> None:
        self.base_offset = base_offset
        self.last_offset = last_offset
        self.stored = stored
        self.computed = computed
        super().__init__(
            f"CRC mismatch in entry at offsets {base_offset}..{last_offset}: "
            f"stored 0x{stored:08x}, computed 0x{computed:08x}"
        )

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:  # keep picklable across processes (Spark executors)
        return (type(self), (self.base_offset, self.last_offset, self.stored, self.computed))


class DecompressionError(CorruptRecordError):
    """A compressed payload failed to decompress or would exceed the decompressed-size cap."""


class UnsupportedMagicError(KafkaWireError):
    """A record entry carries a magic byte (format version) kafkawire does not implement."""


class UnsupportedCodecError(KafkaWireError):
    """A compression codec id outside 0-4, or one that the entry's magic cannot carry."""


class RecordTooLargeError(KafkaWireError):
    """Fetched bytes hold no complete entry: the first batch is larger than the fetch size.

    Attributes: ``offset`` (the entry's base offset, or None if not even that was present) and
    ``size`` (its declared total size in bytes, or None).
    """

    def __init__(self, offset: int | None, size: int | None, available: int) -> None:
        self.offset = offset
        self.size = size
        self.available = available
        if size is None:  # fewer than 12 bytes: not even the entry's offset and length are there
            what = f"only {available} bytes were fetched, fewer than the 12 of an entry's offset and length"
        else:
            what = f"record batch at offset {offset} needs {size} bytes but only {available} were fetched"
        super().__init__(f"{what}; raise the fetch size (max_partition_bytes / max_bytes)")

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (type(self), (self.offset, self.size, self.available))


class ProtocolError(KafkaWireError):
    """A request or response frame that cannot be encoded or decoded (protocol layer)."""


class PureCodecWarning(RuntimeWarning):
    """kafkawire fell back to its pure-Python codec though nobody asked for it (the message says why and how
    to fix it); ``KAFKAWIRE_PURE=1`` chooses the pure codec on purpose and silences it."""
