"""``kafkawire consume --value-format avro --schema-registry URL``: against Apache Kafka and a real registry
(Apicurio), values written by confluent-kafka's AvroSerializer, compared with its AvroDeserializer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from kafkawire.cli.main import main
from kafkawire.client import Client
from kafkawire.testing import start_schema_registry

pytestmark = pytest.mark.broker

SCHEMA = {"type": "record", "name": "Reading", "fields": [
    {"name": "sensor", "type": "string"}, {"name": "value", "type": "double"},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
]}


@pytest.fixture(scope="module")
def registry() -> Iterator[Any]:
    with start_schema_registry() as server:
        yield server


@pytest.fixture(scope="module")
def readings(kafka_broker: Any, registry: Any) -> tuple[str, list[bytes]]:
    import datetime

    topic = "cli-avro-readings"
    with Client(kafka_broker.bootstrap) as client:
        client.create_topics({topic: 2})
    ser = AvroSerializer(SchemaRegistryClient({"url": registry.url}), json.dumps(SCHEMA))
    ctx = SerializationContext(topic, MessageField.VALUE)
    t0 = datetime.datetime(2026, 11, 26, tzinfo=datetime.timezone.utc)
    values = [ser({"sensor": f"s{i % 4}", "value": i / 8, "at": t0 + datetime.timedelta(seconds=i)}, ctx)
              for i in range(40)]
    p = Producer({"bootstrap.servers": kafka_broker.bootstrap})
    for i, v in enumerate(values):
        p.produce(topic, v, partition=i % 2)
    assert p.flush(60) == 0
    return topic, values


def test_consume_avro_to_parquet(kafka_broker: Any, registry: Any, readings: tuple[str, list[bytes]],
                                 tmp_path: Path) -> None:
    topic, values = readings
    out = tmp_path / "readings.parquet"
    assert main(["consume", topic, "-b", kafka_broker.bootstrap, "--value-format", "avro",
                 "--schema-registry", registry.url, "--format", "parquet", "--output", str(out)]) == 0
    table = pq.read_table(out)
    assert str(table.schema.field("value").type) == "struct<sensor: string, value: double, at: timestamp[ms, tz=UTC]>"
    deser = AvroDeserializer(SchemaRegistryClient({"url": registry.url}))
    ctx = SerializationContext(topic, MessageField.VALUE)
    expected = sorted((deser(v, ctx) for v in values), key=lambda r: r["at"])
    assert sorted(table["value"].to_pylist(), key=lambda r: r["at"]) == expected


def test_consume_avro_json_and_errors(kafka_broker: Any, registry: Any, readings: tuple[str, list[bytes]],
                                      tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    topic, _ = readings
    out = tmp_path / "readings.jsonl"
    assert main(["consume", topic, "-b", kafka_broker.bootstrap, "-p", "0", "-n", "3", "--value-format", "avro",
                 "--schema-registry", registry.url, "--format", "json", "--output", str(out)]) == 0
    docs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [d["value"]["sensor"] for d in docs] == ["s0", "s2", "s0"]
    assert docs[1]["value"]["at"] == "2026-11-26T00:00:02+00:00" and docs[0]["offset"] == 0
    capsys.readouterr()
    assert main(["consume", topic, "-b", kafka_broker.bootstrap, "--value-format", "avro"]) != 0
    assert "--value-format avro needs --schema-registry" in capsys.readouterr().err
    assert main(["consume", topic, "-b", kafka_broker.bootstrap, "--value-format", "avro",
                 "--schema-registry", registry.url, "--value-subject", "nope-value"]) != 0
    assert "nope-value" in capsys.readouterr().err
