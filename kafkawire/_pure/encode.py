"""Encoding of records into one magic 2 record batch or a legacy magic 0/1 message set (reference)."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from .. import compression
from ..columns import BinaryColumn
from .crc import crc32, crc32c
from .varint import encode_varint, encode_varlong

__all__ = ["encode"]

_INT32_MAX = (1 << 31) - 1
_BATCH_HEADER = struct.Struct(">qiibIhiqqqhii")
_ATTR_TRANSACTIONAL = 0x10


def _pack(st: struct.Struct, *fields: Any) -> bytes:
    try:
        return st.pack(*fields)
    except struct.error as exc:
        raise ValueError(f"field out of range: {exc}") from None


def _varbytes(b: bytes | None) -> bytes:
    return b"\x01" if b is None else encode_varint(len(b)) + b  # zigzag(-1) == 0x01


def _check_sizes(items: list[bytes | None], what: str) -> None:
    for b in items:
        if b is not None and len(b) > _INT32_MAX:
            raise ValueError(f"{what} of {len(b)} bytes is larger than 2**31-1")


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
) -> bytes:
    """Encode ``len(values)`` records (see docs/CODEC-SPEC.md, "Encode")."""
    n = len(values)
    if n == 0:
        raise ValueError("cannot encode an empty batch")
    if magic not in (0, 1, 2):
        raise ValueError(f"magic must be 0, 1 or 2, not {magic}")
    if codec not in (0, 1, 2, 3, 4):
        raise ValueError(f"codec must be 0-4, not {codec}")
    if codec == 4 and magic < 2:
        raise ValueError("zstd needs magic 2")
    vals = values.to_pylist()
    ks: list[bytes | None] = [None] * n if keys is None else keys.to_pylist()
    if len(ks) != n:
        raise ValueError(f"keys has {len(ks)} elements, expected {n}")
    ts = [int(t) for t in np.asarray(timestamps, dtype=np.int64).tolist()]
    if len(ts) != n:
        raise ValueError(f"timestamps has {len(ts)} elements, expected {n}")
    _check_sizes(vals, "value")
    _check_sizes(ks, "key")

    headers: list[list[tuple[bytes, bytes | None]]] = [[] for _ in range(n)]
    if header_offsets is not None:
        hoffs = [int(x) for x in np.asarray(header_offsets).tolist()]
        if len(hoffs) != n + 1 or header_keys is None or header_values is None:
            raise ValueError("header_offsets needs n + 1 elements and header key/value columns")
        hks, hvs = header_keys.to_pylist(), header_values.to_pylist()
        for i in range(n):
            for j in range(hoffs[i], hoffs[i + 1]):
                hk = hks[j]
                if hk is None:
                    raise ValueError("header keys cannot be null")
                headers[i].append((hk, hvs[j]))
        if magic < 2 and any(headers):
            raise ValueError("record headers need magic 2")

    if magic == 2:
        return _encode_batch(
            vals,
            ks,
            ts,
            headers,
            base_offset,
            codec,
            producer_id,
            producer_epoch,
            base_sequence,
            transactional,
            partition_leader_epoch,
        )
    return _encode_legacy(vals, ks, ts, base_offset, magic, codec)


def _encode_batch(
    vals: list[bytes | None],
    ks: list[bytes | None],
    ts: list[int],
    headers: list[list[tuple[bytes, bytes | None]]],
    base_offset: int,
    codec: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
    transactional: bool,
    partition_leader_epoch: int,
) -> bytes:
    n = len(vals)
    base_ts = ts[0]
    parts = []
    for i in range(n):
        hs = headers[i]
        body = b"".join(
            [
                b"\x00",  # record attributes
                encode_varlong(ts[i] - base_ts),
                encode_varint(i),
                _varbytes(ks[i]),
                _varbytes(vals[i]),
                encode_varint(len(hs)),
                *[encode_varint(len(k)) + k + _varbytes(v) for k, v in hs],
            ]
        )
        parts.append(encode_varint(len(body)))
        parts.append(body)
    records = b"".join(parts)
    if codec:
        records = compression.compress(codec, records, 2)
    if 49 + len(records) > _INT32_MAX:
        raise ValueError("record batch larger than 2**31-1 bytes")
    attributes = codec | (_ATTR_TRANSACTIONAL if transactional else 0)
    header = _pack(
        _BATCH_HEADER,
        base_offset,
        49 + len(records),
        partition_leader_epoch,
        2,
        0,
        attributes,
        n - 1,
        base_ts,
        max(ts),
        producer_id,
        producer_epoch,
        base_sequence,
        n,
    )
    crc = crc32c(records, crc32c(header[21:]))
    return header[:17] + struct.pack(">I", crc) + header[21:] + records


def _message(offset: int, magic: int, attributes: int, timestamp: int, key: bytes | None, value: bytes | None) -> bytes:
    """One legacy entry: offset, size, crc, then magic.. value (CRC32 covers magic to the end)."""
    head = struct.pack(">bb", magic, attributes)
    if magic == 1:
        head += _pack(struct.Struct(">q"), timestamp)
    body = b"".join(
        [
            head,
            b"\xff\xff\xff\xff" if key is None else struct.pack(">i", len(key)) + key,
            b"\xff\xff\xff\xff" if value is None else struct.pack(">i", len(value)) + value,
        ]
    )
    if 4 + len(body) > _INT32_MAX:
        raise ValueError("message larger than 2**31-1 bytes")
    return _pack(struct.Struct(">qiI"), offset, 4 + len(body), crc32(body)) + body


def _encode_legacy(
    vals: list[bytes | None], ks: list[bytes | None], ts: list[int], base_offset: int, magic: int, codec: int
) -> bytes:
    n = len(vals)
    if codec == 0:
        return b"".join(_message(base_offset + i, magic, 0, ts[i], ks[i], vals[i]) for i in range(n))
    # KIP-31: magic 1 inner offsets are relative (0..n-1); the wrapper carries the last absolute offset.
    inner = b"".join(_message(i if magic == 1 else base_offset + i, magic, 0, ts[i], ks[i], vals[i]) for i in range(n))
    wrapped = compression.compress(codec, inner, magic)
    return _message(base_offset + n - 1, magic, codec, max(ts), None, wrapped)
