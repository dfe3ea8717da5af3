"""Counters a client keeps about its own traffic, as kafka-python's and the Java client's ``metrics()``.

Per API (by name: ``"Fetch"``, ``"Produce"``, ...): requests sent, bytes sent and received, responses,
errors (a request whose response never came), and the latency from send to response (average and
maximum, in ms). Plus the number of retries the client made and the metadata refreshes. All counters
are totals since the client was created; :meth:`ClientMetrics.snapshot` returns a plain dict.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

__all__ = ["ClientMetrics"]


@dataclass
class _ApiStats:
    requests: int = 0
    responses: int = 0
    errors: int = 0
    bytes_sent: int = 0
    bytes_received: int = 0
    latency_sum: float = 0.0
    latency_max: float = 0.0


def _api_name(api_key: int) -> str:
    from ...protocol import API_BY_KEY

    entry = API_BY_KEY.get(api_key)
    if entry is None:
        return f"api{api_key}"
    name = entry[0].__name__
    return name[: -len("Request")] if name.endswith("Request") else name


class ClientMetrics:
    """Thread-safe traffic counters of one client (shared by all its connections)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._apis: dict[int, _ApiStats] = {}
        self.retries = 0
        self.metadata_refreshes = 0
        self._fetch_by_node: dict[int, list[int]] = {}  # node -> [fetch responses, record bytes, records]

    def _stats(self, api_key: int) -> _ApiStats:
        stats = self._apis.get(api_key)
        if stats is None:
            stats = self._apis[api_key] = _ApiStats()
        return stats

    def record_request(self, api_key: int, nbytes: int) -> None:
        with self._lock:
            stats = self._stats(api_key)
            stats.requests += 1
            stats.bytes_sent += nbytes

    def record_response(self, api_key: int, nbytes: int, latency: float) -> None:
        with self._lock:
            stats = self._stats(api_key)
            stats.responses += 1
            stats.bytes_received += nbytes
            stats.latency_sum += latency
            stats.latency_max = max(stats.latency_max, latency)

    def record_error(self, api_key: int) -> None:
        with self._lock:
            self._stats(api_key).errors += 1

    def record_fetch_from(self, node: int, nbytes: int, records: int) -> None:
        """A Fetch answer from ``node`` carried ``records`` records in ``nbytes`` bytes (which broker serves
        the reads: the leader, or a preferred read replica, KIP-392)."""
        with self._lock:
            counts = self._fetch_by_node.setdefault(node, [0, 0, 0])
            counts[0] += 1
            counts[1] += nbytes
            counts[2] += records

    def record_retry(self) -> None:
        with self._lock:
            self.retries += 1

    def record_metadata_refresh(self) -> None:
        with self._lock:
            self.metadata_refreshes += 1

    def snapshot(self) -> dict[str, Any]:
        """``{"requests", "bytes_sent", "bytes_received", "retries", "metadata_refreshes", "apis": {name:
        {"requests", "responses", "errors", "bytes_sent", "bytes_received", "latency_avg_ms",
        "latency_max_ms"}}, "fetch_by_node": {node id: {"responses", "record_bytes", "records"}}}``."""
        with self._lock:
            apis = {}
            for key, s in sorted(self._apis.items()):
                apis[_api_name(key)] = {
                    "requests": s.requests,
                    "responses": s.responses,
                    "errors": s.errors,
                    "bytes_sent": s.bytes_sent,
                    "bytes_received": s.bytes_received,
                    "latency_avg_ms": 1000.0 * s.latency_sum / s.responses if s.responses else 0.0,
                    "latency_max_ms": 1000.0 * s.latency_max,
                }
            return {
                "requests": sum(s.requests for s in self._apis.values()),
                "bytes_sent": sum(s.bytes_sent for s in self._apis.values()),
                "bytes_received": sum(s.bytes_received for s in self._apis.values()),
                "retries": self.retries,
                "metadata_refreshes": self.metadata_refreshes,
                "apis": apis,
                "fetch_by_node": {
                    node: {"responses": c[0], "record_bytes": c[1], "records": c[2]}
                    for node, c in sorted(self._fetch_by_node.items())
                },
            }
