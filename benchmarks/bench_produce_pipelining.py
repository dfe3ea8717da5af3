"""``Client.produce`` with 1 and with 5 requests in flight per broker (``max_in_flight_requests_per_connection``),
alternating, on Apache Kafka 4.4.

Run (starts and stops its own Apache Kafka, or uses ``KAFKAWIRE_BENCH_BOOTSTRAP``)::

    .venv/bin/python benchmarks/bench_produce_pipelining.py

Each round writes ``KAFKAWIRE_BENCH_RECORDS`` (default 1,000,000) values of ``KAFKAWIRE_BENCH_VALUE`` (default
100) random bytes, no key, with one ``Client.produce`` call (acks=all, idempotent, 1 MB batches) to a new
topic of ``KAFKAWIRE_BENCH_PARTITIONS`` (default 1) partitions, once with 1 request in flight and once with 5,
the order alternating, ``KAFKAWIRE_BENCH_ROUNDS`` (default 5) rounds. Timed: a new client's creation to the
last acknowledgement (the topic is created before and deleted after, untimed). Prints each run and the
medians (wall, and this process's CPU), and writes ``benchmarks/.results/bench_produce_pipelining.json``.
"""

from __future__ import annotations

import json
import os
import statistics
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
ROUNDS = int(os.environ.get("KAFKAWIRE_BENCH_ROUNDS", "5"))


def _run(bootstrap: str, values: Any, in_flight: int) -> dict[str, Any]:
    from kafkawire.client import Client

    topic = f"bench-pipelining-{uuid.uuid4().hex[:8]}"
    with Client(bootstrap) as admin:
        admin.create_topics({topic: PARTITIONS})
        try:
            wall, cpu = time.perf_counter(), time.process_time()
            with Client(bootstrap, client_id="bench", enable_idempotence=True,
                        max_in_flight_requests_per_connection=in_flight) as client:
                res = client.produce(topic, values, acks=-1)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            assert int(res.acknowledged.sum()) == RECORDS
            assert sum(lo.offset for lo in admin.list_offsets(topic).values()) == RECORDS
        finally:
            admin.delete_topics([topic], missing_ok=True)
    return {"in_flight": in_flight, "wall_s": wall, "cpu_s": cpu}


def main() -> None:
    import numpy as np

    from kafkawire.columns import BinaryColumn
    from kafkawire.testing import start_broker

    data = np.random.default_rng(7).integers(97, 123, RECORDS * VALUE, dtype=np.uint8)
    values = BinaryColumn((np.arange(RECORDS + 1, dtype=np.int64) * VALUE).astype(np.int32), data, None)
    bootstrap = os.environ.get("KAFKAWIRE_BENCH_BOOTSTRAP")
    broker = None if bootstrap else start_broker("kafka", heap="1g")
    runs = []
    try:
        bs = bootstrap or broker.bootstrap  # type: ignore[union-attr]
        _run(bs, values, 5)  # warm-up, untimed
        for r in range(ROUNDS):
            for k in ((1, 5) if r % 2 == 0 else (5, 1)):
                run = {**_run(bs, values, k), "round": r}
                runs.append(run)
                print(f"round {r} in flight {k}: {run['wall_s']:.2f} s wall, {run['cpu_s']:.2f} s CPU",
                      file=sys.stderr, flush=True)
    finally:
        if broker is not None:
            broker.stop()
    summary = {}
    for k in (1, 5):
        mine = [x for x in runs if x["in_flight"] == k]
        wall = statistics.median(x["wall_s"] for x in mine)
        summary[k] = {"wall_s": wall, "cpu_s": statistics.median(x["cpu_s"] for x in mine),
                      "records_per_s": RECORDS / wall}
    print("| requests in flight | records/s | wall | CPU |\n|---:|---:|---:|---:|")
    for k in (1, 5):
        s = summary[k]
        print(f"| {k} | {s['records_per_s'] / 1e6:.3f} M | {s['wall_s']:.2f} s | {s['cpu_s']:.2f} s |")
    print(f"5 / 1 in flight: {summary[5]['records_per_s'] / summary[1]['records_per_s']:.2f}x records/s "
          f"({ROUNDS} rounds, {RECORDS} x {VALUE} B, {PARTITIONS} partition(s))")
    out = ROOT / "benchmarks" / ".results" / "bench_produce_pipelining.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"records": RECORDS, "value_bytes": VALUE, "partitions": PARTITIONS,
                               "rounds": ROUNDS, "summary": summary, "runs": runs}, indent=2) + "\n")


if __name__ == "__main__":
    main()
