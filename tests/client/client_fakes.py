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

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
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
            self.handler(conn)
        except OSError:
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

    def __init__(self, respond, versions: dict[int, tuple[int, int]]) -> None:
        self.respond = respond
        self.versions = versions
        self.requests: list = []
        super().__init__(self._handle)

    def _handle(self, conn: socket.socket) -> None:
        from kafkawire.protocol import API_BY_KEY, ApiVersionsResponse, decode_request

        while (req := read_request(conn)) is not None:
            header, request = decode_request(req[3])
            self.requests.append((header.api_key, header.api_version))
            if header.api_key == 18:
                resp = ApiVersionsResponse(
                    error_code=0,
                    api_keys=[ApiVersionsResponse.ApiVersion(api_key=k, min_version=lo, max_version=hi)
                              for k, (lo, hi) in sorted(self.versions.items())],
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
