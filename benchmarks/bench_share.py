"""Share group throughput (KIP-932) against Apache Kafka 4.4: kafkawire's ``ShareConsumer`` vs Java's
``KafkaShareConsumer``, both with implicit acknowledgement, in alternating rounds.

Run (starts and stops its own Apache Kafka)::

    .venv/bin/python benchmarks/bench_share.py

A topic of ``KAFKAWIRE_BENCH_RECORDS`` (default 1,000,000) records of ``KAFKAWIRE_BENCH_VALUE`` (default
100) bytes on ``KAFKAWIRE_BENCH_PARTITIONS`` (default 1) partitions is written once. Every run is a child
process joining a share group of its own (``share.auto.offset.reset=earliest``, so it gets every record)
and consuming until it has every record: kafkawire polls columns (``len(value)`` per poll), Java reads
each record's value length (``benchmarks/java/ShareConsume.java``); both ask ``max.poll.records``
``KAFKAWIRE_BENCH_MAX_POLL`` (default 500, Java's default) and end with a commit (commitSync) that accepts
the last poll. Timed region: from creating the consumer to the commit's answer (group join included;
interpreter/JVM start excluded), wall time and the process's CPU time over the region (all of the JVM's
threads). ``KAFKAWIRE_BENCH_ROUNDS`` (default 3) rounds, medians reported; results also go to
``benchmarks/.results/bench_share.json``.
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
PARTITIONS = int(os.environ.get("KAFKAWIRE_BENCH_PARTITIONS", "1"))
ROUNDS = int(os.environ.get("KAFKAWIRE_BENCH_ROUNDS", "3"))
MAX_POLL = int(os.environ.get("KAFKAWIRE_BENCH_MAX_POLL", "500"))
JAVA = ROOT / "benchmarks" / "java" / "ShareConsume.java"
CONTENDERS = ["kafkawire", "java"]


def _kafkawire_child(bootstrap: str, topic: str, group: str, n: int) -> None:
    """The kafkawire contender, in a child process: prints the timed region as JSON."""
    from kafkawire.client import ShareConsumer

    cpu0, t0 = time.process_time(), time.perf_counter()
    got = nbytes = 0
    with ShareConsumer(bootstrap, group_id=group, max_poll_records=MAX_POLL) as c:
        c.subscribe([topic])
        while got < n:
            for cols in c.poll(1000).values():
                got += len(cols)
                nbytes += cols.value.nbytes
        c.commit(timeout_ms=30_000)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    print(json.dumps({"records": got, "bytes": nbytes, "wall": wall, "cpu": cpu}), flush=True)


def _new_group(admin: Any) -> str:
    from kafkawire.admin import AlterConfigOp, ConfigResource

    group = f"bench-share-{uuid.uuid4().hex[:8]}"
    admin.alter_configs({ConfigResource.group(group): [AlterConfigOp("share.auto.offset.reset", "set", "earliest")]})
    return group


def run(name: str, bootstrap: str, topic: str, group: str) -> dict[str, Any]:
    from kafkawire.testing.java import java_command

    if name == "java":
        cmd = java_command(JAVA, bootstrap, topic, group, str(RECORDS), str(MAX_POLL), heap="1g")
    else:
        cmd = [sys.executable, __file__, "--child", bootstrap, topic, group, str(RECORDS)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if res.returncode != 0:
        raise RuntimeError(f"{name} failed ({res.returncode}):\n{res.stderr[-3000:]}")
    line = next(ln for ln in reversed(res.stdout.splitlines()) if ln.startswith("{"))
    out = {"contender": name, **json.loads(line)}
    if out["records"] < RECORDS:
        raise RuntimeError(f"{name} read {out['records']} of {RECORDS} records")
    return out


def main() -> None:
    import numpy as np

    from kafkawire.admin import Admin
    from kafkawire.client import Client
    from kafkawire.columns import BinaryColumn
    from kafkawire.testing import start_broker
    from kafkawire.testing.java import compile_java

    compile_java(JAVA)
    broker = start_broker("kafka", heap="1g")
    runs: list[dict[str, Any]] = []
    try:
        client = Client(broker.bootstrap)
        admin = Admin(client=client)
        topic = f"bench-share-{uuid.uuid4().hex[:8]}"
        client.create_topics({topic: PARTITIONS})
        per = RECORDS // PARTITIONS
        data = np.random.default_rng(7).integers(97, 123, per * VALUE, dtype=np.uint8)
        values = BinaryColumn((np.arange(per + 1, dtype=np.int64) * VALUE).astype(np.int32), data, None)
        for p in range(PARTITIONS):
            client.produce(topic, values, partition=p, timeout_ms=300_000)
        for rnd in range(ROUNDS):
            order = CONTENDERS if rnd % 2 == 0 else CONTENDERS[::-1]
            for name in order:
                r = run(name, broker.bootstrap, topic, _new_group(admin))
                r["round"] = rnd
                runs.append(r)
                print(
                    f"round {rnd} {name}: {r['records']} records, {r['wall']:.2f} s wall, {r['cpu']:.2f} s CPU",
                    file=sys.stderr,
                    flush=True,
                )
        client.close()
    finally:
        broker.stop()
    out = ROOT / "benchmarks" / ".results" / "bench_share.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "records": RECORDS,
                "value": VALUE,
                "partitions": PARTITIONS,
                "max_poll": MAX_POLL,
                "load": os.getloadavg(),
                "runs": runs,
            },
            indent=1,
        )
    )
    print(markdown(runs))


def markdown(runs: list[dict[str, Any]]) -> str:
    med = {
        n: {k: statistics.median(r[k] for r in runs if r["contender"] == n) for k in ("wall", "cpu")}
        for n in CONTENDERS
    }
    lines = [
        "| contender | wall s (median) | records/s | CPU s (median) | wall vs kafkawire | CPU vs kafkawire |",
        "|---|---|---|---|---|---|",
    ]
    for n in CONTENDERS:
        m, k = med[n], med["kafkawire"]
        lines.append(
            f"| {n} | {m['wall']:.2f} | {RECORDS / m['wall']:,.0f} | {m['cpu']:.2f} | "
            f"{m['wall'] / k['wall']:.2f}x | {m['cpu'] / k['cpu']:.2f}x |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _kafkawire_child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        main()
