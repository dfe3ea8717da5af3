"""``Consumer`` prefetch on and off: a 6-partition topic read end to end from Apache Kafka 4.4, alternating.

Run (starts and stops its own Apache Kafka, or uses ``KAFKAWIRE_BENCH_BOOTSTRAP``)::

    .venv/bin/python benchmarks/bench_prefetch.py

One topic of ``KAFKAWIRE_BENCH_PARTITIONS`` (default 6) partitions holding ``KAFKAWIRE_BENCH_RECORDS`` (default
2,000,000) records of ``KAFKAWIRE_BENCH_VALUE`` (default 100) bytes with 16-byte keys, written once. Then
``KAFKAWIRE_BENCH_ROUNDS`` (default 7) rounds, each reading the whole topic once with ``Consumer(prefetch=False)``
and once with ``Consumer(prefetch=True)``, the order alternating from round to round: a new consumer each
time, assigned every partition from offset 0, ``poll()`` until every record is read, touching nothing but
the record count (``KAFKAWIRE_BENCH_WORK_US``, default 0, adds that many microseconds of busy work per
``poll()`` answer, standing in for an application's processing). Consumer settings are the defaults
(``fetch.max.bytes`` 50 MiB, ``max.partition.fetch.bytes`` 1 MiB) unless ``KAFKAWIRE_BENCH_FETCH_BYTES``
sets the per-partition size. Prints the median wall and CPU time (the process's, every thread) of each and
the ratio, and writes ``benchmarks/.results/bench_prefetch.json``.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from a checkout
    sys.path.insert(0, str(ROOT))

RECORDS = int(os.environ.get("KAFKAWIRE_BENCH_RECORDS", "2000000"))
VALUE = int(os.environ.get("KAFKAWIRE_BENCH_VALUE", "100"))
PARTITIONS = int(os.environ.get("KAFKAWIRE_BENCH_PARTITIONS", "6"))
ROUNDS = int(os.environ.get("KAFKAWIRE_BENCH_ROUNDS", "7"))
WORK_US = float(os.environ.get("KAFKAWIRE_BENCH_WORK_US", "0"))
FETCH = int(os.environ.get("KAFKAWIRE_BENCH_FETCH_BYTES", str(1 << 20)))


def _fill(bootstrap: str) -> str:
    import numpy as np

    from kafkawire.client import Client
    from kafkawire.columns import BinaryColumn

    topic = f"bench-prefetch-{os.getpid()}-{time.time_ns()}"
    data = np.random.default_rng(7).integers(97, 123, RECORDS * VALUE, dtype=np.uint8)
    values = BinaryColumn((np.arange(RECORDS + 1, dtype=np.int64) * VALUE).astype(np.int32), data, None)
    keys = BinaryColumn.from_pylist([b"key-%012d" % i for i in range(RECORDS)])
    with Client(bootstrap) as client:
        client.create_topics({topic: PARTITIONS})
        res = client.produce(topic, values, keys, timeout_ms=300_000)
        assert int(res.acknowledged.sum()) == RECORDS
        assert sum(lo.offset for lo in client.list_offsets(topic).values()) == RECORDS
    return topic


def _read(bootstrap: str, topic: str, prefetch: bool) -> dict[str, Any]:
    from kafkawire.client import Consumer

    wall, cpu = time.perf_counter(), time.process_time()
    got = 0
    with Consumer(bootstrap, prefetch=prefetch, partition_max_bytes=FETCH, client_id="bench-prefetch") as consumer:
        tps = [(topic, p) for p in range(PARTITIONS)]
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, 0)
        while got < RECORDS:
            for cols in consumer.poll(5_000).values():
                got += len(cols)
                if WORK_US:
                    until = time.perf_counter() + WORK_US / 1e6
                    while time.perf_counter() < until:
                        pass
        stats = consumer._prefetch  # noqa: SLF001 - how many fetches came from ahead (None when off)
        used = None if stats is None else {"used": stats.used, "sent": stats.sent, "drained": stats.drained}
    assert got == RECORDS, got
    return {"prefetch": prefetch, "records": got, "wall_s": time.perf_counter() - wall,
            "cpu_s": time.process_time() - cpu, "ahead": used}


def main() -> None:
    from kafkawire.testing import start_broker

    bootstrap = os.environ.get("KAFKAWIRE_BENCH_BOOTSTRAP")
    broker = None if bootstrap else start_broker("kafka", heap="1g")
    try:
        bs = bootstrap or broker.bootstrap  # type: ignore[union-attr]
        topic = _fill(bs)
        _read(bs, topic, True)  # warm-up (page cache, imports), untimed
        runs = []
        for r in range(ROUNDS):
            for prefetch in ((False, True) if r % 2 == 0 else (True, False)):
                run = _read(bs, topic, prefetch)
                runs.append({**run, "round": r})
                print(f"round {r} prefetch={prefetch}: {run['wall_s']:.3f} s wall, {run['cpu_s']:.3f} s CPU "
                      f"{run['ahead'] or ''}", file=sys.stderr, flush=True)
    finally:
        if broker is not None:
            broker.stop()
    summary = {}
    for prefetch in (False, True):
        mine = [x for x in runs if x["prefetch"] is prefetch]
        wall = statistics.median(x["wall_s"] for x in mine)
        summary["on" if prefetch else "off"] = {"wall_s": wall, "cpu_s": statistics.median(x["cpu_s"] for x in mine),
                                                "records_per_s": RECORDS / wall}
    ratio = summary["on"]["records_per_s"] / summary["off"]["records_per_s"]
    print("| prefetch | records/s | wall | CPU |\n|---|---:|---:|---:|")
    for name in ("off", "on"):
        s = summary[name]
        print(f"| {name} | {s['records_per_s'] / 1e6:.2f} M | {s['wall_s']:.3f} s | {s['cpu_s']:.3f} s |")
    print(f"prefetch on / off: {ratio:.2f}x records/s ({ROUNDS} rounds, {RECORDS} records, {PARTITIONS} partitions, "
          f"work {WORK_US:g} us per poll answer)")
    out = ROOT / "benchmarks" / ".results" / "bench_prefetch.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"records": RECORDS, "value_bytes": VALUE, "partitions": PARTITIONS, "rounds": ROUNDS,
                               "work_us": WORK_US, "fetch_bytes": FETCH, "summary": summary, "ratio": ratio,
                               "runs": runs}, indent=2) + "\n")


if __name__ == "__main__":
    main()
