"""Against Apache Kafka and a real registry (Apicurio), with confluent-kafka's own Avro serdes as the peer.

Values written by confluent-kafka's ``AvroSerializer`` under two schema versions (v2 adds a field with a
default, removes one, widens an int to a long) decode with kafkawire equal, row by row, to ``AvroDeserializer``
with the latest schema as its reader; ``encode_avro``'s values, produced by kafkawire's client, read back
equal through ``AvroDeserializer``. A modest count in the default suite, 1M records behind ``slow``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from kafkawire.client import Client
from kafkawire.serde import SchemaRegistry, decode_avro, encode_avro
from kafkawire.testing import start_schema_registry

pytestmark = pytest.mark.broker

_topics = itertools.count()

V1 = {"type": "record", "name": "Click", "namespace": "shop", "fields": [
    {"name": "id", "type": "int"},
    {"name": "user", "type": "string"},
    {"name": "legacy", "type": "string"},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["VIEW", "BUY"]}},
    {"name": "price", "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}]},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
]}
V2 = {"type": "record", "name": "Click", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"},                                       # widened from int
    {"name": "user", "type": "string"},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["VIEW", "BUY"]}},
    {"name": "price", "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}]},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "email", "type": "string", "default": "none@example.com"},  # added with a default
]}                                                                         # "legacy" removed


@pytest.fixture(scope="module")
def registry() -> Iterator[Any]:
    with start_schema_registry() as server:
        yield server


def _row(i: int, version: int) -> dict[str, Any]:
    import datetime
    import decimal

    row: dict[str, Any] = {
        "id": i if version == 1 else (1 << 40) + i,
        "user": f"user-{i % 97}",
        "tags": [f"t{j}" for j in range(i % 4)],
        "kind": "BUY" if i % 3 == 0 else "VIEW",
        "price": None if i % 5 == 0 else decimal.Decimal(i % 10000) / 100,
        "at": datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(milliseconds=i),
    }
    if version == 1:
        row["legacy"] = "old"
    else:
        row["email"] = f"u{i}@example.com"
    return row


def _produce_with_confluent(bootstrap: str, registry_url: str, topic: str, n: int) -> None:
    """Half the records under v1, then half under v2, through confluent-kafka's AvroSerializer."""
    sr = SchemaRegistryClient({"url": registry_url})
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 10000,
                         "queue.buffering.max.messages": 200000})
    for version, schema in ((1, V1), (2, V2)):
        ser = AvroSerializer(sr, json.dumps(schema))
        ctx = SerializationContext(topic, MessageField.VALUE)
        start = 0 if version == 1 else n // 2
        for i in range(start, n // 2 if version == 1 else n):
            while True:
                try:
                    producer.produce(topic, ser(_row(i, version), ctx), partition=i % 2)
                    break
                except BufferError:
                    producer.poll(0.1)
        assert producer.flush(120) == 0


def _fetch_values(client: Client, topic: str) -> tuple[pa.Array, list[int]]:
    """Every value of ``topic`` (partition 0 then 1) as one Arrow binary array, and their offsets."""
    chunks, offsets = [], []
    for p, listed in sorted(client.list_offsets(topic).items()):
        offset = 0
        while offset < listed.offset:
            cols = client.fetch(topic, p, offset, max_bytes=8 << 20, max_wait_ms=100)
            if len(cols):
                chunks.append(cols.value.to_arrow())
                offsets += cols.offset.tolist()
            offset = max(offset, int(cols.next_offset))
    return pa.concat_arrays(chunks), offsets


def _check_evolved(kafka_broker: Any, registry: Any, n: int) -> None:
    topic = f"clicks-{next(_topics)}"
    with Client(kafka_broker.bootstrap) as client:
        client.create_topics({topic: 2})
        _produce_with_confluent(kafka_broker.bootstrap, registry.url, topic, n)
        values, _ = _fetch_values(client, topic)
    assert len(values) == n
    got = decode_avro(values, SchemaRegistry(registry.url), subject=f"{topic}-value")
    sr = SchemaRegistryClient({"url": registry.url})
    deser = AvroDeserializer(sr, json.dumps(V2))  # the latest schema as the reader
    ctx = SerializationContext(topic, MessageField.VALUE)
    rows = got.to_pylist()
    ids = {int.from_bytes(v[1:5], "big") for v in values.to_pylist()}
    assert len(ids) == 2  # really two writer schemas
    mismatches = 0
    for i, raw in enumerate(values.to_pylist()):
        if rows[i] != deser(raw, ctx):
            mismatches += 1
    assert mismatches == 0
    assert got.type.field("id").type == pa.int64() and "legacy" not in [f.name for f in got.type]
    emails = got.field("email").to_pylist()
    assert emails.count("none@example.com") == n // 2  # v1 records got the reader's default


def test_two_schema_versions_decode_like_avro_deserializer(kafka_broker: Any, registry: Any) -> None:
    _check_evolved(kafka_broker, registry, 4000)


@pytest.mark.slow
def test_two_schema_versions_one_million(kafka_broker: Any, registry: Any) -> None:
    _check_evolved(kafka_broker, registry, 1_000_000)


def test_encode_avro_reads_back_through_avro_deserializer(kafka_broker: Any, registry: Any) -> None:
    topic = f"encoded-{next(_topics)}"
    rows = [_row(i, 2) for i in range(1000)]
    table = pa.Table.from_pylist(rows)
    reg = SchemaRegistry(registry.url)
    values = encode_avro(table, reg, subject=f"{topic}-value", schema=V2)
    with Client(kafka_broker.bootstrap) as client:
        client.create_topics({topic: 1})
        client.produce(topic, values, partition=0)
        fetched, _ = _fetch_values(client, topic)
    deser = AvroDeserializer(SchemaRegistryClient({"url": registry.url}))
    ctx = SerializationContext(topic, MessageField.VALUE)
    assert [deser(v, ctx) for v in fetched.to_pylist()] == rows
    # and kafkawire reads its own values back into the table it started from
    back = decode_avro(fetched, reg, subject=f"{topic}-value")
    assert back.to_pylist() == rows


def test_encode_avro_derives_and_registers_a_schema(registry: Any) -> None:
    reg = SchemaRegistry(registry.url)
    table = pa.table({"n": pa.array([1, None, 3], pa.int64()), "s": ["a", "b", None]})
    values = encode_avro(table, reg, subject="derived-value")
    schema = json.loads(reg.get_latest("derived-value").schema)
    assert [f["name"] for f in schema["fields"]] == ["n", "s"]
    assert decode_avro(values, reg, subject="derived-value").to_pylist() == table.to_pylist()
