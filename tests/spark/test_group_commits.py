"""``kafka.group.id`` on a streaming read: Kafka's own ``kafka-consumer-groups`` tool (its
``ConsumerGroupCommand`` class, run from the test broker's jars) sees the query's position and lag
(SPARK-27549; issue 22). Monitoring only: the checkpoint stays the source of truth."""

from __future__ import annotations

import time

import pytest
from admin.kafka_tools import GROUP_COMMAND, parse_table, run_tool
from spark_helpers import Produced, create_topic, produce, unique_topic

pytestmark = [pytest.mark.broker, pytest.mark.slow]

PARTITIONS = 3


def _rows(start: int, count: int) -> list:
    now = int(time.time() * 1000)
    return [(i % PARTITIONS, b"k%d" % i, b"v%d" % i, now, []) for i in range(start, start + count)]


def _run_available_now(spark, bootstrap: str, topic: str, group: str, checkpoint: str, out: str) -> None:
    q = (
        spark.readStream.format("kafkawire")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "40")  # several micro-batches
        .option("kafka.group.id", group)
        .load()
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


def _lag(bootstrap: str, group: str) -> dict[int, tuple[int, int]]:
    """Per partition (CURRENT-OFFSET, LAG) as ``kafka-consumer-groups --describe`` prints them."""
    out = run_tool(GROUP_COMMAND, "--bootstrap-server", bootstrap, "--describe", "--group", group)
    return {int(r["PARTITION"]): (int(r["CURRENT-OFFSET"]), int(r["LAG"])) for r in parse_table(out)}


def test_kafka_group_id_shows_the_query_lag_to_kafka_consumer_groups(spark, kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic = unique_topic("lag")
    group = f"spark-{topic}"
    create_topic(bootstrap, topic, PARTITIONS)
    produced = Produced(topic, PARTITIONS)
    produce(bootstrap, topic, _rows(0, 90), produced)
    checkpoint, out = str(tmp_path / "checkpoint"), str(tmp_path / "out")

    _run_available_now(spark, bootstrap, topic, group, checkpoint, out)
    assert spark.read.parquet(out).count() == 90
    # The query finished: its group is at the end of every partition, lag 0.
    assert _lag(bootstrap, group) == {p: (30, 0) for p in range(PARTITIONS)}

    # Records arrive while the query is down: the group shows it behind by exactly those.
    produce(bootstrap, topic, _rows(90, 30), produced)
    assert _lag(bootstrap, group) == {p: (30, 10) for p in range(PARTITIONS)}

    # The query catches up (from its checkpoint: nothing read twice) and the lag is 0 again.
    _run_available_now(spark, bootstrap, topic, group, checkpoint, out)
    pairs = [(r.partition, r.offset) for r in spark.read.parquet(out).collect()]
    assert len(pairs) == len(set(pairs)) == 120
    assert _lag(bootstrap, group) == {p: (40, 0) for p in range(PARTITIONS)}
