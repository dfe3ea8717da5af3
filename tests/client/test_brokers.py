"""The embedded brokers start, and librdkafka (confluent-kafka) can produce to and consume from each.

This is also the cross-check harness: whatever kafkawire does against these brokers, librdkafka has been
seen to work against them the same way. Apache Kafka's own start/restart/version behaviour is tested in
tests/kafka/test_broker.py; here it is one more broker librdkafka round-trips through.
"""

from __future__ import annotations

import socket
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from kafkawire.testing import Broker, BrokerStartError, MockCluster, free_port, start_broker

pytestmark = pytest.mark.broker


def create_topic(broker: Broker, name: str, partitions: int = 1) -> None:
    """Create a topic with librdkafka's admin client (or the mock cluster's C API)."""
    if isinstance(broker, MockCluster):
        broker.create_topic(name, partitions)
        return
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    futures = admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])
    futures[name].result(timeout=30)


def produce_with_librdkafka(broker: Broker, topic: str, records: list[tuple]) -> None:
    p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5, "enable.idempotence": False})
    errors: list = []
    for key, value, headers in records:
        p.produce(
            topic,
            value=value,
            key=key,
            headers=headers,
            partition=0,
            on_delivery=lambda err, msg: errors.append(err) if err else None,
        )
    assert p.flush(30) == 0
    assert errors == []


def consume_with_librdkafka(broker: Broker, topic: str, n: int, timeout: float = 30.0) -> list:
    c = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": f"g-{topic}",
            "enable.auto.commit": False,
        }
    )
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        out = []
        deadline = time.monotonic() + timeout
        while len(out) < n and time.monotonic() < deadline:
            msg = c.poll(0.5)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            out.append((msg.offset(), msg.key(), msg.value(), msg.headers()))
        return out
    finally:
        c.close()


RECORDS = [
    (b"k0", b"v0", None),
    (None, b"no key", [("h", b"1")]),
    (b"k2", None, [("a", b"x"), ("a", None)]),
    (b"k3", b"", None),
]


def _roundtrip(broker: Broker, topic: str) -> None:
    create_topic(broker, topic)
    produce_with_librdkafka(broker, topic, RECORDS)
    got = consume_with_librdkafka(broker, topic, len(RECORDS))
    assert [g[0] for g in got] == [0, 1, 2, 3]
    assert [(g[1], g[2]) for g in got] == [(k, v) for k, v, _ in RECORDS]
    assert [g[3] or None for g in got] == [h for _, _, h in RECORDS]


def test_kafka_starts_and_librdkafka_roundtrips(kafka, topic_name):
    assert kafka.kind == "kafka" and kafka.running
    host, port = kafka.bootstrap.split(":")
    assert host == "127.0.0.1" and int(port) == kafka.port
    _roundtrip(kafka, topic_name())


def test_noida_starts_and_librdkafka_roundtrips(noida, topic_name):
    assert noida.kind == "noida" and noida.running
    host, port = noida.bootstrap.split(":")
    assert host == "127.0.0.1" and int(port) == noida.port
    _roundtrip(noida, topic_name())


def test_tansu_starts_and_librdkafka_roundtrips(tansu, topic_name):
    assert tansu.kind == "tansu" and tansu.running
    _roundtrip(tansu, topic_name())


def test_mock_cluster_starts_and_librdkafka_roundtrips(mock_cluster, topic_name):
    assert mock_cluster.kind == "mock" and mock_cluster.running
    assert mock_cluster.version.startswith("2.")
    _roundtrip(mock_cluster, topic_name())


def test_noida_graceful_restart_keeps_data_and_port(broker_factory, topic_name):
    broker = broker_factory("noida")
    topic = topic_name()
    create_topic(broker, topic)
    produce_with_librdkafka(broker, topic, RECORDS)
    old_pid, old_bootstrap = broker.pid, broker.bootstrap
    broker.restart(graceful=True)
    assert broker.pid != old_pid and broker.bootstrap == old_bootstrap
    got = consume_with_librdkafka(broker, topic, len(RECORDS))
    assert [(g[1], g[2]) for g in got] == [(k, v) for k, v, _ in RECORDS]


def test_noida_crash_restart_serves_again_on_the_same_port(broker_factory, topic_name):
    # A SIGKILL right after an acknowledged write may lose it (noida snapshots its data dir about once
    # a second: see NoidaBroker), so this only checks the broker comes back and works.
    broker = broker_factory("noida")
    old_pid, old_bootstrap = broker.pid, broker.bootstrap
    broker.restart()
    assert broker.running and broker.pid != old_pid and broker.bootstrap == old_bootstrap
    topic = topic_name()
    create_topic(broker, topic)
    produce_with_librdkafka(broker, topic, RECORDS)
    assert len(consume_with_librdkafka(broker, topic, len(RECORDS))) == len(RECORDS)


def test_stop_kills_the_process_and_frees_the_port(broker_factory):
    broker = broker_factory("noida")
    port = broker.port
    broker.stop()
    assert not broker.running
    broker.stop()  # idempotent
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_busy_port_fails_with_the_brokers_stderr():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        # The port accepts connections (it is ours), so the broker must be caught exiting, not "ready".
        holder.close()
        blocker = socket.socket()
        blocker.bind(("127.0.0.1", port))
        try:
            with pytest.raises(BrokerStartError) as info:
                start_broker("tansu", port=port, startup_timeout=3)
            assert "tansu broker" in str(info.value)
            assert "stderr tail" in str(info.value)
        finally:
            blocker.close()


def test_a_port_someone_else_listens_on_is_not_taken_for_the_broker():
    # Before it starts the process, the broker's executor checks that nothing answers on the port yet:
    # otherwise that listener's connections would pass for the new broker being ready.
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(BrokerStartError, match=f"tansu broker cannot listen on 127.0.0.1:{port}: something else"):
            start_broker("tansu", port=port, startup_timeout=3)


def test_free_port_is_bindable():
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_unknown_kind():
    with pytest.raises(ValueError, match="unknown broker kind"):
        start_broker("redpanda")
