"""decode_avro's contract on fixed inputs: errors named by row and cause, PERMISSIVE rows, hostile bodies and
schemas (deep nesting, huge counts, negative lengths, recursive types), argument types. Each test runs on the
compiled decoder and on the pure one."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

from kafkawire.columns import BinaryColumn
from kafkawire.serde import AvroDecodeError, AvroSchemaError, decode_avro
from kafkawire.serde.avro_encode import encode_value, write_long
from kafkawire.serde.avro_schema import parse

from .test_avro_differential import IMPLS, using

USER = {"type": "record", "name": "User", "fields": [
    {"name": "id", "type": "long"},
    {"name": "name", "type": "string"},
    {"name": "tag", "type": ["null", "int", "string"]},
]}
REG = {1: json.dumps(USER)}


def frame(body: bytes, sid: int = 1) -> bytes:
    return b"\x00" + sid.to_bytes(4, "big", signed=True) + body


def enc(schema: Any, value: Any) -> bytes:
    out = bytearray()
    encode_value(out, parse(json.dumps(schema)), value)
    return bytes(out)


@pytest.fixture(params=sorted(IMPLS))
def impl_name(request: pytest.FixtureRequest) -> Any:
    with using(request.param):
        yield request.param


def test_rows_nulls_and_arrow_input(impl_name: str) -> None:
    values = [frame(enc(USER, {"id": 1, "name": "a", "tag": None})), None,
              frame(enc(USER, {"id": -5, "name": "é", "tag": "x"}))]
    for given in (BinaryColumn.from_pylist(values), pa.array(values, pa.binary()),
                  pa.chunked_array([pa.array(values[:1], pa.binary()), pa.array(values[1:], pa.binary())])):
        out = decode_avro(given, REG)
        assert isinstance(out, pa.StructArray)
        assert out.to_pylist() == [{"id": 1, "name": "a", "tag": None}, None, {"id": -5, "name": "é", "tag": "x"}]


@pytest.mark.parametrize("value, cause", [
    (b"\x01\x00\x00\x00\x01\x02", "bad magic byte 1"),
    (b"\x00\x00\x00", "shorter than the 5-byte Confluent header"),
    (frame(b"\x02\x02a\x00", sid=9), "unknown schema id 9"),
    (frame(b"\x02\x02"), "value truncated"),
    (frame(b"\x02\x02a\x08"), "invalid union index 4 at byte 8 (the union has 3 branches)"),
    (frame(b"\x02\x01"), "negative length -1 at byte 6"),
    (frame(b"\x02\x02\xff\x00"), "invalid UTF-8"),
    (frame(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"), "varint"),
])
def test_failfast_names_row_offset_and_cause(impl_name: str, value: bytes, cause: str) -> None:
    good = frame(enc(USER, {"id": 1, "name": "a", "tag": 3}))
    with pytest.raises(AvroDecodeError) as e:
        decode_avro(BinaryColumn.from_pylist([good, good, value]), REG, offsets=[100, 101, 102], partition=4)
    assert e.value.row == 2 and e.value.offset == 102 and e.value.partition == 4
    assert cause in str(e.value) and "row 2, partition 4, offset 102" in str(e.value)


def test_permissive_gives_null_rows_and_error_column(impl_name: str) -> None:
    good = frame(enc(USER, {"id": 7, "name": "ok", "tag": 1}))
    out = decode_avro(BinaryColumn.from_pylist([good, frame(b"\x02\x02a\x08"), None, b"junk!", good]), REG,
                      mode="PERMISSIVE")
    assert out.type.field(out.type.num_fields - 1).name == "_error"
    rows = out.to_pylist()
    assert rows[0] == {"id": 7, "name": "ok", "tag": 1, "_error": None}
    assert rows[1] is None and rows[2] is None and rows[3] is None
    assert rows[4] == rows[0]
    errors = out.field("_error").to_pylist()
    assert "invalid union index" in errors[1] and errors[2] is None and "bad magic byte" in errors[3]
    # the failed row's partial appends were rolled back: the columns stay aligned with the rows
    assert out.field("name").to_pylist() == ["ok", None, None, None, "ok"]


LIST = {"type": "record", "name": "Node", "fields": [
    {"name": "value", "type": "int"}, {"name": "next", "type": ["null", "Node"]}]}


def test_recursive_reader_is_a_typed_error(impl_name: str) -> None:
    with pytest.raises(AvroSchemaError, match="recursive"):
        decode_avro(BinaryColumn.from_pylist([frame(b"\x02\x00")]), {1: json.dumps(LIST)})


def test_recursive_writer_skipped_and_depth_bounded(impl_name: str) -> None:
    reader = {"type": "record", "name": "Node", "fields": [{"name": "value", "type": "int"}]}

    def chain(n: int) -> bytes:
        return b"".join(b"\x02\x02" for _ in range(n)) + b"\x02\x00"  # value 1, next = branch 1 ... then null

    out = decode_avro(BinaryColumn.from_pylist([frame(chain(10))]), {1: json.dumps(LIST)}, reader_schema=reader)
    assert out.to_pylist() == [{"value": 1}]
    with pytest.raises(AvroDecodeError, match="nested deeper than 128 levels"):
        decode_avro(BinaryColumn.from_pylist([frame(chain(5000))]), {1: json.dumps(LIST)}, reader_schema=reader)


def test_huge_counts_are_bounded(impl_name: str) -> None:
    ints = {"type": "record", "name": "A", "fields": [{"name": "xs", "type": {"type": "array", "items": "int"}}]}
    nulls = {"type": "record", "name": "B", "fields": [{"name": "xs", "type": {"type": "array", "items": "null"}}]}
    body = bytearray()
    write_long(body, 1 << 40)
    with pytest.raises(AvroDecodeError, match="is longer than the 0 bytes left"):
        decode_avro(BinaryColumn.from_pylist([frame(bytes(body))]), {1: json.dumps(ints)})
    with pytest.raises(AvroDecodeError, match="exceeds the limit of 1048576 empty items"):
        decode_avro(BinaryColumn.from_pylist([frame(bytes(body) + b"\x00")]), {1: json.dumps(nulls)})
    # a negative count carries a byte size; the items are still read one by one and checked
    body = bytearray()
    write_long(body, -2)
    write_long(body, 2)
    out = decode_avro(BinaryColumn.from_pylist([frame(bytes(body) + b"\x02\x04\x00")]), {1: json.dumps(ints)})
    assert out.to_pylist() == [{"xs": [1, 2]}]


def test_deeply_nested_schema_refused() -> None:
    s: Any = "int"
    for _ in range(100):
        s = {"type": "array", "items": s}
    with pytest.raises(AvroSchemaError, match="nested deeper"):
        parse(json.dumps(s))


@pytest.mark.parametrize("schema", [
    '{"type": "record", "name": "R"}', '{"type": "fixed", "name": "F"}', '["int", "int"]', '{"type": "nope"}',
    '{"type": "enum", "name": "E", "symbols": ["A", "A"]}', "not json", '[["int"]]',
])
def test_invalid_schemas_are_typed_errors(schema: str) -> None:
    with pytest.raises(AvroSchemaError):
        parse(schema)


def test_unreadable_writer_schema_fails_only_its_rows(impl_name: str) -> None:
    other = {"type": "record", "name": "Other", "fields": [{"name": "z", "type": "int"}]}
    values = BinaryColumn.from_pylist([frame(enc(USER, {"id": 1, "name": "a", "tag": None})),
                                       frame(b"\x02", sid=2)])
    out = decode_avro(values, {1: json.dumps(USER), 2: json.dumps(other)}, reader_schema=USER, mode="PERMISSIVE")
    assert out.field("_error").to_pylist()[0] is None
    assert "writer schema id 2 cannot be read as the reader schema" in out.field("_error").to_pylist()[1]


def test_logical_types_to_arrow(impl_name: str) -> None:
    schema = {"type": "record", "name": "L", "fields": [
        {"name": "ns", "type": {"type": "long", "logicalType": "timestamp-nanos"}},
        {"name": "dur", "type": {"type": "fixed", "name": "D", "size": 12, "logicalType": "duration"}},
        {"name": "dec", "type": {"type": "fixed", "name": "X", "size": 4, "logicalType": "decimal",
                                 "precision": 9, "scale": 2}},
        {"name": "u", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
    ]}
    body = bytearray()
    write_long(body, 1_500_000_000)
    body += (1).to_bytes(4, "little") + (2).to_bytes(4, "little") + (3).to_bytes(4, "little")
    body += (-12345).to_bytes(4, "big", signed=True)
    body += b"\x48" + b"12345678-1234-5678-1234-567812345678"
    body += b"\x02"
    out = decode_avro(BinaryColumn.from_pylist([frame(bytes(body))]), {1: json.dumps(schema)})
    t = out.type
    assert t.field("ns").type == pa.timestamp("ns", "UTC")
    assert t.field("dur").type == pa.month_day_nano_interval()
    assert t.field("dec").type == pa.decimal128(9, 2)
    assert out.field("ns").cast(pa.int64()).to_pylist() == [1_500_000_000]
    assert out.field("dur").to_pylist()[0] == pa.MonthDayNano([1, 2, 3_000_000])
    assert str(out.field("dec").to_pylist()[0]) == "-123.45"
    assert out.field("e").to_pylist() == ["B"]


def test_argument_types() -> None:
    with pytest.raises(TypeError):
        decode_avro(b"\x00\x00\x00\x00\x01", REG)
    with pytest.raises(TypeError):
        decode_avro(BinaryColumn.from_pylist([]), 42)
    with pytest.raises(ValueError, match="mode"):
        decode_avro(BinaryColumn.from_pylist([]), REG, mode="DROPMALFORMED")
    with pytest.raises(TypeError):
        decode_avro(BinaryColumn.from_pylist([]), REG, subject=3)


def test_record_columns_to_arrow_decoded(impl_name: str) -> None:
    import kafkawire

    values = [enc(USER, {"id": i, "name": f"n{i}", "tag": i}) for i in range(3)]
    raw = kafkawire.encode_records([frame(v) for v in values], [b"k0", b"k1", None], base_offset=40)
    cols = kafkawire.decode_records(raw)
    batch = cols.to_arrow_decoded(REG, partition=2)
    assert batch.schema.names == cols.to_arrow().schema.names
    assert batch.column("value").to_pylist() == [{"id": i, "name": f"n{i}", "tag": i} for i in range(3)]
    assert batch.column("key").to_pylist() == [b"k0", b"k1", None]
    bad = kafkawire.decode_records(kafkawire.encode_records([b"\x00\x00\x00\x00\x01\x02"], base_offset=7))
    with pytest.raises(AvroDecodeError, match="row 0, partition 3, offset 7"):
        bad.to_arrow_decoded(REG, partition=3)


def test_decimal_wider_than_its_precision_is_an_error(impl_name: str) -> None:
    """Arrow refuses a decimal128(p, s) array holding more than p digits: such a value is a decode error."""
    schema = {"type": "record", "name": "D", "fields": [
        {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2}}]}
    ok = frame(b"\x04" + (-9999).to_bytes(2, "big", signed=True))
    wide = frame(b"\x04" + (10000).to_bytes(2, "big", signed=True))
    out = decode_avro(BinaryColumn.from_pylist([ok, wide]), {1: json.dumps(schema)}, mode="PERMISSIVE")
    out.validate(full=True)
    assert str(out.to_pylist()[0]["d"]) == "-99.99"
    assert out.field("_error").to_pylist()[1] == "decimal at byte 5 has more than 4 digits"
