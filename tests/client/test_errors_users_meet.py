"""Errors where a user meets them (issue 34), against Apache Kafka 4.4: each raised at once or within the Java
default, naming the topic, the bootstrap servers or the setting to change. Bounds are the old timeouts (the
error must come well before them), generous for a loaded machine; nothing asserts a lower bound.

(A plaintext client on a SASL listener is in test_wrong_listener.py, which has the secured broker.)
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from kafkawire.client import (
    Client,
    Consumer,
    KafkaTimeoutError,
    NoBrokersAvailableError,
    ProduceFailedError,
    Producer,
)
from kafkawire.protocol.errors import UnknownTopicOrPartitionError

pytestmark = pytest.mark.broker


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _timed(call: Callable[[], Any], kind: type[BaseException]) -> tuple[BaseException, float]:
    began = time.monotonic()
    with pytest.raises(kind) as info:
        call()
    return info.value, time.monotonic() - began


def test_fetch_of_a_missing_topic_raises_naming_it(kafka: Any, topic_name: Callable[[str], str]) -> None:
    missing = topic_name("missing")
    with Client(kafka.bootstrap) as client:
        err, took = _timed(lambda: client.fetch(missing, 0, 0), UnknownTopicOrPartitionError)
        assert f"topic {missing!r} does not exist" in str(err) and "create it" in str(err), err
        assert took < 20, took  # it waited out the whole 30.5 s before
        # A partition the topic does not have: named too.
        existing = topic_name("one-partition")
        client.create_topics([existing], num_partitions=1)
        err, took = _timed(lambda: client.fetch(existing, 5, 0), UnknownTopicOrPartitionError)
        assert f"partition 5 of topic {existing!r} does not exist" in str(err), err
        assert took < 20, took


def test_fetch_of_a_topic_created_meanwhile_waits_for_it(kafka: Any, topic_name: Callable[[str], str]) -> None:
    """A topic another client creates while the fetch looks for it: the grace of the missing-topic check
    covers metadata propagation, so the fetch answers (empty) instead of raising."""
    topic = topic_name("created")
    with Client(kafka.bootstrap) as reader, Client(kafka.bootstrap) as creator:
        timer = threading.Timer(0.3, lambda: creator.create_topics([topic], num_partitions=1))
        timer.start()
        try:
            result = reader.fetch(topic, 0, 0, max_wait_ms=100)
        finally:
            timer.join()
        assert len(result) == 0
        creator.produce(topic, [b"v"], partition=0)
        assert [r.value for r in reader.fetch(topic, 0, 0).to_records()] == [b"v"]


def test_metadata_on_a_closed_port_names_the_bootstrap_servers() -> None:
    bootstrap = f"127.0.0.1:{_closed_port()},127.0.0.1:{_closed_port()}"
    with Client(bootstrap) as client:
        assert client.retry_policy.timeout_ms == 60_000  # Java's default.api.timeout.ms
        assert client.delivery_timeout_ms == 120_000  # Java's delivery.timeout.ms, for writes
        err, took = _timed(client.metadata, KafkaTimeoutError)
    text = str(err)
    assert f"nothing listens on the bootstrap servers {bootstrap}" in text and "Connection refused" in text, text
    assert isinstance(err.__cause__, NoBrokersAvailableError), repr(err.__cause__)
    assert took < 100, took  # the default deadline is 60 s now, not 120 s
    # An explicit retry_timeout_ms still bounds every call, writes included.
    with Client(bootstrap, retry_timeout_ms=3_000) as client:
        assert client.delivery_timeout_ms == 3_000
        _, took = _timed(client.metadata, KafkaTimeoutError)
        assert took < 30, took


def test_produce_to_a_missing_topic_fails_after_max_block_ms(kafka: Any, topic_name: Callable[[str], str]) -> None:
    missing = topic_name("missing")
    with Client(kafka.bootstrap) as client:
        err, took = _timed(lambda: client.produce(missing, [b"a", b"b"], max_block_ms=3_000), ProduceFailedError)
        assert f"topic {missing!r} not present in metadata after 3000 ms (max_block_ms" in str(err), err
        assert "UNKNOWN_TOPIC_OR_PARTITION" in str(err), err  # the broker's answer, as the last error
        assert [u.values for u in err.unacknowledged.values()] == [[b"a", b"b"]]  # type: ignore[attr-defined]
        assert took < 30, took
    # Producer.send: the default wait is Java's max.block.ms, 60 s, not the 120 s delivery timeout.
    producer = Producer(kafka.bootstrap)
    try:
        began = time.monotonic()
        with pytest.raises(KafkaTimeoutError) as info:  # the record's own error
            producer.send(missing, b"v").result(150)
        took = time.monotonic() - began
        assert "not present in metadata after 60000 ms (max_block_ms" in str(info.value), info.value
        assert took < 100, took
    finally:
        with contextlib.suppress(ProduceFailedError):  # the close's flush reports the same failed write
            producer.close()


def _poll_until_warned(consumer: Consumer, caplog: pytest.LogCaptureFixture, text: str, rounds: int = 20) -> None:
    for _ in range(rounds):
        assert consumer.poll(timeout_ms=500) == {}
        if text in caplog.text:
            return
    raise AssertionError(f"no warning {text!r} after {rounds} polls: {caplog.text[-2000:]}")


def test_a_consumer_of_a_missing_topic_says_so(kafka: Any, topic_name: Callable[[str], str],
                                               caplog: pytest.LogCaptureFixture) -> None:
    """A group member subscribed to a topic that does not exist, and a consumer assigned partitions that do
    not exist, get ``{}`` (as Java's and librdkafka's do) and a WARNING naming the topic (as Java's "Error
    while fetching metadata ... UNKNOWN_TOPIC_OR_PARTITION"), once per interval, and a metric."""
    caplog.set_level(logging.WARNING, logger="kafkawire.consumer")
    missing = topic_name("missing")
    with Consumer(kafka.bootstrap, group_id=topic_name("g")) as consumer:
        consumer.subscribe([missing])
        _poll_until_warned(consumer, caplog, f"topic {missing!r} does not exist")
        for _ in range(3):  # more polls within the interval: no more warnings
            assert consumer.poll(timeout_ms=300) == {}
        metrics = consumer.metrics()
        assert metrics["missing_topics"] == {missing: None}, metrics["missing_topics"]
        assert metrics["missing_topic_warnings"] == 1
        assert caplog.text.count(f"topic {missing!r} does not exist") == 1
    caplog.clear()
    existing = topic_name("two-partitions")
    with Client(kafka.bootstrap) as admin:
        admin.create_topics([existing], num_partitions=2)
    with Consumer(kafka.bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign([(missing, 0), (existing, 0), (existing, 7)])
        _poll_until_warned(consumer, caplog, f"topic {existing!r} has no partition 7")
        assert f"topic {missing!r} does not exist" in caplog.text, caplog.text
        assert consumer.metrics()["missing_topics"] == {missing: None, existing: [7]}
    # A healthy consumer never warns nor reports a missing topic.
    caplog.clear()
    with Consumer(kafka.bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign([(existing, 0), (existing, 1)])
        for _ in range(3):
            consumer.poll(timeout_ms=300)
        assert consumer.metrics()["missing_topics"] == {} and consumer.metrics()["missing_topic_warnings"] == 0
        assert "UNKNOWN_TOPIC_OR_PARTITION" not in caplog.text
