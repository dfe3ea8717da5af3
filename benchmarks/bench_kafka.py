"""Client throughput against Apache Kafka (the reference broker): kafkawire vs the Java client,
confluent-kafka, kafka-python and aiokafka, on the same topic, in alternating rounds.

Run (starts and stops its own Apache Kafka; about 10 minutes on 2 cores at the default size)::

    .venv/bin/python benchmarks/bench_kafka.py

Cases:

* ``consume``: read every record of a one-partition topic of ``KAFKAWIRE_BENCH_RECORDS`` (default
  1,000,000) records of ``KAFKAWIRE_BENCH_VALUE`` (default 100) bytes from offset 0. kafkawire:
  ``Client.fetch`` in a loop, each response decoded into :class:`kafkawire.RecordColumns` (the columns).
  Java: ``tests/interop/java/KafkaPeer.java consume --digest`` (the Java ``KafkaConsumer`` of the same
  Kafka release, assigned the partition, its poll loop touching every record's key, value, headers,
  offset and timestamp), and Kafka's own ``ConsumerPerformance`` (subscribes with a group). confluent-kafka:
  ``Consumer.consume(num_messages=10000)`` calling ``value()`` on every message (``fetch.queue.backoff.ms``
  10 ms, see ``_consume_confluent``). kafka-python
  (``KafkaConsumer.poll``) and aiokafka (``getmany``): each record's ``value`` read.
* ``produce``: write the records to a new one-partition topic with acks=all, idempotent, and wait for
  every acknowledgement. kafkawire: one ``Client.produce`` call with a value column. confluent-kafka:
  ``produce`` per record (``enable.idempotence``, ``linger.ms=5``), then ``flush``. Java: Kafka's
  ``ProducerPerformance`` (``acks=all enable.idempotence=true`` and ``KAFKAWIRE_BENCH_JAVA_PRODUCER_PROPS``,
  default ``linger.ms=2 batch.size=1000000 buffer.memory=134217728``: the best a sweep found for it on the
  project's machine, see benchmarks/README.md; Java's default 16 kB batches are 2.7x slower).

Every contender runs in a child process of its own, in alternating order, ``KAFKAWIRE_BENCH_ROUNDS``
(default 3) rounds; the table shows medians. Per run two measurements:

* *timed region* (the number the ratios use): from creating the client to the last record read or
  acknowledged (connection and metadata included; interpreter/JVM start and imports excluded), wall time
  and the CPU time of the whole process over that region (all threads: librdkafka's, the JVM's JIT and
  GC). ``ConsumerPerformance`` and ``ProducerPerformance`` report their own elapsed time only (no CPU
  figure for the region): ConsumerPerformance's fetch time (its run minus the group join), and
  ProducerPerformance's steady-state line after ``(PASSES - 1) * N`` warm-up records.
* *warm* vs *cold*: each child runs its contender ``KAFKAWIRE_BENCH_PASSES`` (default 2) times in a row,
  a new client each time, and the table's figures are the last pass (classes loaded, JIT compiled,
  imports done); the first pass's wall time is shown as "cold". A fresh JVM spends about 1.5 s creating
  its first KafkaConsumer.
* *whole process*: wall and user+system CPU of the child from fork to exit (``RUSAGE_CHILDREN``), start-up
  included.

Fetch size per partition is ``KAFKAWIRE_BENCH_FETCH_BYTES`` (default 8 MiB) for every consumer.
``KAFKAWIRE_BENCH_CASES`` (default ``consume,produce``), ``KAFKAWIRE_BENCH_CONSUMERS`` and
``KAFKAWIRE_BENCH_PRODUCERS`` (comma-separated contender names, default all) select a shorter run.
Results go to ``benchmarks/.results/bench_kafka.json`` and a Markdown table on stdout.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from a checkout
    sys.path.insert(0, str(ROOT))

RECORDS = int(os.environ.get("KAFKAWIRE_BENCH_RECORDS", "1000000"))
VALUE = int(os.environ.get("KAFKAWIRE_BENCH_VALUE", "100"))
ROUNDS = int(os.environ.get("KAFKAWIRE_BENCH_ROUNDS", "3"))
FETCH = int(os.environ.get("KAFKAWIRE_BENCH_FETCH_BYTES", str(8 << 20)))
PASSES = int(os.environ.get("KAFKAWIRE_BENCH_PASSES", "2"))
PEER = ROOT / "tests" / "interop" / "java" / "KafkaPeer.java"

CONSUMERS = ["kafkawire", "java", "java-ConsumerPerformance", "confluent-kafka", "aiokafka", "kafka-python"]
PRODUCERS = ["kafkawire", "java-ProducerPerformance", "confluent-kafka"]
# Selections for shorter runs: which cases, and which contenders of each (comma-separated names above).
CASES = os.environ.get("KAFKAWIRE_BENCH_CASES", "consume,produce").split(",")
CONSUMERS = [c for c in CONSUMERS if c in os.environ.get("KAFKAWIRE_BENCH_CONSUMERS", ",".join(CONSUMERS)).split(",")]
PRODUCERS = [p for p in PRODUCERS if p in os.environ.get("KAFKAWIRE_BENCH_PRODUCERS", ",".join(PRODUCERS)).split(",")]
# ProducerPerformance's settings besides acks=all and idempotence: the best a sweep over batch.size,
# linger.ms and max.in.flight found for it on this machine (see benchmarks/README.md), not its defaults.
JAVA_PRODUCER_PROPS = os.environ.get(
    "KAFKAWIRE_BENCH_JAVA_PRODUCER_PROPS", "linger.ms=2 batch.size=1000000 buffer.memory=134217728"
).split()


def _values(n: int) -> Any:
    """``n`` values of VALUE random lowercase letters (like ProducerPerformance's random payload)."""
    import numpy as np

    from kafkawire.columns import BinaryColumn

    data = np.random.default_rng(7).integers(97, 123, n * VALUE, dtype=np.uint8)
    return BinaryColumn((np.arange(n + 1, dtype=np.int64) * VALUE).astype(np.int32), data, None)


# ------------------------------------------------------------------------------------------ workers
# Each runs in its own process (``bench_kafka.py --worker NAME BOOTSTRAP TOPIC N``) and prints one JSON
# line: records, wall_s and cpu_s of the timed region.


def _region(fn: Any) -> dict[str, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    records = fn()
    return {"records": records, "wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}


def _consume_kafkawire(bootstrap: str, topic: str, n: int) -> int:
    from kafkawire.client import Client

    with Client(bootstrap, client_id="bench") as client:
        end = client.list_offsets(topic, [0])[0].offset
        pos = got = 0
        while pos < end:
            cols = client.fetch(topic, 0, pos, max_bytes=FETCH)
            got += len(cols)
            pos = int(cols.next_offset)
        return got


def _consume_confluent(bootstrap: str, topic: str, n: int) -> int:
    import confluent_kafka as ck

    consumer = ck.Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": f"bench-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": False,
        "max.partition.fetch.bytes": FETCH,
        "fetch.max.bytes": max(FETCH, 52428800),
        # librdkafka >= 2.4 stops fetching for fetch.queue.backoff.ms (default 1 s) whenever its local queue
        # holds more than queued.min.messages (100k): one 8 MiB fetch is ~75k records, so the first run sat
        # idle for seconds (7.7 s wall for 0.8 s CPU). 10 ms keeps it fetching.
        "fetch.queue.backoff.ms": 10,
    })
    try:
        consumer.assign([ck.TopicPartition(topic, 0, ck.OFFSET_BEGINNING)])
        got = 0
        while got < n:
            for m in consumer.consume(num_messages=10_000, timeout=1.0):
                if m.error() is None:
                    m.value()
                    got += 1
        return got
    finally:
        consumer.close()


def _consume_kafka_python(bootstrap: str, topic: str, n: int) -> int:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest",
                             max_partition_fetch_bytes=FETCH, fetch_max_bytes=max(FETCH, 52428800))
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        got = 0
        while got < n:
            for records in consumer.poll(timeout_ms=1000, max_records=100_000).values():
                for r in records:
                    r.value  # noqa: B018 - reading the value is part of the measured work
                    got += 1
        return got
    finally:
        consumer.close()


def _consume_aiokafka(bootstrap: str, topic: str, n: int) -> int:
    import asyncio

    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def main() -> int:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                                    auto_offset_reset="earliest", max_partition_fetch_bytes=FETCH,
                                    fetch_max_bytes=max(FETCH, 52428800))
        await consumer.start()
        try:
            tp = TopicPartition(topic, 0)
            consumer.assign([tp])
            await consumer.seek_to_beginning(tp)
            got = 0
            while got < n:
                for records in (await consumer.getmany(timeout_ms=1000, max_records=100_000)).values():
                    for r in records:
                        r.value  # noqa: B018
                        got += 1
            return got
        finally:
            await consumer.stop()

    return asyncio.run(main())


def _produce_kafkawire_run(bootstrap: str, topic: str, values: Any) -> int:
    from kafkawire.client import Client

    with Client(bootstrap, client_id="bench", enable_idempotence=True) as client:
        result = client.produce(topic, values, acks=-1)
    return int(result.acknowledged.sum())


def _produce_confluent_run(bootstrap: str, topic: str, values: list[bytes]) -> int:
    import confluent_kafka as ck

    acked = 0

    def on_delivery(err: Any, msg: Any) -> None:
        nonlocal acked
        if err is None:
            acked += 1

    producer = ck.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all",
                            "enable.idempotence": True})
    for v in values:
        while True:
            try:
                producer.produce(topic, v, on_delivery=on_delivery)
                break
            except BufferError:  # local queue full: serve delivery reports, then try again
                producer.poll(0.05)
    producer.flush(120)
    return acked


def _worker(name: str, bootstrap: str, topic: str, n: int) -> None:
    """Run one contender PASSES times in this process and print one JSON line per pass.

    Imports and input data are prepared before the first timed region, for every contender alike. A
    produce pass ``i`` writes to its own topic ``<topic>-<i>`` (created here, before the timing).
    """
    regions = []
    if name.startswith("consume-"):
        fn = {
            "consume-kafkawire": _consume_kafkawire,
            "consume-confluent-kafka": _consume_confluent,
            "consume-kafka-python": _consume_kafka_python,
            "consume-aiokafka": _consume_aiokafka,
        }[name]
        __import__({"consume-kafkawire": "kafkawire.client", "consume-confluent-kafka": "confluent_kafka",
                    "consume-kafka-python": "kafka", "consume-aiokafka": "aiokafka"}[name])
        for _ in range(PASSES):
            regions.append(_region(lambda: fn(bootstrap, topic, n)))
    else:
        from kafkawire.client import Client

        with Client(bootstrap) as admin:
            admin.create_topics({f"{topic}-{i}": 1 for i in range(PASSES)})
        column = _values(n)
        if name == "produce-kafkawire":
            for i in range(PASSES):
                regions.append(_region(lambda i=i: _produce_kafkawire_run(bootstrap, f"{topic}-{i}", column)))
        elif name == "produce-confluent-kafka":
            import confluent_kafka  # noqa: F401

            values = column.to_pylist()
            for i in range(PASSES):
                regions.append(_region(lambda i=i: _produce_confluent_run(bootstrap, f"{topic}-{i}", values)))
        else:
            raise SystemExit(f"unknown worker {name}")
    for r in regions:
        print(json.dumps(r), flush=True)


# ------------------------------------------------------------------------------------------ parent


def _run_child(cmd: list[str], timeout: float = 900) -> tuple[str, float]:
    """Run ``cmd`` to completion; return its stdout and wall seconds (its CPU: see _children_cpu)."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:6])}... exited {proc.returncode}:\n{err[-3000:]}")
    return out, wall


def _children_cpu() -> float:
    """User+system CPU of every reaped child so far: one run's is the difference around it."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_contender(case: str, name: str, bootstrap: str, topic: str, n: int) -> dict[str, Any]:
    from kafkawire.testing.java import java_command

    cpu_before = _children_cpu()
    region: dict[str, Any] = {}
    if name == "java" and case == "consume":
        cmd = java_command(PEER, "consume", "--bootstrap", bootstrap, "--topic", topic, "--digest",
                           "--passes", str(PASSES),
                           "--partition-max-bytes", str(FETCH), "--fetch-max-bytes", str(max(FETCH, 52428800)),
                           "--max-poll-records", "10000", heap="1g")
        out, wall = _run_child(cmd)
        passes = [json.loads(x) for x in out.splitlines() if x.startswith('{"records"')]
        regions = [{"records": j["records"], "wall_s": j["wall_ns"] / 1e9, "cpu_s": j["cpu_ns"] / 1e9}
                   for j in passes]
    elif name == "java-ConsumerPerformance":
        cmd = java_command(PEER, "--bootstrap-server", bootstrap, "--topic", topic, "--num-records", str(n),
                           "--fetch-size", str(FETCH), "--timeout", "60000",
                           main="org.apache.kafka.tools.ConsumerPerformance", heap="1g")
        out, wall = _run_child(cmd)
        # CSV: start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec,
        # rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
        row = [line for line in out.splitlines() if line and line[0].isdigit()][-1].split(",")
        records = int(row[4].strip())
        nmsg_sec = float(row[5].strip())
        # Its fetch time: the whole run minus the group join (the other consumers are assigned).
        regions = [{"records": records, "wall_s": float(row[7]) / 1e3, "cpu_s": None,
                    "rebalance_ms": float(row[6]), "total_nmsg_sec": nmsg_sec}]
    elif name == "java-ProducerPerformance":
        # PASSES - 1 rounds' worth of warm-up records, then n timed ones (its steady-state line), all into
        # one topic ``<topic>-0``.
        warmup = (PASSES - 1) * n
        from kafkawire.client import Client

        with Client(bootstrap) as admin:
            admin.create_topics({f"{topic}-0": 1})
        cmd = java_command(PEER, "--topic", f"{topic}-0", "--num-records", str(n + warmup),
                           "--warmup-records", str(warmup), "--record-size", str(VALUE),
                           "--throughput", "-1", "--producer-props", f"bootstrap.servers={bootstrap}", "acks=all",
                           "enable.idempotence=true", *JAVA_PRODUCER_PROPS,
                           main="org.apache.kafka.tools.ProducerPerformance", heap="1g")
        out, wall = _run_child(cmd)
        regions = [_producer_performance_summary(out, steady=warmup > 0)]
    else:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", f"{case}-{name}", bootstrap, topic, str(n)]
        out, wall = _run_child(cmd)
        regions = [json.loads(line) for line in out.strip().splitlines() if line.startswith("{")]
    process_cpu = _children_cpu() - cpu_before
    for region in regions:
        if region["records"] != n:
            raise RuntimeError(f"{case} {name}: {region['records']} records, expected {n}")
    # The last pass is the warm one; the first is reported as "cold".
    return {"case": case, "client": name, **regions[-1], "cold_wall_s": regions[0]["wall_s"],
            "process_wall_s": wall, "process_cpu_s": process_cpu}


def _producer_performance_summary(out: str, steady: bool) -> dict[str, Any]:
    """Records and seconds from ProducerPerformance's summary (its steady-state line after a warm-up)."""
    lines = [line for line in out.splitlines() if "records sent" in line]
    if steady:
        lines = [line for line in lines if "steady" in line.lower()] or lines
    line = lines[-1]
    words = line.replace(",", " ").split()
    sent = int(next(w for w in words if w.isdigit()))  # "N records sent" / "N steady state records sent"
    per_s = float(words[words.index("records/sec") - 1])
    return {"records": sent, "wall_s": sent / per_s, "cpu_s": None}


def _new_topic(client: Any, prefix: str) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    client.create_topics({name: 1})
    return name


def main() -> None:
    from kafkawire.client import Client
    from kafkawire.testing import start_broker
    from kafkawire.testing.java import compile_java
    from kafkawire.testing.kafka import kafka_version

    compile_java(PEER)
    runs: list[dict[str, Any]] = []
    started = time.time()
    with start_broker("kafka", heap="1g") as broker:
        bs = broker.bootstrap
        with Client(bs) as client:
            topic = _new_topic(client, "bench-consume")
            res = client.produce(topic, _values(RECORDS), partition=0)
            assert int(res.acknowledged.sum()) == RECORDS
            assert client.list_offsets(topic, [0])[0].offset == RECORDS
        for r in range(ROUNDS if "consume" in CASES else 0):
            order = CONSUMERS[r % len(CONSUMERS):] + CONSUMERS[: r % len(CONSUMERS)]
            for name in order:
                run = run_contender("consume", name, bs, topic, RECORDS)
                runs.append({**run, "round": r})
                print(f"consume round {r} {name}: {run['wall_s']:.2f} s", file=sys.stderr, flush=True)
        for r in range(ROUNDS if "produce" in CASES else 0):
            order = PRODUCERS[r % len(PRODUCERS):] + PRODUCERS[: r % len(PRODUCERS)]
            for name in order:
                prefix = f"bench-produce-{uuid.uuid4().hex[:8]}"
                run = run_contender("produce", name, bs, prefix, RECORDS)
                with Client(bs) as client:
                    # Every pass's topic holds exactly what was acknowledged (ProducerPerformance: one
                    # topic with the warm-up records and the timed ones), then goes.
                    topics = [f"{prefix}-0"] if name.startswith("java") else [f"{prefix}-{i}" for i in range(PASSES)]
                    want = RECORDS * PASSES if name.startswith("java") else RECORDS
                    for t in topics:
                        end = client.list_offsets(t, [0])[0].offset
                        if end != want:
                            raise RuntimeError(f"produce {name}: {t} holds {end} records, expected {want}")
                    client.delete_topics(topics, missing_ok=True)
                runs.append({**run, "round": r})
                print(f"produce round {r} {name}: {run['wall_s']:.2f} s", file=sys.stderr, flush=True)
    summary = summarise(runs)
    table = markdown(summary)
    print(table)
    out = ROOT / "benchmarks" / ".results" / "bench_kafka.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({
        "kafka_version": kafka_version(), "records": RECORDS, "value_bytes": VALUE, "rounds": ROUNDS,
        "fetch_bytes": FETCH, "passes": PASSES, "started": started, "summary": summary, "runs": runs,
    }, indent=2) + "\n")


def _median(xs: list[Any]) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarise(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for case, names in (("consume", CONSUMERS), ("produce", PRODUCERS)):
        mine = [r for r in runs if r["case"] == case]
        base = _median([r["wall_s"] for r in mine if r["client"] == "kafkawire"])
        base_cpu = _median([r["cpu_s"] for r in mine if r["client"] == "kafkawire"])
        for name in names:
            rs = [r for r in mine if r["client"] == name]
            if not rs:
                continue
            wall = _median([r["wall_s"] for r in rs])
            cpu = _median([r["cpu_s"] for r in rs])
            rows.append({
                "case": case, "client": name, "rounds": len(rs), "wall_s": wall, "cpu_s": cpu,
                "records_per_s": rs[0]["records"] / wall if wall else None,
                "cold_wall_s": _median([r["cold_wall_s"] for r in rs]),
                "process_wall_s": _median([r["process_wall_s"] for r in rs]),
                "process_cpu_s": _median([r["process_cpu_s"] for r in rs]),
                "speedup_wall": wall / base if base and wall else None,
                "speedup_cpu": cpu / base_cpu if base_cpu and cpu else None,
            })
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    def f(x: float | None, fmt: str) -> str:
        return "—" if x is None else format(x, fmt)

    lines = [
        "| case | client | records/s (warm) | wall (warm) | CPU (warm) | peer/kafkawire wall | peer/kafkawire CPU"
        " | wall (cold, first pass) | whole process: wall | whole process: CPU |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        rate = r["records_per_s"] / 1e6 if r["records_per_s"] else None
        lines.append(
            f"| {r['case']} | {r['client']} | {f(rate, '.2f')} M "
            f"| {f(r['wall_s'], '.2f')} s | {f(r['cpu_s'], '.2f')} s | {f(r['speedup_wall'], '.2f')}x "
            f"| {f(r['speedup_cpu'], '.2f')}x | {f(r['cold_wall_s'], '.2f')} s "
            f"| {f(r['process_wall_s'], '.2f')} s | {f(r['process_cpu_s'], '.2f')} s |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        main()
