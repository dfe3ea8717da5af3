"""The client under failure: silent brokers, wrong correlation ids, dead brokers in the metadata,
oversized responses, and broker crashes (SIGKILL + restart) during produce and during consume."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from client_fakes import FakeKafkaBroker, KafkaProxy, frame
from helpers import fetch_all

from kafkawire.client import (
    Client,
    CorrelationIdMismatchError,
    KafkaConnectionError,
    KafkaTimeoutError,
    NoBrokersAvailableError,
    ProduceFailedError,
    ResponseTooLargeError,
)
from kafkawire.protocol import MetadataResponse
from kafkawire.testing import free_port

pytestmark = pytest.mark.broker

VERSIONS = {0: (3, 9), 1: (4, 12), 2: (1, 7), 3: (1, 12), 18: (0, 3), 22: (0, 4)}


def metadata_answer(request, host: str, port: int, node_id: int = 1, topic: str = "t", leader: int = 1):
    return MetadataResponse(
        brokers=[MetadataResponse.MetadataResponseBroker(node_id=node_id, host=host, port=port)],
        cluster_id="fake",
        controller_id=node_id,
        topics=[
            MetadataResponse.MetadataResponseTopic(
                error_code=0,
                name=topic,
                topic_id=uuid.UUID(int=0),
                partitions=[
                    MetadataResponse.MetadataResponsePartition(
                        error_code=0,
                        partition_index=0,
                        leader_id=leader,
                        replica_nodes=[node_id],
                        isr_nodes=[node_id],
                    )
                ],
            )
        ]
        if (request.topics is None or any(t.name == topic for t in request.topics))
        else [],
    )


def test_client_times_out_when_a_response_never_comes():
    def respond(header, request):
        if header.api_key == 3:
            return metadata_answer(request, "127.0.0.1", server.port)
        return None  # Fetch: never answered

    with FakeKafkaBroker(respond, VERSIONS) as server:
        with Client(server.address, request_timeout_ms=300, retries=1, retry_backoff_ms=10) as c:
            t0 = time.monotonic()
            with pytest.raises(KafkaTimeoutError):
                # A call deadline long enough for two 400 ms attempts: the retries cap (1) ends it first.
                c.fetch("t", 0, 0, max_wait_ms=100, timeout_ms=1_500)
            elapsed = time.monotonic() - t0
    fetches = [r for r in server.requests if r[0] == 1]
    assert len(fetches) == 2  # the first attempt and one retry, each on a fresh connection
    assert elapsed <= 1.5 * 1.1 + 0.2


def test_client_rejects_a_wrong_correlation_id_without_retrying():
    def respond(header, request):
        return frame(header.correlation_id + 1, b"\0" * 16)

    with FakeKafkaBroker(respond, VERSIONS) as server:
        with Client(server.address, retries=5, retry_backoff_ms=10) as c:
            with pytest.raises(CorrelationIdMismatchError):
                c.metadata()
    assert [r[0] for r in server.requests].count(3) == 1


def test_metadata_pointing_at_a_dead_broker_fails_with_its_address():
    dead = free_port()

    def respond(header, request):
        if header.api_key == 3:
            return metadata_answer(request, "127.0.0.1", dead)
        return None

    with FakeKafkaBroker(respond, VERSIONS) as server:
        with Client(server.address, retries=3, retry_backoff_ms=10, connect_timeout_ms=500) as c:
            with pytest.raises(ProduceFailedError, match=f"127.0.0.1:{dead}") as info:
                c.produce("t", [b"x"], partition=0, acks=1)
            assert isinstance(info.value.errors[("t", 0)], KafkaConnectionError)
            assert info.value.result.offset.tolist() == [-1]
            with pytest.raises(KafkaConnectionError, match=f"127.0.0.1:{dead}"):
                c.fetch("t", 0, 0)
    # Each retry refreshed the metadata, hoping the leader had moved.
    assert [r[0] for r in server.requests].count(3) >= 3


def test_metadata_pointing_at_a_dead_broker_recovers_when_the_leader_moves(noida, topic_name):
    topic = topic_name()
    with Client(noida.bootstrap) as admin:
        admin.create_topics([topic])
    host, port = noida.bootstrap.split(":")
    dead = free_port()
    calls = {"n": 0}

    def respond(header, request):
        if header.api_key == 3:
            calls["n"] += 1
            # The first two answers name a dead leader; later ones the real broker (the leader "moved").
            return metadata_answer(request, "127.0.0.1", dead if calls["n"] <= 2 else int(port), topic=topic)
        return None

    with FakeKafkaBroker(respond, VERSIONS) as server:
        with Client(server.address, retries=6, retry_backoff_ms=10, connect_timeout_ms=500) as c:
            res = c.produce(topic, [b"hello"], partition=0, acks=1)
            assert res.offset.tolist() == [0]
    assert calls["n"] >= 3


def test_bootstrap_servers_are_tried_in_turn(noida):
    dead = f"127.0.0.1:{free_port()}"
    with Client(f"{dead},{noida.bootstrap}") as c:
        assert c.metadata().brokers
    with Client([dead, f"127.0.0.1:{free_port()}"], retries=1, retry_backoff_ms=10) as c:
        with pytest.raises(NoBrokersAvailableError, match=dead):
            c.metadata()


def test_oversized_fetch_response_is_refused_before_reading(noida, topic_name):
    # noida-db ignores Fetch max_bytes (docs/BROKERS.md): asked for 1 KiB it sends the whole log.
    # The size prefix is checked against max_response_bytes before the body is read.
    topic = topic_name()
    with Client(noida.bootstrap) as c:
        c.create_topics([topic])
        c.produce(topic, [b"x" * 10_000] * 200, partition=0)  # ~2 MB
    with Client(noida.bootstrap, max_response_bytes=1 << 20) as c:
        with pytest.raises(ResponseTooLargeError) as info:
            c.fetch(topic, 0, 0, max_bytes=1024)
    assert info.value.size > 1 << 20 and info.value.limit == 1 << 20


# ------------------------------------------------------------------------------ crashes and restarts
def _produce_through_restart(broker, topic: str, restart, kill_after: float = 0.6) -> tuple[list, float, float]:
    """Produce small batches while ``restart()`` runs on another thread after ``kill_after`` seconds;
    returns the acknowledged batches ``(ack_time, values, offsets)`` and when the restart began and
    ended."""
    acked: list = []
    times = {}

    def crash():
        time.sleep(kill_after)
        times["kill"] = time.monotonic()
        restart()
        times["up"] = time.monotonic()

    killer = threading.Thread(target=crash)
    # No retries cap: the call rides the restart out until its own deadline. A cap of 40 quick retries
    # (~10 s) ran out while a loaded 2-core CI machine restarted Kafka's JVM (LEADER_NOT_AVAILABLE).
    with Client(broker.bootstrap, request_timeout_ms=3000, retry_backoff_ms=50, retry_backoff_max_ms=300) as c:
        killer.start()
        i = 0
        while i < 1000 and ("up" not in times or time.monotonic() < times["up"] + 1.0):
            values = [f"{i}-{j}".encode() for j in range(10)]
            res = c.produce(topic, values, partition=0)  # must not raise: the client rides it out
            acked.append((time.monotonic(), values, res.offset.tolist()))
            i += 1
            time.sleep(0.01)
        killer.join()
    return acked, times["kill"], times["up"]


def _read_back(broker, topic: str) -> dict[bytes, int]:
    with Client(broker.bootstrap) as c:
        end = c.list_offsets(topic)[0].offset
        records = fetch_all(c, topic, 0, 0, end)
    values = [r.value for r in records]
    assert len(values) == len(set(values)), "a retried batch was written twice"
    return {r.value: r.offset for r in records}


@pytest.mark.slow
def test_produce_through_a_graceful_restart_loses_nothing(broker_factory, topic_name):
    # Apache Kafka: noida-db keeps acknowledging for ~100 ms after its SIGINT shutdown begins and loses
    # those records (docs/BROKERS.md), a broker defect that made this test fail now and then on noida.
    broker = broker_factory("kafka")
    topic = topic_name()
    with Client(broker.bootstrap) as c:
        c.create_topics([topic])
    acked, _, _ = _produce_through_restart(broker, topic, lambda: broker.restart(graceful=True))
    stored = _read_back(broker, topic)
    for _, values, offsets in acked:
        assert [stored.get(v) for v in values] == offsets


@pytest.mark.slow
def test_produce_through_a_sigkill_restart(broker_factory, topic_name):
    broker = broker_factory("noida")
    topic = topic_name()
    with Client(broker.bootstrap) as c:
        c.create_topics([topic])
    # noida-db acknowledges before its data reaches the disk (a snapshot about once a second), so a
    # SIGKILL can lose what was acknowledged during the last ~second before it: a broker bug that no
    # client can undo. Wait until the topic itself is on disk, then check everything else.
    time.sleep(1.5)
    acked, killed, up = _produce_through_restart(broker, topic, broker.restart, kill_after=2.5)
    stored = _read_back(broker, topic)
    before = [b for b in acked if b[0] < killed - 1.5]
    after = [b for b in acked if b[0] > up]
    assert before and after
    for _, values, offsets in before + after:
        # Acknowledged well before the crash: on disk at the reported offsets. Acknowledged after the
        # restart (the client reconnected, renewed its producer id if the broker forgot it, and
        # resent): present, each exactly once (checked in _read_back).
        assert [stored.get(v) for v in values] == offsets
    lost = [b for b in acked if killed - 1.5 <= b[0] <= up and b[1][0] not in stored]
    print(f"batches acknowledged in noida's unsynced window and lost by its SIGKILL: {len(lost)}")


@pytest.mark.slow
def test_consume_through_a_sigkill_restart(broker_factory, topic_name):
    broker = broker_factory("noida")
    topic = topic_name()
    parts = 6
    with Client(broker.bootstrap) as c:
        c.create_topics({topic: parts})
        for p in range(parts):
            c.produce(topic, [f"{p}-{i}".encode() for i in range(100)], partition=p)
    broker.restart(graceful=True)  # make the data durable first (see the produce test above)
    old_pid = broker.pid

    # noida-db answers a Fetch at the log end at once, ignoring max_wait_ms, and ignores max_bytes:
    # so the reads are spread over time instead, one partition every 150 ms, and the broker is
    # SIGKILLed and restarted in the middle of them while the client holds an open connection.
    killer = threading.Timer(0.5, broker.restart)
    fetched_at: dict[int, float] = {}
    got: dict[int, list] = {}
    # No retries cap: the call rides the restart out until its own deadline. A cap of 40 quick retries
    # (~10 s) ran out while a loaded 2-core CI machine restarted Kafka's JVM (LEADER_NOT_AVAILABLE).
    with Client(broker.bootstrap, request_timeout_ms=3000, retry_backoff_ms=50, retry_backoff_max_ms=300) as c:
        c.metadata([topic])
        killer.start()
        t0 = time.monotonic()
        for p in range(parts):
            got[p] = [r.value for r in fetch_all(c, topic, p, 0, 100)]
            fetched_at[p] = time.monotonic() - t0
            time.sleep(0.15)
        killer.join()
        assert broker.pid != old_pid
        # The restarted broker takes new data from the same client.
        c.produce(topic, [b"after"], partition=0)
        assert [r.value for r in c.fetch(topic, 0, 100).to_records()] == [b"after"]
    assert any(t < 0.5 for t in fetched_at.values()) and any(t > 0.5 for t in fetched_at.values())
    for p in range(parts):
        assert got[p] == [f"{p}-{i}".encode() for i in range(100)]


@pytest.mark.parametrize("kind", ["kafka", "noida", "tansu"])
def test_idempotent_retry_after_a_lost_acknowledgement_writes_once(request, kind, topic_name):
    broker = request.getfixturevalue(kind)
    topic = topic_name()
    with Client(broker.bootstrap) as admin:
        admin.create_topics([topic])
    host, port = broker.bootstrap.split(":")
    drops = {"left": 1}

    def drop(api_key: int) -> bool:
        # Swallow the first Produce acknowledgement: the broker has appended the batch, the client
        # sees a dead connection and must send it again.
        if api_key == 0 and drops["left"]:
            drops["left"] -= 1
            return True
        return False

    with KafkaProxy(host, int(port), drop) as proxy:
        with Client(proxy.address, retry_backoff_ms=20) as c:
            res = c.produce(topic, [b"once-a", b"once-b"], partition=0)
            res2 = c.produce(topic, [b"then-c"], partition=0)
        assert proxy.dropped == [0]
    with Client(broker.bootstrap) as c:
        got = fetch_all(c, topic, 0, 0, 3)
        end = c.fetch_many({(topic, 0): 0})[(topic, 0)].high_watermark
    assert [r.value for r in got] == [b"once-a", b"once-b", b"then-c"]
    assert end == 3
    assert res.offset.tolist() in ([0, 1], [-1, -1])  # a recognised duplicate may not report its offset
    assert res2.offset.tolist() == [2]


def test_non_idempotent_retry_after_a_lost_acknowledgement_duplicates(noida, topic_name):
    # The control experiment: the same lost acknowledgement with idempotence off writes twice, which is
    # why idempotence is the default.
    topic = topic_name()
    with Client(noida.bootstrap) as admin:
        admin.create_topics([topic])
    host, port = noida.bootstrap.split(":")
    drops = {"left": 1}

    def drop(api_key: int) -> bool:
        if api_key == 0 and drops["left"]:
            drops["left"] -= 1
            return True
        return False

    with KafkaProxy(host, int(port), drop) as proxy:
        with Client(proxy.address, retry_backoff_ms=20, enable_idempotence=False) as c:
            c.produce(topic, [b"twice"], partition=0)
    with Client(noida.bootstrap) as c:
        got = fetch_all(c, topic, 0, 0, 2)
    assert [r.value for r in got] == [b"twice", b"twice"]
