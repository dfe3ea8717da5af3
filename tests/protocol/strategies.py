"""Hypothesis strategies that build message objects carrying only what a given version can carry."""

from __future__ import annotations

import base64
import functools
import uuid
from typing import Any

from hypothesis import strategies as st

from kafkawire.protocol.message import Message, Struct
from kafkawire.protocol.schema import Field, StructSchema

_INTS = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
}


def _scalar(t: str) -> st.SearchStrategy:
    if t in _INTS:
        lo, hi = _INTS[t]
        return st.integers(lo, hi)
    if t == "bool":
        return st.booleans()
    if t == "float64":
        return st.floats(allow_nan=False)
    if t == "string":
        return st.text(max_size=8)
    if t in ("bytes", "records"):
        return st.binary(max_size=12)
    if t == "uuid":
        return st.uuids()
    raise AssertionError(t)


def _value(f: Field, v: int, flex: bool, classes: dict[int, type], unknown: bool) -> st.SearchStrategy:
    if f.is_array:
        if f.struct is not None:
            elem = _struct(f.struct, v, flex, classes, unknown)
        else:
            elem = _scalar(f.type)
        s = st.lists(elem, max_size=2)
    elif f.struct is not None:
        s = _struct(f.struct, v, flex, classes, unknown)
    else:
        s = _scalar(f.type)
    if v in f.nullable:
        s = st.none() | s
    if f.tag is not None and f.struct is not None and not f.is_array:
        s = st.none() | s  # an absent tagged struct decodes as None
    return s


def _unknown_tags(known: set[int]) -> st.SearchStrategy:
    tags = st.integers(0, 300).filter(lambda t: t not in known)
    return st.none() | st.dictionaries(tags, st.binary(max_size=4), min_size=1, max_size=2)


def _struct(schema: StructSchema, v: int, flex: bool, classes: dict[int, type], unknown: bool) -> st.SearchStrategy:
    cls = classes[id(schema)]
    kwargs: dict[str, st.SearchStrategy] = {}
    for f in schema.fields:
        if v in f.versions:
            kwargs[f.name] = _value(f, v, flex, classes, unknown)
    if flex and unknown:
        known = {f.tag for f in schema.fields if f.tag is not None}
        kwargs["_unknown_tags"] = _unknown_tags(known)  # type: ignore[assignment]
    return st.builds(cls, **kwargs)


@functools.cache
def message(cls: type[Message], version: int, unknown_tags: bool = True) -> st.SearchStrategy[Any]:
    """Instances of ``cls`` with random values in every field ``version`` carries (others default).

    With ``unknown_tags`` flexible structs also get random tags the schema does not know.
    """
    return _struct(cls.SCHEMA.root, version, cls.is_flexible(version), cls._classes, unknown_tags)


def normalise(obj: Any) -> Any:
    """Plain data for comparisons: memoryviews become bytes, structs dicts (unknown tags included)."""
    if isinstance(obj, Struct):
        d = {k: normalise(getattr(obj, k)) for k in obj.FIELDS}
        d["_unknown_tags"] = obj._unknown_tags or None  # type: ignore[attr-defined]
        return d
    if isinstance(obj, list):
        return [normalise(x) for x in obj]
    if isinstance(obj, (memoryview, bytearray)):
        return bytes(obj)
    return obj


def jsonable(x: Any) -> Any:
    """Turn ``normalise`` output into JSON data (bytes and UUIDs tagged) for the checked-in vectors."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, list):
        return [jsonable(v) for v in x]
    if isinstance(x, bytes):
        return {"b64": base64.b64encode(x).decode()}
    if isinstance(x, uuid.UUID):
        return {"uuid": str(x)}
    return x
