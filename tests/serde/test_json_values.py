"""decode_json / encode_json against a real registry (Apicurio) with confluent-kafka's JSONSerializer and
JSONDeserializer as the peer, and on fixed hostile inputs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from kafkawire.columns import BinaryColumn
from kafkawire.serde import JsonDecodeError, JsonSchemaError, SchemaRegistry, decode_json, encode_json
from kafkawire.testing import start_schema_registry

SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#", "title": "Order", "type": "object",
    "properties": {
        "id": {"type": "integer"}, "item": {"type": "string"}, "price": {"type": "number"},
        "paid": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string"}},
        "note": {"type": ["string", "null"]},
        "ship": {"$ref": "#/definitions/Address"},
        "attrs": {"type": "object", "additionalProperties": {"type": "integer"}},
    },
    "definitions": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}}},
}


def _rows(n: int) -> list[dict[str, Any]]:
    return [{"id": i, "item": f"it{i}", "price": i / 4, "paid": i % 2 == 0, "tags": ["a"] * (i % 3),
             "note": None if i % 2 else "n", "ship": {"city": "Oslo"}, "attrs": {"k": i}} for i in range(n)]


@pytest.fixture(scope="module")
def registry() -> Iterator[Any]:
    with start_schema_registry() as server:
        yield server


@pytest.mark.broker
def test_json_serializer_values_decode_like_json_deserializer(registry: Any) -> None:
    sr = SchemaRegistryClient({"url": registry.url})
    ser = JSONSerializer(json.dumps(SCHEMA), sr)
    ctx = SerializationContext("orders", MessageField.VALUE)
    values = [ser(r, ctx) for r in _rows(50)] + [None]
    got = decode_json(BinaryColumn.from_pylist(values), SchemaRegistry(registry.url), subject="orders-value")
    deser = JSONDeserializer(json.dumps(SCHEMA), schema_registry_client=sr)
    expected = [deser(v, ctx) for v in values[:-1]]
    rows = got.to_pylist()
    assert rows[-1] is None
    for r, e in zip(rows, expected):
        e = {**e, "attrs": list(e["attrs"].items())}
        assert r == e


@pytest.mark.broker
def test_encode_json_reads_back_through_json_deserializer(registry: Any) -> None:
    reg = SchemaRegistry(registry.url)
    table = pa.Table.from_pylist([{"id": 1, "item": "x", "price": 2.5}, {"id": 2, "item": "y", "price": None}])
    values = encode_json(table, reg, subject="enc-json-value")
    sr = SchemaRegistryClient({"url": registry.url})
    deser = JSONDeserializer(None, schema_registry_client=sr)
    ctx = SerializationContext("enc-json", MessageField.VALUE)
    assert [deser(v, ctx) for v in values.to_pylist()] == table.to_pylist()
    assert decode_json(values, reg, subject="enc-json-value").to_pylist() == table.to_pylist()


def test_hostile_json_values_failfast_and_permissive() -> None:
    reg = {3: json.dumps(SCHEMA)}
    good = b"\x00\x00\x00\x00\x03" + json.dumps({"id": 1, "item": "a"}).encode()
    values = BinaryColumn.from_pylist([good, b"\x00\x00\x00\x00\x03{not json", b"\x07abcd", b"\x00\x00", good,
                                       b"\x00\x00\x00\x00\x03" + json.dumps({"id": "x"}).encode(),
                                       b"\x00\x00\x00\x00\x03{\n\"id\": 5\n}"])
    with pytest.raises(JsonDecodeError, match="row 1, offset 11"):
        decode_json(values, reg, offsets=list(range(10, 17)))
    out = decode_json(values, reg, mode="PERMISSIVE")
    rows = out.to_pylist()
    assert rows[0]["id"] == 1 and rows[4]["id"] == 1 and rows[6]["id"] == 5  # a pretty-printed body too
    assert [r is None for r in rows] == [False, True, True, True, False, True, False]
    errs = out.field("_error").to_pylist()
    assert "bad magic byte 7" in errs[2] and "shorter than the 5-byte" in errs[3] and errs[5] is not None


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"a": {"$ref": "#"}}}, {"oneOf": [{"type": "string"}, {"type": "integer"}]},
    {"type": "object"}, "not json", {"$ref": "http://elsewhere/schema.json"},
])
def test_unsupported_json_schemas_are_typed_errors(schema: Any) -> None:
    from kafkawire.serde.json_values import json_schema_to_arrow

    with pytest.raises(JsonSchemaError):
        json_schema_to_arrow(schema if isinstance(schema, str) else json.dumps(schema))
