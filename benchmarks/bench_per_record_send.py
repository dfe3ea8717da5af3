"""Per-record sends, like for like (issue 32): kafkawire ``Producer.send`` vs confluent-kafka ``produce()`` +
``poll(0)`` per record, and Kafka's own ``ProducerPerformance``, on Apache Kafka 4.4.

Run (starts and stops its own Kafka; prints JSON)::

    .venv/bin/python benchmarks/bench_per_record_send.py

Every contender writes ``KW_BENCH_RECORDS`` (default 1,000,000) records of ``KW_BENCH_VALUE`` (100) bytes with
``KW_BENCH_KEY`` (16) byte keys, one call per record, to a fresh 6-partition topic: acks=all, idempotent, lz4,
linger 5 ms; then waits for every acknowledgement (``flush()``). Each run is a child process of its own;
``KW_BENCH_ROUNDS`` (default 5) rounds, the contenders' order alternating (reversed every other round), so a
round's contenders ran side by side in time and the per-round ratio is a paired measurement. Reported per
contender: median records/s and CPU per record (user+system of the child process over the timed region, all
threads: librdkafka's and kafkawire's sender included), and the median of the per-round ratios
kafkawire/confluent-kafka (throughput) and confluent-kafka/kafkawire (CPU per record).

The timed region runs from creating the producer to the end of ``flush()``, after a warm-up pass of
``KW_BENCH_WARMUP`` (default 100,000) records by the same process (imports, connections and metadata out of
the way). Every run's topic is checked to hold exactly ``RECORDS`` records afterwards.

``ProducerPerformance`` (``--record-size 100``, no keys: it has no key option; same acks/idempotence/lz4/linger,
``KW_BENCH_JAVA_PROPS`` adds more) reports its own throughput; its CPU figure is the whole JVM process's
(start-up and JIT included, so an upper bound). It runs when the kafka tools jar resolves (it is in the Kafka
distribution kafkawire.testing starts), else it is reported as skipped with the reason.

Figures from a loaded machine are not headline figures: the JSON carries ``loadavg`` before and after.
"""

from __future__ import annotations

import json
import os
import resource
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
KEY = int(os.environ.get("KW_BENCH_KEY", "16"))
ROUNDS = int(os.environ.get("KW_BENCH_ROUNDS", "5"))
WARMUP = int(os.environ.get("KW_BENCH_WARMUP", "100000"))
PARTITIONS = 6
LINGER_MS = 5
JAVA_PROPS = os.environ.get("KW_BENCH_JAVA_PROPS", "").split()
CONTENDERS = [c for c in os.environ.get("KW_BENCH_CONTENDERS", "kafkawire,confluent-kafka,java").split(",") if c]


def _records(n: int, seed: int) -> tuple[list[bytes], list[bytes]]:
    """``n`` values of VALUE random lowercase letters and ``n`` distinct KEY-byte keys."""
    import numpy as np

    rng = np.random.default_rng(seed)
    data = rng.integers(97, 123, n * VALUE, dtype=np.uint8).tobytes()
    values = [data[i * VALUE : (i + 1) * VALUE] for i in range(n)]
    keys = [(b"%0*d" % (KEY, i))[-KEY:] for i in range(n)]
    return values, keys


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


# --------------------------------------------------------------------------------------- the workers
def _kafkawire(bootstrap: str, topic: str, values: list[bytes], keys: list[bytes]) -> None:
    from kafkawire.client import Producer

    with Producer(bootstrap, acks=-1, compression="lz4", linger_ms=LINGER_MS) as producer:
        send = producer.send
        for v, k in zip(values, keys):
            send(topic, v, k)
        producer.flush()


def _confluent(bootstrap: str, topic: str, values: list[bytes], keys: list[bytes]) -> None:
    from confluent_kafka import Producer

    producer = Producer({
        "bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True, "compression.type": "lz4",
        "linger.ms": LINGER_MS, "partitioner": "murmur2_random",
        # Room for a fast loop (its default 100k messages would make produce() raise BufferError).
        "queue.buffering.max.messages": 2_000_000, "queue.buffering.max.kbytes": 1 << 20,
    })
    produce, poll = producer.produce, producer.poll
    for v, k in zip(values, keys):
        produce(topic, v, k)
        poll(0)
    if producer.flush(120) != 0:
        raise RuntimeError("confluent-kafka: records left after flush")


WORKERS = {"kafkawire": _kafkawire, "confluent-kafka": _confluent}


def worker(name: str, bootstrap: str, topic: str, warm_topic: str) -> None:
    values, keys = _records(RECORDS, 1)
    warm_values, warm_keys = _records(WARMUP, 2)
    run = WORKERS[name]
    run(bootstrap, warm_topic, warm_values, warm_keys)
    cpu0, t0 = _cpu(), time.perf_counter()
    run(bootstrap, topic, values, keys)
    wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
    print(json.dumps({"records": RECORDS, "wall_s": wall, "cpu_s": cpu}))


# ---------------------------------------------------------------------------------------- the driver
def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _count(bootstrap: str, topic: str) -> int:
    from kafkawire.client import Client

    with Client(bootstrap) as c:
        return sum(o.offset for o in c.list_offsets(topic).values())


def _java(bootstrap: str, topic: str) -> dict[str, Any]:
    from kafkawire.testing.java import java_command

    peer = ROOT / "tests" / "interop" / "java" / "KafkaPeer.java"
    cmd = java_command(peer, "--topic", topic, "--num-records", str(RECORDS + WARMUP), "--warmup-records",
                       str(WARMUP), "--record-size", str(VALUE), "--throughput", "-1", "--producer-props",
                       f"bootstrap.servers={bootstrap}", "acks=all", "enable.idempotence=true", "compression.type=lz4",
                       f"linger.ms={LINGER_MS}", *JAVA_PROPS,
                       main="org.apache.kafka.tools.ProducerPerformance", heap="1g")
    cpu0 = _children_cpu()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=True)
    lines = [x for x in proc.stdout.splitlines() if "records sent" in x]
    line = ([x for x in lines if "steady" in x.lower()] or lines)[-1]
    words = line.replace(",", " ").split()
    per_s = float(words[words.index("records/sec") - 1])
    return {"records": RECORDS, "wall_s": RECORDS / per_s, "cpu_s": _children_cpu() - cpu0, "cpu_is_whole_jvm": True}


def _one(name: str, bootstrap: str) -> dict[str, Any]:
    from kafkawire.client import Client

    topic, warm = f"prs-{name}-{uuid.uuid4().hex[:8]}", f"prs-warm-{uuid.uuid4().hex[:8]}"
    with Client(bootstrap) as c:
        c.create_topics({topic: PARTITIONS, warm: PARTITIONS})
    if name == "java":
        res = _java(bootstrap, topic)
        expected = RECORDS + WARMUP  # ProducerPerformance writes its warm-up records to the same topic
    else:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, bootstrap, topic, warm]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"{name} failed: {proc.stderr[-3000:]}")
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        expected = RECORDS
    written = _count(bootstrap, topic)
    if written != expected:
        raise RuntimeError(f"{name}: {written} records in {topic}, expected {expected}")
    res["records_per_s"] = res["records"] / res["wall_s"]
    res["cpu_us_per_record"] = res["cpu_s"] / res["records"] * 1e6
    return res


def _java_available() -> str | None:
    """None when ProducerPerformance can run, else why not."""
    try:
        from kafkawire.testing.java import java_command

        java_command(ROOT / "tests" / "interop" / "java" / "KafkaPeer.java", "--help",
                     main="org.apache.kafka.tools.ProducerPerformance")
    except Exception as e:  # no JDK, no jar: reported, not fatal
        return f"{type(e).__name__}: {e}"
    return None


def main() -> None:
    from kafkawire.testing import start_broker

    contenders = list(CONTENDERS)
    skipped: dict[str, str] = {}
    if "java" in contenders:
        why = _java_available()
        if why is not None:
            contenders.remove("java")
            skipped["java"] = why
    load_before = os.getloadavg()
    broker = start_broker("kafka")
    rounds: list[dict[str, dict[str, Any]]] = []
    try:
        for r in range(ROUNDS):
            order = contenders if r % 2 == 0 else contenders[::-1]
            rounds.append({name: _one(name, broker.bootstrap) for name in order})
    finally:
        broker.stop()
    summary: dict[str, Any] = {}
    for name in contenders:
        summary[name] = {
            "records_per_s": round(statistics.median(x[name]["records_per_s"] for x in rounds)),
            "cpu_us_per_record": round(statistics.median(x[name]["cpu_us_per_record"] for x in rounds), 3),
        }
    ratios: dict[str, float] = {}
    if "kafkawire" in contenders:
        for peer in (c for c in contenders if c != "kafkawire"):
            ratios[f"throughput kafkawire/{peer}"] = round(statistics.median(
                x["kafkawire"]["records_per_s"] / x[peer]["records_per_s"] for x in rounds), 3)
            ratios[f"cpu per record {peer}/kafkawire"] = round(statistics.median(
                x[peer]["cpu_us_per_record"] / x["kafkawire"]["cpu_us_per_record"] for x in rounds), 3)
    print(json.dumps({
        "bench": "per-record send", "records": RECORDS, "value_bytes": VALUE, "key_bytes": KEY,
        "partitions": PARTITIONS, "settings": "acks=all idempotent lz4 linger.ms=5", "rounds": ROUNDS,
        "summary": summary, "median_of_round_ratios": ratios, "skipped": skipped,
        "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
        "per_round": rounds,
    }, indent=1))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(*sys.argv[2:6])
    else:
        main()
