"""Bytes sent per Fetch request with and without incremental fetch sessions (KIP-227, issue 16).

Run (starts and stops its own Apache Kafka; about a minute on 2 cores)::

    .venv/bin/python benchmarks/bench_fetch_sessions.py

One topic of ``KW_BENCH_FS_PARTITIONS`` (default 1000) partitions on one broker. Two clients, one with
``fetch_sessions=True`` (the default) and one with ``fetch_sessions=False``, each read all partitions with
``Client.fetch_many`` for ``KW_BENCH_FS_ROUNDS`` (default 50) rounds; before every round one record is
written to each of ``KW_BENCH_FS_CHANGED`` (default 10) random partitions, so a few fetch offsets move per
round as in a consumer tailing a mostly idle topic. Reported from :meth:`Client.metrics` (``apis.Fetch``):
bytes sent per Fetch request (the first, full, request separately from the rest) and bytes received, and
the median wall time of a round. Results: printed, and written to ``benchmarks/.results/bench_fetch_sessions.json``.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from os import environ
from pathlib import Path
from typing import Any

from kafkawire.client import Client
from kafkawire.testing import start_broker

PARTITIONS = int(environ.get("KW_BENCH_FS_PARTITIONS", "1000"))
ROUNDS = int(environ.get("KW_BENCH_FS_ROUNDS", "50"))
CHANGED = int(environ.get("KW_BENCH_FS_CHANGED", "10"))


def _fetch_stats(client: Client) -> tuple[int, int, int]:
    f = client.metrics()["apis"].get("Fetch", {})
    return f.get("requests", 0), f.get("bytes_sent", 0), f.get("bytes_received", 0)


def main() -> dict[str, Any]:
    broker = start_broker("kafka")
    try:
        topic = "fetch-sessions-bench"
        with Client(broker.bootstrap) as admin:
            admin.create_topics([topic], num_partitions=PARTITIONS, timeout_ms=120_000)
            admin.produce(topic, [b"x" * 100] * PARTITIONS, keys=None)  # something in most partitions
        clients = {"sessions": Client(broker.bootstrap), "no sessions": Client(broker.bootstrap, fetch_sessions=False)}
        offsets = {name: {(topic, p): 0 for p in range(PARTITIONS)} for name in clients}
        first: dict[str, tuple[int, int, int]] = {}
        walls: dict[str, list[float]] = {name: [] for name in clients}
        rng = random.Random(16)
        with Client(broker.bootstrap) as writer:
            for r in range(ROUNDS + 1):
                if r:
                    for p in rng.sample(range(PARTITIONS), CHANGED):
                        writer.produce(topic, [b"r%d" % r], partition=p)
                for name, c in clients.items():
                    t0 = time.perf_counter()
                    res = c.fetch_many(offsets[name], max_wait_ms=10, timeout_ms=60_000)
                    if r:
                        walls[name].append(time.perf_counter() - t0)
                    offsets[name] = {tp: x.next_offset for tp, x in res.items()}
                    if not r:
                        first[name] = _fetch_stats(c)
        assert offsets["sessions"] == offsets["no sessions"], "the two clients read different data"
        out: dict[str, Any] = {"partitions": PARTITIONS, "rounds": ROUNDS, "changed_per_round": CHANGED}
        for name, c in clients.items():
            reqs, sent, recv = _fetch_stats(c)
            r0, s0, v0 = first[name]
            out[name] = {
                "first_requests": r0,
                "first_bytes_sent": s0,
                "later_requests": reqs - r0,
                "later_bytes_sent_per_request": (sent - s0) / max(1, reqs - r0),
                "later_bytes_received_per_request": (recv - v0) / max(1, reqs - r0),
                "round_median_ms": statistics.median(walls[name]) * 1000,
            }
            c.close()
        return out
    finally:
        broker.stop()


if __name__ == "__main__":
    result = main()
    print(json.dumps(result, indent=2))
    path = Path(__file__).parent / ".results" / "bench_fetch_sessions.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")
