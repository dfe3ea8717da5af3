"""``format("kafkawire")`` against Spark's own ``format("kafka")`` (spark-sql-kafka-0-10), on Apache Kafka.

Both read the same topic with the same options: the rows, the schema and, for bad options, the text of the
error must be the same. Spark's message is the reference: its first line must appear in kafkawire's error
(kafkawire's arrives wrapped in PySpark's ``PYTHON_DATA_SOURCE_ERROR`` with a Python traceback).
"""

from __future__ import annotations

import json
import time

import pytest
from spark_helpers import Produced, create_topic, produce, unique_topic

pytestmark = [pytest.mark.broker, pytest.mark.slow]

BASE_TS = (int(time.time()) - 600) * 1000
PARTITIONS = 3


@pytest.fixture(scope="module")
def topic(kafka_broker) -> Produced:
    """3 partitions; null, empty and set keys and values; headers absent, single, duplicated, null-valued."""
    name = unique_topic("parity")
    create_topic(kafka_broker.bootstrap, name, PARTITIONS)
    rows = []
    for i in range(300):
        key = None if i % 4 == 0 else (b"" if i % 9 == 0 else b"key-%d" % i)
        value = None if i % 10 == 7 else (b"" if i % 13 == 0 else b"value-%d-" % i * (1 + i % 5))
        headers: list[tuple[str, bytes | None]] = []
        if i % 3 == 1:
            headers = [("trace", b"%d" % i)]
        elif i % 3 == 2:
            headers = [("dup", b"a"), ("dup", None), ("\u00e9", b"")]
        rows.append((i % PARTITIONS, key, value, BASE_TS + i, headers))
    produced = Produced(name, PARTITIONS)
    produce(kafka_broker.bootstrap, name, rows, produced)
    return produced


def _load(spark, fmt: str, bootstrap: str | None, **options: str):
    reader = spark.read.format(fmt)
    if bootstrap is not None:
        reader = reader.option("kafka.bootstrap.servers", bootstrap)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


def _both(spark, bootstrap: str, **options: str):
    """(Spark's rows, kafkawire's rows, Spark's schema, kafkawire's schema), rows in (partition, offset) order."""
    out = []
    for fmt in ("kafka", "kafkawire"):
        df = _load(spark, fmt, bootstrap, **options)
        out.append((sorted(df.collect(), key=lambda r: (r.partition, r.offset)), df.schema))
    (a_rows, a_schema), (b_rows, b_schema) = out
    return a_rows, b_rows, a_schema, b_schema


@pytest.mark.parametrize("include_headers", ["true", "false"])
def test_same_rows_and_schema_whole_topic(spark, kafka_broker, topic, include_headers):
    a, b, sa, sb = _both(spark, kafka_broker.bootstrap, subscribe=topic.topic, includeHeaders=include_headers)
    assert sa == sb
    assert ("headers" in sa.fieldNames()) == (include_headers == "true")
    assert len(a) == len(topic.records) == 300
    assert a == b
    # and both are what was written (so equal rows are not equally wrong)
    for r in b:
        key, value, ts, headers = topic.records[(r.partition, r.offset)]
        assert (r.key, r.value, r.topic) == (key, value, topic.topic)
        if include_headers == "true":
            assert (None if not headers else [(h.key, h.value) for h in r.headers]) == (headers or None)


def test_same_rows_with_offset_bounds_json(spark, kafka_broker, topic):
    t = topic.topic
    start = json.dumps({t: {"0": 10, "1": -2, "2": 95}})
    end = json.dumps({t: {"0": 40, "1": 7, "2": -1}})
    a, b, sa, sb = _both(
        spark,
        kafka_broker.bootstrap,
        assign=json.dumps({t: [0, 1, 2]}),
        startingOffsets=start,
        endingOffsets=end,
        includeHeaders="true",
    )
    assert sa == sb
    assert [(r.partition, r.offset) for r in a] == (
        [(0, o) for o in range(10, 40)] + [(1, o) for o in range(7)] + [(2, o) for o in range(95, 100)]
    )
    assert a == b


def test_unknown_partition_in_assign_is_left_out_by_both(spark, kafka_broker, topic):
    # Spark's AssignStrategy keeps the assigned partitions that exist: partition 7 is not an error.
    t = topic.topic
    a, b, sa, sb = _both(spark, kafka_broker.bootstrap, assign=json.dumps({t: [1, 7]}))
    assert sa == sb
    assert {r.partition for r in a} == {1} and len(a) == 100
    assert a == b


def _spark_first_line(exc: BaseException) -> str:
    from py4j.protocol import Py4JJavaError

    text = exc.java_exception.getMessage() if isinstance(exc, Py4JJavaError) else str(exc)
    return text.strip().splitlines()[0]


BAD_BATCH_OPTIONS = {
    "no bootstrap servers": {"subscribe": "x"},
    "subscribe and assign": {"subscribe": "x", "assign": '{"x":[0]}'},
    "no strategy": {},
    "bad startingOffsets JSON": {"assign": '{"x":[0]}', "startingOffsets": "{bad"},
    "bad endingOffsets JSON": {"assign": '{"x":[0]}', "endingOffsets": '{"x":{"0":"late"}}'},
    "assign not an object": {"assign": "[0]"},
    "latest start in batch": {"subscribe": "x", "startingOffsets": "latest"},
    "earliest end in batch": {"subscribe": "x", "endingOffsets": "earliest"},
    "negative minPartitions": {"subscribe": "x", "minPartitions": "-1"},
    "unsupported kafka option": {"subscribe": "x", "kafka.auto.offset.reset": "earliest"},
    "empty subscribe": {"subscribe": ""},
}


@pytest.mark.parametrize("case", sorted(BAD_BATCH_OPTIONS))
def test_same_error_text_for_bad_batch_options(spark, kafka_broker, case):
    options = dict(BAD_BATCH_OPTIONS[case])
    bootstrap = None if case == "no bootstrap servers" else kafka_broker.bootstrap
    errors = {}
    for fmt in ("kafka", "kafkawire"):
        try:
            _load(spark, fmt, bootstrap, **options).collect()
        except Exception as e:  # noqa: BLE001
            errors[fmt] = e
    assert set(errors) == {"kafka", "kafkawire"}, f"only {sorted(errors)} failed"
    want = _spark_first_line(errors["kafka"])
    assert want in str(errors["kafkawire"])


def test_same_error_text_for_start_offsets_that_do_not_match_the_assignment(spark, kafka_broker, topic):
    t = topic.topic
    errors = {}
    for fmt in ("kafka", "kafkawire"):
        try:
            _load(spark, fmt, kafka_broker.bootstrap, subscribe=t, startingOffsets=json.dumps({t: {"0": 0}})).collect()
        except Exception as e:  # noqa: BLE001
            errors[fmt] = e
    assert set(errors) == {"kafka", "kafkawire"}
    # Spark's message spans three lines; kafkawire's has the same lines
    spark_text = errors["kafka"].java_exception.getMessage()
    for line in spark_text.strip().splitlines():
        assert line.strip() in str(errors["kafkawire"])


def test_same_error_text_for_ending_offsets_in_streaming(spark, kafka_broker, topic, tmp_path):
    errors = {}
    for fmt in ("kafka", "kafkawire"):
        try:
            q = (
                spark.readStream.format(fmt)
                .option("kafka.bootstrap.servers", kafka_broker.bootstrap)
                .option("subscribe", topic.topic)
                .option("endingOffsets", "latest")
                .load()
                .writeStream.format("noop")
                .option("checkpointLocation", str(tmp_path / fmt))
                .start()
            )
            q.awaitTermination(120)
            errors[fmt] = q.exception()  # kafkawire's source is built once the query runs
        except Exception as e:  # noqa: BLE001
            errors[fmt] = e
    assert errors["kafka"] is not None and errors["kafkawire"] is not None
    assert _spark_first_line(errors["kafka"]) == "ending offset not valid in streaming queries"
    assert _spark_first_line(errors["kafka"]) in str(errors["kafkawire"])
