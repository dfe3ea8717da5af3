"""ReadReplicas (KIP-392): which node a partition is fetched from, without a broker."""

from __future__ import annotations

import time

from kafkawire.client.cluster.read_replicas import ReadReplicas

TP = ("t", 0)


def test_a_named_replica_is_used_until_it_expires_then_the_leader_is_asked_again() -> None:
    rr = ReadReplicas(max_age_ms=200)
    assert rr.node_for(TP, 1, {1, 2, 3}) == 1  # nothing named yet: the leader
    rr.prefer(TP, 2, leader=1)
    assert rr.node_for(TP, 1, {1, 2, 3}) == 2
    time.sleep(0.3)  # metadata_max_age_ms passed: Java's consumer asks the leader again
    assert rr.node_for(TP, 1, {1, 2, 3}) == 1
    assert rr.preferred() == {}


def test_a_failed_or_vanished_replica_sends_the_partition_back_to_its_leader() -> None:
    rr = ReadReplicas(max_age_ms=60_000)
    rr.prefer(TP, 2, leader=1)
    rr.forget(TP, "connection refused")
    assert rr.node_for(TP, 1, {1, 2, 3}) == 1
    rr.prefer(TP, 3, leader=1)
    assert rr.node_for(TP, 1, {1, 2}) == 1  # node 3 left the metadata
    rr.prefer(TP, 2, leader=1)
    rr.prefer(TP, 1, leader=1)  # a broker naming the leader itself: no preference
    assert rr.preferred() == {}
