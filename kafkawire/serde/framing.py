"""The Confluent wire format around registry-encoded values: magic byte 0, a big-endian int32 schema id, the body.

:func:`schema_ids` reads every value's header in one vectorised pass (numpy, no object per value), so the
decoders know which writer schemas to fetch before they start; :func:`frame` builds framed values from bodies.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..binary import BinaryColumn, as_binary_column

__all__ = ["HEADER_SIZE", "MAGIC", "frame", "schema_ids", "values_column"]

MAGIC = 0
HEADER_SIZE = 5


def values_column(values: Any) -> BinaryColumn:
    """``values`` (a :class:`BinaryColumn`, a pyarrow binary array or chunked array) as a BinaryColumn."""
    if isinstance(values, (str, bytes, bytearray)):
        raise TypeError("values must be a column of values (BinaryColumn or a pyarrow binary array), not one value")
    if not (isinstance(values, BinaryColumn) or type(values).__module__.startswith("pyarrow")
            or isinstance(values, (list, tuple))):
        raise TypeError(f"values must be a BinaryColumn or a pyarrow binary array, not {type(values).__name__}")
    col = as_binary_column(values)
    return col


def schema_ids(col: BinaryColumn) -> np.ndarray:
    """Each value's schema id (int64); -1 where the value is null, shorter than the header or not magic 0."""
    offsets = np.asarray(col.offsets, dtype=np.int64)
    data = np.asarray(col.data, dtype=np.uint8)
    n = len(offsets) - 1
    ids = np.full(n, -1, dtype=np.int64)
    if n <= 0:
        return ids
    starts = offsets[:-1]
    ok = (offsets[1:] - starts) >= HEADER_SIZE
    if col.valid is not None:
        ok &= np.asarray(col.valid, dtype=bool)
    idx = np.nonzero(ok)[0]
    if len(idx):
        s = starts[idx]
        magic_ok = data[s] == MAGIC
        idx, s = idx[magic_ok], s[magic_ok]
        raw = (data[s + 1].astype(np.uint32) << 24) | (data[s + 2].astype(np.uint32) << 16) | (
            data[s + 3].astype(np.uint32) << 8) | data[s + 4].astype(np.uint32)
        ids[idx] = raw.astype(np.int32).astype(np.int64)
    return ids


def frame(schema_id: int, bodies: list[bytes | None]) -> BinaryColumn:
    """Framed values (``None`` stays a null value)."""
    header = bytes([MAGIC]) + int(schema_id).to_bytes(4, "big", signed=True)
    return BinaryColumn.from_pylist([None if b is None else header + b for b in bodies])


def rows_as_struct_array(pa: Any, data: Any) -> Any:
    """The rows an encoder writes, as one ``pyarrow.StructArray``: a Table or RecordBatch becomes its
    struct array, a ChunkedArray one array; anything else that is not an Arrow array is a TypeError."""
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        data = data.to_struct_array()
    if isinstance(data, pa.ChunkedArray):
        data = data.combine_chunks()
    if not isinstance(data, pa.Array):
        raise TypeError(f"expected a pyarrow StructArray, Table or RecordBatch, not {type(data).__name__}")
    return data
