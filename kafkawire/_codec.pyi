"""Type stubs of the compiled core (``kafkawire/_codec.pyx``); same interface as ``kafkawire._pure.codec``."""

from typing import Any

import numpy as np

from kafkawire.columns import BinaryColumn, RecordColumns

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

def decode(
    data: Any, verify_crc: bool, fetch_offset: int, read_committed: bool, aborted: list[tuple[int, int]]
) -> RecordColumns: ...
def encode(
    values: BinaryColumn,
    keys: BinaryColumn | None,
    timestamps: np.ndarray,
    header_offsets: np.ndarray | None,
    header_keys: BinaryColumn | None,
    header_values: BinaryColumn | None,
    base_offset: int,
    magic: int,
    codec: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
    transactional: bool,
    partition_leader_epoch: int,
) -> bytes: ...
def crc32(data: Any, value: int = 0) -> int: ...
def crc32c(data: Any, value: int = 0) -> int: ...
def encode_varint(n: int) -> bytes: ...
def decode_varint(buf: Any, pos: int = 0) -> tuple[int, int]: ...
def encode_varlong(n: int) -> bytes: ...
def decode_varlong(buf: Any, pos: int = 0) -> tuple[int, int]: ...
def encode_unsigned_varint(n: int) -> bytes: ...
def decode_unsigned_varint(buf: Any, pos: int = 0) -> tuple[int, int]: ...

# Diagnostics and test hooks (not part of the shared interface).
def _crc_implementations() -> tuple[str, str]: ...
def _crc_force_software(on: bool) -> None: ...
def _buffer_pool(limit: int | None = None) -> int: ...
