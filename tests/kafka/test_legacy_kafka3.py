"""Message formats v0 and v1 against a real broker: Apache Kafka 3.9, the last line that still speaks them.

Kafka 4.0 removed Produce v0-v2 and Fetch v0-v3 (KIP-896), the only requests that carry message sets of
magic 0/1, so the legacy paths of kafkawire's codec can meet a real peer only on 3.x. A 3.9 broker
stores every record as a v2 batch (KIP-724: the message format follows the metadata version): it
up-converts the legacy sets it accepts and down-converts its log for old Fetch versions. Both directions
are checked here: kafkawire's magic 0/1 encoding must be what Kafka accepts, and what Kafka's
down-conversion produces (compressed wrappers included) must decode to the same records.
"""

from __future__ import annotations

import time

import pytest

from kafkawire import decode_records, encode_records
from kafkawire.client import Client
from kafkawire.client.net.connection import BrokerConnection
from kafkawire.protocol import FetchRequest, ProduceRequest
from kafkawire.testing import LEGACY_KAFKA_VERSION, start_broker

pytestmark = pytest.mark.broker

N = 20
BASE_TS = 1_700_000_000_000


@pytest.fixture(scope="module")
def kafka3():
    broker = start_broker("kafka", version=LEGACY_KAFKA_VERSION)
    yield broker
    broker.stop()


@pytest.fixture
def connection(kafka3):
    host, port = kafka3.bootstrap.rsplit(":", 1)
    with BrokerConnection(host, int(port)) as conn:
        conn.connect()
        yield conn


def records_in(n: int) -> tuple[list[bytes], list[bytes | None], list[int]]:
    values = [b"legacy value %d " % i + bytes(range(i % 7)) * 20 for i in range(n)]
    keys = [None if i % 3 == 0 else b"key-%d" % i for i in range(n)]
    return values, keys, [BASE_TS + 1000 * i for i in range(n)]


def produce_when_led(connection, topic, data, version):  # type: ignore[no-untyped-def]
    """``produce_raw``, again while the answer is NOT_LEADER_OR_FOLLOWER (6): CreateTopics can answer before
    the broker took the new partition's leadership (seen on a loaded machine), and a raw request has no
    retry of its own."""
    answer = produce_raw(connection, topic, data, version)
    until = time.monotonic() + 30
    while answer.error_code == 6 and time.monotonic() < until:
        time.sleep(0.1)
        answer = produce_raw(connection, topic, data, version)
    return answer


def produce_raw(conn: BrokerConnection, topic: str, data: bytes, version: int):
    request = ProduceRequest(
        acks=-1,
        timeout_ms=10_000,
        topic_data=[
            ProduceRequest.TopicProduceData(
                name=topic, partition_data=[ProduceRequest.PartitionProduceData(index=0, records=data)]
            )
        ],
    )
    return conn.request(request, version=version).responses[0].partition_responses[0]


def fetch_raw(conn: BrokerConnection, topic: str, version: int) -> bytes:
    request = FetchRequest(
        max_wait_ms=0,
        min_bytes=1,
        topics=[
            FetchRequest.FetchTopic(
                topic=topic,
                partitions=[FetchRequest.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)],
            )
        ],
    )
    partition = conn.request(request, version=version).responses[0].partitions[0]
    assert partition.error_code == 0, f"Fetch v{version}: error {partition.error_code}"
    return bytes(partition.records)


def test_the_broker_is_kafka_3_and_serves_the_legacy_versions(connection):
    produce = connection.versions.broker[ProduceRequest.API_KEY]
    fetch = connection.versions.broker[FetchRequest.API_KEY]
    assert produce[0] == 0 and fetch[0] == 0, f"Produce {produce}, Fetch {fetch}: not a 3.x broker"


@pytest.mark.parametrize(
    ("magic", "produce_version", "compression"),
    [
        (0, 0, None),
        (0, 1, "gzip"),
        (0, 2, "snappy"),
        (1, 2, None),
        (1, 2, "gzip"),
        (1, 2, "snappy"),
        (1, 2, "lz4"),
    ],
)
def test_legacy_message_sets_round_trip_through_kafka_3(kafka3, connection, topic_name, magic, produce_version,
                                                        compression):
    topic = topic_name()
    values, keys, timestamps = records_in(N)
    with Client(kafka3.bootstrap) as client:
        client.create_topics([topic])
        data = encode_records(values, keys, timestamps=timestamps, magic=magic, compression=compression)
        answer = produce_when_led(connection, topic, data, produce_version)
        assert (answer.error_code, answer.base_offset) == (0, 0)

        # Kafka stored the set as a v2 batch; the modern client reads it back, timestamps included
        # for magic 1 (magic 0 messages carry none: Kafka gives them -1, NO_TIMESTAMP).
        stored = client.fetch(topic, 0, 0)
        assert set(stored.batch_magic.tolist()) == {2}
        records = stored.to_records()
        assert [r.value for r in records] == values
        assert [r.key for r in records] == keys
        assert [r.offset for r in records] == list(range(N))
        assert [r.timestamp for r in records] == (timestamps if magic == 1 else [-1] * N)

    # Old Fetch versions make the broker down-convert: magic 0 for v0/v1, magic 1 for v2/v3.
    for fetch_version, expected_magic in ((0, 0), (1, 0), (2, 1), (3, 1)):
        decoded = decode_records(fetch_raw(connection, topic, fetch_version))
        assert set(decoded.batch_magic.tolist()) == {expected_magic}, f"Fetch v{fetch_version}"
        records = decoded.to_records()
        assert [r.value for r in records] == values, f"Fetch v{fetch_version}"
        assert [r.key for r in records] == keys, f"Fetch v{fetch_version}"
        assert [r.offset for r in records] == list(range(N)), f"Fetch v{fetch_version}"
        if expected_magic == 1:
            assert [r.timestamp for r in records] == (timestamps if magic == 1 else [-1] * N)


def test_kafka_3_refuses_a_legacy_set_in_produce_v3(kafka3, connection, topic_name):
    # Produce v3 (KIP-98) must carry record batches: the broker's refusal shows the version gate kafkawire's
    # client relies on when it picks a version.
    topic = topic_name()
    with Client(kafka3.bootstrap) as client:
        client.create_topics([topic])
    values, keys, timestamps = records_in(3)
    answer = produce_when_led(connection, topic, encode_records(values, keys, timestamps=timestamps, magic=1), 3)
    assert answer.error_code == 87  # INVALID_RECORD
