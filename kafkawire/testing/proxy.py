"""A fault-injecting TCP proxy for tests: the network faults of Kafka's own test framework (Trogdor's
``DegradedNetworkFault`` and ``NetworkPartitionFault``) between a client and the brokers, on loopback.

One :class:`FaultProxy` stands in front of one broker. It forwards whole Kafka frames, so faults land at
frame boundaries (or, for :meth:`FaultProxy.reset_mid_response`, inside one), and it rewrites the broker
addresses in Metadata and FindCoordinator answers to the proxies' own, so that a client given a proxy's
address keeps talking through the proxies (brokers "advertise through it")::

    proxies = proxy_cluster(broker.bootstrap)          # one proxy per broker of the cluster
    client = Client(proxies[0].address)
    proxies[0].degrade(latency_ms=200, jitter_ms=20, bandwidth_bps=1 << 20)
    proxies[0].blackhole()        # accept, read, never answer (connections stay open)
    proxies[0].half_open()        # neither read nor answer: the peer's writes pile up in its socket
    proxies[0].reset_mid_response()   # the next answer is cut halfway by a TCP reset
    proxies[0].heal()

A partition between the client and one broker of a cluster is :meth:`FaultProxy.blackhole` on that broker's
proxy while the others forward. Faults apply to connections already open and to new ones; settings may be
changed at any time. Not for production traffic: every connection costs four threads.
"""

from __future__ import annotations

import heapq
import random
import socket
import struct
import threading
import time
from typing import Any

from .brokers import LOOPBACK, free_port

__all__ = ["FaultProxy", "proxy_cluster"]

_I32 = struct.Struct(">i")
_METADATA, _FIND_COORDINATOR = 3, 10


def _read_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        try:
            chunk = sock.recv(n - len(buf))
        except OSError:
            return None
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _shutdown(*socks: socket.socket) -> None:
    for s in socks:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


class _Lane:
    """One direction of one connection: frames read from ``src`` are queued with the time they are due and
    written to ``dst`` by a thread of their own, in order, paced by the proxy's bandwidth cap."""

    def __init__(self, proxy: FaultProxy, src: socket.socket, dst: socket.socket, responses: bool, conn: _Conn):
        self.proxy, self.src, self.dst, self.responses, self.conn = proxy, src, dst, responses, conn
        self.queue: list[tuple[float, int, bytes, bool]] = []
        self.cond = threading.Condition()
        self.seq = 0
        self.last_due = 0.0
        self.done = False

    def start(self) -> None:
        threading.Thread(target=self._read, daemon=True, name="kafkawire-proxy-read").start()
        threading.Thread(target=self._write, daemon=True, name="kafkawire-proxy-write").start()

    def _read(self) -> None:
        proxy = self.proxy
        while not self.conn.closed:
            if proxy.mode == "half_open":  # read nothing: what the peer writes stays in its socket
                time.sleep(0.02)
                continue
            head = _read_exact(self.src, 4)
            body = None if head is None else _read_exact(self.src, _I32.unpack(head)[0])
            if head is None or body is None:
                break
            if self.responses:
                body = proxy._rewrite(body, self.conn)
            else:
                api_key, version, cid = struct.unpack_from(">hhi", body, 0)
                self.conn.requests[cid] = (api_key, version)
            delay = proxy.latency_ms / 1000
            if proxy.jitter_ms:
                delay += random.uniform(-proxy.jitter_ms, proxy.jitter_ms) / 1000
            due = max(time.monotonic() + max(0.0, delay), self.last_due)  # frames keep their order
            self.last_due = due
            cut = self.responses and proxy._take_reset()
            with self.cond:
                self.seq += 1
                heapq.heappush(self.queue, (due, self.seq, _I32.pack(len(body)) + body, cut))
                self.cond.notify()
        self.conn.close()
        with self.cond:
            self.done = True
            self.cond.notify()

    def _write(self) -> None:
        proxy = self.proxy
        while True:
            with self.cond:
                while not self.queue and not self.done:
                    self.cond.wait(0.1)
                if not self.queue:
                    return
                due, _, frame, cut = self.queue[0]
                wait = due - time.monotonic()
                if wait > 0:
                    self.cond.wait(min(wait, 0.1))
                    continue
                heapq.heappop(self.queue)
            while proxy.mode in ("blackhole", "half_open") and not self.conn.closed:
                time.sleep(0.02)  # held: never answered while the fault lasts (dropped at close)
            if self.conn.closed:
                return
            try:
                if cut:
                    self.dst.sendall(frame[: max(5, len(frame) // 2)])
                    self.conn.reset()
                    return
                self._send_paced(frame)
            except OSError:
                self.conn.close()
                return

    def _send_paced(self, frame: bytes) -> None:
        rate = self.proxy.bandwidth_bps
        if not rate:
            self.dst.sendall(frame)
            return
        step = max(1024, rate // 50)  # 20 ms of bytes at a time
        for i in range(0, len(frame), step):
            chunk = frame[i : i + step]
            started = time.monotonic()
            self.dst.sendall(chunk)
            rest = len(chunk) / rate - (time.monotonic() - started)
            if rest > 0:
                time.sleep(rest)


class _Conn:
    """One proxied connection: the client's socket, the broker's, and the requests awaiting answers."""

    def __init__(self, proxy: FaultProxy, client: socket.socket, upstream: socket.socket) -> None:
        self.proxy, self.client, self.upstream = proxy, client, upstream
        self.requests: dict[int, tuple[int, int]] = {}
        self.closed = False
        self._lock = threading.Lock()

    def start(self) -> None:
        _Lane(self.proxy, self.client, self.upstream, False, self).start()
        _Lane(self.proxy, self.upstream, self.client, True, self).start()

    def close(self) -> None:
        with self._lock:
            if self.closed:
                return
            self.closed = True
        _shutdown(self.client, self.upstream)
        self.proxy._forget(self)

    def reset(self) -> None:
        """Close the client's side with a TCP reset (SO_LINGER 0), the broker's side normally."""
        try:
            self.client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        with self._lock:
            self.closed = True
        self.client.close()
        _shutdown(self.upstream)
        self.proxy._forget(self)


class FaultProxy:
    """A proxy on ``host``:``port`` (default: a free loopback port) in front of the broker at ``target``
    (``"host:port"`` or a tuple). See the module docstring for the faults."""

    def __init__(self, target: str | tuple[str, int], *, host: str = LOOPBACK, port: int | None = None) -> None:
        if isinstance(target, str):
            t_host, _, t_port = target.rpartition(":")
            target = (t_host, int(t_port))
        self.target = (str(target[0]), int(target[1]))
        self.host = host
        self.port = port or free_port(host)
        #: Broker address -> the proxy that stands for it (shared by the proxies of :func:`proxy_cluster`).
        self.routes: dict[tuple[str, int], tuple[str, int]] = {self.target: (self.host, self.port)}
        self.latency_ms = 0.0
        self.jitter_ms = 0.0
        self.bandwidth_bps = 0
        #: "forward", "blackhole" (read, never answer) or "half_open" (neither read nor answer).
        self.mode = "forward"
        self._resets = 0
        self._lock = threading.Lock()
        self._conns: set[_Conn] = set()
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((host, self.port))
        self._listener.listen(64)
        self._closed = False
        threading.Thread(target=self._accept, daemon=True, name="kafkawire-proxy-accept").start()

    @property
    def address(self) -> str:
        """``"host:port"`` of the proxy: give it to clients as their bootstrap."""
        return f"{self.host}:{self.port}"

    # ------------------------------------------------------------------------------------ faults
    def degrade(self, *, latency_ms: float = 0.0, jitter_ms: float = 0.0, bandwidth_bps: int = 0) -> None:
        """Delay every frame by ``latency_ms`` ± ``jitter_ms`` (order kept) and cap each direction of each
        connection at ``bandwidth_bps`` bytes per second (0: no cap)."""
        if latency_ms < 0 or jitter_ms < 0 or bandwidth_bps < 0:
            raise ValueError("latency_ms, jitter_ms and bandwidth_bps must not be negative")
        self.latency_ms, self.jitter_ms, self.bandwidth_bps = float(latency_ms), float(jitter_ms), int(bandwidth_bps)

    def blackhole(self) -> None:
        """Accept connections and read requests, but send nothing on (nor answer) until :meth:`heal`."""
        self.mode = "blackhole"

    def half_open(self) -> None:
        """Neither read nor answer until :meth:`heal`: the connections stay open, the peers' writes pile up."""
        self.mode = "half_open"

    def reset_mid_response(self, count: int = 1) -> None:
        """Cut the next ``count`` answers halfway with a TCP reset of their connection."""
        with self._lock:
            self._resets += int(count)

    def heal(self) -> None:
        """End every fault (queued frames then go on)."""
        self.mode = "forward"
        self.latency_ms = self.jitter_ms = 0.0
        self.bandwidth_bps = 0
        with self._lock:
            self._resets = 0

    def cut_connections(self) -> None:
        """Close every connection open through the proxy now (new ones are accepted)."""
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            c.close()

    def close(self) -> None:
        """Stop accepting and close every connection."""
        self._closed = True
        try:
            self._listener.close()
        except OSError:
            pass
        self.cut_connections()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<FaultProxy {self.address} -> {self.target[0]}:{self.target[1]} {self.mode}>"

    # --------------------------------------------------------------------------------- internals
    def _take_reset(self) -> bool:
        with self._lock:
            if self._resets <= 0:
                return False
            self._resets -= 1
            return True

    def _forget(self, conn: _Conn) -> None:
        with self._lock:
            self._conns.discard(conn)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=10)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            conn = _Conn(self, client, upstream)
            with self._lock:
                self._conns.add(conn)
            conn.start()

    def _rewrite(self, body: bytes, conn: _Conn) -> bytes:
        """An answer, with the broker addresses of Metadata and FindCoordinator replaced by their proxies'."""
        (cid,) = _I32.unpack_from(body, 0)
        api_key, version = conn.requests.pop(cid, (-1, -1))
        if api_key not in (_METADATA, _FIND_COORDINATOR):
            return body
        from ..protocol import FindCoordinatorResponse, MetadataResponse
        from ..protocol.headers import decode_response_header

        cls: Any = MetadataResponse if api_key == _METADATA else FindCoordinatorResponse
        _, pos = decode_response_header(body, cls.header_version(version))
        resp = cls.decode(memoryview(body)[pos:], version, allow_trailing=True)
        if api_key == _METADATA:
            entries: list[Any] = list(resp.brokers)
        elif version >= 4:
            entries = list(resp.coordinators)
        else:
            entries = [resp]
        for e in entries:
            if e.host is not None and e.port is not None and e.port >= 0:
                e.host, e.port = self.routes.get((e.host, e.port), (e.host, e.port))
        frame = resp.encode(version, cid)  # size-prefixed, as on the wire
        return bytes(frame[4:])


def proxy_cluster(bootstrap: str, *, timeout_ms: float = 30_000) -> list[FaultProxy]:
    """One :class:`FaultProxy` per broker of the cluster at ``bootstrap`` (ordered by node id), sharing their
    routes: a client bootstrapped through any of them sees only proxies. Close each when done."""
    from ..client import Client

    with Client(bootstrap) as c:
        brokers = sorted(c.metadata([], timeout_ms=timeout_ms).brokers.values(), key=lambda b: b.node_id)
    proxies = [FaultProxy((b.host, b.port)) for b in brokers]
    routes: dict[tuple[str, int], tuple[str, int]] = {}
    for p in proxies:
        routes.update(p.routes)
    for p in proxies:
        p.routes = routes
    return proxies
