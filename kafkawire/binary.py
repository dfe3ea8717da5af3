"""One column of nullable byte strings in Arrow's ``binary`` layout (int32 offsets, one data buffer, a
validity mask), so that ``to_arrow()`` wraps the numpy buffers without copying the data.

It is the unit every layer above shares (the record codec's keys and values, the value decoders of
:mod:`kafkawire.serde`, the produce path), so it lives below all of them;
:class:`kafkawire.columns.RecordColumns` builds on it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from ._optional import require

__all__ = ["BinaryColumn", "as_binary_column"]

_EMPTY_I32 = np.zeros(1, dtype=np.int32)


class BinaryColumn:
    """A column of nullable byte strings in Arrow's binary layout.

    ``offsets`` is int32 with ``len + 1`` elements (element *i* spans ``data[offsets[i]:offsets[i+1]]``),
    ``data`` is a uint8 buffer, ``valid`` is a bool array (False = null) or None when nothing is null.
    A null element has an empty span, so null and empty (b"") stay distinct only through ``valid``.
    """

    __slots__ = ("offsets", "data", "valid")
    offsets: npt.NDArray[np.int32]
    data: npt.NDArray[np.uint8]
    valid: npt.NDArray[np.bool_] | None

    def __init__(self, offsets: np.ndarray, data: np.ndarray, valid: np.ndarray | None = None) -> None:
        self.offsets = offsets
        self.data = data
        self.valid = valid

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def is_null(self, i: int) -> bool:
        """True if element *i* is null."""
        return self.valid is not None and not self.valid[i]

    def __getitem__(self, i: int) -> bytes | None:
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        if self.valid is not None and not self.valid[i]:
            return None
        return self.data[self.offsets[i] : self.offsets[i + 1]].tobytes()

    def __iter__(self) -> Iterator[bytes | None]:
        return iter(self.to_pylist())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BinaryColumn):
            return NotImplemented
        return self.to_pylist() == other.to_pylist()

    def __repr__(self) -> str:
        return f"BinaryColumn(len={len(self)}, bytes={self.nbytes})"

    @property
    def nbytes(self) -> int:
        """Bytes of element data (excluding offsets and validity)."""
        return int(self.offsets[-1] - self.offsets[0]) if len(self.offsets) else 0

    @property
    def null_count(self) -> int:
        return 0 if self.valid is None else int(len(self) - np.count_nonzero(self.valid))

    def to_pylist(self) -> list[bytes | None]:
        """Every element as ``bytes`` or ``None`` (builds one Python object per element)."""
        raw = self.data.tobytes() if len(self.data) else b""
        offs = self.offsets.tolist()
        out: list[bytes | None] = [raw[offs[i] : offs[i + 1]] for i in range(len(offs) - 1)]
        if self.valid is not None:
            for i in np.flatnonzero(~self.valid).tolist():
                out[i] = None
        return out

    def to_arrow(self, type: Any = None) -> Any:
        """A ``pyarrow.BinaryArray`` (or ``type``, e.g. ``pa.string()``) sharing the offsets and data buffers."""
        pa = require("pyarrow", "BinaryColumn.to_arrow()")

        n = len(self)
        validity = None
        null_count = 0
        if self.valid is not None:
            null_count = self.null_count
            if null_count:
                validity = pa.py_buffer(np.packbits(self.valid, bitorder="little"))
        offsets = np.ascontiguousarray(self.offsets, dtype=np.int32)
        data = np.ascontiguousarray(self.data, dtype=np.uint8)
        return pa.Array.from_buffers(
            type or pa.binary(),
            n,
            [validity, pa.py_buffer(offsets), pa.py_buffer(data)],
            null_count=null_count,
        )

    @classmethod
    def from_pylist(cls, items: Sequence[bytes | bytearray | memoryview | str | None]) -> BinaryColumn:
        """Build a column from Python byte strings (``str`` is UTF-8 encoded; ``None`` is null)."""
        items = list(items)
        n = len(items)
        valid_mask: np.ndarray | None = None
        if None in items:
            valid_mask = np.fromiter((x is not None for x in items), dtype=bool, count=n)
            items = [b"" if x is None else x for x in items]
        # Fast path (C loops only: map/set/join/fromiter): every element already bytes or bytearray.
        if set(map(type, items)) <= {bytes, bytearray}:
            raw = cast("list[bytes]", items)  # checked just above
            lengths = np.fromiter(map(len, raw), dtype=np.int64, count=n)
            offsets = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
            if offsets[-1] > 0x7FFFFFFF:
                raise ValueError("binary column larger than 2 GiB")
            joined = b"".join(raw)
            data = np.frombuffer(joined, dtype=np.uint8) if joined else np.zeros(0, dtype=np.uint8)
            return cls(offsets.astype(np.int32), data, valid_mask)
        if valid_mask is not None:
            items = [None if not ok else x for x, ok in zip(items, valid_mask.tolist())]
        offsets = np.zeros(n + 1, dtype=np.int64)
        valid = np.ones(n, dtype=bool)
        chunks: list[bytes] = []
        pos = 0
        for i, item in enumerate(items):
            if item is None:
                valid[i] = False
            else:
                if isinstance(item, str):
                    item = item.encode("utf-8")
                elif not isinstance(item, (bytes, bytearray, memoryview)):
                    # bytes(3) is three zero bytes: an int (or numpy integer) must never become data.
                    raise TypeError(
                        f"element {i} is {type(item).__name__}; expected bytes, bytearray, memoryview, str or None"
                    )
                b = bytes(item)
                chunks.append(b)
                pos += len(b)
            offsets[i + 1] = pos
        if pos > 0x7FFFFFFF:
            raise ValueError("binary column larger than 2 GiB")
        data = np.frombuffer(b"".join(chunks), dtype=np.uint8) if pos else np.zeros(0, dtype=np.uint8)
        return cls(offsets.astype(np.int32), data, None if valid.all() else valid)

    @classmethod
    def from_arrow(cls, array: Any) -> BinaryColumn:
        """Wrap a pyarrow ``binary``/``string`` array (or chunked array) without copying its data."""
        pa = require("pyarrow", "BinaryColumn.from_arrow()")

        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
        if pa.types.is_large_binary(array.type) or pa.types.is_large_string(array.type):
            array = array.cast(pa.binary())
        elif not (pa.types.is_binary(array.type) or pa.types.is_string(array.type)):
            raise TypeError(f"expected a binary or string array, got {array.type}")
        n = len(array)
        bufs = array.buffers()
        offsets = np.frombuffer(bufs[1], dtype=np.int32, count=n + 1, offset=array.offset * 4)
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
        if array.offset or offsets[0] != 0:
            base = int(offsets[0])
            data = data[base : int(offsets[-1])]
            offsets = offsets - np.int32(base)
        valid = None
        if array.null_count:
            valid = ~np.asarray(array.is_null())
        return cls(offsets, data, valid)


def as_binary_column(values: Any, n: int | None = None) -> BinaryColumn:
    """Normalise a list of bytes/None, a :class:`BinaryColumn` or a pyarrow binary array to a column."""
    if isinstance(values, BinaryColumn):
        col = values
    elif type(values).__module__.startswith("pyarrow"):
        col = BinaryColumn.from_arrow(values)
    else:
        col = BinaryColumn.from_pylist(list(values))
    if n is not None and len(col) != n:
        raise ValueError(f"column has {len(col)} elements, expected {n}")
    return col
