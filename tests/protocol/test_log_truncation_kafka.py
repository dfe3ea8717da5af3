"""A diverged log on a 3-node Apache Kafka 4.4 cluster, and what KIP-320's primitives say about it.

The scenario a consumer must survive (issue 24): a leader takes records its follower never copies, dies,
and the follower becomes leader by an unclean election, then takes other records at the same offsets.
A reader positioned after the lost records (offset 15, last fetched epoch E0) must not go on as if nothing
happened. The broker gives it what it needs: Fetch with the leader epoch it knows is refused with
FENCED_LEADER_EPOCH, and OffsetForLeaderEpoch for E0 answers the end of E0 on the new leader (10), below
the reader's position: records 10-14 it read are gone, 10-12 now hold other records of a newer epoch.
"""

from __future__ import annotations

import pytest
from kafka_cluster import diverge, kafka_cluster, prepare_divergence

from kafkawire.admin import Admin
from kafkawire.protocol import FetchRequest, OffsetForLeaderEpochRequest
from kafkawire.protocol.errors import error_for_code
from kafkawire.protocol.negotiation import negotiate

from .test_brokers import Conn

pytestmark = [pytest.mark.broker, pytest.mark.slow]

# Node 3 stays leader once elected (the preferred node 2 would take the lead back after its check interval).
STAY = {"auto.leader.rebalance.enable": "false"}


def test_unclean_election_diverges_the_log_and_offset_for_leader_epoch_shows_where():
    with kafka_cluster(3, STAY) as nodes, Admin(nodes[0].bootstrap, retry_timeout_ms=60_000) as admin:
        topic = "diverging"
        old_epoch = prepare_divergence(nodes, admin, topic)
        read = admin.client.fetch(topic, 0, 10)
        assert list(read.offset) == [10, 11, 12, 13, 14]  # a reader now stands at 15, epoch old_epoch
        assert set(read.batch_partition_leader_epoch) == {old_epoch}
        d = diverge(nodes, admin, topic, old_epoch)

        conn = Conn(nodes[2].bootstrap)  # node 3, the new leader
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
                                partition=0, current_leader_epoch=d.new_epoch, leader_epoch=old_epoch
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

        # Node 2 came back and truncated its log to node 3's: 10-12 hold the new records, of the new epoch.
        now = admin.client.fetch(topic, 0, 0)
        assert now.value.to_pylist() == [b"both-%d" % i for i in range(10)] + [b"new-%d" % i for i in range(3)]
        assert set(now.batch_partition_leader_epoch[-1:]) == {d.new_epoch}
