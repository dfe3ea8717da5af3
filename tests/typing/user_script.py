"""A user's script of kafkawire's public API, type-checked by ``tests/test_typing.py`` with ``mypy --strict``.

It is only type-checked, never run: the functions take what a user would pass and use what kafkawire returns,
so an attribute mypy cannot see (``cols.offset``), a wrong return type or an untyped public name fails the check.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

import kafkawire
from kafkawire import (
    BinaryColumn,
    Client,
    Consumer,
    KafkaWireError,
    Producer,
    Record,
    RecordColumns,
    RecordView,
    decode_records,
    encode_records,
)
from kafkawire.client import NewTopic, ProduceResult


def roundtrip(values: list[bytes | None]) -> RecordColumns:
    data: bytes = encode_records(values, keys=[b"k"] * len(values), compression="lz4", headers=None)
    cols = decode_records(data, fetch_offset=0)
    offsets: npt.NDArray[np.int64] = cols.offset
    timestamps: npt.NDArray[np.int64] = cols.timestamp
    value: BinaryColumn = cols.value
    key: BinaryColumn = cols.key
    next_offset: int = cols.next_offset
    valid_bytes: int = cols.valid_bytes
    assert len(offsets) == len(timestamps) == len(value) == len(key)
    assert next_offset >= 0 and valid_bytes <= len(data)
    first: bytes | None = value[0]
    everything: list[bytes | None] = value.to_pylist()
    assert first == everything[0]
    return cols


def records_of(cols: RecordColumns) -> list[tuple[int, bytes | None]]:
    out: list[tuple[int, bytes | None]] = []
    for rec in cols:
        r: RecordView = rec
        headers: list[tuple[str, bytes | None]] = r.headers
        assert isinstance(headers, list)
        topic: str | None = r.topic
        assert topic is None or r.partition >= 0
        out.append((r.offset, r.value))
        whole: Record = r.to_record()
        assert whole == r
    return out


def consume_per_record(consumer: Consumer) -> int:
    n = 0
    for record in consumer.records(idle_timeout_ms=1_000):
        key: bytes | None = record.key
        offset: int = record.offset
        n += len(record.value or b"") + len(key or b"") + offset
        consumer.commit()
    for record in consumer:
        partition: int = record.partition
        n += partition
        break
    return n


def produce_and_fetch(bootstrap: str, topic: str) -> int:
    with Client(bootstrap, client_id="typing-check") as client:
        client.create_topics([NewTopic(topic, num_partitions=1)])
        result: ProduceResult = client.produce(topic, [b"a", b"b"], keys=[b"1", None], compression="gzip")
        assert len(result.offset) == 2
        cols = client.fetch(topic, 0, 0)
        return len(cols)


def consume(bootstrap: str, topic: str) -> int:
    consumer = Consumer(bootstrap, group_id="typing-check", auto_offset_reset="earliest")
    try:
        consumer.subscribe([topic])
        total = 0
        for tp, cols in consumer.poll(timeout_ms=1_000).items():
            total += len(cols)
            consumer.seek(tp, cols.next_offset)
        consumer.commit()
        return total
    finally:
        consumer.close()


def produce(bootstrap: str, topic: str) -> None:
    producer = Producer(bootstrap, linger_ms=10, compression="zstd")
    try:
        producer.send(topic, b"value", key=b"key", headers=[("h", b"v")])
        # The README accepts str (UTF-8), bytearray and memoryview values and keys too (issue 25, item 9).
        producer.send(topic, "text value", key="text key")
        producer.send(topic, bytearray(b"value"), key=memoryview(b"key")).result(timeout=5)
        producer.send(topic, None, key=b"tombstone")
        results: list[ProduceResult] = producer.flush()
        assert results
    finally:
        producer.close()


def from_files(path: str) -> None:
    # Client, Consumer and Producer all take a client.properties path (issue 25, item 5).
    with Client.from_properties(path) as client:
        client.metadata()
    Consumer.from_properties(path).close()
    Producer.from_properties(path).close()


def describe() -> str:
    try:
        decode_records(b"\x00" * 3)
    except KafkaWireError as e:
        return f"{kafkawire.__version__} compiled={kafkawire.compiled}: {e}"
    return kafkawire.__version__
