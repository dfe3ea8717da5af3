"""BrokerConnection's framing layer against scripted fake servers: pipelining, correlation ids,
timeouts, the response-size guard and broken connections."""

from __future__ import annotations

import socket
import struct
import threading
import time

import pytest
from client_fakes import FakeServer, frame, read_exact, read_request

from kafkawire.client.errors import (
    CorrelationIdMismatchError,
    KafkaConnectionError,
    KafkaTimeoutError,
    ResponseTooLargeError,
)
from kafkawire.client.net.connection import BrokerConnection
from kafkawire.client.net.deadline import Deadline
from kafkawire.errors import ProtocolError


def request_frame(cid: int, api_key: int = 3, payload: bytes = b"") -> bytes:
    body = struct.pack(">hhi", api_key, 0, cid) + b"\x00\x04test" + payload
    return struct.pack(">i", len(body)) + body


def connect(server: FakeServer, **kw) -> BrokerConnection:
    return BrokerConnection("127.0.0.1", server.port, **kw).connect(negotiate=False)


def echo_in_order(conn: socket.socket) -> None:
    while (req := read_request(conn)) is not None:
        _, _, cid, body = req
        conn.sendall(frame(cid, b"echo:" + body[8:]))


def test_pipelined_requests_are_matched_to_their_responses():
    with FakeServer(echo_in_order) as server, connect(server) as c:
        cids = [c.next_correlation_id() for _ in range(5)]
        for i, cid in enumerate(cids):
            c.send_frame(request_frame(cid, payload=bytes([i])), cid)
        assert c.in_flight == 5
        # Collect out of order: the last first; earlier responses read on the way are kept.
        last = c.receive(cids[-1])
        assert struct.unpack_from(">i", last)[0] == cids[-1] and last.endswith(b"\x04")
        for i, cid in enumerate(cids[:-1]):
            buf = c.receive(cid)
            assert struct.unpack_from(">i", buf)[0] == cid and buf.endswith(bytes([i]))
        assert c.in_flight == 0
        with pytest.raises(ValueError):
            c.receive(cids[0])  # already collected


def test_no_response_expected_is_not_tracked():
    with FakeServer(echo_in_order) as server, connect(server) as c:
        c.send_frame(request_frame(41), 41, expect_response=False)
        assert c.in_flight == 0


def test_wrong_correlation_id_is_detected_and_fails_everything_in_flight():
    def wrong(conn: socket.socket) -> None:
        while (req := read_request(conn)) is not None:
            conn.sendall(frame(req[2] + 1000))

    with FakeServer(wrong) as server:
        c = connect(server)
        a, b = c.next_correlation_id(), c.next_correlation_id()
        c.send_frame(request_frame(a), a)
        c.send_frame(request_frame(b), b)
        with pytest.raises(CorrelationIdMismatchError) as info:
            c.receive(b)
        assert info.value.expected == a and info.value.received == a + 1000
        assert not c.connected
        with pytest.raises(CorrelationIdMismatchError):
            c.receive(a)  # the other request in flight fails with the same cause
        with pytest.raises(KafkaConnectionError, match="closed"):
            c.send_frame(request_frame(9), 9)


def test_response_that_never_comes_times_out():
    release = threading.Event()

    def silent(conn: socket.socket) -> None:
        read_request(conn)
        release.wait(10)

    with FakeServer(silent) as server:
        c = connect(server, request_timeout_ms=300)
        cid = c.next_correlation_id()
        c.send_frame(request_frame(cid), cid)
        t0 = time.monotonic()
        with pytest.raises(KafkaTimeoutError) as info:
            c.receive(cid)
        elapsed = time.monotonic() - t0
        release.set()
        assert 0.25 <= elapsed < 2.0
        assert info.value.retriable
        assert not c.connected  # a half-read stream cannot be reused


def test_per_call_timeout_overrides_the_default():
    release = threading.Event()

    def silent(conn: socket.socket) -> None:
        read_request(conn)
        release.wait(10)

    with FakeServer(silent) as server:
        c = connect(server, request_timeout_ms=30_000)
        cid = c.next_correlation_id()
        c.send_frame(request_frame(cid), cid)
        t0 = time.monotonic()
        with pytest.raises(KafkaTimeoutError):
            c.receive(cid, timeout_ms=200)
        release.set()
        assert time.monotonic() - t0 < 2.0


def test_response_size_is_checked_before_the_body_is_read():
    def huge(conn: socket.socket) -> None:
        req = read_request(conn)
        # Announce 1.5 GB and send only the correlation id: a client that trusts the size would
        # allocate 1.5 GB and then wait for bytes that never come.
        conn.sendall(struct.pack(">ii", 1_500_000_000, req[2]))
        time.sleep(5)

    with FakeServer(huge) as server:
        c = connect(server, max_response_bytes=1 << 20, request_timeout_ms=10_000)
        cid = c.next_correlation_id()
        c.send_frame(request_frame(cid), cid)
        t0 = time.monotonic()
        with pytest.raises(ResponseTooLargeError) as info:
            c.receive(cid)
        assert time.monotonic() - t0 < 1.0
        assert info.value.size == 1_500_000_000 and info.value.limit == 1 << 20
        assert not c.connected


@pytest.mark.parametrize("size", [-5, 0, 3])
def test_impossible_response_sizes_are_protocol_errors(size):
    def bad(conn: socket.socket) -> None:
        read_request(conn)
        conn.sendall(struct.pack(">i", size) + b"\0" * 8)
        time.sleep(2)

    with FakeServer(bad) as server:
        c = connect(server)
        cid = c.next_correlation_id()
        c.send_frame(request_frame(cid), cid)
        with pytest.raises(ProtocolError, match="too small"):
            c.receive(cid)


def test_connection_closed_mid_response():
    def half(conn: socket.socket) -> None:
        req = read_request(conn)
        conn.sendall(struct.pack(">ii", 100, req[2]) + b"partial")
        conn.close()

    with FakeServer(half) as server:
        c = connect(server)
        cid = c.next_correlation_id()
        c.send_frame(request_frame(cid), cid)
        with pytest.raises(KafkaConnectionError, match="mid-response") as info:
            c.receive(cid)
        assert info.value.retriable


def test_connection_refused():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = BrokerConnection("127.0.0.1", port, connect_timeout_ms=1000)
    with pytest.raises(KafkaConnectionError, match="cannot connect"):
        c.connect()


def test_large_response_is_read_completely():
    payload = bytes(range(256)) * 40_000  # ~10 MB, arrives in many recv() chunks

    def big(conn: socket.socket) -> None:
        req = read_request(conn)
        conn.sendall(frame(req[2], payload))
        read_exact(conn, 1)

    with FakeServer(big) as server, connect(server) as c:
        cid = c.next_correlation_id()
        c.send_frame(request_frame(cid), cid)
        buf = c.receive(cid)
        assert bytes(buf[4:]) == payload


def test_correlation_ids_wrap_to_one():
    c = BrokerConnection("127.0.0.1", 1)
    c._next_cid = 0x7FFFFFFF
    assert c.next_correlation_id() == 0x7FFFFFFF
    assert c.next_correlation_id() == 1


def test_unrequested_answer_to_a_no_response_request_is_dropped():
    # noida-db answers Produce with acks=0, which Kafka never does: the answer must not be taken for a
    # correlation error on the next request.
    with FakeServer(echo_in_order) as server, connect(server) as c:
        silent = c.next_correlation_id()
        c.send_frame(request_frame(silent), silent, expect_response=False)
        cid = c.next_correlation_id()
        c.send_frame(request_frame(cid), cid)
        buf = c.receive(cid)
        assert struct.unpack_from(">i", buf)[0] == cid
        assert c.connected


def _silent(conn: socket.socket) -> None:
    while conn.recv(65536):
        pass


def test_the_handshake_stops_at_the_callers_deadline():
    # Connect and request timeouts of 30 s; the caller has 0.5 s: ApiVersions is never answered.
    with FakeServer(_silent) as server:
        c = BrokerConnection("127.0.0.1", server.port, connect_timeout_ms=30_000, request_timeout_ms=30_000)
        t0 = time.monotonic()
        with pytest.raises(KafkaTimeoutError, match=f"no complete response from 127.0.0.1:{server.port}"):
            c.connect(deadline=Deadline(0.5))
        assert time.monotonic() - t0 <= 0.5 * 1.1 + 0.2
        assert not c.connected


def test_a_read_stops_at_the_deadline_when_it_comes_before_the_request_timeout():
    with FakeServer(_silent) as server, connect(server, request_timeout_ms=30_000) as c:
        cid = c.next_correlation_id()
        c.send_frame(request_frame(cid), cid)
        t0 = time.monotonic()
        with pytest.raises(KafkaTimeoutError):
            c.receive(cid, deadline=Deadline(0.4))
        assert time.monotonic() - t0 <= 0.4 * 1.1 + 0.2


def test_an_expired_deadline_does_not_even_connect():
    with FakeServer(_silent) as server:
        c = BrokerConnection("127.0.0.1", server.port)
        with pytest.raises(KafkaTimeoutError, match="no time left") as info:
            c.connect(deadline=Deadline(0))
        assert info.value.no_time_left
        assert server.connections == []


# ------------------------------------------------------------------- reading ahead, size the request allows


def _answer_after(delay_s: float, payload: bytes):
    def serve(conn: socket.socket) -> None:
        req = read_request(conn)
        time.sleep(delay_s)
        conn.sendall(frame(req[2], payload))
        read_exact(conn, 1)

    return serve


def test_read_ahead_reads_the_answer_on_another_thread_for_receive():
    payload = bytes(range(256)) * 20_000
    with FakeServer(_answer_after(0.2, payload)) as server, connect(server) as c:
        cid = c.next_correlation_id()
        c.send_frame(request_frame(cid), cid)
        reader = threading.Thread(target=c.read_ahead, args=(cid, Deadline.from_ms(10_000)))
        reader.start()
        reader.join(10)
        assert not reader.is_alive()
        assert c.in_flight == 0  # read off the socket by the other thread, kept for receive
        assert bytes(c.receive(cid)[4:]) == payload


def test_read_ahead_ends_when_the_caller_reads_the_answer_first():
    with FakeServer(_answer_after(0.3, b"late")) as server, connect(server) as c:
        cid = c.next_correlation_id()
        c.send_frame(request_frame(cid), cid)
        assert bytes(c.receive(cid)[4:]) == b"late"
        reader = threading.Thread(target=c.read_ahead, args=(cid, Deadline.from_ms(30_000)))
        t0 = time.monotonic()
        reader.start()
        reader.join(10)
        assert not reader.is_alive() and time.monotonic() - t0 < 5


def test_read_ahead_stops_at_its_deadline_and_leaves_the_request_in_flight():
    with FakeServer(_silent) as server, connect(server) as c:
        cid = c.next_correlation_id()
        c.send_frame(request_frame(cid), cid)
        t0 = time.monotonic()
        c.read_ahead(cid, Deadline.from_ms(200))
        assert 0.15 < time.monotonic() - t0 < 5
        assert c.connected and c.in_flight == 1  # nothing was read: the caller's receive still owns it


def test_a_failure_while_reading_ahead_is_raised_by_receive():
    def half(conn: socket.socket) -> None:
        req = read_request(conn)
        conn.sendall(struct.pack(">ii", 1000, req[2]) + b"only part")
        conn.close()

    with FakeServer(half) as server, connect(server) as c:
        cid = c.next_correlation_id()
        c.send_frame(request_frame(cid), cid)
        c.read_ahead(cid, Deadline.from_ms(10_000))
        assert not c.connected
        with pytest.raises(KafkaConnectionError, match="mid-response"):
            c.receive(cid)


def test_an_answer_within_the_size_its_request_allows_is_read_whole():
    payload = bytes(range(256)) * 40_000
    with FakeServer(_answer_after(0, payload)) as server, connect(server) as c:
        cid = c.next_correlation_id()
        c.send_frame(request_frame(cid), cid, expect_bytes=len(payload) + 100)
        assert bytes(c.receive(cid)[4:]) == payload


def test_a_forged_size_above_what_the_request_allows_still_grows_with_the_bytes():
    import tracemalloc

    announced = 48 << 20

    def forged(conn: socket.socket) -> None:
        req = read_request(conn)
        conn.sendall(struct.pack(">ii", announced, req[2]) + b"x" * 100)
        conn.close()

    with FakeServer(forged) as server, connect(server, max_response_bytes=64 << 20) as c:
        cid = c.next_correlation_id()
        c.send_frame(request_frame(cid), cid, expect_bytes=8 << 20)  # allowed 8 MiB, announced 48
        tracemalloc.start()
        try:
            with pytest.raises(KafkaConnectionError):
                c.receive(cid)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 8 << 20, peak


def test_receive_keeps_its_deadline_while_another_thread_reads_a_slow_answer():
    def slow(conn: socket.socket) -> None:
        req = read_request(conn)
        conn.sendall(struct.pack(">ii", 4 + 6, req[2]) + b"he")  # a frame's first bytes, the rest 1.5 s later
        time.sleep(1.5)
        conn.sendall(b"llo!")
        read_exact(conn, 1)

    with FakeServer(slow) as server, connect(server) as c:
        cid = c.next_correlation_id()
        c.send_frame(request_frame(cid), cid)
        reader = threading.Thread(target=c.read_ahead, args=(cid, Deadline.from_ms(10_000)))
        reader.start()
        time.sleep(0.3)  # the reader holds the connection, mid-frame
        t0 = time.monotonic()
        with pytest.raises(KafkaTimeoutError, match="another thread"):
            c.receive(cid, 200)
        assert time.monotonic() - t0 < 1.0  # its own 200 ms (and slack), not the reader's 1.5 s
        reader.join(10)
        assert c.connected and c.in_flight == 0
        assert c._ready == {}  # noqa: SLF001 - the answer given up on was dropped when it arrived
