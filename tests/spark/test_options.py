"""Option parsing and validation of the kafkawire Spark source/sink (no Spark, no broker).

Expected messages are Spark's own (KafkaSourceProvider / JsonUtils / kafka-error-conditions.json).
"""

from __future__ import annotations

import re

import pytest

from kafkawire.spark.errors import InvalidOptionError
from kafkawire.spark.options import OffsetSpec, parse_sink_options, parse_source_options

BOOT = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def batch(**opts: str):
    return parse_source_options({**BOOT, **opts}, streaming=False)


def stream(**opts: str):
    return parse_source_options({**BOOT, **opts}, streaming=True)


def raises(message: str):
    return pytest.raises(InvalidOptionError, match=re.escape(message))


def test_defaults_batch_and_stream():
    b = batch(subscribe="a, b,,")
    assert (b.strategy, b.strategy_value) == ("subscribe", ("a", "b"))
    assert b.starting == OffsetSpec("earliest") and b.ending == OffsetSpec("latest")
    assert b.fail_on_data_loss and not b.include_headers
    assert b.bootstrap_servers == "127.0.0.1:9092"
    s = stream(subscribePattern="t.*")
    assert s.starting == OffsetSpec("latest") and s.ending is None
    assert s.matches_topic("t1") and not s.matches_topic("xt1")  # whole-name match, like Pattern.matches


def test_names_are_case_insensitive_values_are_not():
    o = parse_source_options(
        {"KAFKA.BOOTSTRAP.SERVERS": "h:1", "SubScribe": "Topic", "INCLUDEHEADERS": "TRUE", "failOnDataLoss": "False"},
        streaming=False,
    )
    assert o.strategy_value == ("Topic",) and o.include_headers and not o.fail_on_data_loss


def test_strategy_count():
    keys = "subscribe, subscribepattern, assign"
    with raises(f"One of the following options must be specified for Kafka source: {keys}. See the docs"):
        batch()
    with raises(f"Only one of the following options can be specified for Kafka source: {keys}."):
        batch(subscribe="a", assign='{"a":[0]}')


def test_strategy_values():
    with raises("No topicpartitions to assign as specified value for option 'assign' is 'a'"):
        batch(assign="a")
    with raises("No topics to subscribe to as specified value for option 'subscribe' is ' , '"):
        batch(subscribe=" , ")
    with raises("Pattern to subscribe is empty as specified value for option 'subscribePattern' is ' '"):
        batch(subscribePattern=" ")
    with raises('Expected e.g. {"topicA":[0,1],"topicB":[0,1]}, got {"a": 0}'):
        batch(assign='{"a": 0}')
    o = batch(assign='{"a":[1,0],"b":[2]}')
    assert o.strategy_value == (("a", 1), ("a", 0), ("b", 2))


def test_bootstrap_servers_required():
    with raises("Option 'kafka.bootstrap.servers' must be specified for configuring Kafka consumer"):
        parse_source_options({"subscribe": "a"}, streaming=False)
    with raises("Option 'kafka.bootstrap.servers' must be specified for configuring Kafka producer"):
        parse_sink_options({"topic": "a"})


@pytest.mark.parametrize(
    "key,message",
    [
        ("kafka.auto.offset.reset", "Kafka option 'auto.offset.reset' is not supported."),
        ("kafka.key.deserializer", "Kafka option 'key.deserializer' is not supported as keys are deserialized"),
        ("kafka.value.deserializer", "Kafka option 'value.deserializer' is not supported as values are"),
        ("kafka.enable.auto.commit", "Kafka option 'enable.auto.commit' is not supported"),
        ("kafka.interceptor.classes", "Kafka option 'interceptor.classes' is not supported"),
    ],
)
def test_unsupported_kafka_options(key: str, message: str):
    with raises(message):
        batch(subscribe="a", **{key: "x"})


def test_partitioning_options():
    with raises("minPartitions must be positive"):
        batch(subscribe="a", minPartitions="0")
    with raises("maxrecordsperpartition must be positive"):
        batch(subscribe="a", maxRecordsPerPartition="-3")
    with raises('For input string: "many"'):
        batch(subscribe="a", minPartitions="many")
    o = batch(subscribe="a", minPartitions="8", maxRecordsPerPartition="1000")
    assert (o.min_partitions, o.max_records_per_partition) == (8, 1000)


def test_trigger_options():
    with raises("The value of minOffsetPerTrigger(10) is higher than the maxOffsetsPerTrigger(5)."):
        stream(subscribe="a", minOffsetsPerTrigger="10", maxOffsetsPerTrigger="5")
    o = stream(subscribe="a", maxOffsetsPerTrigger="5", maxTriggerDelay="2s")
    assert o.max_offsets_per_trigger == 5 and o.max_trigger_delay_ms == 2000


def test_batch_offset_rules():
    with raises("starting offset can't be latest for batch queries on Kafka"):
        batch(subscribe="a", startingOffsets="LATEST")
    with raises("startingOffsets for a-0 can't be latest for batch queries on Kafka"):
        batch(subscribe="a", startingOffsets='{"a":{"0":-1}}', endingOffsets='{"a":{"0":-1}}')
    with raises("ending offset can't be earliest for batch queries on Kafka"):
        batch(subscribe="a", endingOffsets="earliest")
    with raises("ending offset for a-1 can't be earliest for batch queries on Kafka"):
        batch(subscribe="a", endingOffsets='{"a":{"1":-2}}')
    with raises('Expected e.g. {"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}, got {"a":[0]}'):
        batch(subscribe="a", startingOffsets='{"a":[0]}')


def test_start_and_end_must_agree():
    with raises(
        "[MISMATCHED_TOPIC_PARTITIONS_BETWEEN_START_OFFSET_AND_END_OFFSET] The specified start offset and end offset "
        "should have the same topic-partitions. Topic-partitions for start offset: Set(a-0, a-1), "
        "topic-partitions for end offset: Set(a-0)."
    ):
        batch(assign='{"a":[0,1]}', startingOffsets='{"a":{"0":1,"1":2}}', endingOffsets='{"a":{"0":5}}')
    with raises(
        "[UNRESOLVED_START_OFFSET_GREATER_THAN_END_OFFSET] The specified start offset 9 is greater than the end "
        "offset 5 for topic a partition 0."
    ):
        batch(assign='{"a":[0]}', startingOffsets='{"a":{"0":9}}', endingOffsets='{"a":{"0":5}}')
    # -1/-2 are not compared with real offsets
    batch(assign='{"a":[0]}', startingOffsets='{"a":{"0":-2}}', endingOffsets='{"a":{"0":5}}')


def test_timestamp_options_take_precedence():
    o = batch(subscribe="a", startingOffsets="earliest", startingTimestamp=" 1700000000000 ")
    assert o.starting == OffsetSpec("timestamp", timestamp=1700000000000)
    o = batch(subscribe="a", startingOffsetsByTimestamp='{"a":{"0":5}}', startingOffsets="earliest")
    assert o.starting.kind == "timestamps" and o.starting.per_partition == {("a", 0): 5}
    o = batch(subscribe="a", endingTimestamp="7", startingOffsetsByTimestampStrategy="LATEST")
    assert o.ending == OffsetSpec("timestamp", timestamp=7, no_match_latest=True)
    with raises("Expected a single long value, got soon"):
        batch(subscribe="a", startingTimestamp="soon")
    with raises('Expected e.g. {"topicA": {"0": 123456789, "1": 123456789},'):
        batch(subscribe="a", endingOffsetsByTimestamp="[]")


def test_streaming_rejects_ending_options():
    with raises("ending offset not valid in streaming queries"):
        stream(subscribe="a", endingOffsets="latest")
    with raises("ending timestamp not valid in streaming queries"):
        stream(subscribe="a", endingOffsetsByTimestamp='{"a":{"0":1}}')
    # "latest" is a fine start for a stream
    assert stream(subscribe="a", startingOffsets="latest").starting == OffsetSpec("latest")


def test_kafka_params_are_passed_without_prefix():
    o = batch(subscribe="a", **{"kafka.client.id": "me", "kafka.Fetch.Max.Wait.Ms": "10"})
    assert o.kafka_params == {"bootstrap.servers": "127.0.0.1:9092", "client.id": "me", "fetch.max.wait.ms": "10"}


def test_sink_options():
    o = parse_sink_options({**BOOT, "Topic": " out ", "includeHeaders": "true", "kafka.acks": "1"})
    assert o.topic == "out" and o.include_headers and o.kafka_params["acks"] == "1"
    assert parse_sink_options(BOOT).topic is None
    # unset: a headers column is written when present (Spark); "false" drops it
    assert parse_sink_options(BOOT).include_headers is None
    assert parse_sink_options({**BOOT, "includeHeaders": "false"}).include_headers is False
    with raises("Kafka option 'key.serializer' is not supported as keys are serialized with ByteArraySerializer."):
        parse_sink_options({**BOOT, "kafka.key.serializer": "x"})
    with raises("Kafka option 'value.serializer' is not supported as value are serialized with ByteArraySerializer."):
        parse_sink_options({**BOOT, "kafka.value.serializer": "x"})
    with raises('For input string: "yes"'):
        parse_sink_options({**BOOT, "includeHeaders": "yes"})
