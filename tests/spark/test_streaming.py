"""Structured Streaming through ``readStream.format("kafkawire")`` and ``writeStream.format("kafkawire")``."""

from __future__ import annotations

import json
import re
import time

import pytest
from spark_helpers import Produced, consume_all, create_topic, delete_records, produce, unique_topic

pytestmark = [pytest.mark.broker, pytest.mark.slow]


def _rows(partitions: int, start: int, count: int) -> list:
    now = int(time.time() * 1000)
    return [(i % partitions, b"k%d" % i, b"v%d" % i, now, []) for i in range(start, start + count)]


def _run_available_now(spark, bootstrap, topic, checkpoint, out, **options):
    reader = (
        spark.readStream.format("kafkawire")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
    )
    for k, v in options.items():
        reader = reader.option(k, v)
    q = (
        reader.load()
        .selectExpr("CAST(value AS STRING) AS value", "partition", "offset")
        .writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination(240)
    assert not q.isActive
    assert q.exception() is None, q.exception()
    return q


def test_restart_from_checkpoint_reads_every_record_once(spark, bootstrap, tmp_path):
    topic = unique_topic("stream")
    create_topic(bootstrap, topic, 3)
    produced = Produced(topic, 3)
    produce(bootstrap, topic, _rows(3, 0, 90), produced)
    checkpoint, out = str(tmp_path / "checkpoint"), str(tmp_path / "out")

    q1 = _run_available_now(spark, bootstrap, topic, checkpoint, out, maxOffsetsPerTrigger="40")
    # maxOffsetsPerTrigger is honoured under availableNow: 90 records in batches of at most 40
    sizes = [p["numInputRows"] for p in q1.recentProgress if p["numInputRows"]]
    assert sum(sizes) == 90 and max(sizes) <= 40 and len(sizes) >= 3
    assert spark.read.parquet(out).count() == 90

    # more data arrives while the query is down; the restarted query resumes right after the checkpoint
    produce(bootstrap, topic, _rows(3, 90, 30), produced)
    _run_available_now(spark, bootstrap, topic, checkpoint, out, maxOffsetsPerTrigger="40")
    got = spark.read.parquet(out).collect()
    pairs = [(r.partition, r.offset) for r in got]
    assert len(pairs) == len(set(pairs)) == 120  # nothing twice
    assert set(pairs) == set(produced.records)  # nothing missed
    assert {r.value for r in got} == {f"v{i}" for i in range(120)}

    # a third run with nothing new reads nothing
    _run_available_now(spark, bootstrap, topic, checkpoint, out)
    assert spark.read.parquet(out).count() == 120


def test_starting_offsets_json_and_new_partitions_not_in_start(spark, bootstrap, tmp_path):
    topic = unique_topic("stream-start")
    create_topic(bootstrap, topic, 2)
    produce(bootstrap, topic, _rows(2, 0, 20))
    out = str(tmp_path / "out")
    q = (
        spark.readStream.format("kafkawire")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("assign", json.dumps({topic: [0, 1]}))
        .option("startingOffsets", json.dumps({topic: {"0": 7, "1": -1}}))
        .load()
        .select("partition", "offset")
        .writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination(240)
    assert q.exception() is None
    got = sorted((r.partition, r.offset) for r in spark.read.parquet(out).collect())
    assert got == [(0, o) for o in range(7, 10)]  # partition 1 started at latest: nothing


def test_streaming_write_round_trip(spark, bootstrap, tmp_path):
    src, dst = unique_topic("src"), unique_topic("dst")
    create_topic(bootstrap, src, 2)
    create_topic(bootstrap, dst, 3)
    produce(bootstrap, src, _rows(2, 0, 50))
    q = (
        spark.readStream.format("kafkawire")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", src)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("key", "upper(CAST(value AS STRING)) AS value", "CAST(partition + 1 AS INT) AS partition")
        .writeStream.format("kafkawire")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", dst)
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination(240)
    assert q.exception() is None
    got = consume_all(bootstrap, dst)
    assert sorted(r.value for r in got) == sorted(b"V%d" % i for i in range(50))
    # the partition column was honoured: source partition p went to destination partition p + 1
    assert {(r.partition, int(r.key[1:]) % 2 + 1) for r in got} == {(1, 1), (2, 2)}


def test_fail_on_data_loss_when_resuming(spark, bootstrap, tmp_path):
    topic = unique_topic("stream-loss")
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, _rows(1, 0, 20))
    checkpoint, out = str(tmp_path / "checkpoint"), str(tmp_path / "out")
    _run_available_now(spark, bootstrap, topic, checkpoint, out)
    assert spark.read.parquet(out).count() == 20
    # while the query is down, 10 more records arrive and offsets < 25 are deleted: 20..24 are lost
    produce(bootstrap, topic, _rows(1, 20, 10))
    delete_records(bootstrap, topic, 0, 25)
    with pytest.raises(Exception, match=re.escape("[KAFKA_DATA_LOSS]")):
        _run_available_now(spark, bootstrap, topic, checkpoint, out)
    _run_available_now(spark, bootstrap, topic, checkpoint, out, failOnDataLoss="false")
    assert sorted(r.offset for r in spark.read.parquet(out).collect()) == list(range(20)) + list(range(25, 30))
