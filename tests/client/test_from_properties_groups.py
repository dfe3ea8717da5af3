"""``Consumer.from_properties`` / ``Producer.from_properties``: the Java client's property names for group and
producer options, as users paste them from a ``consumer.properties`` / ``producer.properties`` file, checked
against Apache Kafka (the group the properties describe is the one the broker reports)."""

from __future__ import annotations

import logging

import pytest

from kafkawire.admin import Admin
from kafkawire.client import Client, Consumer, Producer
from kafkawire.client.config import ConfigError, consumer_kwargs_from_properties, producer_kwargs_from_properties


def test_java_consumer_properties_map_to_consumer_options():
    kw = consumer_kwargs_from_properties(
        {
            "bootstrap.servers": "h1:9092,h2:9092",
            "group.id": "etl",
            "group.protocol": "CLASSIC",
            "group.instance.id": "etl-1",
            "partition.assignment.strategy": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor,"
            " RangeAssignor, roundrobin",
            "session.timeout.ms": "45000",
            "heartbeat.interval.ms": "3000",
            "max.poll.interval.ms": "300000",
            "enable.auto.commit": "false",
            "auto.commit.interval.ms": "1000",
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
            "fetch.max.wait.ms": "100",
            "fetch.max.bytes": "1048576",
            "max.partition.fetch.bytes": "65536",
            "client.id": "etl-client",
        }
    )
    assert kw == {
        "bootstrap_servers": "h1:9092,h2:9092",
        "group_id": "etl",
        "group_protocol": "classic",
        "group_instance_id": "etl-1",
        "partition_assignment_strategy": ("cooperative-sticky", "range", "roundrobin"),
        "session_timeout_ms": 45000,
        "heartbeat_interval_ms": 3000,
        "max_poll_interval_ms": 300000,
        "enable_auto_commit": False,
        "auto_commit_interval_ms": 1000,
        "auto_offset_reset": "earliest",
        "isolation": "read_committed",
        "max_wait_ms": 100,
        "max_bytes": 1048576,
        "partition_max_bytes": 65536,
        "client_id": "etl-client",
    }


def test_java_producer_properties_map_to_producer_options(tmp_path):
    path = tmp_path / "producer.properties"
    path.write_text(
        "# pasted from a Java application\n"
        "bootstrap.servers=h1:9092\n"
        "acks=all\n"
        "enable.idempotence=true\n"
        "linger.ms=20\n"
        "batch.size=65536\n"
        "compression.type=zstd\n"
        "delivery.timeout.ms=120000\n"
        "transactional.id=orders-1\n"
        "transaction.timeout.ms=30000\n"
        "client.id=orders\n"
    )
    assert producer_kwargs_from_properties(path) == {
        "bootstrap_servers": "h1:9092",
        "acks": -1,
        "enable_idempotence": True,
        "linger_ms": 20,
        "batch_bytes": 65536,
        "compression": "zstd",
        "delivery_timeout_ms": 120000,
        "transactional_id": "orders-1",
        "transaction_timeout_ms": 30000,
        "client_id": "orders",
    }
    assert producer_kwargs_from_properties({"bootstrap.servers": "h", "acks": "1", "compression.type": "none"}) == {
        "bootstrap_servers": "h",
        "acks": 1,
        "compression": None,
    }


def test_java_only_properties_warn_naming_them_and_typos_raise():
    warned: list[str] = []
    kw = consumer_kwargs_from_properties(
        {
            "bootstrap.servers": "h:1",
            "group.id": "g",
            "max.poll.records": "500",
            "key.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer",
            "acks": "all",  # a producer property given to a consumer: ignored, as the Java consumer does
        },
        warn=warned.append,
    )
    assert kw == {"bootstrap_servers": "h:1", "group_id": "g"}
    assert sorted(warned) == ["acks", "key.deserializer", "max.poll.records"]

    with pytest.raises(ConfigError) as info:
        consumer_kwargs_from_properties({"bootstrap.servers": "h:1", "group.idd": "g"})
    assert info.value.property == "group.idd" and "group.id" in str(info.value)
    with pytest.raises(ConfigError) as info:
        producer_kwargs_from_properties({"bootstrap.servers": "h:1", "linger.sm": "5"})
    assert "linger.ms" in str(info.value)
    # "none": no committed offset is an error, a truncated log raises LogTruncationError (KIP-320).
    assert consumer_kwargs_from_properties({"bootstrap.servers": "h:1", "auto.offset.reset": "none"})[
        "auto_offset_reset"
    ] == "none"
    for prop, value in [
        ("partition.assignment.strategy", "org.example.MyAssignor"),
        ("group.protocol", "streams"),
        ("auto.offset.reset", "never"),
        ("isolation.level", "committed"),
        ("enable.auto.commit", "yes"),
    ]:
        with pytest.raises(ConfigError) as info:
            consumer_kwargs_from_properties({"bootstrap.servers": "h:1", prop: value})
        assert info.value.property == prop
    with pytest.raises(ConfigError) as info:
        producer_kwargs_from_properties({"bootstrap.servers": "h:1", "acks": "2"})
    assert info.value.property == "acks"


def test_default_warning_is_logged_once_per_property(caplog):
    with caplog.at_level(logging.WARNING, logger="kafkawire.config"):
        producer_kwargs_from_properties(
            {"bootstrap.servers": "h:1", "metadata.max.idle.ms": "300000", "unheard.of": "x"}
        )
    messages = [r.getMessage() for r in caplog.records]
    assert len([m for m in messages if "metadata.max.idle.ms" in m]) == 1
    assert len([m for m in messages if "unheard.of" in m]) == 1


@pytest.mark.broker
def test_a_consumer_and_producer_built_from_java_properties_work_on_kafka(kafka, topic_name):
    topic, group = topic_name("props"), topic_name("props-group")
    with Client(kafka.bootstrap) as admin:
        admin.create_topics([topic], num_partitions=2)
    with Producer.from_properties(
        {"bootstrap.servers": kafka.bootstrap, "acks": "all", "linger.ms": "5", "compression.type": "lz4"}
    ) as prod:
        assert prod.acks == -1 and prod.compression == "lz4" and prod.linger_ms == 5
        metas = [prod.send(topic, b"v%d" % i, key=b"k%d" % i).result(timeout=30) for i in range(20)]
    assert {m.partition for m in metas} == {0, 1}

    consumer = Consumer.from_properties(
        {
            "bootstrap.servers": kafka.bootstrap,
            "group.id": group,
            "group.protocol": "classic",
            "partition.assignment.strategy": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": "false",
            "session.timeout.ms": "10000",
            "client.id": "from-properties",
        }
    )
    try:
        consumer.subscribe([topic])
        seen: set[bytes] = set()
        for _ in range(60):
            for cols in consumer.poll(timeout_ms=500).values():
                seen.update(cols.value.to_pylist())
            if len(seen) == 20:
                break
        assert seen == {b"v%d" % i for i in range(20)}
        consumer.commit()
        with Admin(kafka.bootstrap) as admin:
            [desc] = admin.describe_groups([group]).values()
        assert desc.protocol == "cooperative-sticky"  # the Java assignor class became kafkawire's assignor
        assert [m.client_id for m in desc.members] == ["from-properties"]
    finally:
        consumer.close()
