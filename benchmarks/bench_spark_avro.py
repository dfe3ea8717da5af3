"""Spark read of registry-framed Avro: ``format("kafkawire")`` with ``valueFormat=avro`` against Spark's own
``format("kafka")`` + ``from_avro`` (issue 20).

Run (starts its own Apache Kafka and Apicurio Registry; resolves spark-sql-kafka and spark-avro; local[2])::

    .venv/bin/python benchmarks/bench_spark_avro.py        # KW_BENCH_RECORDS (default 1000000) records

The topic (``KW_BENCH_PARTITIONS``, default 4) holds N values of bench_avro.py's 10-field ``Order`` record in
the Confluent framing (magic byte, schema id, body), encoded once with fastavro for a block of
``KW_BENCH_BLOCK`` (default 100000) distinct orders and produced again and again up to N. Both contenders run
the same aggregation over decoded fields, ``groupBy(country).agg(count, sum(quantity), avg(price))``:

* ``kafkawire``: ``valueFormat=avro`` and ``schema.registry.url``: the writer schema by the id in each value,
  the subject's latest as reader, decoded in the Python workers straight into Arrow (one compiled pass).
* ``spark kafka + from_avro``: Spark's Kafka source, then ``from_avro(substring(value, 6), schema)`` with the
  schema given inline (Spark's ``from_avro`` cannot read the 5-byte Confluent header, SPARK-34652: cutting
  it off with ``substring`` is the usual way, and it breaks when a topic holds more than one schema).

Rounds alternate (``KW_BENCH_ROUNDS``, default 3, after a warm-up round each unless ``KW_BENCH_WARMUP=0``);
wall and CPU of the whole process tree (driver, JVM, Python workers; the broker and the registry apart), best
and median. The ratio is Spark's / kafkawire's. Results go to ``benchmarks/.results/bench_spark_avro.json``.

This file holds no pytest tests (pytest collects nothing from it).
"""

from __future__ import annotations

import io
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

RECORDS = int(os.environ.get("KW_BENCH_RECORDS", "1000000"))
BLOCK = int(os.environ.get("KW_BENCH_BLOCK", "100000"))
ROUNDS = int(os.environ.get("KW_BENCH_ROUNDS", "3"))
PARTITIONS = int(os.environ.get("KW_BENCH_PARTITIONS", "4"))
WARMUP = os.environ.get("KW_BENCH_WARMUP", "1") != "0"
SUBJECT_SUFFIX = "-value"

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_avro import SCHEMA  # noqa: E402  (the same 10-field record as the decode benchmark)
from bench_spark import _session, _tree_cpu_seconds, _wait_until_idle  # noqa: E402


def _block(sid: int) -> list[bytes]:
    """``BLOCK`` distinct orders, Confluent-framed with schema id ``sid`` (fastavro writes the bodies)."""
    import fastavro

    parsed = fastavro.parse_schema(SCHEMA)
    header = b"\x00" + sid.to_bytes(4, "big")
    countries = ["DE", "FR", "US", "JP", "BR", "IN"]
    out, buf = [], io.BytesIO()
    for i in range(BLOCK):
        buf.seek(0)
        buf.truncate()
        fastavro.schemaless_writer(buf, parsed, {
            "id": i, "quantity": i % 50, "price": (i % 1000) * 0.25, "discount": 0.5, "paid": i % 2 == 0,
            "customer": f"customer-{i % 10007:05d}", "country": countries[i % 6],
            "status": ["NEW", "PAID", "SHIPPED", "DONE"][i % 4], "note": None if i % 3 else f"note {i}",
            "created": 1_780_000_000_000 + i,
        })
        out.append(header + buf.getvalue())
    return out


def _produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    from kafkawire import BinaryColumn
    from kafkawire.client import Client

    column = BinaryColumn.from_pylist(values)
    with Client(bootstrap) as client:
        client.create_topics([topic], num_partitions=PARTITIONS)
        done = 0
        while done < RECORDS:
            n = min(len(values), RECORDS - done)
            client.produce(topic, column if n == len(values) else BinaryColumn.from_pylist(values[:n]))
            done += n


def _query(spark: Any, contender: str, bootstrap: str, topic: str, registry: str) -> list[tuple[Any, ...]]:
    from pyspark.sql import functions as F

    if contender == "kafkawire":
        df = (
            spark.read.format("kafkawire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
            .option("valueFormat", "avro").option("schema.registry.url", registry).load()
        )
    else:
        from pyspark.sql.avro.functions import from_avro

        raw = spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic).load()
        # The Confluent header is 5 bytes; substring is 1-based.
        df = raw.select(from_avro(F.expr("substring(value, 6)"), json.dumps(SCHEMA)).alias("value"))
    out = (
        df.groupBy(F.col("value.country").alias("country"))
        .agg(F.count("*").alias("n"), F.sum("value.quantity").alias("q"), F.avg("value.price").alias("p"))
        .collect()
    )
    return sorted((r["country"], r["n"], r["q"], round(r["p"], 6)) for r in out)


def main() -> None:
    from kafkawire.serde import SchemaRegistry
    from kafkawire.spark.kafka_jar import SPARK_KAFKA_VERSION
    from kafkawire.testing import start_broker, start_schema_registry

    topic = "bench-spark-avro"
    with start_broker("kafka") as broker, start_schema_registry() as registry:
        sid = SchemaRegistry(registry.url).register(topic + SUBJECT_SUFFIX, json.dumps(SCHEMA))
        t0 = time.monotonic()
        _produce(broker.bootstrap, topic, _block(sid))
        print(f"produced {RECORDS:,} Avro values in {time.monotonic() - t0:.1f} s", flush=True)
        print(f"broker idle after {_wait_until_idle(broker.pid):.0f} s more", flush=True)
        spark = _session("kafkawire-bench-avro", avro=True)
        contenders = ["kafkawire", "spark kafka + from_avro"]
        results: dict[str, dict[str, list[float]]] = {c: {"wall": [], "cpu": []} for c in contenders}
        answers: dict[str, list[tuple[Any, ...]]] = {}
        skip = tuple(p for p in (broker.pid, getattr(registry, "pid", None)) if p)
        for rnd in range(0 if WARMUP else 1, ROUNDS + 1):
            for name in contenders:
                cpu0, wall0 = _tree_cpu_seconds(os.getpid(), skip), time.monotonic()
                answers[name] = _query(spark, name, broker.bootstrap, topic, registry.url)
                wall, cpu = time.monotonic() - wall0, _tree_cpu_seconds(os.getpid(), skip) - cpu0
                if rnd:
                    results[name]["wall"].append(wall)
                    results[name]["cpu"].append(cpu)
                print(f"round {rnd} {name}: wall {wall:.2f} s, cpu {cpu:.2f} s", flush=True)
        assert answers["kafkawire"] == answers["spark kafka + from_avro"], answers
        assert sum(n for _, n, _, _ in answers["kafkawire"]) == RECORDS
        spark.stop()

    import pyspark

    summary: dict[str, Any] = {
        "records": RECORDS, "partitions": PARTITIONS, "rounds": ROUNDS, "pyspark": pyspark.__version__,
        "spark_avro": SPARK_KAFKA_VERSION,
    }
    print(f"\n{RECORDS:,} Avro values (10 fields), {PARTITIONS} partitions, best of {ROUNDS} rounds (median):")
    for name, r in results.items():
        summary[name] = {k: {"best": min(v), "median": statistics.median(v), "all": v} for k, v in r.items()}
        print(
            f"  {name:26s} wall {min(r['wall']):6.2f} s ({statistics.median(r['wall']):.2f})  "
            f"cpu {min(r['cpu']):6.2f} s ({statistics.median(r['cpu']):.2f})"
        )
    kw, sp = results["kafkawire"], results["spark kafka + from_avro"]
    ratios = {
        "wall_median": statistics.median(sp["wall"]) / statistics.median(kw["wall"]),
        "cpu_median": statistics.median(sp["cpu"]) / statistics.median(kw["cpu"]),
    }
    summary["ratio spark / kafkawire"] = ratios
    print(f"  ratio spark / kafkawire: wall {ratios['wall_median']:.2f}x, cpu {ratios['cpu_median']:.2f}x (medians)")
    out = HERE / ".results" / "bench_spark_avro.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
