"""Arrow arrays over slices of :class:`~kafkawire.columns.RecordColumns`, without copying record data.

Shared by :meth:`RecordColumns.to_arrow` (whole columns) and the Spark source (8 192-row slices of one
fetch). Every builder here costs time in proportion to the *slice* it builds, never to the column it is cut
from: the offsets are a view of the slice's ``lo .. hi + 1`` entries (Arrow lets the first offset be
non-zero, so the data buffer is shared whole and never copied or re-based), and the validity bitmap is
packed from the slice's part of the mask only. An earlier Spark builder packed the whole column's null mask
for every slice, which made reading one fetch quadratic in its record count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .columns import BinaryColumn, RecordColumns

__all__ = ["binary_array", "header_struct_type", "headers_array"]


def _pa() -> Any:
    import pyarrow  # the caller (to_arrow, the Spark source) has already said that it needs pyarrow

    return pyarrow


def binary_array(col: BinaryColumn, lo: int = 0, hi: int | None = None, type: Any = None) -> Any:
    """Elements ``lo:hi`` of ``col`` as a ``pyarrow`` binary array (or ``type``, e.g. ``pa.string()``).

    Zero-copy for the offsets and data; the validity bitmap is packed from ``valid[lo:hi]`` alone, and left
    out when that part has no null.
    """
    pa = _pa()
    n_all = len(col)
    hi = n_all if hi is None else hi
    if not 0 <= lo <= hi <= n_all:
        raise IndexError(f"slice [{lo}, {hi}) outside a column of {n_all}")
    n = hi - lo
    validity = None
    null_count = 0
    if col.valid is not None and n:
        mask = col.valid[lo:hi]
        null_count = int(n - np.count_nonzero(mask))
        if null_count:
            validity = pa.py_buffer(np.packbits(mask, bitorder="little"))
    offsets = np.ascontiguousarray(col.offsets[lo : hi + 1], dtype=np.int32)
    data = np.ascontiguousarray(col.data, dtype=np.uint8)
    return pa.Array.from_buffers(
        type or pa.binary(),
        n,
        [validity, pa.py_buffer(offsets), pa.py_buffer(data)],
        null_count=null_count,
    )


def header_struct_type() -> Any:
    """``struct<key: string, value: binary>``: one header (keys are UTF-8 strings, values nullable bytes)."""
    pa = _pa()
    return pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])


def headers_array(cols: RecordColumns, lo: int = 0, hi: int | None = None, *, element_name: str = "item") -> Any:
    """The headers of records ``lo:hi`` as ``list<struct<key: string, value: binary>>``.

    A record without headers is null, not an empty list (Spark's convention, and what ``to_arrow`` has always
    given). Duplicate keys stay, in order. ``element_name`` names the list's child field: pyarrow's default
    is ``item``; PySpark declares ``element`` and compares schemas exactly.
    """
    pa = _pa()
    hi = len(cols) if hi is None else hi
    n = hi - lo
    hoffs = np.ascontiguousarray(cols.header_offsets[lo : hi + 1], dtype=np.int32)
    if len(hoffs) == 0:  # an empty RecordColumns may carry no offsets at all
        hoffs = np.zeros(1, dtype=np.int32)
    first, last = int(hoffs[0]), int(hoffs[-1])
    # The children are the headers of this slice alone, so the list offsets start at 0 (a copy of n + 1
    # int32s); keys and values are views of the flat header columns.
    if first:
        hoffs = hoffs - np.int32(first)
    struct_type = header_struct_type()
    children = pa.StructArray.from_arrays(
        [binary_array(cols.header_key, first, last, pa.string()), binary_array(cols.header_value, first, last)],
        fields=list(struct_type),
    )
    has = hoffs[1:] != hoffs[:-1]
    nulls = int(n - np.count_nonzero(has))
    validity = pa.py_buffer(np.packbits(has, bitorder="little")) if nulls else None
    list_type = pa.list_(pa.field(element_name, struct_type))
    return pa.Array.from_buffers(list_type, n, [validity, pa.py_buffer(hoffs)], null_count=nulls, children=[children])
