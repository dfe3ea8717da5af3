"""``df.write.format("kafkawire")`` round trips, and Spark-style errors for bad options and bad DataFrames."""

from __future__ import annotations

import json
import time

import pytest
from pyspark.sql.types import ArrayType, BinaryType, IntegerType, StringType, StructField, StructType
from spark_helpers import consume_all, create_topic, delete_records, produce, unique_topic

pytestmark = [pytest.mark.broker, pytest.mark.slow]

HEADERS = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))
WRITE_SCHEMA = StructType(
    [
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("headers", HEADERS),
    ]
)


def _read(spark, bootstrap: str, **options: str):
    reader = spark.read.format("kafkawire").option("kafka.bootstrap.servers", bootstrap)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


def test_write_round_trip_every_column(spark, bootstrap):
    a, b = unique_topic("wa"), unique_topic("wb")
    create_topic(bootstrap, a, 3)
    create_topic(bootstrap, b, 1)
    rows = []
    for i in range(60):
        topic = a if i % 4 else b
        partition = (i % 3) if topic == a else None
        key = None if i % 5 == 0 else f"k{i}".encode()
        value = None if i % 7 == 0 else (b"" if i % 9 == 0 else f"value {i}".encode())
        headers = None if i % 2 else [("h", f"{i}".encode()), ("n", None)]
        rows.append((topic, partition, key, value, headers))
    df = spark.createDataFrame(rows, WRITE_SCHEMA).repartition(3)
    df.write.format("kafkawire").option("kafka.bootstrap.servers", bootstrap).option("includeHeaders", "true").mode(
        "append"
    ).save()

    # read back through kafkawire ...
    back = _read(spark, bootstrap, subscribe=f"{a},{b}", includeHeaders="true").collect()
    assert len(back) == 60

    def norm_headers(h):
        return None if h is None else [(x[0], x[1]) for x in h]

    want = sorted(((t, k, v, norm_headers(h)) for t, _, k, v, h in rows), key=repr)
    got = sorted(((r.topic, r.key, r.value, norm_headers(r.headers)) for r in back), key=repr)
    assert got == want
    # ... the partition column was honoured (value "value i" went to partition i % 3 of topic a) ...
    by_value = {(t, v): p for t, p, _, v, _ in rows}
    for r in back:
        if r.topic == a and r.value is not None:
            assert r.partition == by_value[(a, r.value)]
    # ... and an independent client (kafka-python) agrees
    indep = consume_all(bootstrap, a) + consume_all(bootstrap, b)
    assert sorted((r.topic, r.partition, r.offset, r.value) for r in indep) == sorted(
        (r.topic, r.partition, r.offset, r.value) for r in back
    )


def test_write_strings_with_topic_option_and_without_headers(spark, bootstrap):
    t = unique_topic("wstr")
    create_topic(bootstrap, t, 2)
    df = spark.createDataFrame([("a", "1", "ignored"), ("b", "2", "ignored")], "key string, value string, topic string")
    df.write.format("kafkawire").option("kafka.bootstrap.servers", bootstrap).option("topic", t).mode("append").save()
    back = _read(spark, bootstrap, subscribe=t, includeHeaders="true").collect()
    assert sorted((r.key, r.value, r.headers) for r in back) == [(b"a", b"1", None), (b"b", b"2", None)]


def test_round_trip_keeps_key_partitioning_of_the_java_client(spark, bootstrap):
    # Without a partition column, keyed records go to murmur2(key) % partitions, as the Java producer does.
    t = unique_topic("wkey")
    create_topic(bootstrap, t, 4)
    keys = [f"key-{i}" for i in range(40)]
    spark.createDataFrame([(k, "v") for k in keys], "key string, value string").write.format("kafkawire").option(
        "kafka.bootstrap.servers", bootstrap
    ).option("topic", t).mode("append").save()
    from kafka.partitioner.default import murmur2

    got = {r.key.decode(): r.partition for r in _read(spark, bootstrap, subscribe=t).collect()}
    assert got == {k: (murmur2(k.encode()) & 0x7FFFFFFF) % 4 for k in keys}


@pytest.mark.parametrize(
    "options,message",
    [
        ({}, "One of the following options must be specified for Kafka source: subscribe, subscribepattern, assign."),
        ({"subscribe": "a", "assign": '{"a":[0]}'}, "Only one of the following options can be specified"),
        ({"subscribe": "a", "startingOffsets": "latest"}, "starting offset can't be latest for batch queries on Kafka"),
        ({"subscribe": "a", "endingOffsets": "earliest"}, "ending offset can't be earliest for batch queries on Kafka"),
        ({"assign": "[0]"}, "No topicpartitions to assign as specified value for option 'assign' is '[0]'"),
        (
            {"subscribe": "a", "kafka.auto.offset.reset": "earliest"},
            "Kafka option 'auto.offset.reset' is not supported",
        ),
        ({"subscribe": "a", "minPartitions": "-1"}, "minPartitions must be positive"),
    ],
)
def test_bad_batch_options(spark, bootstrap, options, message):
    with pytest.raises(Exception, match=_re(message)):
        _read(spark, bootstrap, **options).collect()


def test_schema_cannot_be_given(spark, bootstrap):
    with pytest.raises(Exception, match=_re("Kafka source has a fixed schema and cannot be set with a custom one")):
        spark.read.format("kafkawire").schema("value binary").option("kafka.bootstrap.servers", bootstrap).option(
            "subscribe", "a"
        ).load().collect()


def test_bootstrap_servers_required(spark):
    with pytest.raises(
        Exception, match=_re("Option 'kafka.bootstrap.servers' must be specified for configuring Kafka")
    ):
        spark.read.format("kafkawire").option("subscribe", "a").load().collect()


def test_bad_stream_options(spark, bootstrap, tmp_path):
    with pytest.raises(Exception, match=_re("ending offset not valid in streaming queries")):
        q = (
            spark.readStream.format("kafkawire")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", "a")
            .option("endingOffsets", "latest")
            .load()
            .writeStream.format("console")
            .option("checkpointLocation", str(tmp_path))
            .start()
        )
        q.awaitTermination(60)
        raise AssertionError(q.exception())


def test_offsets_that_do_not_match_assignment(spark, bootstrap):
    t = unique_topic("assign")
    create_topic(bootstrap, t, 2)
    produce(bootstrap, t, [(0, None, b"x", int(time.time() * 1000), [])])
    with pytest.raises(
        Exception, match=_re("Partitions specified for Kafka start offsets don't match what are assigned.")
    ):
        _read(spark, bootstrap, subscribe=t, startingOffsets=json.dumps({t: {"0": 0}})).collect()


@pytest.mark.parametrize(
    "ddl,options,message",
    [
        ("key string", {"topic": "t"}, "Required attribute 'value' not found"),
        ("value string", {}, "topic option required when no 'topic' attribute is present"),
        ("value int", {"topic": "t"}, "value attribute unsupported type int. value must be a(n) string or binary"),
        ("value string, partition bigint", {"topic": "t"}, "partition attribute unsupported type bigint"),
    ],
)
def test_bad_write_schema(spark, bootstrap, ddl, options, message):
    df = spark.createDataFrame([], ddl)
    w = df.write.format("kafkawire").option("kafka.bootstrap.servers", bootstrap).mode("append")
    for k, v in options.items():
        w = w.option(k, v)
    with pytest.raises(Exception, match=_re(message)):
        w.save()


def test_overwrite_is_refused(spark, bootstrap):
    df = spark.createDataFrame([("v",)], "value string")
    with pytest.raises(Exception, match=_re("Save mode Overwrite not allowed for Kafka")):
        df.write.format("kafkawire").option("kafka.bootstrap.servers", bootstrap).option("topic", "t").mode(
            "overwrite"
        ).save()


def test_registered_automatically_by_module():
    import pkgutil

    import pyspark_kafkawire
    from kafkawire.spark.source import KafkaWireDataSource

    # PySpark's lookup: every top-level module named pyspark_* that defines DefaultSource (a DataSource)
    assert "pyspark_kafkawire" in {m.name for m in pkgutil.iter_modules()}
    assert pyspark_kafkawire.DefaultSource is KafkaWireDataSource
    assert KafkaWireDataSource.name() == "kafkawire"


def _re(text: str) -> str:
    import re

    return re.escape(text)


def test_fail_on_data_loss_batch(spark, bootstrap):
    t = unique_topic("loss")
    create_topic(bootstrap, t, 1)
    produce(bootstrap, t, [(0, None, f"v{i}".encode(), int(time.time() * 1000), []) for i in range(20)])
    delete_records(bootstrap, t, 0, 10)
    start = json.dumps({t: {"0": 0}})
    with pytest.raises(Exception, match=_re("[KAFKA_DATA_LOSS]")):
        _read(spark, bootstrap, assign=json.dumps({t: [0]}), startingOffsets=start).collect()
    df = _read(spark, bootstrap, assign=json.dumps({t: [0]}), startingOffsets=start, failOnDataLoss="false")
    assert sorted(r.offset for r in df.collect()) == list(range(10, 20))
    # "earliest" is simply the new log start
    assert _read(spark, bootstrap, subscribe=t).count() == 10
