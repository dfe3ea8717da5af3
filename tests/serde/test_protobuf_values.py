"""decode_protobuf / encode_protobuf against a real registry (Apicurio) with confluent-kafka's
ProtobufSerializer / ProtobufDeserializer as the peer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from kafkawire.columns import BinaryColumn
from kafkawire.serde import ProtobufDecodeError, SchemaRegistry, decode_protobuf, encode_protobuf
from kafkawire.testing import start_schema_registry

pytestmark = pytest.mark.broker


def _order_class() -> Any:
    """message Order { int64 id; string item; repeated string tags; Line line; Kind kind; map<string,int32> attrs }"""
    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name="shop/order.proto", package="shop", syntax="proto3")
    kind = fdp.enum_type.add(name="Kind")
    kind.value.add(name="VIEW", number=0)
    kind.value.add(name="BUY", number=1)
    line = fdp.message_type.add(name="Line")
    line.field.add(name="sku", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    line.field.add(name="qty", number=2, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    order = fdp.message_type.add(name="Order")
    order.field.add(name="id", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    order.field.add(name="item", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    order.field.add(name="tags", number=3, type=F.TYPE_STRING, label=F.LABEL_REPEATED)
    order.field.add(name="line", number=4, type=F.TYPE_MESSAGE, type_name=".shop.Line", label=F.LABEL_OPTIONAL)
    order.field.add(name="kind", number=5, type=F.TYPE_ENUM, type_name=".shop.Kind", label=F.LABEL_OPTIONAL)
    entry = order.nested_type.add(name="AttrsEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    order.field.add(name="attrs", number=6, type=F.TYPE_MESSAGE, type_name=".shop.Order.AttrsEntry",
                    label=F.LABEL_REPEATED)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.Order"))


@pytest.fixture(scope="module")
def registry() -> Iterator[Any]:
    with start_schema_registry() as server:
        yield server


def test_protobuf_serializer_values_decode(registry: Any) -> None:
    Order = _order_class()
    sr = SchemaRegistryClient({"url": registry.url})
    ser = ProtobufSerializer(Order, sr, {"use.deprecated.format": False})
    ctx = SerializationContext("orders-pb", MessageField.VALUE)
    msgs = [Order(id=i, item=f"i{i}", tags=["a"] * (i % 3), kind=i % 2, attrs={"k": i},
                  **({"line": {"sku": f"s{i}", "qty": i}} if i % 2 else {})) for i in range(20)]
    values = [ser(m, ctx) for m in msgs] + [None, b"\x00\x00\x00\x00\x01\x02\x99"]
    reg = SchemaRegistry(registry.url)
    out = decode_protobuf(BinaryColumn.from_pylist(values), reg, subject="orders-pb-value", mode="PERMISSIVE")
    rows = out.to_pylist()
    deser = ProtobufDeserializer(Order, {"use.deprecated.format": False})
    for row, v in zip(rows, values[:20]):
        m = deser(v, ctx)
        assert row["id"] == m.id and row["item"] == m.item and row["tags"] == list(m.tags)
        assert row["kind"] == ["VIEW", "BUY"][m.kind] and row["attrs"] == list(m.attrs.items())
        assert row["line"] == ({"sku": m.line.sku, "qty": m.line.qty} if m.HasField("line") else None)
        assert row["_error"] is None
    assert rows[20] is None and rows[21] is None
    assert out.field("_error").to_pylist()[21]  # the hostile last value has a cause
    with pytest.raises(ProtobufDecodeError, match="row 21"):
        decode_protobuf(BinaryColumn.from_pylist(values), reg, subject="orders-pb-value")
    # encode_protobuf's values read back through ProtobufDeserializer
    order_type = pa.struct([f for f in out.type if f.name != "_error"])
    table = pa.array([{"id": 7, "item": "x", "tags": ["t"], "kind": "BUY", "attrs": [("a", 1)],
                       "line": {"sku": "s", "qty": 2}}], order_type)
    encoded = encode_protobuf(table, reg, subject="orders-pb-value", message="shop.Order")
    back = deser(encoded.to_pylist()[0], ctx)
    assert (back.id, back.item, list(back.tags), back.kind, dict(back.attrs), back.line.qty) == (
        7, "x", ["t"], 1, {"a": 1}, 2)


def _versioned_order(version: int) -> Any:
    """shop.v.Order: v1 {id, item}; v2 adds a nested message, repeated, map, oneof and a Timestamp."""
    from google.protobuf import timestamp_pb2

    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name="shop/versioned.proto", package="shopv", syntax="proto3")
    order = fdp.message_type.add(name="Order")
    order.field.add(name="id", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    order.field.add(name="item", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    if version == 2:
        fdp.dependency.append("google/protobuf/timestamp.proto")
        line = fdp.message_type.add(name="Line")
        line.field.add(name="sku", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
        order.field.add(name="tags", number=3, type=F.TYPE_STRING, label=F.LABEL_REPEATED)
        order.field.add(name="line", number=4, type=F.TYPE_MESSAGE, type_name=".shopv.Line", label=F.LABEL_OPTIONAL)
        entry = order.nested_type.add(name="AttrsEntry")
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
        entry.field.add(name="value", number=2, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
        order.field.add(name="attrs", number=5, type=F.TYPE_MESSAGE, type_name=".shopv.Order.AttrsEntry",
                        label=F.LABEL_REPEATED)
        order.oneof_decl.add(name="pay")
        order.field.add(name="card", number=6, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL, oneof_index=0)
        order.field.add(name="points", number=7, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL, oneof_index=0)
        order.field.add(name="at", number=8, type=F.TYPE_MESSAGE, type_name=".google.protobuf.Timestamp",
                        label=F.LABEL_OPTIONAL)
        wkt = descriptor_pb2.FileDescriptorProto()
        timestamp_pb2.DESCRIPTOR.CopyToProto(wkt)
        pool.Add(wkt)
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("shopv.Order"))


def test_two_schema_versions_from_protobuf_serializer_decode_as_protobuf_deserializer(registry: Any) -> None:
    """Values of two schema versions written by ProtobufSerializer decode, row by row, as ProtobufDeserializer
    reads them with the latest message (fields v1 lacks: defaults, or null where they have presence)."""
    from .test_protobuf_differential import _expected

    v1, v2 = _versioned_order(1), _versioned_order(2)
    sr = SchemaRegistryClient({"url": registry.url})
    ctx = SerializationContext("orders-versions", MessageField.VALUE)
    values = [ProtobufSerializer(v1, sr, {"use.deprecated.format": False})(v1(id=i, item=f"i{i}"), ctx)
              for i in range(1000)]
    ser2 = ProtobufSerializer(v2, sr, {"use.deprecated.format": False})
    for i in range(1000, 3000):
        m = v2(id=i, item=f"i{i}", tags=["t"] * (i % 3), attrs={"k": i} if i % 2 else {})
        if i % 3:
            m.line.sku = f"s{i}"
        if i % 4 == 1:
            m.card = f"c{i}"
        elif i % 4 == 2:
            m.points = i
        if i % 5:
            m.at.FromMicroseconds(1_700_000_000_000_000 + i)
        values.append(ser2(m, ctx))
    out = decode_protobuf(BinaryColumn.from_pylist(values), SchemaRegistry(registry.url),
                          subject="orders-versions-value")
    assert len({v[1:5] for v in values}) == 2  # two schema ids
    deser = ProtobufDeserializer(v2, {"use.deprecated.format": False})
    typ = out.type
    for row, v in zip(out.to_pylist(), values):
        want = pa.array([_expected(deser(v, ctx))], typ).to_pylist()[0]
        assert row == want
