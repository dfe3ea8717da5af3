"""Client throughput: consume and produce 1M x 100 B records on a local noida-db broker, kafkawire's
blocking client against confluent-kafka, kafka-python and aiokafka, on the same topic in the same run.

Run (about 3 minutes on 2 cores; starts and stops its own broker)::

    .venv/bin/python -m pytest benchmarks/bench_client.py -s -p no:cacheprovider \\
        --benchmark-columns=min,median,max,rounds --benchmark-sort=name

What is measured (wall-clock time: the broker's work and the peers' background threads are part of
an end-to-end read or write):

* ``consume``: read every record of the topic from offset 0, starting with a new client/consumer each
  round (connection and metadata included). kafkawire: ``Client.fetch`` in a loop, each fetch decoded
  into :class:`kafkawire.RecordColumns`. confluent-kafka: ``Consumer.consume(num_messages=10000)`` on an
  assigned partition, calling ``value()`` on every message. kafka-python: ``KafkaConsumer.poll`` and
  aiokafka: ``AIOKafkaConsumer.getmany`` (each record's value read).
* ``produce``: write the records (acks=all; kafkawire and confluent-kafka idempotent, their defaults)
  and wait for every acknowledgement. kafkawire: one ``Client.produce`` call with a value column.
  Peers: their ``send``/``produce`` per record, then ``flush``.

Sizes: ``KW_BENCH_CLIENT_RECORDS`` (default 1000000) records of ``KW_BENCH_CLIENT_VALUE`` (default 100)
bytes, no key, one partition. The pure-Python peers produce ``KW_BENCH_CLIENT_SLOW`` (default 200000)
records; everything is compared per record. noida-db ignores Fetch size limits and returns the whole
partition from the fetch offset in one response (about 110 MB here), which every client must accept:
librdkafka is given ``receive.message.max.bytes`` 1 GB for it.

The summary (median, records/s, ratio kafkawire/peer) is printed at the end and written to
``benchmarks/.results/bench_client.json``.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kafkawire.client import Client
from kafkawire.columns import BinaryColumn
from kafkawire.testing import start_broker

RECORDS = int(os.environ.get("KW_BENCH_CLIENT_RECORDS", "1000000"))
VALUE = int(os.environ.get("KW_BENCH_CLIENT_VALUE", "100"))
SLOW = min(RECORDS, int(os.environ.get("KW_BENCH_CLIENT_SLOW", "200000")))
TOPIC = "bench-client"
BIG_RESPONSES = 1_000_000_000  # see the module docstring: noida-db answers a fetch with the whole log
RESULTS: list[dict[str, Any]] = []


def _values(n: int) -> BinaryColumn:
    """``n`` values of VALUE letters (compressible like text, though no compression is used)."""
    data = np.random.default_rng(7).integers(97, 123, n * VALUE, dtype=np.uint8)
    return BinaryColumn((np.arange(n + 1, dtype=np.int64) * VALUE).astype(np.int32), data, None)


@pytest.fixture(scope="module")
def broker() -> Iterator[Any]:
    b = start_broker("noida")
    try:
        yield b
    finally:
        b.stop()


@pytest.fixture(scope="module")
def topic(broker: Any) -> str:
    """The consume topic: RECORDS records written once by kafkawire."""
    with Client(broker.bootstrap) as client:
        client.create_topics([TOPIC])
        client.produce(TOPIC, _values(RECORDS))
        assert client.list_offsets(TOPIC)[0].offset == RECORDS
    return TOPIC


@pytest.fixture(scope="module", autouse=True)
def summary() -> Iterator[None]:
    yield
    if not RESULTS:
        return
    lines = [
        "",
        "| case | client | records | median | records/s | kafkawire speed-up |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for case in ("consume", "produce"):
        rows = [r for r in RESULTS if r["case"] == case]
        base = next((r for r in rows if r["client"] == "kafkawire"), None)
        for r in rows:
            ratio = base["records_per_s"] / r["records_per_s"] if base else float("nan")
            r["kafkawire_speedup"] = round(ratio, 2)
            lines.append(
                f"| {case} | {r['client']} | {r['records']} | {r['median_s'] * 1e3:.0f} ms | "
                f"{r['records_per_s'] / 1e6:.3f} M | {ratio:.2f}x |"
            )
    print("\n".join(lines))
    out = Path(__file__).parent / ".results" / "bench_client.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"records": RECORDS, "value_bytes": VALUE, "results": RESULTS}, indent=2) + "\n")


def _measure(
    benchmark: Any,
    case: str,
    client: str,
    fn: Callable[..., int],
    records: int,
    rounds: int,
    setup: Callable[[], tuple[tuple[Any, ...], dict[str, Any]]] | None = None,
) -> None:
    benchmark.group = case
    benchmark.name = client
    got = benchmark.pedantic(fn, setup=setup, rounds=rounds, iterations=1, warmup_rounds=0)
    assert got == records, f"{client} {case}: {got} records, expected {records}"
    median = benchmark.stats.stats.median
    benchmark.extra_info.update(records=records, records_per_s=round(records / median))
    RESULTS.append({"case": case, "client": client, "records": records, "median_s": median,
                    "records_per_s": records / median, "rounds": rounds})


# ------------------------------------------------------------------------------------------- consume


def _kafkawire_consume(bootstrap: str, topic: str) -> int:
    with Client(bootstrap, client_id="bench") as client:
        end = client.list_offsets(topic, [0])[0].offset
        pos = got = 0
        while pos < end:
            cols = client.fetch(topic, 0, pos, max_bytes=16 << 20)
            got += len(cols)
            pos = cols.next_offset
        return got


def _confluent_consume(bootstrap: str, topic: str, n: int) -> int:
    import confluent_kafka as ck

    consumer = ck.Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": f"bench-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": False,
        "receive.message.max.bytes": BIG_RESPONSES,
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


def _kafka_python_consume(bootstrap: str, topic: str, n: int) -> int:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest",
                             fetch_max_bytes=BIG_RESPONSES, max_partition_fetch_bytes=BIG_RESPONSES)
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


def _aiokafka_consume(bootstrap: str, topic: str, n: int) -> int:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def main() -> int:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                                    auto_offset_reset="earliest", fetch_max_bytes=BIG_RESPONSES,
                                    max_partition_fetch_bytes=BIG_RESPONSES)
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


CONSUMERS = ["kafkawire", "confluent-kafka", "aiokafka", "kafka-python"]


@pytest.mark.parametrize("client", CONSUMERS)
def test_consume(benchmark: Any, broker: Any, topic: str, client: str) -> None:
    bs = broker.bootstrap
    fns: dict[str, Callable[[], int]] = {
        "kafkawire": lambda: _kafkawire_consume(bs, topic),
        "confluent-kafka": lambda: _confluent_consume(bs, topic, RECORDS),
        "aiokafka": lambda: _aiokafka_consume(bs, topic, RECORDS),
        "kafka-python": lambda: _kafka_python_consume(bs, topic, RECORDS),
    }
    rounds = 5 if client in ("kafkawire", "confluent-kafka") else 2
    _measure(benchmark, "consume", client, fns[client], RECORDS, rounds)


# ------------------------------------------------------------------------------------------- produce


class _Topics:
    """A new empty topic for every produce round (created outside the timed region); the previous
    round's topic is deleted first, so the broker does not keep (and snapshot) every round's data."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.current: str | None = None

    def __call__(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        with Client(self.bootstrap) as client:
            if self.current:
                client.delete_topics([self.current], missing_ok=True)
            self.current = f"bench-produce-{uuid.uuid4().hex[:8]}"
            client.create_topics([self.current])
        return (self.current,), {}

    def drop(self) -> None:
        if self.current:
            with Client(self.bootstrap) as client:
                client.delete_topics([self.current], missing_ok=True)


def _kafkawire_produce(bootstrap: str, values: BinaryColumn, topic: str) -> int:
    with Client(bootstrap, client_id="bench") as client:
        result = client.produce(topic, values)
    return int(result.acknowledged.sum())


def _confluent_produce(bootstrap: str, values: list[bytes], topic: str) -> int:
    import confluent_kafka as ck

    acked = 0

    def on_delivery(err: Any, msg: Any) -> None:
        nonlocal acked
        if err is None:
            acked += 1

    producer = ck.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"})
    for v in values:
        while True:
            try:
                producer.produce(topic, v, on_delivery=on_delivery)
                break
            except BufferError:  # local queue full: serve delivery reports, then try again
                producer.poll(0.05)
    producer.flush(120)
    return acked


def _kafka_python_produce(bootstrap: str, values: list[bytes], topic: str) -> int:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, batch_size=1 << 20)
    futures = [producer.send(topic, v) for v in values]
    producer.flush()
    producer.close()
    return sum(1 for f in futures if f.succeeded())


def _aiokafka_produce(bootstrap: str, values: list[bytes], topic: str) -> int:
    from aiokafka import AIOKafkaProducer


    async def main() -> int:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, max_batch_size=1 << 20)
        await producer.start()
        try:
            futures = [await producer.send(topic, v) for v in values]
            await producer.flush()
            return sum(1 for f in futures if f.done() and f.exception() is None)
        finally:
            await producer.stop()

    return asyncio.run(main())


PRODUCERS = ["kafkawire", "confluent-kafka", "aiokafka", "kafka-python"]


@pytest.mark.parametrize("client", PRODUCERS)
def test_produce(benchmark: Any, broker: Any, client: str) -> None:
    bs = broker.bootstrap
    column = _values(RECORDS)
    topics = _Topics(bs)
    try:
        if client == "kafkawire":
            fn: Callable[[str], int] = lambda t: _kafkawire_produce(bs, column, t)  # noqa: E731
            _measure(benchmark, "produce", client, fn, RECORDS, 3, topics)
        elif client == "confluent-kafka":
            values = column.to_pylist()
            _measure(benchmark, "produce", client, lambda t: _confluent_produce(bs, values, t), RECORDS, 3, topics)
        else:
            values = column.to_pylist()[:SLOW]
            peer = _aiokafka_produce if client == "aiokafka" else _kafka_python_produce
            _measure(benchmark, "produce", client, lambda t: peer(bs, values, t), SLOW, 1, topics)
    finally:
        topics.drop()
