"""Commits carry the leader epoch of the record before the committed offset (``committed_leader_epoch``,
KIP-320), as the Java consumer's do: a consumer restarting from the commit validates its position with it.

Against Apache Kafka 4.4: the epoch a group member commits (with `commit()`, by auto-commit from the heartbeat
thread, with manual assignment) is what Kafka stores and what confluent-kafka (librdkafka)
reads back; a position whose epoch is unknown (after ``seek()``) commits -1. Without a broker: the request
carries the epoch and refuses a commit that is not an int or a 2- or 3-tuple."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from confluent_kafka import Consumer as CKConsumer
from confluent_kafka import TopicPartition

from kafkawire.client import Client, Consumer
from kafkawire.client.consumer.offsets import commit_request, offset_of
from kafkawire.testing import Broker

PARTITIONS = 3


def test_the_commit_request_carries_offset_metadata_and_epoch() -> None:
    req = commit_request("g", {("t", 0): 5, ("t", 1): (6, "m"), ("t", 2): (7, "n", 4)})
    parts = {p.partition_index: p for p in req.topics[0].partitions}
    assert [(parts[i].committed_offset, parts[i].committed_metadata, parts[i].committed_leader_epoch)
            for i in range(3)] == [(5, "", -1), (6, "m", -1), (7, "n", 4)]  # fmt: skip
    assert [offset_of(s) for s in (5, (6, "m"), (7, "n", 4))] == [5, 6, 7]
    for bad in [(1,), (1, "m", 2, 3)]:
        with pytest.raises(TypeError, match="offset to commit"):
            commit_request("g", {("t", 0): bad})  # type: ignore[dict-item]


def _filled(kafka: Broker, topic_name: Callable[..., str]) -> str:
    topic = topic_name()
    with Client(kafka.bootstrap) as c:
        c.create_topics({topic: PARTITIONS})
        for p in range(PARTITIONS):
            c.produce(topic, [b"v%d" % i for i in range(20)], partition=p)
    return topic


def _read_all(cons: Consumer, want: int) -> None:
    got, until = 0, time.monotonic() + 60
    while got < want and time.monotonic() < until:
        got += sum(len(c) for c in cons.poll(500).values())
    assert got == want


def _committed(kafka: Broker, group: str, topic: str) -> dict[int, tuple[int, int]]:
    with Client(kafka.bootstrap) as c:
        out = c.committed(group, [(topic, p) for p in range(PARTITIONS)])
    return {p: (o.offset, o.leader_epoch) for (_, p), o in out.items()}


def _librdkafka_committed(kafka: Broker, group: str, topic: str) -> dict[int, tuple[int, int | None]]:
    ck = CKConsumer({"bootstrap.servers": kafka.bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        tps = ck.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=30)
    finally:
        ck.close()
    return {tp.partition: (tp.offset, tp.leader_epoch) for tp in tps}


@pytest.mark.broker
def test_a_group_members_commit_carries_the_leader_epoch(kafka: Broker, topic_name) -> None:  # type: ignore[no-untyped-def]
    topic, group = _filled(kafka, topic_name), topic_name("g")
    with Consumer(kafka.bootstrap, group_id=group, auto_offset_reset="earliest", enable_auto_commit=False) as cons:
        cons.subscribe([topic])
        _read_all(cons, 20 * PARTITIONS)
        cons.commit()
    # A new topic's partitions have leader epoch 0 on a single broker.
    assert _committed(kafka, group, topic) == {p: (20, 0) for p in range(PARTITIONS)}
    assert _librdkafka_committed(kafka, group, topic) == {p: (20, 0) for p in range(PARTITIONS)}


@pytest.mark.broker
def test_the_background_auto_commit_carries_the_leader_epoch(kafka: Broker, topic_name) -> None:  # type: ignore[no-untyped-def]
    topic, group = _filled(kafka, topic_name), topic_name("g")
    with Consumer(kafka.bootstrap, group_id=group, auto_offset_reset="earliest", auto_commit_interval_ms=100,
                  heartbeat_interval_ms=200) as cons:  # fmt: skip
        cons.subscribe([topic])
        _read_all(cons, 20 * PARTITIONS)
        until = time.monotonic() + 30
        while _committed(kafka, group, topic) != {p: (20, 0) for p in range(PARTITIONS)}:
            assert time.monotonic() < until, _committed(kafka, group, topic)
            cons.poll(200)  # the heartbeat thread sends the due auto-commit; its result is collected here


@pytest.mark.broker
def test_a_position_of_unknown_epoch_commits_minus_one(kafka: Broker, topic_name) -> None:  # type: ignore[no-untyped-def]
    topic, group = _filled(kafka, topic_name), topic_name("g")
    with Consumer(kafka.bootstrap, group_id=group, enable_auto_commit=False) as cons:
        cons.assign([(topic, p) for p in range(PARTITIONS)])
        for p in range(PARTITIONS):
            cons.seek((topic, p), 0)
        _read_all(cons, 20 * PARTITIONS)
        cons.seek((topic, 0), 7)  # no record read before 7 under a known epoch: nothing to validate
        cons.commit()
    assert _committed(kafka, group, topic) == {0: (7, -1), 1: (20, 0), 2: (20, 0)}


@pytest.mark.broker
def test_offsets_sent_to_a_transaction_carry_the_leader_epoch(kafka: Broker, topic_name) -> None:  # type: ignore[no-untyped-def]
    from kafkawire.client import Producer

    topic, group = _filled(kafka, topic_name), topic_name("g")
    with Producer(kafka.bootstrap, transactional_id=topic_name("tid")) as producer:
        producer.init_transactions()
        with producer.transaction():
            producer.send(topic, b"out", partition=0)
            producer.send_offsets_to_transaction({(topic, 0): (11, "m", 0), (topic, 1): 12, (topic, 2): (13, None)},
                                                 group)  # fmt: skip
    until = time.monotonic() + 30
    while (got := _committed(kafka, group, topic)) != {0: (11, 0), 1: (12, -1), 2: (13, -1)}:
        assert time.monotonic() < until, got  # (the markers may land just after EndTxn answers)
        time.sleep(0.2)
