"""Hypothesis strategies for random Avro schemas (every type and logical type, nested) and data that fits them,
plus a normaliser that makes fastavro's Python values and kafkawire's Arrow values comparable."""

from __future__ import annotations

import datetime
import decimal
import itertools
import struct
import uuid
from typing import Any

import numpy as np
from hypothesis import strategies as st

_names = itertools.count()
_EXACT = decimal.Context(prec=100)

PRIMITIVES = ["null", "boolean", "int", "long", "float", "double", "bytes", "string"]
LOGICAL = [
    {"type": "int", "logicalType": "date"},
    {"type": "int", "logicalType": "time-millis"},
    {"type": "long", "logicalType": "time-micros"},
    {"type": "long", "logicalType": "timestamp-millis"},
    {"type": "long", "logicalType": "timestamp-micros"},
    {"type": "long", "logicalType": "timestamp-nanos"},
    {"type": "long", "logicalType": "local-timestamp-millis"},
    {"type": "long", "logicalType": "local-timestamp-micros"},
    {"type": "string", "logicalType": "uuid"},
    {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 3},
    {"type": "bytes", "logicalType": "decimal", "precision": 50, "scale": 10},
]


def _name(prefix: str) -> str:
    return f"{prefix}{next(_names)}"


@st.composite
def schemas(draw: Any, depth: int = 3) -> Any:
    """A random Avro schema (decoded JSON). Named types get fresh names, so any nesting is valid."""
    leaf = st.one_of(
        st.sampled_from(PRIMITIVES),
        st.sampled_from(LOGICAL),
        st.builds(lambda n: {"type": "enum", "name": _name("E"), "symbols": [f"S{i}" for i in range(n)]},
                  st.integers(1, 5)),
        st.builds(lambda n: {"type": "fixed", "name": _name("F"), "size": n}, st.integers(0, 20)),
        st.just("duration"),
        st.just("fixed_decimal"),
    )
    if depth <= 0:
        choice = draw(leaf)
    else:
        choice = draw(st.one_of(leaf, st.sampled_from(["record", "array", "map", "nullable", "union"])))
    if choice == "duration":
        return {"type": "fixed", "name": _name("D"), "size": 12, "logicalType": "duration"}
    if choice == "fixed_decimal":
        return {"type": "fixed", "name": _name("FD"), "size": 8, "logicalType": "decimal", "precision": 18, "scale": 2}
    if choice == "record":
        n = draw(st.integers(0, 4))
        return {"type": "record", "name": _name("R"),
                "fields": [{"name": f"f{i}", "type": draw(schemas(depth - 1))} for i in range(n)]}
    if choice == "array":
        return {"type": "array", "items": draw(schemas(depth - 1))}
    if choice == "map":
        return {"type": "map", "values": draw(schemas(depth - 1))}
    if choice == "nullable":
        inner = draw(schemas(depth - 1))
        if inner == "null" or isinstance(inner, list):
            return ["null", "int"]
        return draw(st.sampled_from([["null", inner], [inner, "null"]]))
    if choice == "union":
        # distinct unnamed types plus a named one: a real multi-branch union
        kinds = draw(st.lists(st.sampled_from(["null", "int", "string", "double", "boolean", "bytes"]),
                              min_size=2, max_size=4, unique=True))
        if draw(st.booleans()):
            kinds.append({"type": "record", "name": _name("U"), "fields": [{"name": "x", "type": "long"}]})
        return kinds
    return choice


def _ts(lo: int, hi: int) -> Any:
    return st.integers(lo, hi)


@st.composite
def values(draw: Any, s: Any) -> Any:
    """A value fastavro's writer accepts for schema ``s``."""
    if isinstance(s, list):
        branch = draw(st.sampled_from(s))
        return draw(values(branch))
    if isinstance(s, str):
        t = s
        s = {"type": t}
    t = s["type"]
    lt = s.get("logicalType")
    if lt == "date":
        return draw(st.dates(datetime.date(1900, 1, 1), datetime.date(2200, 1, 1)))
    if lt == "time-millis":
        return draw(st.times()).replace(microsecond=draw(st.integers(0, 999)) * 1000)
    if lt == "time-micros":
        return draw(st.times())
    if lt in ("timestamp-millis", "timestamp-micros", "local-timestamp-millis", "local-timestamp-micros"):
        dt = draw(st.datetimes(datetime.datetime(1900, 1, 1), datetime.datetime(2200, 1, 1)))
        if lt.endswith("millis"):
            dt = dt.replace(microsecond=dt.microsecond // 1000 * 1000)
        return dt.replace(tzinfo=datetime.timezone.utc) if not lt.startswith("local") else dt
    if lt == "timestamp-nanos":
        return draw(st.integers(-(1 << 62), 1 << 62))
    if lt == "uuid":
        return str(draw(st.uuids()))
    if lt == "decimal" and t == "bytes":
        digits = s["precision"]
        unscaled = draw(st.integers(-(10 ** digits) + 1, 10 ** digits - 1))
        return decimal.Decimal(unscaled).scaleb(-s["scale"], context=_EXACT)  # the default context rounds at 28
    if lt == "decimal" and t == "fixed":
        unscaled = draw(st.integers(-(10 ** 18) + 1, 10 ** 18 - 1))
        return decimal.Decimal(unscaled).scaleb(-s["scale"], context=_EXACT)
    if lt == "duration":
        return struct.pack("<III", draw(st.integers(0, 1 << 31)), draw(st.integers(0, 1 << 31)),
                           draw(st.integers(0, (1 << 32) - 1)))
    if t == "null":
        return None
    if t == "boolean":
        return draw(st.booleans())
    if t == "int":
        return draw(st.integers(-(1 << 31), (1 << 31) - 1))
    if t == "long":
        return draw(st.integers(-(1 << 63), (1 << 63) - 1))
    if t == "float":
        return draw(st.floats(width=32, allow_nan=False))
    if t == "double":
        return draw(st.floats(allow_nan=False))
    if t == "bytes":
        return draw(st.binary(max_size=20))
    if t == "string":
        return draw(st.text(max_size=10))
    if t == "enum":
        return draw(st.sampled_from(s["symbols"]))
    if t == "fixed":
        return draw(st.binary(min_size=s["size"], max_size=s["size"]))
    if t == "array":
        return draw(st.lists(values(s["items"]), max_size=4))
    if t == "map":
        return draw(st.dictionaries(st.text(max_size=5), values(s["values"]), max_size=3))
    assert t == "record", s
    return {f["name"]: draw(values(f["type"])) for f in s["fields"]}


def normalise(s: Any, v: Any, *, fastavro_side: bool) -> Any:
    """Bring a decoded value to one form: maps as sorted pairs, uuids and durations and nanosecond timestamps
    as fastavro gives them (str, 12 bytes, int)."""
    if v is None:
        return None
    if isinstance(s, list):
        nonnull = [b for b in s if b != "null"]
        if len(nonnull) == 1:
            return normalise(nonnull[0], v, fastavro_side=fastavro_side)
        if "bytes" in s and "string" in s and isinstance(v, str):
            # the Avro specification lets a reader resolve a writer's string branch to either branch; Java
            # (and kafkawire) take the exact match first, fastavro the first that promotes: same content
            return v.encode("utf-8")
        return _norm_any(v)  # multi-branch unions hold primitives and {x: long} records only
    if isinstance(s, str):
        s = {"type": s}
    t = s["type"]
    lt = s.get("logicalType")
    if lt == "uuid":
        return str(v)
    if lt == "duration" and not fastavro_side:
        return struct.pack("<III", v.months & 0xFFFFFFFF, v.days & 0xFFFFFFFF, v.nanoseconds // 1_000_000)
    if lt == "timestamp-nanos" and not fastavro_side:
        return int(v.value) if hasattr(v, "value") else v
    if t == "array":
        return [normalise(s["items"], x, fastavro_side=fastavro_side) for x in v]
    if t == "map":
        pairs = v.items() if isinstance(v, dict) else v
        return sorted((k, normalise(s["values"], x, fastavro_side=fastavro_side)) for k, x in pairs)
    if t == "record":
        return {f["name"]: normalise(f["type"], v[f["name"]], fastavro_side=fastavro_side) for f in s["fields"]}
    if isinstance(v, uuid.UUID):
        return str(v)
    if t == "float" and isinstance(v, (int, float)):
        return float(np.float32(v))  # fastavro keeps an int read as float at double precision
    if t == "bytes" and fastavro_side and isinstance(v, str):
        return v.encode("latin-1")  # fastavro hands a bytes field's JSON default back unconverted
    return v


def _norm_any(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _norm_any(x) for k, x in v.items()}
    return v
