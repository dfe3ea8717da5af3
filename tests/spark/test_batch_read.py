"""Batch reads through ``spark.read.format("kafkawire")`` against Apache Kafka and noida-db, with real PySpark."""

from __future__ import annotations

import datetime as dt
import json
import time

import pytest
from spark_helpers import Produced, create_topic, produce, unique_topic

pytestmark = [pytest.mark.broker, pytest.mark.slow]

# Recent timestamps: brokers apply time retention (7 days by default) to the records' own timestamps, and
# noida-db really deletes older records a few seconds after they are written.
BASE_TS = (int(time.time()) - 3600) * 1000


def _ts(ms: int) -> dt.datetime:
    # The session time zone is UTC (kafkawire.spark.session), so Spark hands back naive UTC datetimes.
    return dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ms)


@pytest.fixture(scope="module")
def four(bootstrap: str) -> Produced:
    """A 4-partition topic with null/empty keys and values, headers (none, duplicates, null values)."""
    topic = unique_topic("four")
    create_topic(bootstrap, topic, 4)
    rows = []
    for i in range(200):
        key = None if i % 5 == 0 else (b"" if i % 11 == 0 else b"k%d" % i)
        value = b"" if i % 17 == 0 else b"value-%d" % i * (1 + i % 3)
        if i % 13 == 1 and key is not None:  # kafka-python refuses a record with neither key nor value
            value = None
        headers: list[tuple[str, bytes | None]] = []
        if i % 3 == 0:
            headers = [("h", b"%d" % i), ("h", None), ("\u00fc", b"")]
        elif i % 3 == 1:
            headers = [("only", b"x")]
        rows.append((i % 4, key, value, BASE_TS + 1000 * i, headers))
    produced = Produced(topic, 4)
    produce(bootstrap, topic, rows, produced)
    return produced


def _read(spark, bootstrap: str, **options: str):
    reader = spark.read.format("kafkawire").option("kafka.bootstrap.servers", bootstrap)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


def test_schema_matches_spark_kafka_source(spark, bootstrap, four):
    df = _read(spark, bootstrap, subscribe=four.topic)
    assert df.schema.simpleString() == (
        "struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,timestamp:timestamp,timestampType:int>"
    )
    df = _read(spark, bootstrap, subscribe=four.topic, includeHeaders="true")
    assert df.schema.simpleString().endswith(",headers:array<struct<key:string,value:binary>>>")


def test_read_everything_equals_what_was_produced(spark, bootstrap, four):
    df = _read(spark, bootstrap, subscribe=four.topic, includeHeaders="true")
    rows = df.collect()
    assert len(rows) == len(four.records) == 200
    got = {(r.partition, r.offset): r for r in rows}
    assert set(got) == set(four.records)
    for (part, off), (key, value, ts, headers) in four.records.items():
        r = got[(part, off)]
        assert r.topic == four.topic
        assert (r.key, r.value) == (key, value), (part, off)
        assert r.timestamp == _ts(ts) and r.timestampType == 0
        if headers:
            assert [(h.key, h.value) for h in r.headers] == headers
        else:
            assert r.headers is None  # null, not an empty array (Spark's convention)


def test_aggregation_and_no_headers_column(spark, bootstrap, four):
    df = _read(spark, bootstrap, subscribe=four.topic)
    assert "headers" not in df.columns
    counts = {r["partition"]: r["count"] for r in df.groupBy("partition").count().collect()}
    assert counts == {0: 50, 1: 50, 2: 50, 3: 50}
    nulls = df.where("key IS NULL").count()
    assert nulls == sum(1 for k, *_ in four.records.values() if k is None)


def test_offset_bounds(spark, bootstrap, four):
    t = four.topic
    start = json.dumps({t: {"0": 10, "1": -2, "2": 49, "3": -2}})
    end = json.dumps({t: {"0": 20, "1": 5, "2": -1, "3": 0}})
    df = _read(spark, bootstrap, assign=json.dumps({t: [0, 1, 2, 3]}), startingOffsets=start, endingOffsets=end)
    got = sorted((r.partition, r.offset) for r in df.select("partition", "offset").collect())
    want = [(0, o) for o in range(10, 20)] + [(1, o) for o in range(0, 5)] + [(2, 49)]
    assert got == want
    # assign only some partitions; ending "latest" by default
    df = _read(spark, bootstrap, assign=json.dumps({t: [3]}), startingOffsets=json.dumps({t: {"3": 45}}))
    assert sorted(r.offset for r in df.collect()) == [45, 46, 47, 48, 49]


def test_timestamp_bounds(spark, bootstrap, four):
    t = four.topic
    # record i has timestamp BASE_TS + 1000*i and sits in partition i % 4 at offset i // 4
    df = _read(
        spark,
        bootstrap,
        subscribe=t,
        startingTimestamp=str(BASE_TS + 1000 * 100),
        endingTimestamp=str(BASE_TS + 1000 * 120),
    )
    got = sorted((r.partition, r.offset) for r in df.collect())
    assert got == sorted((i % 4, i // 4) for i in range(100, 120))
    by_ts = json.dumps({t: {str(p): BASE_TS + 1000 * (196 + p) for p in range(4)}})
    df = _read(spark, bootstrap, subscribe=t, startingOffsetsByTimestamp=by_ts)
    assert sorted((r.partition, r.offset) for r in df.collect()) == [(p, 49) for p in range(4)]


def test_start_timestamp_without_match(spark, bootstrap, four):
    late = str(BASE_TS + 10_000_000)
    with pytest.raises(Exception, match="No offset matched from request of topic-partition"):
        _read(spark, bootstrap, subscribe=four.topic, startingTimestamp=late).collect()
    df = _read(
        spark, bootstrap, subscribe=four.topic, startingTimestamp=late, startingOffsetsByTimestampStrategy="latest"
    )
    assert df.count() == 0


def test_split_into_tasks(spark, bootstrap, four):
    df = _read(spark, bootstrap, subscribe=four.topic, minPartitions="10")
    # 4 partitions of 50 records: each gets round(50 / 200 * 10) = round(2.5) = 3 tasks (Spark rounds half up)
    assert df.rdd.getNumPartitions() == 12
    assert df.count() == 200
    df = _read(spark, bootstrap, subscribe=four.topic, maxRecordsPerPartition="7")
    assert df.rdd.getNumPartitions() == 4 * 8  # ceil(50 / 7) = 8 tasks per partition
    got = sorted((r.partition, r.offset) for r in df.select("partition", "offset").collect())
    assert got == sorted(four.records)


def test_subscribe_pattern_and_several_topics(spark, bootstrap, four):
    other = unique_topic("pat")
    create_topic(bootstrap, other, 1)
    produce(bootstrap, other, [(0, None, b"x", BASE_TS, [])])
    df = _read(spark, bootstrap, subscribe=f"{four.topic},{other}")
    assert {r.topic: r.c for r in df.groupBy("topic").agg({"*": "count"}).toDF("topic", "c").collect()} == {
        four.topic: 200,
        other: 1,
    }
    df = _read(spark, bootstrap, subscribePattern=other.replace("-", "[-]"))
    assert [r.value for r in df.collect()] == [b"x"]


def test_empty_range_reads_nothing(spark, bootstrap, topic_factory):
    t = topic_factory(2)
    df = _read(spark, bootstrap, subscribe=t, includeHeaders="true")
    assert df.count() == 0 and df.collect() == []


def test_response_size_limit_is_a_kafka_option(spark, bootstrap, four):
    """``kafka.receive.message.max.bytes`` reaches the executors' clients: noida answers a fetch with
    everything up to the log end whatever the fetch sizes say, so a small limit refuses the response
    (before reading its body) and the default reads the topic."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    df = _read(spark, bootstrap, subscribe=four.topic, **{"kafka.receive.message.max.bytes": "300"})
    with pytest.raises((PySparkException, Py4JJavaError)) as info:
        df.collect()
    assert "exceeds max_response_bytes=300" in str(info.value)
    roomy = {"kafka.receive.message.max.bytes": "10000000"}
    assert _read(spark, bootstrap, subscribe=four.topic, **roomy).count() == 200
