"""Produce through a broker outage: nothing acknowledged is lost, nothing unacknowledged is dropped
silently, and every call returns within its deadline.

A :class:`~kafkawire.client.Producer` writes unique values (tests/faults/ledger.py) in batches while the
broker is out of reach for 3 s or 30 s. The delivery timeout (10 s) outlasts the short outage and not
the long one: a flush that gives up raises ``ProduceFailedError`` whose ``unacknowledged`` holds the
records, which the test sends again once the broker is back (what an application does). Afterwards
every partition is read back and the ledger must show ``lost == 0``.

The outage on Apache Kafka (the reference broker) is a SIGKILL and a restart: Kafka appends before it
acknowledges, so nothing acknowledged may be lost. On the stand-ins it is a proxy that refuses and cuts
every connection: noida-db acknowledges before its data reaches the disk and Tansu here keeps its data
in memory only (docs/BROKERS.md), so killing them loses acknowledged records whatever the client does,
which is not what this test measures.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import threading
import time
import uuid
from collections.abc import Callable

import pytest

from kafkawire.client import Client, ProduceFailedError, Producer
from kafkawire.testing import free_port, start_broker

from .ledger import Ledger

pytestmark = [pytest.mark.broker, pytest.mark.slow]

DELIVERY_S = 10.0  # the producer's delivery timeout
BATCH = 200  # records per flush
PARTITIONS = 3


# ------------------------------------------------------------------------------------------ outage proxy
def _read_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


class OutageProxy:
    """A Kafka-aware TCP proxy in front of one broker that can be taken down and brought back on the
    same port. Down: the port refuses connections and every open connection is cut. Metadata answers
    advertise the proxy, so the client keeps talking through it."""

    def __init__(self, target_port: int) -> None:
        self.target = ("127.0.0.1", target_port)
        self.port = free_port()
        self._listener: socket.socket | None = None
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self.up()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def up(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen()
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            sockets, self._sockets = self._sockets, []
        if listener is not None:
            listener.close()
        for s in sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    close = down

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._listener is not listener:  # went down meanwhile
                    client.close()
                    upstream.close()
                    return
                self._sockets += [client, upstream]
            pending: dict[int, tuple[int, int]] = {}
            threading.Thread(target=self._requests, args=(client, upstream, pending), daemon=True).start()
            threading.Thread(target=self._responses, args=(client, upstream, pending), daemon=True).start()

    @staticmethod
    def _requests(client: socket.socket, upstream: socket.socket, pending: dict[int, tuple[int, int]]) -> None:
        try:
            while (head := _read_exact(client, 4)) is not None:
                body = _read_exact(client, struct.unpack(">i", head)[0])
                if body is None:
                    break
                api_key, version, cid = struct.unpack_from(">hhi", body, 0)
                pending[cid] = (api_key, version)
                upstream.sendall(head + body)
        except OSError:
            pass
        for s in (client, upstream):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _responses(self, client: socket.socket, upstream: socket.socket, pending: dict[int, tuple[int, int]]) -> None:
        from kafkawire.protocol import MetadataResponse
        from kafkawire.protocol.headers import decode_response_header

        try:
            while (head := _read_exact(upstream, 4)) is not None:
                body = _read_exact(upstream, struct.unpack(">i", head)[0])
                if body is None:
                    break
                (cid,) = struct.unpack_from(">i", body, 0)
                api_key, version = pending.pop(cid, (-1, -1))
                if api_key == 3:
                    _, pos = decode_response_header(body, MetadataResponse.header_version(version))
                    meta = MetadataResponse.decode(memoryview(body)[pos:], version, allow_trailing=True)
                    for b in meta.brokers:
                        b.host, b.port = "127.0.0.1", self.port
                    client.sendall(meta.encode(version, cid))
                else:
                    client.sendall(head + body)
        except OSError:
            pass
        for s in (client, upstream):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


# ----------------------------------------------------------------------------------------- the scenario
class _Writer:
    """Flushes batches of fresh ledger values through a Producer until stopped; what a failed flush
    hands back is kept for resending; records every call's duration."""

    def __init__(self, producer: Producer, topic: str, ledger: Ledger) -> None:
        self.producer, self.topic, self.ledger = producer, topic, ledger
        self.returned: list[bytes] = []
        #: Values handed back by a failed flush and sent again: the at-least-once window (a handed-back
        #: record may have been written before its answer was lost). Retries inside a flush are
        #: idempotent (KIP-98 sequence numbers), so nothing else may be written twice.
        self.resent = 0
        self.failures: list[ProduceFailedError] = []
        self.durations: list[float] = []
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def flush_values(self, values: list[bytes]) -> None:
        for i, v in enumerate(values):
            self.producer.send(self.topic, v, key=str(i % 7).encode())
        t0 = time.monotonic()
        try:
            self.producer.flush()
        except ProduceFailedError as e:
            self.durations.append(time.monotonic() - t0)
            self.failures.append(e)
            back = [v for u in e.unacknowledged.values() for v in u.values]
            assert len(back) == len(set(back)) and set(back) <= set(values)
            self.ledger.acknowledged(set(values) - set(back))
            self.returned += back
            assert self.producer.buffered == 0  # handed back, not kept and not dropped
            return
        self.durations.append(time.monotonic() - t0)
        self.ledger.acknowledged(values)

    def _run(self) -> None:
        try:
            while not self.stop.is_set():
                self.flush_values(self.ledger.make(BATCH))
        except BaseException as e:  # reported by the test
            self.error = e


def _read_back(bootstrap: str, topic: str, ledger: Ledger) -> None:
    # Up to each partition's high watermark as Fetch reports it (Tansu's ListOffsets LATEST lags behind
    # the log end, docs/BROKERS.md; the high watermark is right on every broker).
    with Client(bootstrap) as c:
        offsets = {(topic, p): 0 for p in c.partitions_for(topic)}
        while offsets:
            results = c.fetch_many(offsets, max_bytes=4 << 20, timeout_ms=30_000)
            for tp, r in results.items():
                ledger.read(r.records.value.to_pylist())
                offsets[tp] = max(r.records.next_offset, offsets[tp])
                if offsets[tp] >= r.high_watermark:
                    del offsets[tp]


def _run_outage(bootstrap: str, topic: str, take_down: Callable[[], None], bring_up: Callable[[], None], down_s: float):
    ledger = Ledger(f"{topic}-{down_s:g}")
    with Client(bootstrap, retry_timeout_ms=DELIVERY_S * 1000) as admin:
        admin.create_topics({topic: PARTITIONS}, timeout_ms=30_000)
    producer = Producer(bootstrap, linger_ms=1e12, batch_records=10**9, retry_timeout_ms=DELIVERY_S * 1000)
    writer = _Writer(producer, topic, ledger)
    try:
        writer.thread.start()
        time.sleep(1.0)
        take_down()
        time.sleep(down_s)
        bring_up()
        time.sleep(2.0)
        writer.stop.set()
        writer.thread.join(DELIVERY_S * 2)
        assert not writer.thread.is_alive()
        if writer.error is not None:
            raise writer.error
        # Send again what was handed back, as an application would, until the broker takes it (a
        # restarted Kafka recovers its logs and elects leaders for a while after it accepts connections).
        for _ in range(6):
            returned, writer.returned = writer.returned, []
            if not returned:
                break
            writer.resent += len(returned)
            writer.flush_values(returned)
        assert writer.returned == [], writer.failures[-1]
    finally:
        producer.close()
    _read_back(bootstrap, topic, ledger)
    report = ledger.report()
    print(
        f"outage {down_s:g} s: {report}; failed flushes {len(writer.failures)}, resent {writer.resent}, "
        f"max call {max(writer.durations):.2f} s"
    )
    assert report.lost == 0, sorted(ledger.lost_values())[:10]
    assert report.unexpected == 0
    assert report.duplicated <= writer.resent, (report.duplicated, writer.resent)
    assert report.acknowledged == report.sent  # every value acknowledged in the end: none dropped
    assert max(writer.durations) <= DELIVERY_S * 1.1 + 0.2
    return writer, report


def topic_name() -> str:
    return f"faults-{uuid.uuid4().hex[:10]}"


@pytest.mark.parametrize("down_s", [3, 30])
@pytest.mark.parametrize("kind", ["noida", "tansu"])
def test_stand_in_out_of_reach_during_produce(kind, down_s):
    broker = start_broker(kind)
    proxy = OutageProxy(broker.port)
    try:
        writer, _ = _run_outage(proxy.address, topic_name(), proxy.down, proxy.up, down_s)
    finally:
        proxy.close()
        broker.stop()
    if down_s > DELIVERY_S:
        # The outage outlasted the delivery timeout: flushes gave up, said so, and handed records back.
        assert writer.failures and all(f.timed_out for f in writer.failures)
        assert sum(f.unacknowledged_count for f in writer.failures) > 0


@pytest.mark.parametrize("down_s", [3, 30])
def test_kafka_killed_during_produce(down_s):
    broker = start_broker("kafka")

    def crash() -> None:
        assert broker.pid is not None
        os.kill(broker.pid, signal.SIGKILL)  # a crash, not a controlled shutdown
        broker.kill_process()  # reap it

    try:
        writer, _ = _run_outage(broker.bootstrap, topic_name(), crash, broker.start, down_s)
    finally:
        broker.stop()
    if down_s > DELIVERY_S:
        assert writer.failures and all(f.timed_out for f in writer.failures)
