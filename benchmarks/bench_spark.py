"""Spark benchmark: ``format("kafkawire")`` against Spark's own ``format("kafka")`` on Apache Kafka, reads
(the default) and batch writes (``KW_BENCH_MODE=write``).

Run (starts its own Apache Kafka broker, resolves Spark's spark-sql-kafka jar, a local[2] Spark session)::

    .venv/bin/python benchmarks/bench_spark.py                       # reads, KW_BENCH_RECORDS (default 1000000)
    KW_BENCH_MODE=write .venv/bin/python benchmarks/bench_spark.py   # writes

Reads. Every contender reads the same topic (4 partitions by default; N records: 10-byte keys, 100-byte values)
and Spark aggregates it (``groupBy(partition).agg(count, sum(length(value)))``):

* ``kafkawire``: Arrow batches built from kafkawire's columnar fetch (no Python object per record);
* ``spark kafka``: Spark's built-in source (``spark-sql-kafka-0-10`` at the pyspark version,
  :mod:`kafkawire.spark.kafka_jar`), the JVM's Kafka consumer, no Python on the read path;
* ``kafka-python source`` (only with ``KW_BENCH_KAFKA_PYTHON=1``): what one writes with the Python data
  source API and kafka-python in an afternoon: one Python tuple per record.

``KW_BENCH_ONLY=kafkawire`` runs one side only (no ratio, nothing saved). ``KW_BENCH_BROKER`` picks the
broker (default ``kafka``; ``noida`` for the runs recorded before Apache Kafka was available).
Rounds alternate between the contenders in a warm session (``KW_BENCH_ROUNDS``, default 3; a warm-up
round each first unless ``KW_BENCH_WARMUP=0``). ``KW_BENCH_PARTITIONS`` (default 4) sets the topic's
partitions. Reported per contender: wall time and CPU time of the whole process tree (this driver, the
JVM, the PySpark daemon and its Python workers, from ``/proc``; the broker is a separate tree and reported
apart), best and median of the rounds. The ratio is other / kafkawire. Results also go to
``benchmarks/.results/bench_spark.json``.

Writes (``KW_BENCH_MODE=write``). Every contender writes the same DataFrame of N rows to a new topic of
``KW_BENCH_PARTITIONS`` partitions: ``spark.range(N)`` in as many Spark partitions as the master has cores,
``key`` = ``"key%07d" % (id % 10M)`` (10 bytes) and ``value`` = the id left-padded to 100 bytes, both
binary and computed by Spark's own expressions, so generating the rows costs both sides the same. The
contenders, each with its own defaults (acks=all, idempotent, no compression on both sides):

* ``kafkawire``: ``df.write.format("kafkawire")`` (the client's defaults: batches up to 1 MB, 5
  requests in flight per broker);
* ``kafkawire exactlyOnce``: the same with ``exactlyOnce=true`` (one transaction per task, committed by
  the driver, :mod:`kafkawire.spark.transactions`);
* ``spark kafka``: ``df.write.format("kafka")``, Spark's sink and its Java ``KafkaProducer`` at that
  client's defaults (kafka-clients 3.9 with Spark 4.2: batch.size 16384, linger.ms 0, 5 requests in flight,
  acks=all with idempotence). ``KW_BENCH_SINK_OPTIONS="kafka.batch.size=262144,kafka.linger.ms=5"`` passes
  options to Spark's sink only (to try it tuned). Spark's sink has no exactly-once mode; it is the baseline
  for both kafkawire rows.

Rounds alternate as for reads; each writes a fresh topic, which is then checked to hold exactly N records
(the sum of its end offsets; for ``exactlyOnce`` the records a read_committed fetch returns, since the end
offsets also count the commit markers); the topics are deleted after the last round (Kafka removes their
files a minute after a deletion, which would land in a later contender's round). Results go to
``benchmarks/.results/bench_spark_write.json``.
``KW_BENCH_ONLY`` works as for reads (``KW_BENCH_ONLY="kafkawire exactlyOnce"``). ``KW_BENCH_FLOOR=1``
adds two sinks that write nothing, to show what the rows cost before any Kafka writer: Spark's ``noop``
(generating the rows) and ``arrow iterate only``, a Python Arrow writer that only iterates the batches
Spark hands it (generating the rows and handing them to Python, what every Python writer pays).

This file holds no pytest tests (pytest collects nothing from it).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.types import (
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

RECORDS = int(os.environ.get("KW_BENCH_RECORDS", "1000000"))
ROUNDS = int(os.environ.get("KW_BENCH_ROUNDS", "3"))
PARTITIONS = int(os.environ.get("KW_BENCH_PARTITIONS", "4"))
WARMUP = os.environ.get("KW_BENCH_WARMUP", "1") != "0"
BROKER = os.environ.get("KW_BENCH_BROKER", "kafka")
MODE = os.environ.get("KW_BENCH_MODE", "read")
VALUE_BYTES = 100
KEY_BYTES = 10

SCHEMA = StructType(
    [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
)


# ------------------------------------------------------------------------------ the baseline source


class KafkaPythonDataSource(DataSource):
    """Baseline: a straightforward Python data source on kafka-python (batch reads, earliest → latest)."""

    @classmethod
    def name(cls) -> str:
        return "kafkapython_baseline"

    def schema(self) -> StructType:
        return SCHEMA

    def reader(self, schema: StructType) -> DataSourceReader:
        return KafkaPythonReader(self.options["kafka.bootstrap.servers"], self.options["subscribe"])


class KafkaPythonReader(DataSourceReader):
    def __init__(self, bootstrap: str, topic: str) -> None:
        self.bootstrap = bootstrap
        self.topic = topic

    def partitions(self) -> list[InputPartition]:
        from kafka import KafkaConsumer, TopicPartition

        c = KafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False)
        try:
            tps = [TopicPartition(self.topic, p) for p in sorted(c.partitions_for_topic(self.topic))]
            start, end = c.beginning_offsets(tps), c.end_offsets(tps)
            return [InputPartition((tp.partition, start[tp], end[tp])) for tp in tps if end[tp] > start[tp]]
        finally:
            c.close()

    def read(self, partition: InputPartition) -> Iterator[tuple]:
        from kafka import KafkaConsumer, TopicPartition

        p, start, end = partition.value
        tp = TopicPartition(self.topic, p)
        c = KafkaConsumer(
            bootstrap_servers=self.bootstrap,
            enable_auto_commit=False,
            max_partition_fetch_bytes=8 * 1024 * 1024,
            fetch_max_bytes=64 * 1024 * 1024,
            max_poll_records=100_000,
        )
        try:
            c.assign([tp])
            c.seek(tp, start)
            epoch = dt.datetime(1970, 1, 1)
            offset = start
            while offset < end:
                for rec in c.poll(timeout_ms=1000).get(tp, []):
                    if rec.offset >= end:
                        break
                    offset = rec.offset + 1
                    yield (
                        rec.key,
                        rec.value,
                        rec.topic,
                        rec.partition,
                        rec.offset,
                        epoch + dt.timedelta(milliseconds=rec.timestamp),
                        rec.timestamp_type,
                    )
        finally:
            c.close()


# ------------------------------------------------------------------------------------- measurement


def _tree_cpu_seconds(root: int, exclude: tuple[int, ...] = ()) -> float:
    """utime + stime (+ reaped children) of ``root`` and all its descendants, from /proc, leaving out the
    subtrees of ``exclude`` (the broker: it is a child of this process but not part of the reader)."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry)
        stats[pid] = fields
        children.setdefault(int(fields[1]), []).append(pid)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        f = stats.get(pid)
        if f is not None:
            # after ")": state ppid ... utime(12) stime(13) cutime(14) cstime(15) (0-based from state)
            total += int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
        todo.extend(c for c in children.get(pid, []) if c not in exclude)
    return total / tick


def _process_cpu_seconds(pid: int) -> float:
    """utime + stime of one process, from /proc (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait_until_idle(pid: int | None, limit_s: float = 300.0) -> float:
    """Wait until the broker process uses < 5% of a core over 2 s (noida-db persists and indexes what was
    produced for minutes after acknowledging it, on the same 2 cores as the reads). Returns seconds waited."""
    t0 = time.monotonic()
    if pid is None:
        return 0.0
    while time.monotonic() - t0 < limit_s:
        before = _process_cpu_seconds(pid)
        time.sleep(2)
        if _process_cpu_seconds(pid) - before < 0.1:
            break
    return time.monotonic() - t0


def _produce(bootstrap: str, topic: str) -> None:
    from kafkawire import BinaryColumn
    from kafkawire.client import Client

    rng = np.random.default_rng(7)
    with Client(bootstrap) as client:
        client.create_topics([topic], num_partitions=PARTITIONS)
        chunk = 50_000
        for lo in range(0, RECORDS, chunk):
            n = min(chunk, RECORDS - lo)
            values = rng.integers(97, 123, size=n * VALUE_BYTES, dtype=np.uint8)
            offsets = np.arange(n + 1, dtype=np.int32) * VALUE_BYTES
            keys = np.frombuffer(b"".join(b"key%07d" % (i % 10_000_000) for i in range(lo, lo + n)), np.uint8)
            koffs = np.arange(n + 1, dtype=np.int32) * KEY_BYTES
            client.produce(topic, BinaryColumn(offsets, values), BinaryColumn(koffs, keys))


def _query(spark: Any, fmt: str, bootstrap: str, topic: str) -> list[tuple[int, int, int]]:
    from pyspark.sql import functions as F

    reader = spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
    if fmt == "kafkawire" and BROKER == "noida":
        # noida answers a fetch with everything up to the log end, whatever the fetch sizes say: at 10M
        # records that is ~300 MB per partition, over the client's default 256 MiB response limit.
        reader = reader.option("kafka.receive.message.max.bytes", str(2**31 - 1))
    df = reader.load()
    out = df.groupBy("partition").agg(F.count("*").alias("n"), F.sum(F.length("value")).alias("bytes")).collect()
    return sorted((r["partition"], r["n"], r["bytes"]) for r in out)


def _session(app_name: str = "kafkawire-bench", *, avro: bool = False) -> Any:
    """The benchmarks' warm ``local[2]`` session with Spark's Kafka jars (and spark-avro with ``avro``)."""
    from kafkawire.spark import session
    from kafkawire.spark.kafka_jar import spark_jars_config

    spark = session(
        "local[2]",
        app_name=app_name,
        config={
            "spark.sql.shuffle.partitions": "2",
            "spark.ui.showConsoleProgress": "false",
            "spark.driver.memory": os.environ.get("KW_BENCH_DRIVER_MEMORY", "1g"),
            **spark_jars_config(avro=avro),
        },
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _only(contenders: dict[str, Any]) -> dict[str, Any]:
    if os.environ.get("KW_BENCH_ONLY"):  # e.g. KW_BENCH_ONLY=kafkawire while tuning one side
        return {k: v for k, v in contenders.items() if k == os.environ["KW_BENCH_ONLY"]}
    return contenders


def _timed(broker: Any, run: Any, *args: Any) -> tuple[Any, float, float, float]:
    """``run(*args)``'s result, wall time, CPU time of this process tree (broker excluded) and the broker's CPU."""
    skip = (broker.pid,) if broker.pid else ()
    cpu0, wall0 = _tree_cpu_seconds(os.getpid(), skip), time.monotonic()
    broker0 = _tree_cpu_seconds(broker.pid) if broker.pid else 0.0
    out = run(*args)
    wall, cpu = time.monotonic() - wall0, _tree_cpu_seconds(os.getpid(), skip) - cpu0
    broker_cpu = (_tree_cpu_seconds(broker.pid) if broker.pid else 0.0) - broker0
    return out, wall, cpu, broker_cpu


def _report(results: dict[str, dict[str, list[float]]], what: str, out_name: str) -> None:
    """Print best and median per contender and the ratios other / kafkawire; save them as JSON."""
    import pyspark

    from kafkawire.spark.kafka_jar import SPARK_KAFKA_VERSION

    if len(results) < 2 or "kafkawire" not in results and "kafkawire exactlyOnce" not in results:
        for name, r in results.items():
            print(f"{name}: wall best {min(r['wall']):.2f} s, cpu best {min(r['cpu']):.2f} s")
        return
    summary: dict[str, Any] = {
        "mode": what,
        "records": RECORDS,
        "value_bytes": VALUE_BYTES,
        "partitions": PARTITIONS,
        "rounds": ROUNDS,
        "broker": BROKER,
        "pyspark": pyspark.__version__,
        "spark_sql_kafka": SPARK_KAFKA_VERSION,
        "load_average": os.getloadavg(),
    }
    print(
        f"\n{what}: {RECORDS} records x {VALUE_BYTES} B, {PARTITIONS} partitions, {BROKER}, "
        f"pyspark {pyspark.__version__}, best of {ROUNDS} rounds (median), load average {os.getloadavg()[0]:.2f}:"
    )
    for name, r in results.items():
        summary[name] = {k: {"best": min(v), "median": statistics.median(v), "all": v} for k, v in r.items()}
        print(
            f"  {name:22s} wall {min(r['wall']):6.2f} s ({statistics.median(r['wall']):.2f})  "
            f"cpu {min(r['cpu']):6.2f} s ({statistics.median(r['cpu']):.2f})  "
            f"broker cpu {statistics.median(r['broker_cpu']):.2f} s  "
            f"{RECORDS / min(r['wall']) / 1e6:.2f} M records/s wall"
        )
    ours = [n for n in results if n.startswith("kafkawire")]
    for mine in ours:
        kw = results[mine]
        for name, r in results.items():
            if name in ours:
                continue
            ratios = {
                "wall_best": min(r["wall"]) / min(kw["wall"]),
                "cpu_best": min(r["cpu"]) / min(kw["cpu"]),
                "wall_median": statistics.median(r["wall"]) / statistics.median(kw["wall"]),
                "cpu_median": statistics.median(r["cpu"]) / statistics.median(kw["cpu"]),
            }
            summary[f"ratio {name} / {mine}"] = ratios
            print(
                f"  ratio {name} / {mine}: wall {ratios['wall_best']:.2f}x (median {ratios['wall_median']:.2f}x), "
                f"cpu {ratios['cpu_best']:.2f}x (median {ratios['cpu_median']:.2f}x)"
            )
    out = Path(__file__).resolve().parent / ".results" / out_name
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(summary, indent=2))


def read_bench(broker: Any) -> None:
    """Reads: every contender aggregates the same topic (module docstring)."""
    topic = "bench-spark"
    t0 = time.monotonic()
    _produce(broker.bootstrap, topic)
    print(f"produced {RECORDS} records of {VALUE_BYTES} B to {BROKER} in {time.monotonic() - t0:.1f} s", flush=True)
    print(f"broker idle after {_wait_until_idle(broker.pid):.0f} s more", flush=True)
    spark = _session()
    contenders = {"kafkawire": "kafkawire", "spark kafka": "kafka"}
    if os.environ.get("KW_BENCH_KAFKA_PYTHON") == "1":
        spark.dataSource.register(KafkaPythonDataSource)
        contenders["kafka-python source"] = KafkaPythonDataSource.name()
    contenders = _only(contenders)
    results: dict[str, dict[str, list[float]]] = {n: {"wall": [], "cpu": [], "broker_cpu": []} for n in contenders}
    answers = {}
    for rnd in range(0 if WARMUP else 1, ROUNDS + 1):
        for name, fmt in contenders.items():
            answers[name], wall, cpu, broker_cpu = _timed(broker, _query, spark, fmt, broker.bootstrap, topic)
            if rnd:  # round 0 warms up workers and JIT
                results[name]["wall"].append(wall)
                results[name]["cpu"].append(cpu)
                results[name]["broker_cpu"].append(broker_cpu)
            print(f"round {rnd} {name}: wall {wall:.2f} s, cpu {cpu:.2f} s (broker {broker_cpu:.2f} s)", flush=True)
    first = next(iter(answers.values()))
    assert all(a == first for a in answers.values()), answers
    assert sum(n for _, n, _ in first) == RECORDS
    spark.stop()
    _report(results, "reads", "bench_spark.json")


# ----------------------------------------------------------------------------------------- writes


class _IterateOnlyWriter(DataSourceArrowWriter):
    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        for _batch in iterator:
            pass
        return WriterCommitMessage()


class IterateOnlyDataSource(DataSource):
    """``KW_BENCH_FLOOR``'s Python writer: iterates the Arrow batches Spark hands it and writes nothing."""

    @classmethod
    def name(cls) -> str:
        return "arrow_iterate_only"

    def writer(self, schema: StructType, overwrite: bool) -> _IterateOnlyWriter:
        return _IterateOnlyWriter()


def _write_frame(spark: Any) -> Any:
    """N rows (10-byte key, 100-byte value) made by Spark's own expressions, the same for every contender."""
    from pyspark.sql import functions as F

    parts = spark.sparkContext.defaultParallelism
    return spark.range(0, RECORDS, 1, parts).select(
        F.format_string("key%07d", F.col("id") % 10_000_000).cast("binary").alias("key"),
        F.lpad(F.col("id").cast("string"), VALUE_BYTES, "x").cast("binary").alias("value"),
    )


def _sink_options() -> dict[str, str]:
    """``KW_BENCH_SINK_OPTIONS`` (``name=value,...``): options for Spark's sink only."""
    text = os.environ.get("KW_BENCH_SINK_OPTIONS", "").strip()
    return dict(item.split("=", 1) for item in text.split(",")) if text else {}


def _write(df: Any, fmt: str, options: dict[str, str]) -> None:
    writer = df.write.format(fmt)
    for k, v in options.items():
        writer = writer.option(k, v)
    writer.mode("append").save()


def _records_in(bootstrap: str, topic: str, transactional: bool) -> int:
    """Records in ``topic``: the sum of its end offsets, or for transactional writes the records a
    read_committed fetch returns (the end offsets count commit markers too)."""
    from kafkawire.client import Client

    with Client(bootstrap) as client:
        parts = list(range(PARTITIONS))
        if not transactional:
            ends = client.list_offsets(topic, parts, timestamp=-1)
            return sum(int(ends[p].offset) for p in parts)
        deadline = time.monotonic() + 120
        total = 0
        while time.monotonic() < deadline:  # EndTxn returns before the markers move the last stable offset
            total = 0
            stable = client.list_offsets(topic, parts, timestamp=-1, isolation="read_committed")
            for p in parts:
                offset, end = 0, int(stable[p].offset)
                while offset < end:
                    cols = client.fetch(topic, p, offset, max_bytes=8 << 20, isolation="read_committed")
                    total += len(cols)
                    offset = max(int(cols.next_offset), offset)
            if total >= RECORDS:
                break
            time.sleep(0.5)
        return total


def write_bench(broker: Any) -> None:
    """Writes: every contender writes the same DataFrame to a new topic (module docstring)."""
    from kafkawire.client import Client

    spark = _session()
    df = _write_frame(spark)
    base = {"kafka.bootstrap.servers": broker.bootstrap}
    contenders = _only(
        {
            "kafkawire": ("kafkawire", base),
            "kafkawire exactlyOnce": ("kafkawire", {**base, "exactlyOnce": "true"}),
            "spark kafka": ("kafka", {**base, **_sink_options()}),
        }
    )
    if os.environ.get("KW_BENCH_FLOOR") == "1":
        spark.dataSource.register(IterateOnlyDataSource)
        contenders["spark noop"] = ("noop", {})
        contenders["arrow iterate only"] = (IterateOnlyDataSource.name(), {})
    results: dict[str, dict[str, list[float]]] = {n: {"wall": [], "cpu": [], "broker_cpu": []} for n in contenders}
    written: list[str] = []
    names = list(contenders)
    for rnd in range(0 if WARMUP else 1, ROUNDS + 1):
        # The order rotates from round to round, as for reads, so no contender always follows another.
        for i, name in enumerate(names[rnd % len(names):] + names[: rnd % len(names)]):
            fmt, options = contenders[name]
            if fmt in ("noop", IterateOnlyDataSource.name()):  # KW_BENCH_FLOOR: nothing reaches Kafka
                _, wall, cpu, broker_cpu = _timed(broker, lambda f=fmt: df.write.format(f).mode("overwrite").save())
            else:
                topic = f"bench-spark-write-{rnd}-{i}"
                with Client(broker.bootstrap) as client:
                    client.create_topics([topic], num_partitions=PARTITIONS)
                _, wall, cpu, broker_cpu = _timed(broker, _write, df, fmt, {**options, "topic": topic})
                got = _records_in(broker.bootstrap, topic, "exactlyOnce" in options)
                assert got == RECORDS, f"{name} round {rnd}: {got} records in {topic}, expected {RECORDS}"
                # Deleted at the end, not here: Kafka removes a deleted topic's files in the background a
                # minute later (file.delete.delay.ms), which would land in whichever contender runs then.
                written.append(topic)
            if rnd:  # round 0 warms up workers, producers and JIT
                results[name]["wall"].append(wall)
                results[name]["cpu"].append(cpu)
                results[name]["broker_cpu"].append(broker_cpu)
            print(f"round {rnd} {name}: wall {wall:.2f} s, cpu {cpu:.2f} s (broker {broker_cpu:.2f} s)", flush=True)
    spark.stop()
    with Client(broker.bootstrap) as client:
        client.delete_topics(written)
    _report(results, "writes", "bench_spark_write.json")


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from kafkawire.testing import start_broker

    if MODE not in ("read", "write"):
        raise SystemExit(f"KW_BENCH_MODE must be read or write, not {MODE!r}")
    with start_broker(BROKER) as broker:
        if MODE == "read":
            read_bench(broker)
        else:
            write_bench(broker)


if __name__ == "__main__":
    main()
