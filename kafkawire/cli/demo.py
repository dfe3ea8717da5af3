"""``kafkawire demo``: clickstream JSON events → Kafka → Spark (through kafkawire) → windowed aggregates → Parquet.

By default everything runs on this machine: an embedded broker (noida-db from its PyPI wheel, or Apache
Kafka itself with ``--broker kafka``) on a free loopback port and a ``local[2]`` Spark session.
``--bootstrap`` points the pipeline at any other Kafka cluster and ``--master`` at any other Spark master
(whose executors must have kafkawire installed).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from .._optional import require

PAGES = np.array(["/", "/search", "/product", "/cart", "/checkout", "/account", "/help", "/blog"])
ACTIONS = np.array(["view", "click", "scroll", "add_to_cart", "purchase"])
ACTION_WEIGHTS = np.array([0.55, 0.25, 0.12, 0.06, 0.02])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The demo's command-line flags."""
    parser.add_argument("--records", type=int, default=1_000_000, help="events to produce (default 1M)")
    parser.add_argument("--users", type=int, default=50_000, help="distinct user ids (record keys)")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--topic", default="clickstream")
    parser.add_argument("--bootstrap", help="an existing Kafka cluster (default: start an embedded broker)")
    parser.add_argument(
        "--broker",
        default="noida",
        choices=["noida", "tansu", "kafka"],
        help="embedded broker kind (kafka: Apache Kafka itself, needs Java 17; default noida)",
    )
    parser.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    parser.add_argument("--output", default="out/clickstream-aggregates", help="Parquet output directory")
    parser.add_argument("--compression", default="lz4", help="producer compression (none/gzip/snappy/lz4/zstd)")
    parser.add_argument("--window", default="1 minute", help="aggregation window")
    parser.add_argument("--no-spark", action="store_true", help="produce, then read back without Spark")


Chunk = tuple[list[bytes], list[bytes], np.ndarray]


def generate_events(n: int, users: int, start_ms: int, seed: int = 7) -> Iterator[Chunk]:
    """Yield chunks of (keys, JSON values, timestamps) for ``n`` clickstream events over ~1 hour."""
    rng = np.random.default_rng(seed)
    chunk = 50_000
    span_ms = 3_600_000
    for lo in range(0, n, chunk):
        m = min(chunk, n - lo)
        user = rng.zipf(1.3, m) % users
        page = PAGES[rng.integers(0, len(PAGES), m)]
        action = ACTIONS[rng.choice(len(ACTIONS), m, p=ACTION_WEIGHTS)]
        ts = start_ms + np.sort(rng.integers(0, span_ms, m)) if lo == 0 else start_ms + rng.integers(0, span_ms, m)
        latency = rng.gamma(2.0, 40.0, m).round(1)
        keys = [b"user-%d" % u for u in user.tolist()]
        values = [
            f'{{"user":"user-{u}","page":"{p}","action":"{a}","ts":{t},"latency_ms":{lat}}}'.encode()
            for u, p, a, t, lat in zip(user.tolist(), page.tolist(), action.tolist(), ts.tolist(), latency.tolist())
        ]
        yield keys, values, ts.astype(np.int64)


@contextlib.contextmanager
def _broker(args: argparse.Namespace) -> Iterator[str]:
    if args.bootstrap:
        yield args.bootstrap
        return
    from kafkawire.testing import start_broker

    print(f"[demo] starting embedded {args.broker} broker ...", flush=True)
    broker = start_broker(args.broker)
    try:
        print(f"[demo] broker listening on {broker.bootstrap}", flush=True)
        yield broker.bootstrap
    finally:
        broker.stop()


def _produce(client: Any, args: argparse.Namespace) -> tuple[int, float]:
    from tqdm import tqdm

    start_ms = int(time.time() * 1000) - 3_600_000
    t0 = time.perf_counter()
    total = 0
    with tqdm(total=args.records, unit="rec", unit_scale=True, desc="[demo] producing", file=sys.stdout) as bar:
        for keys, values, ts in generate_events(args.records, args.users, start_ms):
            client.produce(args.topic, values, keys, timestamps=ts, compression=args.compression)
            total += len(values)
            bar.update(len(values))
    return total, time.perf_counter() - t0


def _spark_job(bootstrap: str, args: argparse.Namespace) -> dict[str, Any]:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from kafkawire.spark import session

    t0 = time.perf_counter()
    spark = session(args.master, app_name="kafkawire-demo")
    t_session = time.perf_counter() - t0
    schema = T.StructType(
        [
            T.StructField("user", T.StringType()),
            T.StructField("page", T.StringType()),
            T.StructField("action", T.StringType()),
            T.StructField("ts", T.LongType()),
            T.StructField("latency_ms", T.DoubleType()),
        ]
    )
    t1 = time.perf_counter()
    raw = (
        spark.read.format("kafkawire")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", args.topic)
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")
        .load()
    )
    # Phase 1: how fast Spark pulls the topic through the kafkawire source alone (Arrow batches, no parsing).
    t_read0 = time.perf_counter()
    read_count = raw.count()
    t_read = time.perf_counter() - t_read0
    t1 = time.perf_counter()
    # Phase 2: the pipeline proper (read again, parse JSON, aggregate per window and page, write Parquet).
    events = raw.select(F.col("timestamp"), F.from_json(F.col("value").cast("string"), schema).alias("e")).select(
        "timestamp", "e.*"
    )
    agg = (
        events.groupBy(F.window("timestamp", args.window), "page")
        .agg(
            F.count("*").alias("events"),
            F.approx_count_distinct("user").alias("users"),
            F.sum(F.when(F.col("action") == "purchase", 1).otherwise(0)).alias("purchases"),
            F.expr("percentile_approx(latency_ms, 0.95)").alias("p95_latency_ms"),
        )
        .select(
            F.col("window.start").alias("window_start"),
            F.col("window.end").alias("window_end"),
            "page",
            "events",
            "users",
            "purchases",
            "p95_latency_ms",
        )
    )
    out = str(Path(args.output).resolve())
    agg.write.mode("overwrite").parquet(out)
    t_job = time.perf_counter() - t1
    written = spark.read.parquet(out)
    summary = written.agg(F.sum("events").alias("events"), F.count("*").alias("rows")).collect()[0]
    top = (
        written.groupBy("page")
        .agg(F.sum("events").alias("events"), F.sum("purchases").alias("purchases"))
        .orderBy(F.desc("events"))
        .limit(5)
        .collect()
    )
    spark.stop()
    return {
        "session_s": t_session,
        "read_s": t_read,
        "read_count": read_count,
        "job_s": t_job,
        "events": int(summary["events"] or 0),
        "rows": int(summary["rows"]),
        "top": [(r["page"], int(r["events"]), int(r["purchases"])) for r in top],
        "output": out,
    }


def _read_back(client: Any, args: argparse.Namespace) -> tuple[int, float]:
    t0 = time.perf_counter()
    total = 0
    ends = client.list_offsets(args.topic, timestamp="latest")
    for partition, end in sorted(ends.items()):
        offset = 0
        while offset < end.offset:
            cols = client.fetch(args.topic, partition, offset)
            total += len(cols)
            offset = cols.next_offset
    return total, time.perf_counter() - t0


def run(args: argparse.Namespace) -> int:
    """Run the whole pipeline and print a summary; exit status 0 when every produced event was aggregated."""
    import kafkawire
    from kafkawire.client import Client

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    impl = "compiled core" if kafkawire.compiled else "pure-Python reference (slow!)"
    print(f"[demo] kafkawire {kafkawire.__version__}, {impl}")
    # A missing dependency stops the demo before it starts a broker and produces, not after.
    require("tqdm", "kafkawire demo", extra="demo")
    if not args.no_spark:
        require("pyspark", "kafkawire demo", extra="demo")
    with _broker(args) as bootstrap, Client(bootstrap, client_id="kafkawire-demo") as client:
        with contextlib.suppress(Exception):
            client.delete_topics([args.topic], missing_ok=True)
        client.create_topics({args.topic: args.partitions})
        produced, t_produce = _produce(client, args)
        print(f"[demo] produced {produced:,} events in {t_produce:.1f} s ({produced / t_produce:,.0f} events/s)")
        if args.no_spark:
            n, t_read = _read_back(client, args)
            print(f"[demo] read back {n:,} records into columns in {t_read:.2f} s ({n / t_read:,.0f} records/s)")
            return 0 if n == produced else 1
        print(f"[demo] Spark ({args.master}) reads the topic through format('kafkawire') ...", flush=True)
        result = _spark_job(bootstrap, args)
    rate = produced / result["job_s"]
    print(f"[demo] Spark session started in {result['session_s']:.1f} s")
    print(
        f"[demo] Spark read {result['read_count']:,} records through format('kafkawire') in {result['read_s']:.1f} s "
        f"({result['read_count'] / result['read_s']:,.0f} records/s)"
    )
    print(
        f"[demo] Spark read, parsed and aggregated {result['events']:,} events in {result['job_s']:.1f} s "
        f"({rate:,.0f} events/s end to end) into {result['rows']:,} (window, page) rows"
    )
    top = [{"page": p, "events": e, "purchases": b} for p, e, b in result["top"]]
    print("[demo] busiest pages:  " + json.dumps(top))
    print(f"[demo] Parquet written to {result['output']}")
    if result["events"] != produced:
        print(f"[demo] MISMATCH: produced {produced:,} events but aggregated {result['events']:,}", file=sys.stderr)
        return 1
    return 0
