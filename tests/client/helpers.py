"""Shared helpers for the client integration tests."""

from __future__ import annotations

import time

from kafkawire import RecordColumns
from kafkawire.client import Client
from kafkawire.testing import Broker, MockCluster


def make_topic(client: Client, broker: Broker, name: str, partitions: int = 1) -> None:
    """Create a topic through CreateTopics, or the C API on librdkafka's mock (it has no CreateTopics)."""
    if isinstance(broker, MockCluster):
        broker.create_topic(name, partitions)
        client.metadata([name])
    else:
        client.create_topics({name: partitions})


def fetch_all(
    client: Client, topic: str, partition: int, start: int, end: int, *, timeout: float = 30.0, **kwargs
) -> list:
    """Every record in ``[start, end)``, fetching as often as needed (the mock returns one batch per
    Fetch; others return everything at once)."""
    out: list = []
    offset = start
    deadline = time.monotonic() + timeout
    while offset < end:
        assert time.monotonic() < deadline, f"only reached offset {offset} of {end}"
        cols: RecordColumns = client.fetch(topic, partition, offset, max_wait_ms=100, **kwargs)
        out.extend(r for r in cols.to_records() if r.offset < end)
        offset = max(offset, cols.next_offset)
    return out
