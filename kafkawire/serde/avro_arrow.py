"""Turn the decoders' raw column buffers into Arrow arrays, and reader schemas into Arrow types.

The decoders fill plain buffers (one validity byte per slot, int32 offsets, packed values); this module packs
the validity into Arrow's bitmaps and wraps every buffer without copying it again
(``pyarrow.Array.from_buffers``). Avro types map to Arrow as Spark's ``from_avro`` maps them to Spark types:
a record is a struct, ``["null", T]`` a nullable T, an enum a string, a map ``map<string, V>``; a union of
several non-null types is a dense union. Logical types: decimal -> decimal128/256, date -> date32,
time-millis -> time32[ms], time-micros -> time64[us], timestamp-* -> timestamp[unit, UTC],
local-timestamp-* -> timestamp[unit], uuid -> string, duration -> month_day_nano_interval.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._optional import require
from .avro_plan import K_FIXED, K_LIST, K_MAP, K_NULL, K_STRUCT, K_UNION, K_VAR, Column

__all__ = ["arrow_type", "build_arrays"]


def _pa() -> Any:
    return require("pyarrow", "kafkawire.serde")


def arrow_type(cols: list[Column], i: int) -> Any:
    """The Arrow type of column ``i``."""
    pa = _pa()
    c = cols[i]
    s = c.schema
    tag = c.arrow
    if tag == "null":
        return pa.null()
    if tag == "bool":
        return pa.bool_()
    if tag in ("int32", "int64"):
        return pa.int32() if tag == "int32" else pa.int64()
    if tag == "float32":
        return pa.float32()
    if tag == "float64":
        return pa.float64()
    if tag == "string" or tag == "uuid":
        return pa.string()
    if tag == "binary":
        return pa.binary()
    if tag == "fixed":
        return pa.binary(c.width)
    if tag == "enum":
        return pa.string()
    if tag == "decimal":
        assert s is not None
        return (pa.decimal128 if c.width == 16 else pa.decimal256)(s.precision, s.scale)
    if tag == "duration":
        return pa.month_day_nano_interval()
    if tag == "date":
        return pa.date32()
    if tag == "time-millis":
        return pa.time32("ms")
    if tag == "time-micros":
        return pa.time64("us")
    if "timestamp" in tag:
        unit = {"millis": "ms", "micros": "us", "nanos": "ns"}[tag.rpartition("-")[2]]
        return pa.timestamp(unit, None if tag.startswith("local-") else "UTC")
    if tag == "struct":
        assert s is not None
        return pa.struct([pa.field(f.name, arrow_type(cols, ch)) for f, ch in zip(s.fields, c.children)])
    if tag == "list":
        return pa.list_(pa.field("item", arrow_type(cols, c.children[0])))
    if tag == "map":
        return pa.map_(pa.string(), arrow_type(cols, c.children[1]))
    if tag == "union":
        assert s is not None
        fields = [pa.field(b.name or b.type, arrow_type(cols, ch)) for b, ch in zip(s.branches, c.children)]
        return pa.dense_union(fields, c.union_codes)
    raise AssertionError(f"unknown column tag {tag!r}")  # pragma: no cover


def _bitmap(valid: bytes, length: int) -> tuple[Any, int]:
    """A validity bitmap from one byte per slot (None when nothing is null), and the null count."""
    pa = _pa()
    v = np.frombuffer(valid, dtype=np.uint8, count=length)
    nulls = int(length - np.count_nonzero(v))
    if nulls == 0:
        return None, 0
    return pa.py_buffer(np.packbits(v, bitorder="little")), nulls


def build_arrays(cols: list[Column], raw: list[tuple[int, bytes, bytes, bytes]], i: int) -> Any:
    """The Arrow array of column ``i`` from the decoder's raw buffers."""
    pa = _pa()
    c = cols[i]
    length, valid, offsets, data = raw[i]
    typ = arrow_type(cols, i)
    if c.kind == K_NULL:
        return pa.nulls(length)
    bitmap, nulls = _bitmap(valid, length)
    if c.kind == K_FIXED:
        if c.arrow == "bool":
            values = pa.py_buffer(np.packbits(np.frombuffer(data, dtype=np.uint8, count=length), bitorder="little"))
            return pa.Array.from_buffers(pa.bool_(), length, [bitmap, values], nulls)
        if c.arrow == "enum":
            assert c.schema is not None
            indices = pa.Array.from_buffers(pa.int32(), length, [bitmap, pa.py_buffer(data)], nulls)
            symbols = pa.array(c.schema.symbols, pa.string())
            return pa.DictionaryArray.from_arrays(indices, symbols).cast(pa.string())
        return pa.Array.from_buffers(typ, length, [bitmap, pa.py_buffer(data)], nulls)
    if c.kind == K_VAR:
        return pa.Array.from_buffers(typ, length, [bitmap, pa.py_buffer(offsets), pa.py_buffer(data)], nulls)
    if c.kind == K_STRUCT:
        children = [build_arrays(cols, raw, ch) for ch in c.children]
        return pa.Array.from_buffers(typ, length, [bitmap], nulls, children=children)
    if c.kind == K_LIST:
        child = build_arrays(cols, raw, c.children[0])
        return pa.Array.from_buffers(typ, length, [bitmap, pa.py_buffer(offsets)], nulls, children=[child])
    if c.kind == K_MAP:
        keys = build_arrays(cols, raw, c.children[0])
        values = build_arrays(cols, raw, c.children[1])
        entries = pa.StructArray.from_arrays([keys, values], fields=[pa.field("key", pa.string(), nullable=False),
                                                                     pa.field("value", values.type)])
        return pa.Array.from_buffers(typ, length, [bitmap, pa.py_buffer(offsets)], nulls, children=[entries])
    assert c.kind == K_UNION
    children = [build_arrays(cols, raw, ch) for ch in c.children]
    # a dense union has no validity bitmap of its own: its nulls live in the null branch's child
    return pa.Array.from_buffers(typ, length, [None, pa.py_buffer(data), pa.py_buffer(offsets).slice(4)],
                                 0, children=children)
