"""Every blocking Client call returns within its deadline, whatever the broker does, and says why.

Three misbehaving peers on loopback: one that accepts and never answers, one that dribbles a response a
byte a second, and a closed port. Each public call is given ``timeout_ms`` far below the request and
connect timeouts, so only the call's deadline can stop it: it must raise within the timeout + 10% +
0.2 s (a guarantee, not a speed figure), and the exception must name the cause and the address.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from client_fakes import FakeKafkaBroker, FakeServer, read_request
from test_resilience import VERSIONS, metadata_answer

from kafkawire.client import Client, KafkaTimeoutError, ProduceFailedError
from kafkawire.testing import free_port

TIMEOUT = 1.5  # seconds: the deadline every call below is given


def _silent(conn: socket.socket) -> None:
    while conn.recv(65536):
        pass


def _dribble(conn: socket.socket) -> None:
    # Answers the first request with a size prefix announcing 1,000 bytes, then one byte a second.
    if read_request(conn) is None:
        return
    conn.sendall(b"\x00\x00\x03\xe8")
    while True:
        time.sleep(1)
        conn.sendall(b"\x00")


@pytest.fixture(params=["silent", "dribble", "closed"])
def fault(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """(bootstrap address, text the error must contain)."""
    if request.param == "closed":
        port = free_port()
        yield f"127.0.0.1:{port}", f"127.0.0.1:{port}: [Errno 111] Connection refused"
        return
    with FakeServer(_silent if request.param == "silent" else _dribble) as server:
        yield server.address, f"no complete response from {server.address}"


CALLS: dict[str, Callable[[Client, int], object]] = {
    "metadata": lambda c, t: c.metadata(timeout_ms=t),
    "partitions_for": lambda c, t: c.partitions_for("t", timeout_ms=t),
    "fetch": lambda c, t: c.fetch("t", 0, 0, timeout_ms=t),
    "fetch_many": lambda c, t: c.fetch_many({("t", 0): 0, ("t", 1): 5}, timeout_ms=t),
    "list_offsets": lambda c, t: c.list_offsets("t", timeout_ms=t),
    "create_topics": lambda c, t: c.create_topics(["t"], timeout_ms=t),
    "delete_topics": lambda c, t: c.delete_topics(["t"], timeout_ms=t),
    "commit_offsets": lambda c, t: c.commit_offsets("g", {("t", 0): 1}, timeout_ms=t),
    "committed": lambda c, t: c.committed("g", [("t", 0)], timeout_ms=t),
}


def _assert_within(started: float, timeout: float) -> float:
    elapsed = time.monotonic() - started
    assert elapsed <= timeout * 1.1 + 0.2, f"took {elapsed:.2f} s for a {timeout} s deadline"
    return elapsed


@pytest.mark.parametrize("call", sorted(CALLS))
def test_call_raises_within_its_deadline_naming_the_cause(fault, call):
    address, cause = fault
    # Request and connect timeouts of 30 s: only the call's own deadline can end it in time.
    with Client(address, request_timeout_ms=30_000, connect_timeout_ms=30_000) as c:
        t0 = time.monotonic()
        with pytest.raises(KafkaTimeoutError) as info:
            CALLS[call](c, int(TIMEOUT * 1000))
        _assert_within(t0, TIMEOUT)
    text = str(info.value)
    assert f"after {TIMEOUT:.1f} s" in text
    assert cause in text


def test_produce_raises_within_its_deadline_and_hands_every_record_back(fault):
    address, cause = fault
    with Client(address, request_timeout_ms=30_000, connect_timeout_ms=30_000) as c:
        t0 = time.monotonic()
        with pytest.raises(ProduceFailedError) as info:
            c.produce("t", [b"a", b"b"], keys=[b"k", None], headers=[None, [("h", b"v")]], timeout_ms=1500)
        _assert_within(t0, TIMEOUT)
    err = info.value
    assert err.timed_out
    assert cause in str(err)
    [unacked] = err.unacknowledged.values()
    assert unacked.values == [b"a", b"b"]
    assert unacked.keys == [b"k", None]
    assert unacked.headers == [None, [("h", b"v")]]
    assert unacked.rows.tolist() == [0, 1]


def test_fetch_without_timeout_is_bounded_by_one_request_timeout():
    # The default deadline of a fetch is request_timeout_ms + max_wait_ms, not minutes of retries.
    with FakeServer(_silent) as server, Client(server.address, request_timeout_ms=1_000) as c:
        t0 = time.monotonic()
        with pytest.raises(KafkaTimeoutError, match=f"no complete response from {server.address}"):
            c.fetch("t", 0, 0, max_wait_ms=100)
        _assert_within(t0, 1.1)


def _silent_leader() -> FakeKafkaBroker:
    """A broker that answers Metadata (naming itself leader of t/0) and nothing else."""

    def respond(header, request):
        if header.api_key == 3:
            return metadata_answer(request, "127.0.0.1", server.port)
        return None

    server = FakeKafkaBroker(respond, VERSIONS)
    return server


@pytest.mark.parametrize("call", ["fetch", "list_offsets"])
def test_a_leader_that_never_answers_ends_the_call_at_its_deadline(call):
    with _silent_leader() as server, Client(server.address, request_timeout_ms=30_000) as c:
        t0 = time.monotonic()
        with pytest.raises(KafkaTimeoutError, match=f"no complete response from {server.address}"):
            CALLS[call](c, int(TIMEOUT * 1000))
        _assert_within(t0, TIMEOUT)


def test_produce_to_a_leader_that_never_answers_hands_the_records_back():
    with _silent_leader() as server, Client(server.address, request_timeout_ms=30_000) as c:
        t0 = time.monotonic()
        with pytest.raises(ProduceFailedError) as info:
            c.produce("t", [b"x", b"y"], partition=0, acks=1, timeout_ms=int(TIMEOUT * 1000))
        _assert_within(t0, TIMEOUT)
    assert info.value.timed_out
    assert f"no complete response from {server.address}" in str(info.value)
    assert info.value.unacknowledged[0].values == [b"x", b"y"]
    assert info.value.result.offset.tolist() == [-1, -1]


def test_retries_go_on_until_the_deadline_not_a_count():
    # Nothing listening for 2.5 s, then a broker: a call with a 10 s deadline and a 100 ms backoff
    # (capped at 200 ms) retries more than the 8 times the old count allowed and then succeeds.
    port = free_port()
    started = threading.Event()
    servers: list[FakeKafkaBroker] = []

    def open_later() -> None:
        time.sleep(2.5)

        def respond(header, request):
            return metadata_answer(request, "127.0.0.1", port) if header.api_key == 3 else None

        servers.append(_bind_fake(respond, port))
        started.set()

    threading.Thread(target=open_later, daemon=True).start()
    with Client(f"127.0.0.1:{port}", retry_backoff_ms=100, retry_backoff_max_ms=200) as c:
        meta = c.metadata(timeout_ms=10_000)
        assert started.is_set() and meta.brokers[1].port == port
        assert c.metrics()["retries"] > 8
    for s in servers:
        s.close()


def _bind_fake(respond, port: int) -> FakeKafkaBroker:
    """A FakeKafkaBroker on a chosen port (the client was told the address before it existed)."""
    server = FakeKafkaBroker.__new__(FakeKafkaBroker)
    server.respond, server.versions, server.requests = respond, VERSIONS, []
    server.handler, server.ssl_context = server._handle, None
    server.sock = socket.socket()
    server.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.sock.bind(("127.0.0.1", port))
    server.sock.listen()
    server.port = port
    server.connections, server._stop = [], False
    server._thread = threading.Thread(target=server._serve, daemon=True)
    server._thread.start()
    return server
