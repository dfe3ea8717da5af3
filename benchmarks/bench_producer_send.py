"""``Producer.send()`` per record, then ``flush()``: records/s on Apache Kafka.

Run (starts and stops its own Kafka)::

    .venv/bin/python benchmarks/bench_producer_send.py

Writes ``KW_BENCH_SEND_RECORDS`` (default 200000) records of ``KW_BENCH_SEND_VALUE`` (default 100) bytes with
``Producer.send`` in one thread to a 3-partition topic (acks=all, idempotent, the default ``linger_ms``), then
``flush()``; repeats ``KW_BENCH_SEND_ROUNDS`` (default 5) times, a fresh producer each, and prints the median
wall time and records/s. This is the path the background sender (which writes lingered buffers) sits on, so a
regression in ``send()``'s own cost or in how writes interleave with it shows here.
"""

from __future__ import annotations

import json
import os
import statistics
import time
import uuid

import numpy as np

from kafkawire.client import Client, Producer
from kafkawire.testing import start_broker

RECORDS = int(os.environ.get("KW_BENCH_SEND_RECORDS", "200000"))
VALUE = int(os.environ.get("KW_BENCH_SEND_VALUE", "100"))
ROUNDS = int(os.environ.get("KW_BENCH_SEND_ROUNDS", "5"))


def _values() -> list[bytes]:
    data = np.random.default_rng(7).integers(97, 123, RECORDS * VALUE, dtype=np.uint8).tobytes()
    return [data[i * VALUE : (i + 1) * VALUE] for i in range(RECORDS)]


def _run(bootstrap: str, topic: str, values: list[bytes]) -> float:
    with Producer(bootstrap) as producer:
        producer.send(topic, b"warm-up")
        producer.flush()
        started = time.perf_counter()
        for v in values:
            producer.send(topic, v)
        producer.flush()
        return time.perf_counter() - started


def main() -> None:
    broker = start_broker("kafka")
    try:
        topic = f"bench-send-{uuid.uuid4().hex[:6]}"
        with Client(broker.bootstrap) as c:
            c.create_topics([topic], num_partitions=3)
        values = _values()
        times = [_run(broker.bootstrap, topic, values) for _ in range(ROUNDS)]
    finally:
        broker.stop()
    med = statistics.median(times)
    print(json.dumps({"records": RECORDS, "value_bytes": VALUE, "rounds": [round(t, 3) for t in times],
                      "median_s": round(med, 3), "records_per_s": round(RECORDS / med)}))


if __name__ == "__main__":
    main()
