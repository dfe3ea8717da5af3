"""A buffering producer on top of :meth:`kafkawire.Client.produce`.

``send()`` only appends to a per-topic buffer; the buffer goes out as one ``produce()`` call (records
spread over partitions, batched per partition) when it reaches ``batch_records`` / ``batch_bytes``,
when ``linger_ms`` has passed since its first record (checked on the next ``send()``), or on
``flush()`` / ``close()``. Everything the blocking client guarantees holds: idempotent retries, murmur2
partitioning, one request per leader.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .client import Client
from .types import ProduceResult

__all__ = ["Producer"]


@dataclass
class _Buffer:
    values: list[bytes | None] = field(default_factory=list)
    keys: list[bytes | None] = field(default_factory=list)
    headers: list[Sequence[tuple[str, bytes | None]] | None] = field(default_factory=list)
    timestamps: list[int] = field(default_factory=list)
    partitions: list[int | None] = field(default_factory=list)
    nbytes: int = 0
    since: float = 0.0


class Producer:
    """Buffer records and write them in batches.

    ``compression``, ``acks``: as in :meth:`Client.produce`. Pass ``client`` to share a
    :class:`Client`, or ``bootstrap_servers`` and any :class:`Client` options.
    """

    def __init__(
        self,
        bootstrap_servers: str | list[str] | None = None,
        *,
        client: Client | None = None,
        batch_records: int = 100_000,
        batch_bytes: int = 16 << 20,
        linger_ms: float = 5.0,
        compression: str | None = None,
        acks: int = -1,
        **client_options: Any,
    ) -> None:
        if client is None:
            if bootstrap_servers is None:
                raise ValueError("give bootstrap_servers or client")
            client = Client(bootstrap_servers, **client_options)
            self._own_client = True
        else:
            self._own_client = False
        self.client = client
        self.batch_records = batch_records
        self.batch_bytes = batch_bytes
        self.linger_ms = linger_ms
        self.compression = compression
        self.acks = acks
        self._buffers: dict[str, _Buffer] = {}
        self._lock = threading.RLock()
        self._closed = False

    def send(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None = None,
        *,
        partition: int | None = None,
        headers: Sequence[tuple[str, bytes | None]] | None = None,
        timestamp_ms: int | None = None,
    ) -> None:
        """Queue one record; may write the topic's buffer when it is full or has lingered long enough."""
        with self._lock:
            if self._closed:
                raise RuntimeError("producer is closed")
            buf = self._buffers.get(topic)
            if buf is None:
                buf = self._buffers[topic] = _Buffer(since=time.monotonic())
            buf.values.append(value)
            buf.keys.append(key)
            buf.headers.append(list(headers) if headers else None)
            buf.timestamps.append(int(time.time() * 1000) if timestamp_ms is None else int(timestamp_ms))
            buf.partitions.append(partition)
            buf.nbytes += len(value or b"") + len(key or b"")
            if (
                len(buf.values) >= self.batch_records
                or buf.nbytes >= self.batch_bytes
                or (time.monotonic() - buf.since) * 1000 >= self.linger_ms
            ):
                self._flush_topic(topic)

    def _flush_topic(self, topic: str) -> list[ProduceResult]:
        buf = self._buffers.pop(topic, None)
        if buf is None or not buf.values:
            return []
        headers = buf.headers if any(h for h in buf.headers) else None
        explicit = {p for p in buf.partitions if p is not None}
        results = []
        if not explicit:
            groups: list[tuple[int | None, list[int]]] = [(None, list(range(len(buf.values))))]
        else:
            # Records sent to explicit partitions go in one call per partition; the rest are partitioned.
            by: dict[int | None, list[int]] = {}
            for i, p in enumerate(buf.partitions):
                by.setdefault(p, []).append(i)
            groups = list(by.items())
        has_keys = any(k is not None for k in buf.keys)
        for part, rows in groups:
            results.append(
                self.client.produce(
                    topic,
                    [buf.values[i] for i in rows],
                    keys=[buf.keys[i] for i in rows] if has_keys else None,
                    partition=part,
                    headers=None if headers is None else [headers[i] for i in rows],
                    timestamps=[buf.timestamps[i] for i in rows],
                    acks=self.acks,
                    compression=self.compression,
                )
            )
        return results

    def flush(self) -> list[ProduceResult]:
        """Write every buffered record; returns one :class:`ProduceResult` per produce call."""
        with self._lock:
            out: list[ProduceResult] = []
            for topic in list(self._buffers):
                out += self._flush_topic(topic)
            return out

    @property
    def buffered(self) -> int:
        """Records queued and not written yet."""
        return sum(len(b.values) for b in self._buffers.values())

    def close(self) -> None:
        """Flush, then close the client if this producer created it."""
        with self._lock:
            if self._closed:
                return
            try:
                self.flush()
            finally:
                self._closed = True
                if self._own_client:
                    self.client.close()

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
