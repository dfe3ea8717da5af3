"""Per-record consumption on Apache Kafka (issue 32): kafkawire's ``for record in consumer`` loop against
confluent-kafka's ``consume(num_messages=...)`` loop and the Java ``KafkaConsumer``, like for like.

Run (starts and stops its own Apache Kafka; about 5 minutes on 2 quiet cores at the default size)::

    .venv/bin/python benchmarks/bench_per_record_consume.py

The topics: ``KW_BENCH_RECORDS`` (default 1,000,000) records of ``KW_BENCH_VALUE`` (default 100) bytes
with 16-byte keys, written lz4-compressed (``KW_BENCH_COMPRESSION``) with acks=all and idempotence, once
into 6 partitions (keys spread by murmur2) and once into 1 (``KW_BENCH_PARTITIONS``, default ``6,1``).
Every contender reads the whole topic from offset 0 with partitions assigned (no group), 8 MiB per
partition per fetch (``KW_BENCH_FETCH_BYTES``), and touches each record's key, value and offset (the
offsets are summed and checked against the topic's, so every record was read exactly once):

* ``kafkawire``: ``for record in consumer:`` (``record.key``, ``record.value``, ``record.offset``);
* ``confluent-kafka``: ``consume(num_messages=10000)`` then ``m.key()``, ``m.value()``, ``m.offset()``
  per message (``fetch.queue.backoff.ms`` 10 ms, as benchmarks/bench_kafka.py explains);
* ``java``: ``tests/interop/java/KafkaPeer.java consume --digest`` (KafkaConsumer of the same Kafka
  release, its poll loop touching key, value, headers, offset and timestamp; ``max.poll.records`` 10000);
* ``kafkawire-columns``: ``Consumer.poll()`` staying in columns (``cols.key``, ``cols.value``,
  ``cols.offset`` summed with numpy), the columnar path, for reference.

Each contender runs in a child process of its own, ``KW_BENCH_PASSES`` (default 2) passes in a row with a
new consumer each (the last, warm, pass counts); ``KW_BENCH_ROUNDS`` (default 5) rounds, the order rotating
each round, so the contenders of one round ran next to each other. Per round and peer the ratio
peer/kafkawire of the wall time (and of the CPU time of the whole process over the timed region: all
threads, librdkafka's and the JVM's included) is taken; the summary is the median of those per-round ratios
(``peer_over_kafkawire``: above 1, kafkawire took less), plus the median rate and CPU per record of each
contender. JSON on stdout and in ``benchmarks/.results/bench_per_record_consume.json``; the load average
(``os.getloadavg``) is recorded before and after, since a loaded machine's figures are not quiet ones.
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

RECORDS = int(os.environ.get("KW_BENCH_RECORDS", "1000000"))
VALUE = int(os.environ.get("KW_BENCH_VALUE", "100"))
KEY = 16
ROUNDS = int(os.environ.get("KW_BENCH_ROUNDS", "5"))
PASSES = int(os.environ.get("KW_BENCH_PASSES", "2"))
FETCH = int(os.environ.get("KW_BENCH_FETCH_BYTES", str(8 << 20)))
COMPRESSION = os.environ.get("KW_BENCH_COMPRESSION", "lz4")
PARTITIONS = [int(p) for p in os.environ.get("KW_BENCH_PARTITIONS", "6,1").split(",")]
CONTENDERS = [c for c in os.environ.get("KW_BENCH_CONTENDERS", "kafkawire,confluent-kafka,java,kafkawire-columns")
              .split(",") if c]
PEER = ROOT / "tests" / "interop" / "java" / "KafkaPeer.java"


# ------------------------------------------------------------------------------------------ workers
# Each runs in its own process (``--worker NAME BOOTSTRAP TOPIC PARTITIONS N``) and prints one JSON line
# per pass: records, offset_sum, wall_s and cpu_s of the timed region (creating the consumer included).


def _kafkawire(bootstrap: str, topic: str, partitions: int, n: int) -> tuple[int, int]:
    from kafkawire.client import Consumer

    with Consumer(bootstrap, max_bytes=max(FETCH, 50 << 20), partition_max_bytes=FETCH) as consumer:
        consumer.assign([(topic, p) for p in range(partitions)])
        for p in range(partitions):
            consumer.seek((topic, p), 0)
        got = total = 0
        for record in consumer:
            record.key  # noqa: B018 - touching the fields is the measured work
            record.value  # noqa: B018
            total += record.offset
            got += 1
            if got == n:
                break
        return got, total


def _kafkawire_columns(bootstrap: str, topic: str, partitions: int, n: int) -> tuple[int, int]:
    from kafkawire.client import Consumer

    with Consumer(bootstrap, max_bytes=max(FETCH, 50 << 20), partition_max_bytes=FETCH) as consumer:
        consumer.assign([(topic, p) for p in range(partitions)])
        for p in range(partitions):
            consumer.seek((topic, p), 0)
        got = total = 0
        while got < n:
            for cols in consumer.poll(1_000).values():
                cols.key  # noqa: B018
                cols.value  # noqa: B018
                total += int(cols.offset.sum())
                got += len(cols)
        return got, total


def _confluent(bootstrap: str, topic: str, partitions: int, n: int) -> tuple[int, int]:
    import confluent_kafka as ck

    consumer = ck.Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": f"bench-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": False,
        "max.partition.fetch.bytes": FETCH,
        "fetch.max.bytes": max(FETCH, 52428800),
        "fetch.queue.backoff.ms": 10,  # see benchmarks/bench_kafka.py: the default 1 s idles it
    })
    try:
        consumer.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in range(partitions)])
        got = total = 0
        while got < n:
            for m in consumer.consume(num_messages=10_000, timeout=1.0):
                if m.error() is None:
                    m.key()
                    m.value()
                    total += m.offset()
                    got += 1
        return got, total
    finally:
        consumer.close()


WORKERS = {"kafkawire": _kafkawire, "kafkawire-columns": _kafkawire_columns, "confluent-kafka": _confluent}


def _worker(name: str, bootstrap: str, topic: str, partitions: int, n: int) -> None:
    # Imports before the timed region (the first pass is then cold only in caches, connections and JIT).
    if name.startswith("kafkawire"):
        import kafkawire.client  # noqa: F401
    else:
        import confluent_kafka  # noqa: F401
    for _ in range(PASSES):
        wall, cpu = time.perf_counter(), time.process_time()
        got, total = WORKERS[name](bootstrap, topic, partitions, n)
        region = {"records": got, "offset_sum": total, "wall_s": time.perf_counter() - wall,
                  "cpu_s": time.process_time() - cpu}
        print(json.dumps(region), flush=True)


# ------------------------------------------------------------------------------------------- driver
def _run(name: str, bootstrap: str, topic: str, partitions: int, n: int) -> dict[str, Any]:
    """One contender's child process; its last (warm) pass."""
    if name == "java":
        from kafkawire.testing.java import java_command

        cmd = java_command(PEER, "consume", "--bootstrap", bootstrap, "--topic", topic, "--digest",
                           "--passes", str(PASSES), "--partition-max-bytes", str(FETCH),
                           "--fetch-max-bytes", str(max(FETCH, 52428800)), "--max-poll-records", "10000", heap="1g")
    else:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, bootstrap, topic, str(partitions),
               str(n)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{name} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    passes = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith('{"records"')]
    last = passes[-1]
    if name == "java":  # KafkaPeer reports ns and a digest instead of the offset sum
        last = {"records": last["records"], "offset_sum": None, "wall_s": last["wall_ns"] / 1e9,
                "cpu_s": last["cpu_ns"] / 1e9}
    if last["records"] != n:
        raise RuntimeError(f"{name}: read {last['records']} records, expected {n}")
    return {"client": name, **last, "cold_wall_s": passes[0].get("wall_s", passes[0].get("wall_ns", 0) / 1e9)}


def _fill(bootstrap: str, partitions: int) -> tuple[str, int]:
    """A new topic of RECORDS records (16-byte keys spread by murmur2) and the sum of their offsets."""
    import numpy as np

    from kafkawire.client import Client
    from kafkawire.columns import BinaryColumn

    rng = np.random.default_rng(7)
    topic = f"bench-per-record-{partitions}p-{uuid.uuid4().hex[:6]}"
    with Client(bootstrap, client_id="bench-fill") as client:
        client.create_topics([topic], num_partitions=partitions)
        step = 100_000
        for lo in range(0, RECORDS, step):
            m = min(step, RECORDS - lo)
            values = BinaryColumn((np.arange(m + 1, dtype=np.int64) * VALUE).astype(np.int32),
                                  rng.integers(97, 123, m * VALUE, dtype=np.uint8), None)
            keys = BinaryColumn((np.arange(m + 1, dtype=np.int64) * KEY).astype(np.int32),
                                rng.integers(97, 123, m * KEY, dtype=np.uint8), None)
            res = client.produce(topic, values, keys, compression=COMPRESSION)
            assert int(res.acknowledged.sum()) == m
        ends = client.list_offsets(topic, list(range(partitions)))
    counts = [ends[p].offset for p in range(partitions)]
    assert sum(counts) == RECORDS, counts
    return topic, sum(c * (c - 1) // 2 for c in counts)


def _median(xs: list[float | None]) -> float | None:
    ys = [x for x in xs if x is not None]
    return statistics.median(ys) if ys else None


def summarise(runs: list[dict[str, Any]], partitions: int) -> dict[str, Any]:
    mine = [r for r in runs if r["partitions"] == partitions]
    out: dict[str, Any] = {"partitions": partitions, "contenders": {}, "peer_over_kafkawire": {}}
    for name in CONTENDERS:
        rs = [r for r in mine if r["client"] == name]
        wall = _median([r["wall_s"] for r in rs])
        cpu = _median([r["cpu_s"] for r in rs])
        out["contenders"][name] = {
            "rounds": len(rs), "median_wall_s": wall, "median_cpu_s": cpu,
            "records_per_s": RECORDS / wall if wall else None,
            "cpu_ns_per_record": cpu / RECORDS * 1e9 if cpu else None,
        }
    base = {r["round"]: r for r in mine if r["client"] == "kafkawire"}
    for name in CONTENDERS:
        if name == "kafkawire":
            continue
        paired = [(r, base[r["round"]]) for r in mine if r["client"] == name and r["round"] in base]
        wall_ratios = [p["wall_s"] / k["wall_s"] for p, k in paired]
        cpu_ratios = [p["cpu_s"] / k["cpu_s"] for p, k in paired if p["cpu_s"] and k["cpu_s"]]
        out["peer_over_kafkawire"][name] = {
            "per_round_wall": [round(x, 3) for x in wall_ratios],
            "median_wall": _median(list(wall_ratios)),
            "per_round_cpu": [round(x, 3) for x in cpu_ratios],
            "median_cpu": _median(list(cpu_ratios)),
        }
    return out


def main() -> None:
    from kafkawire.testing import start_broker
    from kafkawire.testing.java import compile_java
    from kafkawire.testing.kafka import kafka_version

    if "java" in CONTENDERS:
        compile_java(PEER)
    runs: list[dict[str, Any]] = []
    load_before = os.getloadavg()
    started = time.time()
    with start_broker("kafka", heap="1g") as broker:
        bs = broker.bootstrap
        topics = {p: _fill(bs, p) for p in PARTITIONS}
        for r in range(ROUNDS):
            order = CONTENDERS[r % len(CONTENDERS):] + CONTENDERS[: r % len(CONTENDERS)]
            for partitions, (topic, offset_sum) in topics.items():
                for name in order:
                    run = _run(name, bs, topic, partitions, RECORDS)
                    if run["offset_sum"] is not None and run["offset_sum"] != offset_sum:
                        raise RuntimeError(f"{name}: offsets sum to {run['offset_sum']}, expected {offset_sum}")
                    runs.append({**run, "round": r, "partitions": partitions})
                    print(f"round {r} {partitions}p {name}: {RECORDS / run['wall_s'] / 1e6:.2f} M rec/s, "
                          f"{run['cpu_s'] / RECORDS * 1e9:.0f} ns CPU/record", file=sys.stderr, flush=True)
    result = {
        "benchmark": "bench_per_record_consume", "kafka_version": kafka_version(), "records": RECORDS,
        "value_bytes": VALUE, "key_bytes": KEY, "compression": COMPRESSION, "fetch_bytes": FETCH,
        "rounds": ROUNDS, "passes": PASSES, "started": started, "loadavg_before": load_before,
        "loadavg_after": os.getloadavg(), "summary": [summarise(runs, p) for p in PARTITIONS], "runs": runs,
    }
    text = json.dumps(result, indent=2)
    out = ROOT / "benchmarks" / ".results" / "bench_per_record_consume.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
    else:
        main()
