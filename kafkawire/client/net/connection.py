"""One blocking TCP (or TLS) connection to one broker.

A :class:`BrokerConnection` frames requests (int32 size prefix), hands out correlation ids and checks
them on the way back, keeps several requests in flight on the socket (pipelining: Kafka answers the
requests of one connection in the order they were sent), applies a deadline to every call, refuses a
response whose announced size exceeds ``max_response_bytes`` *before* reading its body, negotiates API
versions (ApiVersions, KIP-35/KIP-511) and authenticates with SASL (SaslHandshake v1 + SaslAuthenticate,
KIP-152: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, GSSAPI); those steps of :meth:`BrokerConnection.connect`
(and the TCP connect and TLS handshake) are :mod:`.handshake`'s.

Any I/O failure, timeout or framing error closes the connection: the byte stream can no longer be trusted
to be at a frame boundary, and every request still in flight fails with the same error.

The raw layer (:meth:`BrokerConnection.send_frame` / :meth:`BrokerConnection.receive`) works on bytes and
needs nothing from the protocol layer; :meth:`BrokerConnection.send` / :meth:`BrokerConnection.request`
take message objects from :mod:`kafkawire.protocol`.
"""

from __future__ import annotations

import collections
import logging
import select
import socket
import ssl
import struct
import threading
import time
from typing import Any, Literal, overload

from ...errors import ProtocolError
from ..cluster.quirks import (
    DEFAULT_MAX_RESPONSE_BYTES,
    UNREQUESTED_ANSWERS_KEPT,
)
from ..errors import (
    CorrelationIdMismatchError,
    KafkaConnectionError,
    KafkaTimeoutError,
    ListenerMismatchError,
    ResponseTooLargeError,
)
from .deadline import Deadline
from .handshake import authenticate, hung_up_after_handshake, negotiate_versions, open_socket
from .sasl import SaslConfig

__all__ = ["BrokerConnection", "PendingResponse", "DEFAULT_MAX_RESPONSE_BYTES"]

log = logging.getLogger("kafkawire.client.connection")

_I32 = struct.Struct(">i")


# Read in chunks of at most this much at a time: recv_into of a huge span on a TLS socket is capped anyway.
#: First receive buffer; it doubles as bytes arrive, up to the announced size.
_RECV_INITIAL = 1 << 20
_RECV_CHUNK = 4 * 1024 * 1024


def recv_exact(sock: socket.socket, n: int, deadline: float, peer: str, *, at_once: bool = False) -> bytearray:
    """``n`` bytes from ``sock`` by ``deadline`` (``time.monotonic()``; TimeoutError after it); ``peer`` names the
    broker in the error when it closes the connection first.

    The buffer grows (doubling) with the bytes that actually arrive, not with the size the peer announced: a
    forged size within max_response_bytes followed by silence costs what was sent, not the announced amount
    (docs/SECURITY.md). ``at_once``: the size is within what our own request allowed its answer (a Fetch's
    max_bytes), memory the caller agreed to spend: one buffer of that size, without the growth's zero-fills
    and copies (12% of a 6-partition consume's time)."""
    buf = bytearray(n if at_once else min(n, _RECV_INITIAL))
    got = 0
    while got < n:
        if got == len(buf):
            buf.extend(bytes(min(n, 2 * len(buf)) - len(buf)))
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        sock.settimeout(remaining)
        with memoryview(buf) as view:
            k = sock.recv_into(view[got : min(len(buf), got + _RECV_CHUNK)])
        if k == 0:
            closed = KafkaConnectionError(
                f"{peer} closed the connection ({'mid-response' if got else 'awaiting a response'})"
            )
            closed.awaiting = not got  # type: ignore[attr-defined]
            raise closed
        got += k
    return buf


class PendingResponse:
    """A request that was sent and whose response has not been collected yet."""

    __slots__ = ("connection", "correlation_id", "response_class", "version", "sent_at")

    def __init__(self, connection: BrokerConnection, correlation_id: int, response_class: Any, version: int) -> None:
        self.connection = connection
        self.correlation_id = correlation_id
        self.response_class = response_class
        self.version = version
        self.sent_at = time.monotonic()

    def result(self, timeout_ms: float | None = None, *, deadline: Deadline | None = None) -> Any:
        """Wait for the response (at most ``timeout_ms``, default the connection's request timeout, and
        never past ``deadline``) and decode it (raises the connection's error on failure)."""
        conn = self.connection
        api_key = self.response_class.API_KEY
        try:
            buf = conn.receive(self.correlation_id, timeout_ms, deadline=deadline)
        except BaseException:
            if conn.metrics is not None:
                conn.metrics.record_error(api_key)
            raise
        if conn.metrics is not None:
            conn.metrics.record_response(api_key, len(buf) + 4, time.monotonic() - self.sent_at)
        return conn.decode_response(buf, self.response_class, self.version)

    def __repr__(self) -> str:
        return f"<PendingResponse {self.response_class.__name__} v{self.version} cid={self.correlation_id}>"


def foreign_answer(head: bytes | bytearray) -> str | None:
    """What the first 4 bytes of a plaintext connection's response say when they are not a Kafka size
    prefix but another protocol's answer (None for anything else), with what to set.

    A TLS listener answers a plaintext request with a TLS alert record (content type 0x15, version 3.x;
    as a size, 352 518 912 bytes), an HTTP server with ``HTTP/1.1 400 ...``; read as a size prefix either
    looks like a huge response, and "raise max_response_bytes" would be the wrong advice.
    """
    if len(head) >= 3 and 0x14 <= head[0] <= 0x17 and head[1] == 0x03 and head[2] <= 0x04:
        return (
            "answered with a TLS record: it is a TLS listener (security.protocol SSL or SASL_SSL) and this "
            "client speaks PLAINTEXT; set security.protocol=SSL or SASL_SSL (Spark: kafka.security.protocol; "
            "CLI: -X security.protocol=...) with a truststore for the cluster's CA"
        )
    if head[:4] in (b"HTTP", b"<!DO", b"<htm", b"<HTM"):
        return (
            "answered with HTTP: it is a web server (a REST proxy, a Schema Registry, a UI?), not a Kafka "
            "listener; check the bootstrap address and port"
        )
    if head[:4] == b"SSH-":
        return "answered with an SSH banner: it is an SSH server, not a Kafka listener; check the port"
    return None


class BrokerConnection:
    """A connection to one broker; created disconnected, opened by :meth:`connect`.

    ``request_timeout_ms`` is the default deadline of every call that waits on the broker;
    ``max_response_bytes`` caps the size of one response; ``ssl_context`` turns on TLS (the certificate
    is checked against ``server_hostname``, default ``host``, when the context checks host names);
    ``sasl`` authenticates after the version negotiation. ``max_versions`` caps the version used for
    an API key (to route around a broker's broken version). The connection is safe to share between
    threads: calls are serialised by a lock, and a thread collecting its response stores the responses
    it reads for other requests.
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        node_id: int = -1,
        client_id: str | None = "kafkawire",
        connect_timeout_ms: float = 10_000,
        request_timeout_ms: float = 30_000,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        ssl_context: ssl.SSLContext | None = None,
        server_hostname: str | None = None,
        sasl: SaslConfig | None = None,
        max_versions: dict[int, int] | None = None,
        metrics: Any = None,
    ) -> None:
        self.host = host
        self.port = int(port)
        self._peer = f"{host}:{self.port}"  # for the frame reader's errors
        self.node_id = node_id
        self.client_id = client_id
        self.connect_timeout_ms = connect_timeout_ms
        self.request_timeout_ms = request_timeout_ms
        self.max_response_bytes = int(max_response_bytes)
        self.ssl_context = ssl_context
        self.server_hostname = server_hostname
        self.sasl = sasl
        self.max_versions = dict(max_versions or {})
        #: A :class:`kafkawire.client.net.metrics.ClientMetrics` (or None) told of every request and response.
        self.metrics = metrics
        #: Negotiated versions (``kafkawire.protocol.negotiation.NegotiatedVersions``) after connect.
        self.versions: Any = None
        self._sock: socket.socket | None = None
        self._lock = threading.RLock()
        self._next_cid = 1
        self._inflight: collections.deque[int] = collections.deque()
        self._ready: dict[int, bytearray] = {}
        self._failed: dict[int, BaseException] = {}
        # Answer sizes their own requests allow (send_frame's expect_bytes), by correlation id.
        self._expect_bytes: dict[int, int] = {}
        # Correlation ids whose receive gave up while another thread held the connection (dropped on arrival).
        self._abandoned: set[int] = set()
        # Correlation ids of requests sent without expecting a response (Produce acks=0), for the
        # brokers that answer them anyway (quirks.UNREQUESTED_ANSWERS_KEPT).
        self._no_reply: collections.deque[int] = collections.deque(maxlen=UNREQUESTED_ANSWERS_KEPT)
        self._closed_error: BaseException | None = None
        # Answers read since the handshake (ApiVersions, SASL) ended: none when the broker hangs up on the
        # first request after it, as a SASL listener does with a client that skipped authentication.
        self._answers_since_handshake = -1

    # ------------------------------------------------------------------------------------ lifecycle
    @property
    def connected(self) -> bool:
        return self._sock is not None

    @property
    def in_flight(self) -> int:
        """Number of requests sent whose response has not been read off the socket."""
        return len(self._inflight)

    def __repr__(self) -> str:
        state = "connected" if self.connected else "closed"
        return f"<BrokerConnection node={self.node_id} {self.host}:{self.port} {state}>"

    def connect(self, *, negotiate: bool = True, deadline: Deadline | None = None) -> BrokerConnection:
        """Open the socket (TLS if configured), negotiate versions, authenticate. No-op when connected.

        The whole handshake (TCP connect, TLS, ApiVersions, SASL) takes at most ``connect_timeout_ms``
        and never outlasts ``deadline``: the caller's deadline is what bounds a connect to a host that
        drops SYNs or a peer that accepts and never answers.
        """
        with self._lock:
            if self._sock is not None:
                return self
            limit = Deadline.from_ms(self.connect_timeout_ms)
            if deadline is not None:
                limit = deadline.sooner(limit.timeout)
            budget = limit.remaining()
            if budget <= 0:
                raise KafkaTimeoutError.nothing_left(f"no time left to connect to {self.host}:{self.port}")
            sock = open_socket(self.host, self.port, limit, budget, self.ssl_context, self.server_hostname)
            self._sock = sock
            self._closed_error = None
            self._inflight.clear()
            self._ready.clear()
            self._failed.clear()
            self._expect_bytes.clear()
            self._abandoned.clear()
            self._no_reply.clear()
            self._answers_since_handshake = -1
            try:
                if negotiate:
                    self.versions = negotiate_versions(self, limit)
                if self.sasl is not None:
                    authenticate(self, self.sasl, limit)
                self._answers_since_handshake = 0
            except BaseException as e:
                log.debug("handshake with %s:%s failed: %s", self.host, self.port, e)
                self.close()
                raise
            log.debug("connected to %s:%s (node %s)", self.host, self.port, self.node_id)
            return self

    def close(self, error: BaseException | None = None) -> None:
        """Close the socket; requests in flight fail with ``error`` (default: a connection error)."""
        with self._lock:
            sock, self._sock = self._sock, None
            if error is None:
                error = KafkaConnectionError(f"connection to {self.host}:{self.port} closed")
            self._closed_error = error
            for cid in self._inflight:
                self._failed[cid] = error
            self._inflight.clear()
            self._expect_bytes.clear()
            if sock is not None:
                log.debug("closing connection to %s:%s: %s", self.host, self.port, error)
                try:
                    sock.close()
                except OSError:
                    pass

    def __enter__(self) -> BrokerConnection:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------------ raw layer
    def next_correlation_id(self) -> int:
        """A fresh correlation id (positive int32, wrapping)."""
        with self._lock:
            cid = self._next_cid
            self._next_cid = cid + 1 if cid < 0x7FFFFFFF else 1
            return cid

    def send_frame(
        self,
        frame: bytes | bytearray | memoryview,
        correlation_id: int,
        *,
        expect_response: bool = True,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
        expect_bytes: int = 0,
    ) -> None:
        """Write one size-prefixed request frame whose header carries ``correlation_id``.

        With ``expect_response`` False (Produce with acks=0) no response is awaited for it.
        ``expect_bytes``: the size the request itself allows its response (a Fetch's ``max_bytes``, plus
        framing); an answer announcing at most that is read into a buffer of its size at once, a larger
        one (or any answer without it) into a buffer that grows with the bytes that arrive (module
        docstring).
        """
        with self._lock:
            sock = self._require_socket()
            timeout = self._limit(timeout_ms, deadline).remaining()
            if timeout <= 0:
                raise KafkaTimeoutError.nothing_left(f"no time left to send to {self.host}:{self.port}")
            try:
                sock.settimeout(max(0.001, timeout))
                sock.sendall(frame)
            except TimeoutError as e:
                err = KafkaTimeoutError(f"sending to {self.host}:{self.port} timed out after {timeout:g}s")
                self.close(err)
                raise err from e
            except OSError as e:
                failure = KafkaConnectionError(f"send to {self.host}:{self.port} failed: {e}")
                self.close(failure)
                raise failure from e
            if expect_response:
                self._inflight.append(correlation_id)
                if expect_bytes > 0:
                    self._expect_bytes[correlation_id] = int(expect_bytes)
            else:
                self._no_reply.append(correlation_id)

    def _limit(self, timeout_ms: float | None, deadline: Deadline | None) -> Deadline:
        """The per-request limit (``timeout_ms``, default ``request_timeout_ms``) cut to ``deadline``."""
        limit = Deadline.from_ms(self.request_timeout_ms if timeout_ms is None else timeout_ms)
        return limit if deadline is None else deadline.sooner(limit.timeout)

    def receive(
        self, correlation_id: int, timeout_ms: float | None = None, *, deadline: Deadline | None = None
    ) -> bytearray:
        """The response frame (without its size prefix) for ``correlation_id``, waiting at most
        ``timeout_ms`` (default ``request_timeout_ms``) for it and never past ``deadline``.

        Responses arrive in request order; responses read for other requests on the way are kept for
        their own ``receive`` call. While another thread reads off the connection (:meth:`read_ahead`)
        past this call's time, it raises :class:`KafkaTimeoutError`, leaving the connection open and
        its answer to be dropped on arrival."""
        limit = self._limit(timeout_ms, deadline)
        timeout, deadline_at = limit.remaining(), limit.at
        if not self._lock.acquire(timeout=min(timeout, threading.TIMEOUT_MAX)):
            self._abandoned.add(correlation_id)  # (one atomic add) the reader holding the lock drops it
            raise KafkaTimeoutError(f"no complete response from {self.host}:{self.port} within {timeout:.3g} s "
                                    "(another thread was reading an answer off the connection)")  # fmt: skip
        try:
            while True:
                buf = self._ready.pop(correlation_id, None)
                if buf is not None:
                    return buf
                failed = self._failed.pop(correlation_id, None)
                if failed is not None:
                    raise failed
                if correlation_id not in self._inflight:
                    raise ValueError(f"no request with correlation id {correlation_id} is in flight")
                self._read_one(deadline_at, timeout)
        finally:
            self._lock.release()

    def read_ahead(self, correlation_id: int, deadline: Deadline) -> bool:
        """Read frames until ``correlation_id``'s answer is read and kept for its :meth:`receive` (True); False
        when another caller read it first, at ``deadline`` or on a failure (which closes the connection, as in
        :meth:`receive`, which raises it). For a prefetcher's thread: the lock is taken only once bytes wait,
        so others wait at most one frame's transfer, not the broker's preparing of the answer."""
        while True:
            with self._lock:
                sock = self._sock
                if sock is None or correlation_id not in self._inflight:
                    return False
                waiting = isinstance(sock, ssl.SSLSocket) and sock.pending() > 0
            remaining = deadline.remaining()
            if remaining <= 0:
                return False
            try:
                waiting = waiting or bool(select.select([sock], [], [], min(remaining, 0.05))[0])
            except (OSError, ValueError):  # closed meanwhile
                return False
            if not waiting:
                continue
            with self._lock:
                if self._sock is not sock or correlation_id not in self._inflight:
                    return False
                try:
                    self._read_one(deadline.at, remaining)
                except Exception as e:  # noqa: BLE001 - the connection is closed with it; receive raises it
                    log.debug("reading ahead from %s:%s failed: %s", self.host, self.port, e)
                    return False
                if correlation_id not in self._inflight:
                    return correlation_id in self._ready

    def awaiting(self, correlation_id: int) -> bool:
        """Whether ``correlation_id``'s answer is still to be read off this (open) connection."""
        return self._sock is not None and correlation_id in self._inflight

    def _require_socket(self) -> socket.socket:
        if self._sock is None:
            if self._closed_error is not None:
                raise KafkaConnectionError(f"connection to {self.host}:{self.port} is closed ({self._closed_error})")
            raise KafkaConnectionError(f"not connected to {self.host}:{self.port}")
        return self._sock

    def _read_one(self, deadline: float, timeout: float) -> None:
        sock = self._require_socket()
        try:
            head = recv_exact(sock, 4, deadline, self._peer)
            foreign = None if self.ssl_context is not None else foreign_answer(head)
            if foreign is not None:
                raise ListenerMismatchError(f"{self.host}:{self.port} {foreign}")
            (size,) = _I32.unpack(head)
            if size < 4:
                raise ProtocolError(f"response size {size} from {self.host}:{self.port} is too small")
            if size > self.max_response_bytes:
                # Refuse before allocating: the body is never read (the connection is dropped instead).
                raise ResponseTooLargeError(size, self.max_response_bytes)
            allowed = self._expect_bytes.pop(self._inflight[0], 0) if self._inflight else 0
            body = recv_exact(sock, size, deadline, self._peer, at_once=size <= allowed)
        except TimeoutError as e:
            err = KafkaTimeoutError(
                f"no complete response from {self.host}:{self.port} within {timeout:.3g} s "
                f"({len(self._inflight)} request(s) in flight)"
            )
            self.close(err)
            raise err from e
        except (ProtocolError, KafkaConnectionError) as e:
            listener = None if self.sasl is not None or self._answers_since_handshake != 0 else \
                hung_up_after_handshake(self, e, deadline)
            self.close(listener or e)
            if listener is not None:
                raise listener from e
            raise
        except (OSError, ssl.SSLError) as e:
            failure = KafkaConnectionError(f"connection to {self.host}:{self.port} failed: {e}")
            self.close(failure)
            raise failure from e
        (received,) = _I32.unpack_from(body, 0)
        expected = self._inflight[0]
        if received != expected and received in self._no_reply:
            self._no_reply.remove(received)  # an unrequested answer to an acks=0 produce: drop it
            return
        if received != expected:
            mismatch = CorrelationIdMismatchError(expected, received)
            self.close(mismatch)
            raise mismatch
        self._inflight.popleft()
        self._ready[expected] = body
        if self._answers_since_handshake >= 0:
            self._answers_since_handshake += 1
        if self._abandoned:  # answers whose caller stopped waiting (receive's docstring): not kept
            for cid in list(self._abandoned):
                if self._ready.pop(cid, None) is not None or cid not in self._inflight:
                    self._abandoned.discard(cid)

    # ------------------------------------------------------------------------------- message layer
    def version_for(self, request_class: Any, min_version: int = 0) -> int:
        """The version to use for ``request_class``: the highest both sides speak, capped by
        ``max_versions`` (raises ``UnsupportedVersionError`` when nothing >= ``min_version`` fits)."""
        if self.versions is None:
            raise KafkaConnectionError(f"versions of {self.host}:{self.port} not negotiated (connect first)")
        version = int(self.versions.version_for(request_class, min_version))
        key = request_class.API_KEY
        cap = self.max_versions.get(key)
        if cap is not None and version > cap:
            lowest = max(self.versions.broker[key][0], request_class.MIN_VERSION, min_version)
            if cap < lowest:
                from ...protocol.errors import UnsupportedVersionError

                raise UnsupportedVersionError(
                    f"{request_class.__name__}: capped at v{cap} but {self.host}:{self.port} needs >= v{lowest}"
                )
            version = cap
        return version

    @overload
    def send(
        self,
        request: Any,
        version: int | None = None,
        *,
        expect_response: Literal[True] = True,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
        expect_bytes: int = 0,
    ) -> PendingResponse: ...

    @overload
    def send(
        self,
        request: Any,
        version: int | None = None,
        *,
        expect_response: bool,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
        expect_bytes: int = 0,
    ) -> PendingResponse | None: ...

    def send(
        self,
        request: Any,
        version: int | None = None,
        *,
        expect_response: bool = True,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
        expect_bytes: int = 0,
    ) -> PendingResponse | None:
        """Encode and send a request; returns a :class:`PendingResponse` (None without a response).
        ``expect_bytes``: see :meth:`send_frame`."""
        from ...protocol import API_BY_KEY

        if version is None:
            version = self.version_for(type(request))
        # Another thread may hold the connection while it reads an answer (up to its own deadline): wait for
        # it no longer than this request's limit, and leave the connection as it is (issue 34).
        wait = self._limit(timeout_ms, deadline).remaining()
        if not self._lock.acquire(timeout=min(wait, threading.TIMEOUT_MAX)):
            raise KafkaTimeoutError(f"no time left to send to {self.host}:{self.port} within {wait:.3g} s "
                                    "(another thread was reading an answer off the connection)")  # fmt: skip
        try:
            self._require_socket()
            cid = self.next_correlation_id()
            frame = request.encode(version=version, correlation_id=cid, client_id=self.client_id)
            if self.metrics is not None:
                self.metrics.record_request(request.API_KEY, len(frame))
            self.send_frame(frame, cid, expect_response=expect_response, timeout_ms=timeout_ms, deadline=deadline,
                            expect_bytes=expect_bytes)
        finally:
            self._lock.release()
        if not expect_response:
            return None
        return PendingResponse(self, cid, API_BY_KEY[request.API_KEY][1], version)

    def request(
        self,
        request: Any,
        version: int | None = None,
        *,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> Any:
        """Send a request and wait for its decoded response (at most ``timeout_ms``, never past ``deadline``)."""
        pending = self.send(request, version, timeout_ms=timeout_ms, deadline=deadline)
        assert pending is not None
        return pending.result(timeout_ms, deadline=deadline)

    @staticmethod
    def decode_response(buf: bytearray, response_class: Any, version: int) -> Any:
        """Decode a response frame (header included, size prefix excluded)."""
        from ...protocol.headers import decode_response_header

        _, pos = decode_response_header(buf, response_class.header_version(version))
        # Bytes after the body are ignored, as the Java client and librdkafka do (they never check):
        # librdkafka's mock cluster ends Metadata v13 with one stray byte, and a newer broker may append
        # fields an older schema does not know. The frame size already bounds what was read.
        # Read-only: nothing writes this frame's buffer again, and decode_records copies a writable input
        # before decoding it (issue 12) but decodes a read-only one in place.
        return response_class.decode(memoryview(buf).toreadonly()[pos:], version, allow_trailing=True)
