"""Helpers for the Spark data source tests: topics and records through kafka-python (independent of kafkawire)."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class Produced:
    """What a test wrote to one topic, by partition, in offset order."""

    topic: str
    partitions: int
    # (partition, offset) -> (key, value, timestamp_ms, headers)
    records: dict[tuple[int, int], tuple[bytes | None, bytes | None, int, list[tuple[str, bytes | None]]]] = field(
        default_factory=dict
    )


_counter = itertools.count()


def unique_topic(prefix: str = "t") -> str:
    return f"{prefix}-{next(_counter)}-{uuid.uuid4().hex[:6]}"


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        admin.close()


def produce(
    bootstrap: str,
    topic: str,
    rows: Sequence[tuple[int, bytes | None, bytes | None, int, list[tuple[str, bytes | None]]]],
    produced: Produced | None = None,
) -> None:
    """Send ``(partition, key, value, timestamp_ms, headers)`` rows with librdkafka (confluent-kafka), one
    at a time in order, and record the offset each got. (kafka-python cannot send null header values.)"""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, "enable.idempotence": False})
    results: list[tuple[tuple, int]] = []
    errors: list[object] = []

    def done(row: tuple):
        def cb(err, msg):
            if err is not None:
                errors.append(err)
            else:
                results.append((row, msg.offset()))

        return cb

    for row in rows:
        part, key, value, ts, headers = row
        p.produce(
            topic, value=value, key=key, partition=part, timestamp=ts, headers=headers or None, on_delivery=done(row)
        )
        p.poll(0)
    remaining = p.flush(30)
    assert not errors and remaining == 0, (errors, remaining)
    if produced is not None:
        for (part, key, value, ts, headers), off in results:
            produced.records[(part, off)] = (key, value, ts, list(headers))


def consume_all(bootstrap: str, topic: str) -> list:
    """Every record of ``topic`` through kafka-python (ordered by partition, offset)."""
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        tps = [TopicPartition(topic, p) for p in sorted(c.partitions_for_topic(topic) or [])]
        c.assign(tps)
        c.seek_to_beginning(*tps)
        end = c.end_offsets(tps)
        out = []
        while any(c.position(tp) < end[tp] for tp in tps):
            for recs in c.poll(timeout_ms=1000).values():
                out.extend(recs)
        return sorted(out, key=lambda r: (r.partition, r.offset))
    finally:
        c.close()


def delete_records(bootstrap: str, topic: str, partition: int, before: int) -> None:
    """Move the log start of a partition to ``before`` (DeleteRecords, through kafka-python's admin)."""
    from kafka import TopicPartition
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        res = admin.delete_records({TopicPartition(topic, partition): before})
        assert all(v["error_code"] == 0 for v in res.values()), res
    finally:
        admin.close()
