"""Drop-in decoder benchmark: unmodified kafka-python / aiokafka consumers with and without kafkawire.

Run (short; needs no network beyond loopback, starts its own noida-db broker)::

    .venv/bin/python -m pytest benchmarks/bench_dropin.py -s -p no:cacheprovider \
        --benchmark-columns=min,median,max,rounds --benchmark-sort=name

What is measured, on the same topic in the same run:

* ``e2e``: a fresh ``KafkaConsumer`` / ``AIOKafkaConsumer`` reads the whole topic from the earliest
  offset (``poll``/``getmany`` until every record arrived), with the drop-in uninstalled and installed.
  This includes the network and kafka-python's protocol parsing, which the drop-in does not touch.
* ``memory_records``: the fetch payloads the broker actually served during a plain run (captured), fed
  to each client's own ``MemoryRecords`` and to the drop-in's, walking every batch and record the way
  the fetcher does (``validate_crc()``, then every record's attributes).
* ``partition_records``: the same payloads through kafka-python's real ``Fetcher.PartitionRecords``
  (what ``poll()`` runs per partition), i.e. decode + ConsumerRecord construction without the network;
  the drop-in side runs with ``install()``'s fetcher fast path.

At the end the ratios (plain time / drop-in time, best of the rounds) are printed and written to
``benchmarks/.results/bench_dropin.json``. Sizes: ``KW_BENCH_RECORDS`` (default 100000) records of
``KW_BENCH_VALUE`` (default 100) bytes with 10-byte keys, produced by kafka-python (lz4 off, linger 5 ms).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from kafkawire.testing import start_broker

RECORDS = int(os.environ.get("KW_BENCH_RECORDS", "100000"))
VALUE = int(os.environ.get("KW_BENCH_VALUE", "100"))
TOPIC = "bench-dropin"
RESULTS: dict[str, float] = {}


@pytest.fixture(scope="module")
def broker() -> Any:
    b = start_broker(kind="noida")
    try:
        yield b
    finally:
        b.stop()


@pytest.fixture(scope="module")
def topic(broker: Any) -> str:
    from kafka import KafkaProducer
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    admin.create_topics([NewTopic(TOPIC, 1, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=5, batch_size=64 * 1024)
    value = b"v" * VALUE
    for i in range(RECORDS):
        producer.send(TOPIC, key=b"key-%06d" % i, value=value, headers=[("i", b"%d" % i)] if i % 10 == 0 else None)
    producer.flush()
    producer.close()
    return TOPIC


def _kafka_python_read_all(bootstrap: str, topic: str = TOPIC, records: int = RECORDS) -> int:
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False)
    n = 0
    deadline = time.monotonic() + 300
    while n < records and time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=200).values():
            n += len(batch)
    consumer.close()
    assert n == records
    return n


def _aiokafka_read_all(bootstrap: str) -> int:
    from aiokafka import AIOKafkaConsumer

    async def run() -> int:
        consumer = AIOKafkaConsumer(TOPIC, bootstrap_servers=bootstrap, auto_offset_reset="earliest")
        await consumer.start()
        n = 0
        try:
            deadline = time.monotonic() + 300
            while n < RECORDS and time.monotonic() < deadline:
                for batch in (await consumer.getmany(timeout_ms=200)).values():
                    n += len(batch)
        finally:
            await consumer.stop()
        return n

    n = asyncio.run(run())
    assert n == RECORDS
    return n


def _record(benchmark: Any, key: str) -> None:
    RESULTS[key] = benchmark.stats.stats.min


@pytest.mark.parametrize("mode", ["plain", "dropin"])
def test_e2e_kafka_python(benchmark: Any, broker: Any, topic: str, mode: str) -> None:
    from kafkawire.compat import kafka_python as adapter

    benchmark.group = "e2e kafka-python"
    benchmark.extra_info["records"] = RECORDS
    (adapter.install if mode == "dropin" else adapter.uninstall)()
    try:
        benchmark.pedantic(_kafka_python_read_all, args=(broker.bootstrap,), rounds=3, iterations=1)
    finally:
        adapter.uninstall()
    _record(benchmark, f"e2e kafka-python {mode}")


@pytest.mark.parametrize("mode", ["plain", "dropin"])
def test_e2e_aiokafka(benchmark: Any, broker: Any, topic: str, mode: str) -> None:
    from kafkawire.compat import aiokafka as adapter

    benchmark.group = "e2e aiokafka"
    benchmark.extra_info["records"] = RECORDS
    (adapter.install if mode == "dropin" else adapter.uninstall)()
    try:
        benchmark.pedantic(_aiokafka_read_all, args=(broker.bootstrap,), rounds=3, iterations=1)
    finally:
        adapter.uninstall()
    _record(benchmark, f"e2e aiokafka {mode}")


def _capture(bootstrap: str, topic: str, records: int) -> list[bytes]:
    """The records bytes of every partition fetch the broker served to a plain kafka-python consumer."""
    import kafka.consumer.fetcher as fetcher

    captured: list[bytes] = []
    original = fetcher.MemoryRecords

    class Capture(original):  # type: ignore[misc, valid-type]
        __slots__ = ()

        def __init__(self, data: Any) -> None:
            if len(data):
                captured.append(bytes(data))
            super().__init__(data)

    fetcher.MemoryRecords = Capture
    try:
        _kafka_python_read_all(bootstrap, topic, records)
    finally:
        fetcher.MemoryRecords = original
    return captured


@pytest.fixture(scope="module")
def payloads(broker: Any, topic: str) -> list[bytes]:
    return _capture(broker.bootstrap, topic, RECORDS)


def _walk_kafka_python(cls: Any, payloads: list[bytes]) -> int:
    n = 0
    for data in payloads:
        records = cls(data)
        while (batch := records.next_batch()) is not None:
            batch.validate_crc()
            for r in batch:
                r.offset, r.timestamp, r.key, r.value, r.headers, r.size_in_bytes  # noqa: B018
                n += 1
    return n


def _walk_aiokafka(cls: Any, payloads: list[bytes]) -> int:
    n = 0
    for data in payloads:
        records = cls(data)
        while records.has_next():
            batch = records.next_batch()
            batch.validate_crc()
            for r in batch:
                r.offset, r.timestamp, r.key, r.value, r.headers  # noqa: B018
                n += 1
    return n


@pytest.mark.parametrize("mode", ["plain", "dropin"])
def test_memory_records_kafka_python(benchmark: Any, payloads: list[bytes], mode: str) -> None:
    from kafka.record.memory_records import MemoryRecords as Plain

    from kafkawire.compat.kafka_python import MemoryRecords as DropIn

    benchmark.group = "memory_records kafka-python"
    cls = DropIn if mode == "dropin" else Plain
    n = benchmark.pedantic(_walk_kafka_python, args=(cls, payloads), rounds=3, iterations=1)
    assert n >= RECORDS
    _record(benchmark, f"memory_records kafka-python {mode}")


@pytest.mark.parametrize("mode", ["plain", "dropin"])
def test_memory_records_aiokafka(benchmark: Any, payloads: list[bytes], mode: str) -> None:
    from aiokafka.record.memory_records import MemoryRecords as Plain

    from kafkawire.compat.aiokafka import MemoryRecords as DropIn

    benchmark.group = "memory_records aiokafka"
    cls = DropIn if mode == "dropin" else Plain
    n = benchmark.pedantic(_walk_aiokafka, args=(cls, payloads), rounds=3, iterations=1)
    assert n >= RECORDS
    _record(benchmark, f"memory_records aiokafka {mode}")


@pytest.mark.parametrize("mode", ["plain", "dropin"])
def test_partition_records_kafka_python(benchmark: Any, payloads: list[bytes], mode: str) -> None:
    from kafka.consumer.fetcher import Fetcher
    from kafka.record.memory_records import MemoryRecords as Plain
    from kafka.structs import TopicPartition

    from kafkawire.compat.kafka_python import MemoryRecords as DropIn

    benchmark.group = "partition_records kafka-python"
    cls = DropIn if mode == "dropin" else Plain
    tp = TopicPartition(TOPIC, 0)

    def run() -> int:
        n = 0
        for data in payloads:
            n += len(Fetcher.PartitionRecords(0, tp, cls(data)).take())
        return n

    from kafkawire.compat import kafka_python as adapter

    (adapter.install if mode == "dropin" else adapter.uninstall)()  # dropin: with the fetcher fast path
    try:
        assert benchmark.pedantic(run, rounds=3, iterations=1) >= RECORDS
    finally:
        adapter.uninstall()
    _record(benchmark, f"partition_records kafka-python {mode}")


# ------------------------------------------------------------------ headers workload (issue 15)
# 200k records with three headers each, lz4, null keys: the workload of a user's kafka-python consumer, where
# kafka-python's own per-record work (a ConsumerRecord, a header list and three header tuples per record) is a
# larger share of the time than on the header-less topic above.

HEADER_RECORDS = int(os.environ.get("KW_BENCH_HEADER_RECORDS", "200000"))
HEADER_TOPIC = "bench-dropin-headers"


@pytest.fixture(scope="module")
def header_topic(broker: Any) -> str:
    from kafka import KafkaProducer
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    admin.create_topics([NewTopic(HEADER_TOPIC, 1, 1)])
    admin.close()
    producer = KafkaProducer(
        bootstrap_servers=broker.bootstrap, linger_ms=5, batch_size=64 * 1024, compression_type="lz4"
    )
    value = b"v" * VALUE
    for i in range(HEADER_RECORDS):
        headers = [("trace-id", b"%016x" % i), ("source", b"bench"), ("seq", b"%d" % i)]
        producer.send(HEADER_TOPIC, value=value, headers=headers)
    producer.flush()
    producer.close()
    return HEADER_TOPIC


@pytest.fixture(scope="module")
def header_payloads(broker: Any, header_topic: str) -> list[bytes]:
    return _capture(broker.bootstrap, header_topic, HEADER_RECORDS)


@pytest.mark.parametrize("mode", ["plain", "dropin"])
def test_e2e_kafka_python_headers(benchmark: Any, broker: Any, header_topic: str, mode: str) -> None:
    from kafkawire.compat import kafka_python as adapter

    benchmark.group = "e2e kafka-python headers"
    benchmark.extra_info["records"] = HEADER_RECORDS
    (adapter.install if mode == "dropin" else adapter.uninstall)()
    try:
        benchmark.pedantic(
            _kafka_python_read_all, args=(broker.bootstrap, header_topic, HEADER_RECORDS), rounds=3, iterations=1
        )
    finally:
        adapter.uninstall()
    _record(benchmark, f"e2e kafka-python headers {mode}")


@pytest.mark.parametrize("mode", ["plain", "dropin"])
def test_partition_records_kafka_python_headers(benchmark: Any, header_payloads: list[bytes], mode: str) -> None:
    """Decode + ConsumerRecords of the captured header fetches through ``PartitionRecords.take(500)``."""
    from kafka.consumer.fetcher import Fetcher
    from kafka.record.memory_records import MemoryRecords as Plain
    from kafka.structs import TopicPartition

    from kafkawire.compat import kafka_python as adapter

    benchmark.group = "partition_records kafka-python headers"
    cls = adapter.MemoryRecords if mode == "dropin" else Plain
    tp = TopicPartition(HEADER_TOPIC, 0)

    def run() -> int:
        # take(500): what poll() asks for with kafka-python's default max_poll_records.
        n = 0
        for data in header_payloads:
            part = Fetcher.PartitionRecords(0, tp, cls(data))
            while got := part.take(500):
                n += len(got)
        return n

    (adapter.install if mode == "dropin" else adapter.uninstall)()
    try:
        assert benchmark.pedantic(run, rounds=3, iterations=1) >= HEADER_RECORDS
    finally:
        adapter.uninstall()
    _record(benchmark, f"partition_records kafka-python headers {mode}")


def test_objects_only_kafka_python_headers(benchmark: Any, header_payloads: list[bytes]) -> None:
    """The floor no decoder can go under: kafka-python's objects for these records, from decoded columns.

    The batches are decoded beforehand (outside the timer) into kafkawire columns: one bytes buffer and a
    list of offsets per binary column, lists of numbers. The timed part only builds what kafka-python hands
    its user per record (the value ``bytes``, three header key ``str`` and value ``bytes``, the three header
    tuples, the header list and the ``ConsumerRecord``) with C-level ``map``/``zip`` (no Python code per
    record), and yields them through a generator and ``islice`` in ``take(500)`` slices as the fetcher does.
    """
    from itertools import islice, repeat

    from kafka.consumer.fetcher import ConsumerRecord

    import kafkawire

    benchmark.group = "partition_records kafka-python headers"

    def binary(col: Any) -> tuple[bytes, list[int]]:
        return col.data.tobytes(), col.offsets.tolist()

    prepared = []
    for data in header_payloads:
        cols = kafkawire.decode_records(data)
        prepared.append((cols.offset.tolist(), cols.timestamp.tolist(), cols.timestamp_type.tolist(),
                         binary(cols.value), binary(cols.header_key), binary(cols.header_value),
                         cols.header_offsets.tolist()))  # fmt: skip

    def items(raw: bytes, o: list[int]) -> Any:
        return map(raw.__getitem__, map(slice, o[:-1], o[1:]))

    def records(p: tuple[Any, ...]) -> Any:
        offsets, ts, tst, values, hkeys, hvalues, ho = p
        n = len(offsets)
        text = hkeys[0].decode()  # ASCII keys: one decode, then slices (as the drop-in does)
        names = list(map(text.__getitem__, map(slice, hkeys[1][:-1], hkeys[1][1:])))
        hv = list(items(*hvalues))
        headers = map(list, map(zip, map(names.__getitem__, map(slice, ho[:-1], ho[1:])),
                                map(hv.__getitem__, map(slice, ho[:-1], ho[1:]))))  # fmt: skip
        rows = zip(repeat(HEADER_TOPIC, n), repeat(0, n), repeat(0, n), offsets, ts, tst, repeat(None, n),
                   items(*values), headers, repeat(None, n), repeat(-1, n), repeat(-1, n), repeat(-1, n))  # fmt: skip
        yield from map(tuple.__new__, repeat(ConsumerRecord, n), rows)

    def run() -> int:
        n = 0
        for p in prepared:
            it = records(p)
            while got := list(islice(it, 0, 500)):
                n += len(got)
        return n

    assert benchmark.pedantic(run, rounds=3, iterations=1) >= HEADER_RECORDS
    RESULTS["objects only kafka-python headers"] = benchmark.stats.stats.min


def test_report_ratios() -> None:
    """Print plain/drop-in ratios (best round each) and save them next to the benchmarks."""
    ratios = {}
    for key, plain in RESULTS.items():
        if key.endswith(" plain") and (dropin := RESULTS.get(key[: -len("plain")] + "dropin")):
            ratios[key[: -len(" plain")]] = round(plain / dropin, 2)
    out = {"records": RECORDS, "value_bytes": VALUE, "seconds_min": RESULTS, "speedup": ratios}
    path = Path(__file__).resolve().parent / ".results" / "bench_dropin.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(out, indent=1))
    print("\n" + json.dumps(out, indent=1))
    assert ratios, "run the benchmarks in this module first"
