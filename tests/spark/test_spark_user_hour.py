"""A user's second hour with ``format("kafkawire")`` (issue 25), in real PySpark against Apache Kafka:
misspelt options answered with a suggestion, property warnings once per query, driver-side calls bounded
by ``kafka.default.api.timeout.ms`` with the cause on the first line, an assigned topic that is missing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import kafkawire
from kafkawire.client import Client
from kafkawire.testing import free_port

pytestmark = pytest.mark.broker

ROOT = Path(kafkawire.__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def filled(kafka_broker: object) -> tuple[str, str]:
    """A 4-partition topic of 400 records on Apache Kafka: (bootstrap, topic)."""
    bootstrap = kafka_broker.bootstrap  # type: ignore[attr-defined]
    topic = f"user-hour-{os.getpid()}"
    with Client(bootstrap) as c:
        c.create_topics({topic: 4})
        for p in range(4):
            c.produce(topic, [b"%d-%d" % (p, i) for i in range(100)], partition=p)
    return bootstrap, topic


def _first_line(e: BaseException) -> str:
    return str(e).strip().splitlines()[0]


def test_a_misspelt_option_gets_a_suggestion(spark, filled) -> None:  # type: ignore[no-untyped-def]
    bootstrap, topic = filled
    def reader():  # type: ignore[no-untyped-def]  # a DataFrameReader keeps its options: a fresh one each time
        return spark.read.format("kafkawire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)

    with pytest.raises(Exception) as info:
        reader().option("startingOffset", "latest").load().count()
    # Spark hands the options over with lower-cased names; the suggestion has the documented spelling.
    assert "Unknown option 'startingoffset': did you mean 'startingOffsets'?" in _first_line(info.value)
    with pytest.raises(Exception) as info:
        reader().option("kafka.securty.protocol", "SSL").load().count()
    assert "did you mean 'security.protocol'?" in _first_line(info.value), str(info.value)
    # Spelled right, the same read works.
    assert reader().option("startingOffsets", "earliest").load().count() == 400


def test_unreachable_bootstrap_fails_within_the_api_timeout_with_the_cause_first(spark) -> None:  # type: ignore[no-untyped-def]
    dead = f"127.0.0.1:{free_port()}"
    began = time.monotonic()
    with pytest.raises(Exception) as info:
        (spark.read.format("kafkawire").option("kafka.bootstrap.servers", dead).option("subscribe", "t")
         .option("kafka.default.api.timeout.ms", "3000").load().count())
    took = time.monotonic() - began
    first = _first_line(info.value)
    assert "Connection refused" in first and dead in first, str(info.value)[:2000]
    assert "kafka.default.api.timeout.ms = 3000 ms" in first
    assert took < 90, took  # the client's own two-minute budget is what it used to wait for


def test_assign_of_a_missing_topic_says_so(spark, filled) -> None:  # type: ignore[no-untyped-def]
    bootstrap, topic = filled
    with pytest.raises(Exception) as info:
        (spark.read.format("kafkawire").option("kafka.bootstrap.servers", bootstrap)
         .option("assign", '{"nosuch-topic":[0]}').load().count())
    assert "Option 'assign' names topic 'nosuch-topic', which the cluster" in _first_line(info.value)
    # An existing topic assigned reads as before.
    df = (spark.read.format("kafkawire").option("kafka.bootstrap.servers", bootstrap)
          .option("assign", f'{{"{topic}":[0,1]}}').load())
    assert df.count() == 200


_DRIVER = textwrap.dedent(
    """
    import sys
    from kafkawire.spark import session

    bootstrap, topic = sys.argv[1], sys.argv[2]
    spark = session("local[2]", config={"spark.ui.showConsoleProgress": "false"})
    df = (spark.read.format("kafkawire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
          .option("kafka.max.poll.records", "5").option("minPartitions", "8").load())
    print("ROWS", df.count(), flush=True)
    spark.stop()
    """
)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_an_unused_property_is_warned_once_per_query_not_per_task(filled, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bootstrap, topic = filled
    script = tmp_path / "driver.py"
    script.write_text(_DRIVER)
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env.update(PYTHONPATH=str(ROOT), SPARK_LOCAL_IP="127.0.0.1")
    proc = subprocess.run([sys.executable, str(script), bootstrap, topic], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=580, check=False)
    assert proc.returncode == 0 and "ROWS 400" in proc.stdout, proc.stdout + proc.stderr[-4000:]
    # 8 tasks read the topic; the warning comes once, from the driver.
    assert proc.stderr.count("'kafka.max.poll.records' was supplied but isn't used") == 1, proc.stderr[-6000:]
    # PySpark's own start-up warning about pandas 3 (kafkawire does not use pandas) is not printed.
    assert "FutureWarning" not in proc.stderr, proc.stderr[-6000:]


def test_stream_progress_offsets_behind_latest_as_sparks_source_reports_them(spark, filled) -> None:  # type: ignore[no-untyped-def]
    """PySpark's Python streaming API cannot report source metrics (``metrics`` stays ``{}``);
    :func:`kafkawire.spark.progress.offsets_behind_latest` computes Spark's from the progress, and gives
    what Spark's own ``format("kafka")`` reports for the same query."""
    from kafkawire.spark.progress import offsets_behind_latest

    bootstrap, topic = filled
    first: dict[str, dict] = {}
    for fmt in ("kafka", "kafkawire"):
        df = (spark.readStream.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
              .option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", "100").load())
        q = df.writeStream.format("memory").queryName(f"behind_{fmt}").trigger(availableNow=True).start()
        try:
            assert q.awaitTermination(300)
            first[fmt] = q.recentProgress[0]["sources"][0]
        finally:
            q.stop()
    spark_metrics = first["kafka"]["metrics"]
    assert spark_metrics["maxOffsetsBehindLatest"] != "0", first["kafka"]  # the first batch read 100 of 400
    assert first["kafkawire"]["metrics"] == {}  # what PySpark 4.2 allows a Python source
    assert offsets_behind_latest(first["kafkawire"]) == spark_metrics, (first["kafkawire"], first["kafka"])
