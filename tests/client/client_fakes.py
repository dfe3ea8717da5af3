"""A tiny scripted TCP server that speaks Kafka framing, for tests of misbehaving brokers."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable


def read_exact(conn: socket.socket, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def read_request(conn: socket.socket) -> tuple[int, int, int, bytes] | None:
    """(api_key, api_version, correlation_id, whole frame) of the next request, or None at EOF."""
    head = read_exact(conn, 4)
    if head is None:
        return None
    (size,) = struct.unpack(">i", head)
    body = read_exact(conn, size)
    if body is None:
        return None
    api_key, version, cid = struct.unpack_from(">hhi", body, 0)
    return api_key, version, cid, body


def frame(correlation_id: int, body: bytes = b"") -> bytes:
    payload = struct.pack(">i", correlation_id) + body
    return struct.pack(">i", len(payload)) + payload


Handler = Callable[[socket.socket], None]


class FakeServer:
    """Accepts connections on loopback and runs ``handler(conn)`` for each on its own thread."""

    def __init__(self, handler: Handler, ssl_context=None) -> None:
        self.handler = handler
        self.ssl_context = ssl_context
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.connections: list[socket.socket] = []
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections.append(conn)
            threading.Thread(target=self._run, args=(conn,), daemon=True).start()

    def _run(self, conn: socket.socket) -> None:
        try:
            if self.ssl_context is not None:
                conn.settimeout(10)
                conn = self.ssl_context.wrap_socket(conn, server_side=True)
                conn.settimeout(None)
                self.connections.append(conn)
            self.handler(conn)
        except OSError:  # includes ssl.SSLError: a client that refused our certificate
            pass

    def close(self) -> None:
        self._stop = True
        self.sock.close()
        for c in self.connections:
            try:
                c.close()
            except OSError:
                pass

    def __enter__(self) -> FakeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class FakeKafkaBroker(FakeServer):
    """A scripted broker: decodes each request with kafkawire.protocol and asks ``respond`` for the answer.

    ``respond(header, request)`` returns a response message (encoded at the request's version), raw
    bytes (sent as they are), or None (no answer). ApiVersions is answered here, advertising
    ``versions`` (API key -> (min, max)).
    """

    def __init__(self, respond, versions: dict[int, tuple[int, int]], ssl_context=None) -> None:
        self.respond = respond
        self.versions = versions
        self.requests: list = []
        super().__init__(self._handle, ssl_context)

    def _handle(self, conn: socket.socket) -> None:
        from kafkawire.protocol import API_BY_KEY, ApiVersionsResponse, decode_request

        while (req := read_request(conn)) is not None:
            header, request = decode_request(req[3])
            self.requests.append((header.api_key, header.api_version))
            if header.api_key == 18:
                resp = ApiVersionsResponse(
                    error_code=0,
                    api_keys=[
                        ApiVersionsResponse.ApiVersion(api_key=k, min_version=lo, max_version=hi)
                        for k, (lo, hi) in sorted(self.versions.items())
                    ],
                )
                conn.sendall(resp.encode(header.api_version, header.correlation_id))
                continue
            answer = self.respond(header, request)
            if answer is None:
                continue
            if isinstance(answer, (bytes, bytearray)):
                conn.sendall(answer)
            else:
                assert isinstance(answer, API_BY_KEY[header.api_key][1])
                conn.sendall(answer.encode(header.api_version, header.correlation_id))


class KafkaProxy:
    """A frame-aware TCP proxy in front of one real broker, for injecting faults.

    Metadata responses are rewritten so that the broker is advertised at the proxy's address (the client
    keeps talking through it). ``drop_response(api_key) -> bool`` is asked for each response: True
    swallows it and closes the client's connection, as if the broker had crashed right after applying
    the request: the client never learns that it succeeded.
    """

    def __init__(self, target_host: str, target_port: int, drop_response=None) -> None:
        self.target = (target_host, target_port)
        self.drop_response = drop_response or (lambda api_key: False)
        self.dropped: list[int] = []
        self.server = FakeServer(self._handle)
        self.port = self.server.port

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _handle(self, client: socket.socket) -> None:
        from kafkawire.protocol import MetadataResponse
        from kafkawire.protocol.headers import decode_response_header

        upstream = socket.create_connection(self.target)
        pending: dict[int, tuple[int, int]] = {}
        lock = threading.Lock()

        def responses() -> None:
            try:
                while True:
                    head = read_exact(upstream, 4)
                    if head is None:
                        break
                    body = read_exact(upstream, struct.unpack(">i", head)[0])
                    (cid,) = struct.unpack_from(">i", body, 0)
                    with lock:
                        api_key, version = pending.pop(cid, (-1, -1))
                    if api_key == 3:
                        hv = MetadataResponse.header_version(version)
                        _, pos = decode_response_header(body, hv)
                        meta = MetadataResponse.decode(memoryview(body)[pos:], version, allow_trailing=True)
                        for b in meta.brokers:
                            b.host, b.port = "127.0.0.1", self.port
                        out = meta.encode(version, cid)
                    else:
                        out = head + body
                    if self.drop_response(api_key):
                        self.dropped.append(api_key)
                        # shutdown() first: close() alone does not interrupt the other thread's recv()
                        # on this socket, and the client would see no EOF.
                        for s in (client, upstream):
                            try:
                                s.shutdown(socket.SHUT_RDWR)
                            except OSError:
                                pass
                            s.close()
                        return
                    client.sendall(out)
            except OSError:
                pass

        threading.Thread(target=responses, daemon=True).start()
        try:
            while (req := read_request(client)) is not None:
                api_key, version, cid, body = req
                with lock:
                    pending[cid] = (api_key, version)
                upstream.sendall(struct.pack(">i", len(body)) + body)
        except OSError:
            pass
        finally:
            try:
                upstream.shutdown(socket.SHUT_RDWR)  # wakes the response thread blocked in recv()
            except OSError:
                pass
            upstream.close()

    def close(self) -> None:
        self.server.close()

    def __enter__(self) -> KafkaProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
