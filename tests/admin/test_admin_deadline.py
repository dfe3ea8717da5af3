"""Every admin call keeps its one deadline: against a broker that accepts connections and never answers,
each raises KafkaTimeoutError within ``timeout_ms`` + 10%, retries included."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from kafkawire.admin import Admin, AlterConfigOp
from kafkawire.client.errors import KafkaTimeoutError

TIMEOUT_MS = 400


@pytest.fixture(scope="module")
def silent_broker() -> Iterator[str]:
    """A TCP listener that accepts every connection and never sends a byte."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except (TimeoutError, OSError):
                continue
            held.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


CALLS = {
    "describe_cluster": lambda a, t: a.describe_cluster(timeout_ms=t),
    "describe_topics": lambda a, t: a.describe_topics(["x"], timeout_ms=t),
    "describe_configs": lambda a, t: a.describe_configs(["x"], timeout_ms=t),
    "alter_configs": lambda a, t: a.alter_configs({"x": [AlterConfigOp("retention.ms", "set", "1")]}, timeout_ms=t),
    "create_partitions": lambda a, t: a.create_partitions({"x": 2}, timeout_ms=t),
    "delete_records": lambda a, t: a.delete_records({("x", 0): 1}, timeout_ms=t),
    "list_groups": lambda a, t: a.list_groups(timeout_ms=t),
    "describe_groups": lambda a, t: a.describe_groups(["g"], timeout_ms=t),
    "delete_groups": lambda a, t: a.delete_groups(["g"], timeout_ms=t),
    "list_consumer_group_offsets": lambda a, t: a.list_consumer_group_offsets("g", timeout_ms=t),
    "alter_consumer_group_offsets": lambda a, t: a.alter_consumer_group_offsets("g", {("x", 0): 1}, timeout_ms=t),
    "reset_consumer_group_offsets": lambda a, t: a.reset_consumer_group_offsets("g", ["x"], to=0, timeout_ms=t),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_call_returns_within_its_deadline(silent_broker: str, name: str) -> None:
    # Generous per-request and connect timeouts: only the call's deadline can end it in time.
    with Admin(silent_broker, request_timeout_ms=30_000, connect_timeout_ms=30_000) as admin:
        start = time.monotonic()
        with pytest.raises(KafkaTimeoutError):
            CALLS[name](admin, TIMEOUT_MS)
        took = time.monotonic() - start
    # The slack every deadline test gives (+10%, + 0.2 s of scheduling on a loaded 2-core machine).
    assert took <= TIMEOUT_MS / 1000 * 1.1 + 0.2, f"{name} took {took:.3f} s for a {TIMEOUT_MS} ms deadline"
