"""Routing and recovery on a three-broker cluster (librdkafka's mock), with faults injected through its
C API: moved leaders, error codes pushed into responses, brokers taken down."""

from __future__ import annotations

import threading
import time

import pytest
from helpers import fetch_all

from kafkawire.client import Client, ProduceFailedError
from kafkawire.protocol.errors import MessageTooLargeError

pytestmark = pytest.mark.broker

PRODUCE, FETCH = 0, 1
NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT, MESSAGE_TOO_LARGE, NOT_ENOUGH_REPLICAS = 6, 7, 10, 19


@pytest.fixture
def cluster(broker_factory):
    return broker_factory("mock", brokers=3)


def test_requests_are_routed_to_each_partitions_leader(cluster, topic_name):
    topic = topic_name()
    cluster.create_topic(topic, 6)
    keys = [f"k{i}".encode() for i in range(60)]
    with Client(cluster.bootstrap) as c:
        meta = c.metadata([topic])
        leaders = {p: pm.leader for p, pm in meta.topics[topic].partitions.items()}
        assert len(set(leaders.values())) == 3, "the mock spreads leaders over its brokers"
        res = c.produce(topic, keys, keys=keys)
        for p in range(6):
            n = int((res.partition == p).sum())
            assert [r.key for r in fetch_all(c, topic, p, 0, n)] == [k for k, q in zip(keys, res.partition) if q == p]
        assert set(c.cluster.conns) == {1, 2, 3}  # one connection per leader


def test_a_moved_leader_is_found_through_a_metadata_refresh(cluster, topic_name):
    topic = topic_name()
    cluster.create_topic(topic, 1)
    with Client(cluster.bootstrap, retry_backoff_ms=10) as c:
        c.produce(topic, [b"first"], partition=0)
        old = c.metadata([topic]).topics[topic].partitions[0].leader
        new = next(b for b in cluster.broker_ids if b != old)
        cluster.set_partition_leader(topic, 0, new)
        # The client still believes in the old leader: it answers NOT_LEADER_OR_FOLLOWER, the client
        # refreshes its metadata and resends to the new one.
        res = c.produce(topic, [b"second"], partition=0)
        assert res.offset.tolist() == [1]
        assert c.cluster.topics[topic].partitions[0].leader == new
        assert [r.value for r in fetch_all(c, topic, 0, 0, 2)] == [b"first", b"second"]


def test_retriable_errors_are_retried_and_written_once(cluster, topic_name):
    topic = topic_name()
    cluster.create_topic(topic, 1)
    with Client(cluster.bootstrap, retry_backoff_ms=10) as c:
        c.metadata([topic])
        cluster.push_request_errors(PRODUCE, [NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS])
        res = c.produce(topic, [b"a", b"b"], partition=0)
        assert res.offset.tolist() == [0, 1]
        cluster.push_request_errors(FETCH, [NOT_LEADER_OR_FOLLOWER, NOT_LEADER_OR_FOLLOWER])
        assert [r.value for r in fetch_all(c, topic, 0, 0, 2)] == [b"a", b"b"]


def test_a_non_retriable_error_fails_at_once(cluster, topic_name):
    topic = topic_name()
    cluster.create_topic(topic, 1)
    with Client(cluster.bootstrap, retry_backoff_ms=10) as c:
        c.metadata([topic])
        cluster.push_request_errors(PRODUCE, [MESSAGE_TOO_LARGE])
        t0 = time.monotonic()
        with pytest.raises(ProduceFailedError) as info:
            c.produce(topic, [b"big"], partition=0)
        assert time.monotonic() - t0 < 1
        assert isinstance(info.value.errors[(topic, 0)], MessageTooLargeError)
        # The client is still usable, and the failed batch's sequence number was not burnt in a way
        # that breaks the next idempotent produce.
        res = c.produce(topic, [b"ok"], partition=0)
        assert res.offset.tolist() == [0]


def test_leader_down_then_up(cluster, topic_name):
    topic = topic_name()
    cluster.create_topic(topic, 1)
    with Client(
        cluster.bootstrap, retry_backoff_ms=50, retry_backoff_max_ms=200, retries=30, request_timeout_ms=2000
    ) as c:
        c.produce(topic, [b"before"], partition=0)
        leader = c.metadata([topic]).topics[topic].partitions[0].leader
        cluster.set_broker_down(leader)
        threading.Timer(0.5, cluster.set_broker_up, args=(leader,)).start()
        t0 = time.monotonic()
        res = c.produce(topic, [b"after"], partition=0)
        assert time.monotonic() - t0 >= 0.4
        assert res.offset.tolist() == [1]
        assert [r.value for r in fetch_all(c, topic, 0, 0, 2)] == [b"before", b"after"]


def test_a_leaderless_partition_in_the_cache_is_looked_up_again(cluster, topic_name):
    # A metadata answer taken during an election says "no leader"; once the election is over, asking for
    # the leader looks again (at most once per retry backoff) instead of keeping the stale answer until
    # metadata_max_age_ms (5 minutes): a share group member that asked only for leaders waited that long.
    from kafkawire.client.net.deadline import Deadline
    from kafkawire.protocol.errors import LeaderNotAvailableError

    topic = topic_name()
    cluster.create_topic(topic, 1)
    with Client(cluster.bootstrap, retry_backoff_ms=10) as c:
        leader = c.metadata([topic]).topics[topic].partitions[0].leader
        cluster.set_partition_leader(topic, 0, -1)
        c.cluster.fetch_metadata([topic], Deadline.from_ms(10_000))
        assert c.cluster.topics[topic].partitions[0].leader == -1
        with pytest.raises(LeaderNotAvailableError):
            c.cluster.leader(topic, 0, Deadline.from_ms(10_000))
        cluster.set_partition_leader(topic, 0, leader)
        time.sleep(0.02)
        assert c.cluster.leader(topic, 0, Deadline.from_ms(10_000)) == leader
