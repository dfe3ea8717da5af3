"""Transactional against idempotent write throughput on Apache Kafka (issue 14).

Run (starts and stops its own Kafka; a few minutes on 2 cores)::

    .venv/bin/python benchmarks/bench_transactions.py

For each transaction size (``KW_BENCH_TXN_SIZES``, default ``10000,100000`` records) it writes
``KW_BENCH_TXN_RECORDS`` (default 200000) records of ``KW_BENCH_TXN_VALUE`` (default 100) bytes to a
3-partition topic (acks=all) in chunks of that size, two ways, alternating, ``KW_BENCH_TXN_ROUNDS``
(default 3) rounds, and reports the median wall time:

* ``idempotent``: a plain :class:`~kafkawire.Producer` (idempotent, the default) ``flush()``-ed after every
  chunk, so both modes wait for the acknowledgements of every chunk;
* ``transactional``: a producer with a ``transactional_id``: ``begin_transaction()``, the chunk,
  ``commit_transaction()`` (which flushes, then EndTxn), per chunk.

Two write paths: ``send`` (``Producer.send`` per record, then flush/commit) and ``column`` (one
``Client.produce`` call per chunk with a value column, the transactional one passing the producer's
transaction manager as ``producer_state``). The overhead of transactions is the extra round trips per
transaction (AddPartitionsToTxn per new partition, EndTxn, the coordinator's markers), so it shrinks as
transactions grow. Results: printed, and written to ``benchmarks/.results/bench_transactions.json``.
"""

from __future__ import annotations

import json
import os
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from kafkawire.client import Client, Producer
from kafkawire.columns import BinaryColumn
from kafkawire.testing import start_broker

RECORDS = int(os.environ.get("KW_BENCH_TXN_RECORDS", "200000"))
VALUE = int(os.environ.get("KW_BENCH_TXN_VALUE", "100"))
SIZES = [int(s) for s in os.environ.get("KW_BENCH_TXN_SIZES", "10000,100000").split(",")]
ROUNDS = int(os.environ.get("KW_BENCH_TXN_ROUNDS", "3"))


def _column(n: int) -> BinaryColumn:
    data = np.random.default_rng(7).integers(97, 123, n * VALUE, dtype=np.uint8)
    return BinaryColumn((np.arange(n + 1, dtype=np.int64) * VALUE).astype(np.int32), data, None)


def _run(bootstrap: str, topic: str, size: int, transactional: bool, path: str) -> float:
    options: dict[str, Any] = {"linger_ms": 60_000, "batch_records": size + 1}
    if transactional:
        options["transactional_id"] = f"bench-{uuid.uuid4().hex[:8]}"
    producer = Producer(bootstrap, **options)
    col = _column(size)
    values = col.to_pylist() if path == "send" else None
    try:
        # Both producers are warmed up outside the timed region by writing one record the way they will write
        # the chunks: connections, metadata and the producer id (InitProducerId; for the transactional one also
        # FindCoordinator and its first transaction) are per-producer costs, not per-transaction ones. Before
        # this, only the transactional producer's set-up (init_transactions) was outside the timer, and the
        # idempotent one paid its connections and InitProducerId inside it: that made transactional 100k
        # chunks look 24-34% *faster* than idempotent ones.
        if transactional:
            producer.init_transactions()
            producer.begin_transaction()
        producer.send(topic, b"warm-up")
        if transactional:
            producer.commit_transaction()
        else:
            producer.flush()
        started = time.perf_counter()
        for _ in range(RECORDS // size):
            if transactional:
                producer.begin_transaction()
            if path == "send":
                assert values is not None
                for v in values:
                    producer.send(topic, v)
            else:
                producer.client.produce(topic, col, producer_state=producer.transaction_manager)
            if transactional:
                producer.commit_transaction()
            else:
                producer.flush()
        return time.perf_counter() - started
    finally:
        producer.close()


def main() -> None:
    broker = start_broker("kafka")
    results: list[dict[str, Any]] = []
    try:
        topic = f"bench-txn-{uuid.uuid4().hex[:6]}"
        with Client(broker.bootstrap) as c:
            c.create_topics([topic], num_partitions=3)
        _run(broker.bootstrap, topic, SIZES[0], True, "column")  # warm-up: coordinator, connections
        for path in ("column", "send"):
            for size in SIZES:
                times: dict[bool, list[float]] = {False: [], True: []}
                for _ in range(ROUNDS):
                    for transactional in (False, True):
                        times[transactional].append(_run(broker.bootstrap, topic, size, transactional, path))
                idem, txn = statistics.median(times[False]), statistics.median(times[True])
                row = {
                    "path": path,
                    "records_per_transaction": size,
                    "records": RECORDS // size * size,
                    "idempotent_s": round(idem, 3),
                    "transactional_s": round(txn, 3),
                    "idempotent_records_per_s": round(RECORDS // size * size / idem),
                    "transactional_records_per_s": round(RECORDS // size * size / txn),
                    "overhead_pct": round((txn / idem - 1) * 100, 1),
                }
                results.append(row)
                print(json.dumps(row), flush=True)
    finally:
        broker.stop()
    print("\n| path | records/txn | idempotent rec/s | transactional rec/s | overhead |")
    print("|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['path']} | {r['records_per_transaction']:,} | {r['idempotent_records_per_s']:,} | "
            f"{r['transactional_records_per_s']:,} | {r['overhead_pct']:+.1f}% |"
        )
    out = Path(__file__).parent / ".results" / "bench_transactions.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
