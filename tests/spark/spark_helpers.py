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
    """Send ``(partition, key, value, timestamp_ms, headers)`` rows with kafka-python; record their offsets."""
    from kafka import KafkaProducer

    p = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    try:
        futures = [
            (row, p.send(topic, key=row[1], value=row[2], partition=row[0], timestamp_ms=row[3], headers=row[4]))
            for row in rows
        ]
        p.flush()
        for (part, key, value, ts, headers), fut in futures:
            md = fut.get(timeout=30)
            if produced is not None:
                produced.records[(part, md.offset)] = (key, value, ts, list(headers))
    finally:
        p.close()


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
