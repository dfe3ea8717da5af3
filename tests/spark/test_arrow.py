"""Arrow building for the Spark source and Arrow splitting for the sink (no Spark session, no broker)."""

from __future__ import annotations

import datetime as dt
import re

import numpy as np
import pyarrow as pa
import pytest
from pyspark.sql.pandas.types import to_arrow_schema

import kafkawire
from kafkawire.spark.arrow import (
    ArrowBuilder,
    arrow_columns,
    arrow_schema,
    batch_to_produce_groups,
    check_write_schema,
)
from kafkawire.spark.errors import WriteSchemaError
from kafkawire.spark.source import kafka_schema

UTC = dt.timezone.utc


@pytest.mark.parametrize("headers", [False, True])
def test_arrow_schema_is_what_pyspark_expects(headers: bool):
    # PySpark rejects the first batch unless its schema equals to_arrow_schema(declared schema) exactly.
    assert arrow_schema(headers).equals(to_arrow_schema(kafka_schema(headers), timezone="UTC"))


def _columns():
    data = kafkawire.encode_records(
        [b"v0", None, b"", b"v3"],
        keys=[None, b"k1", b"k2", b""],
        timestamps=[1_700_000_000_123, 5, 6, 7],
        headers=[[("a", b"1"), ("a", None)], None, [("\u00e9", b"")], None],
        base_offset=40,
    )
    return kafkawire.decode_records(data)


def test_build_every_column():
    batch = ArrowBuilder("t\u00f6pic", 7, include_headers=True).build(_columns())
    assert batch.schema.equals(arrow_schema(True))
    batch.validate(full=True)
    rows = batch.to_pylist()
    assert [r["key"] for r in rows] == [None, b"k1", b"k2", b""]
    assert [r["value"] for r in rows] == [b"v0", None, b"", b"v3"]
    assert {r["topic"] for r in rows} == {"t\u00f6pic"} and {r["partition"] for r in rows} == {7}
    assert [r["offset"] for r in rows] == [40, 41, 42, 43]
    assert rows[0]["timestamp"] == dt.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC)
    assert [r["timestampType"] for r in rows] == [0, 0, 0, 0]
    assert rows[0]["headers"] == [{"key": "a", "value": b"1"}, {"key": "a", "value": None}]
    assert rows[1]["headers"] is None  # null, not [], when a record has no headers (as Spark)
    assert rows[2]["headers"] == [{"key": "\u00e9", "value": b""}]
    assert rows[3]["headers"] is None


def test_build_slice_and_constant_columns_grow():
    cols = _columns()
    b = ArrowBuilder("t", 0, include_headers=True)
    part = b.build(cols, 1, 3)
    part.validate(full=True)
    assert [r["offset"] for r in part.to_pylist()] == [41, 42]
    assert part.to_pylist()[1]["headers"] == [{"key": "\u00e9", "value": b""}]
    # survives an IPC round trip (what PySpark does with it)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, part.schema) as w:
        w.write_batch(part)
    assert pa.ipc.open_stream(sink.getvalue()).read_all().to_pylist() == part.to_pylist()
    big = kafkawire.decode_records(kafkawire.encode_records([b"x"] * 3000, timestamps=np.arange(3000)))
    out = b.build(big)
    assert out.column("topic").to_pylist() == ["t"] * 3000
    assert out.column("partition").to_pylist() == [0] * 3000
    assert b.build(cols, 0, 0).num_rows == 0


def test_build_without_headers_column():
    batch = ArrowBuilder("t", 1, include_headers=False).build(_columns())
    assert batch.schema.names[-1] == "timestampType" and batch.num_columns == 7


def test_check_write_schema_messages():
    ok = {"key": "binary", "value": "string", "topic": "string", "partition": "int"}
    check_write_schema(ok, None)
    check_write_schema({"value": "binary"}, "t")
    cases = [
        ({"value": "binary"}, None, "topic option required when no 'topic' attribute is present."),
        ({"key": "binary"}, "t", "Required attribute 'value' not found"),
        ({"value": "int"}, "t", "value attribute unsupported type int. value must be a(n) string or binary"),
        ({"value": "binary", "topic": "int"}, None, "topic attribute unsupported type int. topic must be a(n) string"),
        ({"value": "binary", "partition": "bigint"}, "t", "partition attribute unsupported type bigint."),
        ({"value": "binary", "headers": "array<string>"}, "t", "headers attribute unsupported type array<string>."),
    ]
    for cols, topic, msg in cases:
        with pytest.raises(WriteSchemaError, match=re.escape(msg)):
            check_write_schema(cols, topic)


def test_arrow_columns_type_names():
    schema = pa.schema(
        [("value", pa.binary()), ("headers", arrow_schema(True).field("headers").type), ("partition", pa.int32())]
    )
    cols = arrow_columns(schema)
    assert cols == {"value": "binary", "headers": "array<struct<key:string,value:binary>>", "partition": "int"}
    check_write_schema(cols, "t")


def test_produce_groups_by_topic_and_partition_keep_row_order():
    batch = pa.RecordBatch.from_pydict(
        {
            "topic": ["a", "b", "a", "a", "b"],
            "partition": pa.array([None, 1, 2, None, 1], pa.int32()),
            "key": ["k0", None, "k2", "k3", "k4"],
            "value": [b"0", b"1", b"2", b"3", b"4"],
        }
    )
    groups = list(batch_to_produce_groups(batch, None))
    got = {(g.topic, g.partition): (g.keys.to_pylist(), g.values.to_pylist()) for g in groups}
    assert got == {
        ("a", None): ([b"k0", b"k3"], [b"0", b"3"]),
        ("a", 2): ([b"k2"], [b"2"]),
        ("b", 1): ([None, b"k4"], [b"1", b"4"]),
    }
    assert all(pa.types.is_binary(g.values.type) for g in groups)


def test_produce_groups_topic_option_overrides_column_and_headers():
    htype = arrow_schema(True).field("headers").type
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array(["x", "y"]),
            pa.array(["v0", "v1"]),
            pa.array([[{"key": "h", "value": b"1"}], None], htype),
        ],
        names=["topic", "value", "headers"],
    )
    (g,) = batch_to_produce_groups(batch, "forced")
    assert g.topic == "forced" and g.partition is None and g.keys is None
    assert g.values.to_pylist() == [b"v0", b"v1"]
    assert g.headers == [[("h", b"1")], None]


def test_produce_groups_null_topic():
    batch = pa.RecordBatch.from_pydict({"topic": ["a", None], "value": [b"1", b"2"]})
    with pytest.raises(WriteSchemaError, match=re.escape("[KAFKA_NULL_TOPIC_IN_DATA]")):
        list(batch_to_produce_groups(batch, None))


def _mixed_columns(n: int):
    """``n`` records with null and empty keys/values and headers on some records (none, one, duplicates)."""
    values = [None if i % 7 == 3 else (b"" if i % 11 == 0 else b"v%d" % i) for i in range(n)]
    keys = [None if i % 5 == 0 else b"k%d" % i for i in range(n)]
    headers = [
        None if i % 3 == 0 else ([("a", b"%d" % i)] if i % 3 == 1 else [("b", None), ("b", b"")]) for i in range(n)
    ]
    return kafkawire.decode_records(
        kafkawire.encode_records(values, keys=keys, headers=headers, timestamps=np.arange(n), base_offset=1000)
    )


@pytest.mark.parametrize("step", [1, 97, 1000, 4096])
def test_slices_cover_the_fetch_exactly(step: int):
    """Slices cut anywhere (1, 97, ... rows) concatenate to the whole fetch, as ``to_arrow`` builds it."""
    cols = _mixed_columns(2500)
    b = ArrowBuilder("t", 3, include_headers=True)
    pieces = [b.build(cols, a, min(a + step, len(cols))) for a in range(0, len(cols), step)]
    for p in pieces:
        p.validate(full=True)
        assert p.schema.equals(arrow_schema(True))
    joined = pa.Table.from_batches(pieces)
    whole = cols.to_arrow()
    assert joined.column("offset").to_pylist() == whole.column("offset").to_pylist()
    assert joined.column("key").to_pylist() == whole.column("key").to_pylist()
    assert joined.column("value").to_pylist() == whole.column("value").to_pylist()
    assert joined.column("headers").to_pylist() == whole.column("headers").to_pylist()
    # and what was encoded, independently of to_arrow
    assert joined.column("value").to_pylist()[3] is None and joined.column("key").to_pylist()[0] is None
    assert joined.column("headers").to_pylist()[:3] == [
        None,
        [{"key": "a", "value": b"1"}],
        [{"key": "b", "value": None}, {"key": "b", "value": b""}],
    ]


def test_slice_work_is_proportional_to_the_slice(monkeypatch: pytest.MonkeyPatch):
    """Building every 8 192-row slice of a fetch packs each null mask once in total, not once per slice
    (the old builder packed the whole column's mask for every slice: quadratic in the fetch)."""
    cols = _mixed_columns(40_000)
    packed: list[int] = []
    real = np.packbits

    def counting(a, *args, **kwargs):
        packed.append(len(a))
        return real(a, *args, **kwargs)

    monkeypatch.setattr(np, "packbits", counting)
    b = ArrowBuilder("t", 0, include_headers=True)
    rows = 0
    for a in range(0, len(cols), 8192):
        rows += b.build(cols, a, min(a + 8192, len(cols))).num_rows
    assert rows == len(cols)
    # key mask + value mask + headers' list mask (+ header value mask, over the headers only): each element of
    # each mask packed once. Per-slice packing of the whole columns would be 5 slices x 40 000 per mask.
    header_count = int(cols.header_offsets[-1])
    assert sum(packed) <= 3 * len(cols) + header_count
