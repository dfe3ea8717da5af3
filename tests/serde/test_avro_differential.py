"""Random Avro schemas and data (hypothesis): kafkawire's compiled and pure decoders equal fastavro, value by value.

fastavro is the independent oracle: it writes the bodies and reads them back with its own reader; kafkawire
decodes the same Confluent-framed bytes into Arrow. Schema evolution is covered the same way: a reader
schema derived from the writer (fields dropped, fields added with defaults, numbers widened) is given to
both fastavro and kafkawire.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
from collections.abc import Iterator
from typing import Any

import fastavro
import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from kafkawire.columns import BinaryColumn
from kafkawire.serde import _avro_pure, avro
from kafkawire.serde.avro_plan import build_columns
from kafkawire.serde.avro_schema import parse

from .avro_strategies import normalise, schemas, values

IMPLS = {"pure": _avro_pure}
if avro.COMPILED:
    from kafkawire.serde import _avro  # type: ignore[attr-defined]

    IMPLS["compiled"] = _avro


@contextlib.contextmanager
def using(name: str) -> Iterator[None]:
    """Make decode_avro run the named implementation (compiled or pure) inside the block."""
    saved = avro._IMPL
    avro._IMPL = IMPLS[name]
    try:
        yield
    finally:
        avro._IMPL = saved


def _framed(schema: Any, data: list[Any], sid: int = 7) -> list[bytes]:
    parsed = fastavro.parse_schema(copy.deepcopy(schema))
    out = []
    for d in data:
        b = io.BytesIO()
        fastavro.schemaless_writer(b, parsed, d)
        out.append(b"\x00" + sid.to_bytes(4, "big") + b.getvalue())
    return out


def _fastavro_read(writer: Any, reader: Any, framed: list[bytes]) -> list[Any]:
    w = fastavro.parse_schema(copy.deepcopy(writer))
    r = fastavro.parse_schema(copy.deepcopy(reader)) if reader is not None else None
    try:
        return [fastavro.schemaless_reader(io.BytesIO(v[5:]), w, r) for v in framed]
    except UnicodeDecodeError:
        # The oracle cannot read back what it wrote: given non-UTF-8 bytes for a union of string and
        # bytes, fastavro's writer picks the string branch. No expected value exists for such an example.
        reject()


def _record(s: Any) -> Any:
    """Wrap any schema in a record, as topic values usually are (a field named ``v``)."""
    return {"type": "record", "name": "Top", "fields": [{"name": "v", "type": s}]}


@pytest.mark.parametrize("impl_name", sorted(IMPLS))
@settings(max_examples=80)
@given(data=st.data())
def test_random_schemas_decode_like_fastavro(impl_name: str, data: st.DataObject) -> None:
    schema = _record(data.draw(schemas()))
    rows = data.draw(st.lists(values(schema), min_size=1, max_size=6))
    framed = _framed(schema, rows)
    expected = [normalise(schema, v, fastavro_side=True) for v in _fastavro_read(schema, None, framed)]
    with using(impl_name):
        got = avro.decode_avro(BinaryColumn.from_pylist(framed), {7: json.dumps(schema)})
    assert [normalise(schema, v, fastavro_side=False) for v in got.to_pylist()] == expected


def _evolve(draw: Any, writer: dict[str, Any]) -> dict[str, Any]:
    """A reader schema for ``writer`` (a record): some fields dropped, some added with defaults, numbers widened."""
    reader = copy.deepcopy(writer)
    fields = []
    for f in reader["fields"]:
        if draw(st.integers(0, 3)) == 0:
            continue  # the reader does not want this field: skipped
        t = f["type"]
        widen = {"int": ["int", "long", "float", "double"], "long": ["long", "float", "double"],
                 "float": ["float", "double"], "string": ["string", "bytes"]}
        if isinstance(t, str) and t in widen:
            f["type"] = draw(st.sampled_from(widen[t]))
        fields.append(f)
    for i in range(draw(st.integers(0, 2))):
        t, default = draw(st.sampled_from([
            ("int", 42), ("string", "dflt"), (["null", "long"], None), ({"type": "array", "items": "int"}, [1, 2]),
            ({"type": "map", "values": "string"}, {"a": "b"}), ("bytes", "\u00ff\u0001"), ("double", 1.5),
            ({"type": "enum", "name": f"NewE{i}", "symbols": ["X", "Y"]}, "Y"),
            ({"type": "record", "name": f"NewR{i}", "fields": [{"name": "q", "type": "int", "default": 3}]}, {"q": 5}),
        ]))
        fields.insert(draw(st.integers(0, len(fields))), {"name": f"added{i}", "type": t, "default": default})
    reader["fields"] = fields
    return reader


@pytest.mark.parametrize("impl_name", sorted(IMPLS))
@settings(max_examples=60)
@given(data=st.data())
def test_schema_resolution_like_fastavro(impl_name: str, data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 5))
    writer = {"type": "record", "name": "Top", "fields": [
        {"name": f"w{i}", "type": data.draw(st.one_of(st.sampled_from(["int", "long", "float", "string", "bytes"]),
                                                      schemas(depth=2)))} for i in range(n)]}
    reader = _evolve(data.draw, writer)
    rows = data.draw(st.lists(values(writer), min_size=1, max_size=5))
    framed = _framed(writer, rows)
    expected = [normalise(reader, v, fastavro_side=True) for v in _fastavro_read(writer, reader, framed)]
    with using(impl_name):
        got = avro.decode_avro(BinaryColumn.from_pylist(framed), {7: json.dumps(writer)}, reader_schema=reader)
    assert [normalise(reader, v, fastavro_side=False) for v in got.to_pylist()] == expected


@settings(max_examples=100)
@given(data=st.data())
def test_compiled_and_pure_agree_on_hostile_bodies(data: st.DataObject) -> None:
    """Random bytes after a valid header: both decoders give the same rows and the same error messages."""
    schema = _record(data.draw(schemas()))
    build_columns(parse(json.dumps(schema)))
    bodies = data.draw(st.lists(st.binary(max_size=40), min_size=1, max_size=8))
    valid = _framed(schema, [data.draw(values(schema))])
    # mutate a valid value too: truncations and flipped bytes find the paths random bytes rarely reach
    v = bytearray(valid[0])
    if len(v) > 5:
        i = data.draw(st.integers(5, len(v) - 1))
        v[i] = data.draw(st.integers(0, 255))
        bodies.append(bytes(v[5:]))
        bodies.append(bytes(v[5:data.draw(st.integers(5, len(v)))]))
    framed = [b"\x00\x00\x00\x00\x07" + b for b in bodies]
    results = {}
    for name in IMPLS:
        with using(name):
            arr = avro.decode_avro(BinaryColumn.from_pylist(framed), {7: json.dumps(schema)}, mode="PERMISSIVE")
        results[name] = arr.to_pylist()
    assert len({repr(r) for r in results.values()}) == 1, results
