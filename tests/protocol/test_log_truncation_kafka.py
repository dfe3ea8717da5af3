"""A diverged log on a 3-node Apache Kafka 4.4 cluster, and what KIP-320's primitives say about it.

The scenario a consumer must survive (issue 24): a leader takes records its follower never copies, dies,
and the follower becomes leader by an unclean election, then takes other records at the same offsets.
A reader positioned after the lost records (offset 15, last fetched epoch E0) must not go on as if nothing
happened. The broker gives it what it needs: Fetch with the leader epoch it knows is refused with
FENCED_LEADER_EPOCH, and OffsetForLeaderEpoch for E0 answers the end of E0 on the new leader (10), below
the reader's position: records 10-14 it read are gone, 10-12 now hold other records of a newer epoch.
"""

from __future__ import annotations

import signal
import time

import pytest
from kafka_cluster import kafka_cluster

from kafkawire.admin import Admin
from kafkawire.protocol import FetchRequest, OffsetForLeaderEpochRequest
from kafkawire.protocol.errors import error_for_code
from kafkawire.protocol.negotiation import negotiate

from .test_brokers import Conn

pytestmark = [pytest.mark.broker, pytest.mark.slow]


def eventually(check, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while not (result := check()) and time.monotonic() < deadline:
        time.sleep(0.25)
    return result


def test_unclean_election_diverges_the_log_and_offset_for_leader_epoch_shows_where():
    with kafka_cluster(3) as nodes, Admin(nodes[0].bootstrap, retry_timeout_ms=60_000) as admin:
        topic = "diverging"
        admin.create_topics({topic: 1}, replication_factor=2)
        # Replicas on nodes 2 and 3 (never node 1, whose controller must stay up), node 2 preferred.
        assert admin.alter_partition_reassignments({(topic, 0): [2, 3]}) == {(topic, 0): None}

        def partition():
            return admin.describe_topic_partitions([topic])[topic].partitions[0]

        assert eventually(lambda: partition().replicas == (2, 3) and admin.list_partition_reassignments() == {})
        if partition().leader != 2:
            admin.elect_leaders([(topic, 0)])
        assert eventually(lambda: partition().leader == 2 and sorted(partition().isr) == [2, 3])
        admin.client.produce(topic, [b"both-%d" % i for i in range(10)], partition=0)  # acks=all: on 2 and 3

        nodes[2].kill_process(signal.SIGKILL)  # node 3 goes; the ISR shrinks to node 2 alone
        assert eventually(lambda: partition().isr == (2,))
        old_epoch = partition().leader_epoch
        admin.client.produce(topic, [b"lost-%d" % i for i in range(5)], partition=0)  # 10-14, only on node 2
        read = admin.client.fetch(topic, 0, 10)
        assert list(read.offset) == [10, 11, 12, 13, 14]  # a reader now stands at 15, epoch old_epoch
        assert set(read.batch_partition_leader_epoch) == {old_epoch}

        nodes[1].kill_process(signal.SIGKILL)  # node 2, the only in-sync replica, dies
        nodes[2].start()  # node 3 comes back without records 10-14
        # Unclean election (KIP-460): the out-of-sync replica may lead, records 10-14 are lost.
        def unclean() -> bool:
            return admin.elect_leaders([(topic, 0)], election="unclean")[(topic, 0)] is None or partition().leader == 3

        assert eventually(unclean)
        assert eventually(lambda: partition().leader == 3)
        new_epoch = partition().leader_epoch
        assert new_epoch > old_epoch
        admin.client.produce(topic, [b"new-%d" % i for i in range(3)], partition=0)  # 10-12 again, other records

        conn = Conn(nodes[2].bootstrap)
        try:
            versions = negotiate(conn.roundtrip)
            # Fetch at the reader's position with the epoch it knows: the new leader refuses it (KIP-320).
            fetch = FetchRequest(
                max_wait_ms=0,
                min_bytes=1,
                topics=[
                    FetchRequest.FetchTopic(
                        topic=topic,
                        topic_id=admin.describe_topics([topic])[topic].topic_id,
                        partitions=[
                            FetchRequest.FetchPartition(
                                partition=0,
                                fetch_offset=15,
                                current_leader_epoch=old_epoch,
                                partition_max_bytes=1 << 20,
                            )
                        ],
                    )
                ],
            )
            got = conn.call(fetch, versions.version_for(FetchRequest)).responses[0].partitions[0]
            assert error_for_code(got.error_code).__name__ == "FencedLeaderEpochError"
            # Where did epoch old_epoch end on the new leader? At 10: below the reader's 15, so it was truncated.
            ask = OffsetForLeaderEpochRequest(
                replica_id=-1,
                topics=[
                    OffsetForLeaderEpochRequest.OffsetForLeaderTopic(
                        topic=topic,
                        partitions=[
                            OffsetForLeaderEpochRequest.OffsetForLeaderPartition(
                                partition=0, current_leader_epoch=new_epoch, leader_epoch=old_epoch
                            )
                        ],
                    )
                ],
            )
            end = conn.call(ask, versions.version_for(OffsetForLeaderEpochRequest)).topics[0].partitions[0]
            assert (end.error_code, end.end_offset) == (0, 10)
            assert end.leader_epoch <= old_epoch
        finally:
            conn.close()

        nodes[1].start()  # node 2 returns, truncates to node 3's log and follows it
        assert eventually(lambda: sorted(partition().isr) == [2, 3])
        now = admin.client.fetch(topic, 0, 0)
        assert now.value.to_pylist() == [b"both-%d" % i for i in range(10)] + [b"new-%d" % i for i in range(3)]
        assert set(now.batch_partition_leader_epoch[-1:]) == {new_epoch}
