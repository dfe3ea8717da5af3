"""Protobuf schemas as registries hold them: base64 descriptors and ``.proto`` text (compiled by protoc), with
references; ``?format=serialized`` asked as Confluent's registry needs; a wrong answer named by registry and id.

Against a loopback server that answers as Confluent's registry does (text unless asked for the serialized
form), and against the real registry the serde tests run (Apicurio), with schemas registered through its
REST API as Java's ``KafkaProtobufSerializer`` registers them (``.proto`` text, imports as references)."""

from __future__ import annotations

import base64
import datetime
import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pool, message_factory

from kafkawire.columns import BinaryColumn
from kafkawire.serde import ProtobufSchemaError, SchemaRegistry, decode_protobuf
from kafkawire.serde.protobuf_schema import compile_proto
from kafkawire.serde.registry import SchemaReference
from kafkawire.testing import start_schema_registry

LINE = 'syntax = "proto3";\npackage shop;\nmessage Line { string sku = 1; int32 qty = 2; }\n'
ORDER = """syntax = "proto3";
package shop;
import "shop/line.proto";
import "google/protobuf/timestamp.proto";
message Order {
  int64 id = 1;
  Line line = 2;
  google.protobuf.Timestamp at = 3;
  repeated string tags = 4;
  map<string, int32> attrs = 5;
  oneof pay { string card = 6; int64 points = 7; }
  message Note { string text = 1; }
  Note note = 8;
}
"""


def _classes(files: list[Any]) -> Any:
    pool = descriptor_pool.DescriptorPool()
    for f in files:
        pool.Add(f)
    return pool, lambda name: message_factory.GetMessageClass(pool.FindMessageTypeByName(name))


def _framed(sid: int, indexes: bytes, body: bytes) -> bytes:
    return b"\x00" + sid.to_bytes(4, "big") + indexes + body


def test_compile_proto_resolves_imports_and_well_known_types() -> None:
    files = compile_proto("shop/order.proto", ORDER, {"shop/line.proto": LINE}, 60.0)
    assert sorted(f.name for f in files) == ["google/protobuf/timestamp.proto", "shop/line.proto", "shop/order.proto"]
    assert files[-1].name == "shop/order.proto"  # dependencies first
    order = files[-1].message_type[0]
    assert [f.name for f in order.field] == ["id", "line", "at", "tags", "attrs", "card", "points", "note"]
    with pytest.raises(ValueError, match="protoc refused it") as e:
        compile_proto("bad.proto", 'syntax = "proto3";\nmessage X { int32 a = 1 }\n', {}, 60.0)
    assert "bad.proto:2" in str(e.value) and "absl" not in str(e.value)
    with pytest.raises(ValueError, match="leaves the include directory"):
        compile_proto("x.proto", LINE, {"../../etc/x.proto": LINE}, 60.0)


class _Confluent:
    """Answers /schemas/ids/{id} as Confluent's registry does: ``.proto`` text unless ``?format=serialized``."""

    def __init__(self, text: str, serialized: str | None) -> None:
        self.paths: list[str] = []
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.paths.append(self.path)
                schema = serialized if self.path.endswith("?format=serialized") and serialized else text
                body = json.dumps({"schema": schema, "schemaType": "PROTOBUF"}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_format_serialized_is_asked_and_both_answers_decode() -> None:
    (fdp,) = compile_proto("shop/line.proto", LINE, {}, 60.0)
    _, cls = _classes([fdp])
    Line = cls("shop.Line")
    values = [_framed(7, b"\x00", Line(sku=f"s{i}", qty=i).SerializeToString()) for i in range(5)]
    serialized = base64.b64encode(fdp.SerializeToString()).decode()
    for answer in (serialized, None):  # Confluent's answer when asked; a registry that ignores format= (text)
        server = _Confluent(LINE, answer)
        try:
            out = decode_protobuf(BinaryColumn.from_pylist(values), SchemaRegistry(server.url))
            assert out.to_pylist() == [{"sku": f"s{i}", "qty": i} for i in range(5)]
            assert server.paths == ["/schemas/ids/7?format=serialized"]
        finally:
            server.close()


@pytest.mark.parametrize("answer", ["bm90IGEgZGVzY3JpcHRvcg==!", "message {", base64.b64encode(b"\x0a\xff").decode()])
def test_a_schema_of_the_wrong_shape_names_registry_and_id(answer: str) -> None:
    server = _Confluent(answer, None)
    reg = SchemaRegistry(server.url, basic_auth="user:secret")
    try:
        with pytest.raises(ProtobufSchemaError) as e:
            _schema_of(reg, 41)
        msg = str(e.value)
        assert f"schema registry {server.url} (schema id 41)" in msg and "secret" not in msg
        assert "neither a base64 FileDescriptorProto nor .proto text" in msg
        with pytest.raises(ValueError) as e2:  # decoding names the same cause
            decode_protobuf(BinaryColumn.from_pylist([_framed(41, b"\x00", b"")]), reg)
        assert msg in str(e2.value)
    finally:
        server.close()


def _schema_of(reg: SchemaRegistry, sid: int) -> Any:
    from kafkawire.serde.protobuf_schema import ProtobufSchema

    return ProtobufSchema(reg, reg.get_schema(sid, format="serialized"))


@pytest.fixture(scope="module")
def registry() -> Iterator[Any]:
    with start_schema_registry() as server:
        yield server


@pytest.mark.broker
def test_proto_text_registered_through_rest_decodes_as_protobuf_deserializer(registry: Any) -> None:
    """Registered as Java's serializer does (text, the import as a reference); values framed with message
    indexes for a top-level and a nested message; row by row equal to ProtobufDeserializer's."""
    reg = SchemaRegistry(registry.url)
    reg.register("shop/line.proto", LINE, "PROTOBUF")
    sid = reg.register("orders-text-value", ORDER, "PROTOBUF",
                       references=[SchemaReference("shop/line.proto", "shop/line.proto", 1)])
    files = compile_proto("shop/order.proto", ORDER, {"shop/line.proto": LINE}, 60.0)
    _, cls = _classes(files)
    Order, Note = cls("shop.Order"), cls("shop.Order.Note")
    msgs = []
    for i in range(2000):
        m = Order(id=i, tags=["t"] * (i % 4), attrs={f"k{j}": j for j in range(i % 3)})
        if i % 2:
            m.line.sku, m.line.qty = f"s{i}", i
        if i % 3:
            m.at.FromMicroseconds(1_700_000_000_000_000 + i * 1001)
        if i % 5 == 1:
            m.card = f"c{i}"
        elif i % 5 == 2:
            m.points = -i
        msgs.append(m)
    values = [_framed(sid, b"\x00", m.SerializeToString()) for m in msgs]
    out = decode_protobuf(BinaryColumn.from_pylist(values), reg, subject="orders-text-value", message="Order")
    deser = ProtobufDeserializer(Order, {"use.deprecated.format": False})
    ctx = SerializationContext("orders-text", MessageField.VALUE)
    for row, v in zip(out.to_pylist(), values):
        m = deser(v, ctx)
        assert row["id"] == m.id and row["tags"] == list(m.tags) and dict(row["attrs"]) == dict(m.attrs)
        assert row["line"] == ({"sku": m.line.sku, "qty": m.line.qty} if m.HasField("line") else None)
        # Timestamp as Spark's from_protobuf gives it: microseconds, UTC
        assert row["at"] == (m.at.ToDatetime(tzinfo=datetime.timezone.utc) if m.HasField("at") else None)
        assert row["card"] == (m.card if m.WhichOneof("pay") == "card" else None)
        assert row["points"] == (m.points if m.WhichOneof("pay") == "points" else None)
    # a nested message named by its indexes ([0, 1]: Order.Note; protoc puts the map entry AttrsEntry first)
    notes = [_framed(sid, b"\x04\x00\x02", Note(text=f"n{i}").SerializeToString()) for i in range(3)]
    out = decode_protobuf(BinaryColumn.from_pylist(notes), reg)
    assert out.to_pylist() == [{"text": f"n{i}"} for i in range(3)]
