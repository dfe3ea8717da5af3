"""``format("kafkawire")`` with ``valueFormat=avro``: the value column is the decoded struct, against Apache Kafka
and a real registry (Apicurio), with values written by confluent-kafka's AvroSerializer under two schema
versions and checked against its AvroDeserializer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from spark_helpers import create_topic, unique_topic

from kafkawire.testing import start_schema_registry

pytestmark = pytest.mark.broker

V1 = {"type": "record", "name": "Sale", "fields": [
    {"name": "id", "type": "int"}, {"name": "shop", "type": "string"}, {"name": "old", "type": "string"},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
    {"name": "items", "type": {"type": "array", "items": "string"}},
]}
V2 = {"type": "record", "name": "Sale", "fields": [
    {"name": "id", "type": "long"}, {"name": "shop", "type": "string"},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
    {"name": "items", "type": {"type": "array", "items": "string"}},
    {"name": "channel", "type": "string", "default": "web"},
]}


@pytest.fixture(scope="module")
def registry() -> Iterator[Any]:
    with start_schema_registry() as server:
        yield server


def _write(bootstrap: str, url: str, topic: str, n: int, extra: list[bytes] = ()) -> list[bytes]:
    """n/2 values under V1, n/2 under V2 (AvroSerializer), then ``extra`` raw values; all of them, in order."""
    import decimal

    sr = SchemaRegistryClient({"url": url})
    ctx = SerializationContext(topic, MessageField.VALUE)
    values = []
    for version, schema in ((1, V1), (2, V2)):
        ser = AvroSerializer(sr, json.dumps(schema))
        for i in range(n // 2):
            row: dict[str, Any] = {"id": i, "shop": f"shop-{i % 3}", "amount": decimal.Decimal(i) / 4,
                                   "items": ["x"] * (i % 3)}
            if version == 1:
                row["old"] = "o"
            else:
                row["channel"] = "app"
            values.append(ser(row, ctx))
    values += list(extra)
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for v in values:
        p.produce(topic, v, partition=0)
    assert p.flush(60) == 0
    return values


def _read(spark: Any, bootstrap: str, url: str, topic: str, **options: str) -> Any:
    reader = (spark.read.format("kafkawire").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", topic).option("startingOffsets", "earliest")
              .option("valueFormat", "avro").option("schema.registry.url", url))
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


def test_value_column_is_the_decoded_struct(spark: Any, kafka_broker: Any, registry: Any) -> None:
    topic = unique_topic("avro")
    create_topic(kafka_broker.bootstrap, topic, 1)
    raw = _write(kafka_broker.bootstrap, registry.url, topic, 400)
    df = _read(spark, kafka_broker.bootstrap, registry.url, topic)
    assert df.schema["value"].dataType.simpleString() == (
        "struct<id:bigint,shop:string,amount:decimal(9,2),items:array<string>,channel:string>")
    rows = df.orderBy("offset").select("value.*").collect()
    deser = AvroDeserializer(SchemaRegistryClient({"url": registry.url}), json.dumps(V2))
    ctx = SerializationContext(topic, MessageField.VALUE)
    assert [r.asDict() for r in rows] == [deser(v, ctx) for v in raw]
    # an aggregation over decoded fields, as a query would use them
    by_shop = {r["shop"]: r["total"] for r in df.groupBy("value.shop").agg({"value.id": "sum"})
               .withColumnRenamed("sum(value.id AS id)", "total").collect()}
    assert by_shop == {f"shop-{s}": 2 * sum(i for i in range(200) if i % 3 == s) for s in range(3)}
    channels = {r["channel"]: r["count"] for r in df.groupBy("value.channel").count().collect()}
    assert channels == {"web": 200, "app": 200}  # v1 values took the reader's default


def test_failfast_names_the_offset_and_permissive_gives_null(spark: Any, kafka_broker: Any, registry: Any) -> None:
    topic = unique_topic("avro-bad")
    create_topic(kafka_broker.bootstrap, topic, 1)
    _write(kafka_broker.bootstrap, registry.url, topic, 10, extra=[b"\x01not-avro"])
    with pytest.raises(Exception, match=r"partition 0, offset 10.*bad magic byte 1"):
        _read(spark, kafka_broker.bootstrap, registry.url, topic).collect()
    rows = _read(spark, kafka_broker.bootstrap, registry.url, topic, mode="PERMISSIVE").orderBy("offset").collect()
    assert len(rows) == 11 and rows[10]["value"] is None and rows[9]["value"]["channel"] == "app"


def test_inline_reader_schema_and_option_errors(spark: Any, kafka_broker: Any, registry: Any) -> None:
    topic = unique_topic("avro-inline")
    create_topic(kafka_broker.bootstrap, topic, 1)
    _write(kafka_broker.bootstrap, registry.url, topic, 6)
    narrow = {"type": "record", "name": "Sale", "fields": [{"name": "shop", "type": "string"}]}
    df = _read(spark, kafka_broker.bootstrap, registry.url, topic, avroSchema=json.dumps(narrow))
    assert [r["value"]["shop"] for r in df.orderBy("offset").collect()] == [f"shop-{i % 3}" for i in (0, 1, 2)] * 2
    with pytest.raises(Exception, match="valueFormat must be one of binary, avro"):
        _read(spark, kafka_broker.bootstrap, registry.url, topic, valueFormat="xml")
    with pytest.raises(Exception, match="no-such-value"):
        _read(spark, kafka_broker.bootstrap, registry.url, topic, valueSubject="no-such-value")


def test_write_with_value_format_avro(spark: Any, kafka_broker: Any, registry: Any) -> None:
    from pyspark.sql import functions as F

    topic = unique_topic("avro-write")
    create_topic(kafka_broker.bootstrap, topic, 2)
    df = spark.range(300).select(F.struct(F.col("id"), (F.col("id") % 7).cast("int").alias("bucket"),
                                          F.concat(F.lit("n"), F.col("id").cast("string")).alias("name"))
                                 .alias("value"))
    (df.write.format("kafkawire").mode("append").option("kafka.bootstrap.servers", kafka_broker.bootstrap)
     .option("topic", topic).option("valueFormat", "avro").option("schema.registry.url", registry.url).save())
    back = _read(spark, kafka_broker.bootstrap, registry.url, topic).select("value.*")
    assert sorted(r.asDict()["id"] for r in back.collect()) == list(range(300))
    raw = (spark.read.format("kafkawire").option("kafka.bootstrap.servers", kafka_broker.bootstrap)
           .option("subscribe", topic).option("startingOffsets", "earliest").load().collect())
    deser = AvroDeserializer(SchemaRegistryClient({"url": registry.url}))
    ctx = SerializationContext(topic, MessageField.VALUE)
    rows = sorted((deser(bytes(r["value"]), ctx) for r in raw), key=lambda d: d["id"])
    assert rows[:2] == [{"id": 0, "bucket": 0, "name": "n0"}, {"id": 1, "bucket": 1, "name": "n1"}]
    with pytest.raises(Exception, match="valueFormat=avro writes a struct value column"):
        (spark.range(3).selectExpr("cast(id as string) as value").write.format("kafkawire").mode("append")
         .option("kafka.bootstrap.servers", kafka_broker.bootstrap).option("topic", topic)
         .option("valueFormat", "avro").option("schema.registry.url", registry.url).save())


UNIONS = {"type": "record", "name": "Event", "fields": [
    {"name": "id", "type": "int"},
    {"name": "payload", "type": ["null", "int", "string"]},
    {"name": "tags", "type": {"type": "array", "items": ["long", "boolean"]}},
    {"name": "attrs", "type": ["null", {"type": "map", "values": ["string", "double"]}]},
    {"name": "elapsed", "type": {"type": "fixed", "name": "Elapsed", "size": 12, "logicalType": "duration"}},
]}


def test_unions_and_durations_read_as_spark_from_avro_reads_them(spark: Any, kafka_broker: Any, registry: Any) -> None:
    """A union of several non-null types becomes the struct of members Spark's from_avro gives, a duration
    its 12 bytes, as spark-avro's from_avro maps them (checked against it by hand once; asserted here against the
    values written), over two partitions."""
    import struct

    topic = unique_topic("avro-unions")
    create_topic(kafka_broker.bootstrap, topic, 2)
    sr = SchemaRegistryClient({"url": registry.url})
    ser = AvroSerializer(sr, json.dumps(UNIONS))
    ctx = SerializationContext(topic, MessageField.VALUE)
    p = Producer({"bootstrap.servers": kafka_broker.bootstrap, "linger.ms": 5})
    for i in range(3000):
        row = {
            "id": i,
            "payload": [None, i, f"p{i}"][i % 3],
            "tags": [[], [i, True], [False]][i % 3],
            "attrs": None if i % 4 == 0 else {"a": f"x{i}", "b": i / 4},
            "elapsed": struct.pack("<III", i % 13, i % 29, i * 7),
        }
        p.produce(topic, ser(row, ctx), partition=i % 2)
    assert p.flush(60) == 0
    ours = _read(spark, kafka_broker.bootstrap, registry.url, topic)
    # The types and values spark-avro's from_avro gives for these (struct of member0/member1..., the duration's
    # fixed bytes); built here so the test does not depend on spark-avro being on this session's classpath.
    assert ours.schema["value"].dataType.simpleString() == (
        "struct<id:int,payload:struct<member0:int,member1:string>,tags:array<struct<member0:bigint,member1:boolean>>,"
        "attrs:map<string,struct<member0:string,member1:double>>,elapsed:binary>")

    def member(v: Any, kinds: tuple[type, ...]) -> Any:
        return None if v is None else {f"member{i}": (v if type(v) is k else None) for i, k in enumerate(kinds)}

    expected = []
    for i in range(3000):
        payload = [None, i, f"p{i}"][i % 3]
        tags = [[], [i, True], [False]][i % 3]
        attrs = None if i % 4 == 0 else {"a": f"x{i}", "b": i / 4}
        expected.append({
            "id": i, "payload": member(payload, (int, str)), "tags": [member(t, (int, bool)) for t in tags],
            "attrs": None if attrs is None else {k: member(v, (str, float)) for k, v in attrs.items()},
            "elapsed": bytearray(struct.pack("<III", i % 13, i % 29, i * 7)),
        })
    mine = sorted((r["value"].asDict(recursive=True) for r in ours.select("value").collect()), key=lambda d: d["id"])
    assert len(mine) == 3000
    assert mine == expected


def test_key_format_avro_decodes_the_key_column(registry: Any) -> None:
    """keyFormat=avro with the default <topic>-key subject, on the Arrow batches the reader hands to Spark."""
    import pyarrow as pa

    from kafkawire.serde import SchemaRegistry, encode_avro
    from kafkawire.spark.values import value_decoding

    topic = unique_topic("avro-key")
    reg = SchemaRegistry(registry.url)
    key_schema = {"type": "record", "name": "K", "fields": [{"name": "user", "type": "string"}]}
    keys = encode_avro(pa.table({"user": ["ann", "bob"]}), reg, subject=f"{topic}-key", schema=key_schema)
    decoding = value_decoding({"keyFormat": "avro", "schema.registry.url": registry.url}, [topic])
    assert decoding is not None and decoding.value_schema is None
    batch = pa.RecordBatch.from_arrays([keys.to_arrow(), pa.array([b"v1", b"v2"]), pa.array([5, 6], pa.int64())],
                                       names=["key", "value", "offset"])
    out = decoding.decode(batch, partition=0)
    assert out.column("key").to_pylist() == [{"user": "ann"}, {"user": "bob"}]
    assert out.column("value").to_pylist() == [b"v1", b"v2"]
    assert decoding.spark_schema(_kafka_schema()).simpleString().startswith("struct<key:struct<user:string>")


def _kafka_schema() -> Any:
    from kafkawire.spark.source import kafka_schema

    return kafka_schema(False)
