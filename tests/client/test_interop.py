"""Records written by kafkawire read back unchanged by librdkafka (confluent-kafka) and kafka-python, and
the reverse. Also: librdkafka's murmur2 partitioner puts keys where kafkawire does.

Each test runs against Apache Kafka (the reference) and noida-db, both shared by the session."""

from __future__ import annotations

import time

import numpy as np
import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from helpers import fetch_all
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KPTopicPartition

from kafkawire.client import Client

pytestmark = pytest.mark.broker

N = 50


@pytest.fixture(params=["kafka", "noida"])
def broker(request):
    """Apache Kafka or noida-db (session brokers)."""
    return request.getfixturevalue(request.param)


# Recent timestamps: noida-db enforces retention.ms (7 days by default) on record timestamps about once
# a second, even on a partition's newest data (Kafka never deletes the active segment), so records
# stamped years ago vanish right after they are written.
T0 = int(time.time() * 1000) - 60_000


def sample(n: int = N, *, kafka_python_producer: bool = False):
    values = [None if i % 7 == 3 else f"value-{i}".encode() * (1 + i % 5) for i in range(n)]
    keys = [None if i % 4 == 1 else f"key-{i}".encode() for i in range(n)]
    null_header = None
    if kafka_python_producer:
        # kafka-python's producer refuses null header values and records with neither key nor value.
        null_header = b""
        values = [b"" if v is None and k is None else v for v, k in zip(values, keys)]
    headers = [None if i % 3 else [("i", str(i).encode()), ("dup", b"a"), ("dup", null_header)] for i in range(n)]
    ts = [T0 + 10 * i for i in range(n)]
    return values, keys, headers, ts


def confluent_consume(bootstrap: str, topic: str, n: int) -> list:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"cf-{topic}", "enable.auto.commit": False})
    out = []
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + 30
        while len(out) < n and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            assert m.error() is None, m.error()
            out.append((m.offset(), m.key(), m.value(), m.headers() or None, m.timestamp()[1]))
    finally:
        c.close()
    return out


def kafka_python_consume(bootstrap: str, topic: str, n: int) -> list:
    c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=10_000)
    out = []
    try:
        tp = KPTopicPartition(topic, 0)
        c.assign([tp])
        c.seek(tp, 0)
        deadline = time.monotonic() + 30
        while len(out) < n and time.monotonic() < deadline:
            for records in c.poll(timeout_ms=500).values():
                for m in records:
                    out.append((m.offset, m.key, m.value, list(m.headers) or None, m.timestamp))
    finally:
        c.close()
    return out


@pytest.mark.parametrize("codec", [None, "gzip", "snappy", "lz4", "zstd"], ids=lambda c: c or "none")
@pytest.mark.parametrize("reader", ["confluent", "kafka-python"])
def test_kafkawire_to_other_clients(broker, topic_name, codec, reader):
    topic = topic_name()
    values, keys, headers, ts = sample()
    with Client(broker.bootstrap) as c:
        c.create_topics([topic])
        c.produce(topic, values, keys=keys, headers=headers, timestamps=np.array(ts), partition=0, compression=codec)
    consume = confluent_consume if reader == "confluent" else kafka_python_consume
    got = consume(broker.bootstrap, topic, N)
    if not got:  # say whether the records are there at all (a reader problem, or a broker one)
        with Client(broker.bootstrap) as c:
            there = len(fetch_all(c, topic, 0, 0, N))
        pytest.fail(f"{reader} read nothing; kafkawire reads {there} of {N} records")
    assert [g[0] for g in got] == list(range(N))
    assert [g[1] for g in got] == keys
    assert [g[2] for g in got] == values
    assert [g[3] for g in got] == [None if h is None else list(h) for h in headers]
    assert [g[4] for g in got] == ts


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_confluent_to_kafkawire(broker, topic_name, codec):
    topic = topic_name()
    values, keys, headers, ts = sample()
    with Client(broker.bootstrap) as c:
        c.create_topics([topic])
        p = Producer(
            {
                "bootstrap.servers": broker.bootstrap,
                "compression.type": codec,
                "linger.ms": 20,
                "enable.idempotence": True,
            }
        )
        for v, k, h, t in zip(values, keys, headers, ts):
            p.produce(topic, value=v, key=k, headers=h, timestamp=t, partition=0)
        assert p.flush(30) == 0
        got = fetch_all(c, topic, 0, 0, N)
    assert [r.offset for r in got] == list(range(N))
    assert [r.key for r in got] == keys
    assert [r.value for r in got] == values
    assert [r.headers for r in got] == [h or [] for h in headers]
    assert [r.timestamp for r in got] == ts


@pytest.mark.parametrize("codec", [None, "gzip", "snappy", "lz4", "zstd"], ids=lambda c: c or "none")
def test_kafka_python_to_kafkawire(broker, topic_name, codec):
    topic = topic_name()
    values, keys, headers, ts = sample(kafka_python_producer=True)
    with Client(broker.bootstrap) as c:
        c.create_topics([topic])
        p = KafkaProducer(bootstrap_servers=broker.bootstrap, compression_type=codec, linger_ms=20)
        try:
            for v, k, h, t in zip(values, keys, headers, ts):
                p.send(topic, value=v, key=k, headers=h or [], timestamp_ms=t, partition=0)
            p.flush(30)
        finally:
            p.close()
        got = fetch_all(c, topic, 0, 0, N)
    assert [r.key for r in got] == keys
    assert [r.value for r in got] == values
    assert [r.headers for r in got] == [h or [] for h in headers]
    assert [r.timestamp for r in got] == ts


def test_librdkafka_murmur2_partitioner_agrees(broker, topic_name):
    # librdkafka's "murmur2_random" is the Java client's partitioner; produce the same keys with both
    # clients into two topics and compare where each key landed.
    ours, theirs = topic_name("ours"), topic_name("theirs")
    keys = [f"customer-{i}".encode() for i in range(60)]
    with Client(broker.bootstrap) as c:
        c.create_topics({ours: 6, theirs: 6})
        res = c.produce(ours, keys, keys=keys)
        p = Producer({"bootstrap.servers": broker.bootstrap, "partitioner": "murmur2_random"})
        placed: dict[bytes, int] = {}

        def on_delivery(err, msg):
            assert err is None, err
            placed[msg.key()] = msg.partition()

        for k in keys:
            p.produce(theirs, value=k, key=k, on_delivery=on_delivery)
        assert p.flush(30) == 0
    assert [placed[k] for k in keys] == res.partition.tolist()


def test_read_committed_hides_aborted_transactions(broker, topic_name):
    # Transactions written by librdkafka: one aborted, one committed. read_committed must drop the
    # aborted batch (FetchResponse aborted_transactions) and both isolation levels skip the control
    # records. Kafka and noida-db only: librdkafka's mock answers read_committed Fetches with an empty
    # aborted_transactions list (and writes its transaction markers with a zero CRC), and Tansu shows
    # aborted records to read_committed readers.
    topic = topic_name()
    with Client(broker.bootstrap) as c:
        c.create_topics([topic])
        p = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": f"tx-{topic}"})
        p.init_transactions(30)
        p.begin_transaction()
        p.produce(topic, value=b"aborted-1", partition=0)
        p.produce(topic, value=b"aborted-2", partition=0)
        p.flush(30)
        p.abort_transaction(30)
        p.begin_transaction()
        p.produce(topic, value=b"committed", partition=0)
        p.commit_transaction(30)
        # Kafka's EndTxn returns once the coordinator has logged the decision; it writes the markers to
        # the partition afterwards (KIP-98), so the commit marker and the stable offset can lag a moment.
        deadline = time.monotonic() + 30
        while True:
            res = c.fetch_many({(topic, 0): 0}, isolation="read_committed")[(topic, 0)]
            if res.last_stable_offset >= 5 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        end = res.high_watermark
        assert end == 5  # two data batches, one of 2 records and one of 1, plus two control records
        assert res.last_stable_offset == 5
        committed = [r.value for r in fetch_all(c, topic, 0, 0, end, isolation="read_committed")]
        everything = [r.value for r in fetch_all(c, topic, 0, 0, end)]
    assert committed == [b"committed"]
    assert everything == [b"aborted-1", b"aborted-2", b"committed"]


def test_check_crcs_catches_the_mock_clusters_zero_crc_markers(broker_factory, topic_name):
    # librdkafka's mock writes transaction markers with CRC 0. kafkawire verifies CRCs by default (as
    # the Java consumer does) and says where; check_crcs=False reads past them like librdkafka does.
    from kafkawire import CrcMismatchError

    mock = broker_factory("mock")
    topic = topic_name()
    mock.create_topic(topic, 1)
    p = Producer({"bootstrap.servers": mock.bootstrap, "transactional.id": f"tx-{topic}"})
    p.init_transactions(30)
    p.begin_transaction()
    p.produce(topic, value=b"v", partition=0)
    p.commit_transaction(30)
    del p
    with Client(mock.bootstrap) as c:
        assert [r.value for r in c.fetch(topic, 0, 0).to_records()] == [b"v"]  # the data batch is fine
        with pytest.raises(CrcMismatchError) as info:
            c.fetch(topic, 0, 1)  # the commit marker
        assert info.value.stored == 0 and info.value.base_offset == 1
    with Client(mock.bootstrap, check_crcs=False) as c:
        marker = c.fetch(topic, 0, 1)
        assert len(marker) == 0 and marker.next_offset == 2
