"""Admin calls that only mean something with replication, on a 3-node Apache Kafka 4.4 cluster
(tests/kafka_cluster.py), side by side with Kafka's own tools: a reassignment that really moves replicas and
the preferred leader election that follows it, and the eligible leader replicas (ELR, KIP-966) of a
partition whose ISR shrank below ``min.insync.replicas``."""

from __future__ import annotations

import re
import signal
import time

import pytest
from kafka_cluster import kafka_cluster

from kafkawire.admin import Admin

from .kafka_tools import TOPIC_COMMAND, run_tool

pytestmark = [pytest.mark.broker, pytest.mark.slow]


def eventually(check, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while not (result := check()) and time.monotonic() < deadline:
        time.sleep(0.25)
    return result


def tool_partitions(bootstrap: str, topic: str) -> dict[int, dict[str, tuple[int, ...] | int]]:
    out = run_tool(TOPIC_COMMAND, "--bootstrap-server", bootstrap, "--describe", "--topic", topic)
    ints = lambda s: tuple(int(x) for x in s.split(",") if x)  # noqa: E731
    rows = [dict(re.findall(r"(\w+): ?([^\t]*)", ln)) for ln in out.splitlines() if "Partition: " in ln]
    return {
        int(r["Partition"]): {"leader": int(r["Leader"]) if r["Leader"] != "none" else -1, "isr": ints(r["Isr"]),
                              "elr": ints(r["Elr"]), "last_known_elr": ints(r["LastKnownElr"])}
        for r in rows
    }  # fmt: skip


def test_reassignment_election_and_eligible_leader_replicas_on_three_nodes():
    with kafka_cluster(3) as nodes, Admin(nodes[0].bootstrap, retry_timeout_ms=60_000) as admin:
        b = nodes[0].bootstrap
        topic = "replicated"
        admin.create_topics({topic: 1}, replication_factor=3)
        # Put node 1 (the controller's node, never stopped) first, so that it is the preferred leader.
        assert admin.alter_partition_reassignments({(topic, 0): [1, 2, 3]}) == {(topic, 0): None}
        assert eventually(lambda: admin.list_partition_reassignments() == {}
                          and admin.describe_topic_partitions([topic])[topic].partitions[0].replicas == (1, 2, 3))
        desc = admin.describe_topic_partitions([topic])[topic].partitions[0]
        if desc.leader != 1:
            assert admin.elect_leaders([(topic, 0)]) == {(topic, 0): None}  # preferred: node 1 takes over
        assert eventually(lambda: admin.describe_topic_partitions([topic])[topic].partitions[0].leader == 1)
        assert tool_partitions(b, topic)[0]["leader"] == 1

        # min.insync.replicas 3: when a follower leaves the ISR, the ISR is below it, so the follower is kept
        # as an eligible leader replica (ELR) instead of being forgotten (KIP-966).
        from kafkawire.admin import AlterConfigOp

        admin.alter_configs({topic: [AlterConfigOp("min.insync.replicas", "set", "3")]})
        admin.client.produce(topic, [b"before"] * 10, partition=0)
        nodes[2].kill_process(signal.SIGKILL)  # node 3

        def elr_shown():
            p = admin.describe_topic_partitions([topic])[topic].partitions[0]
            return p if sorted(p.isr) == [1, 2] and p.eligible_leader_replicas == (3,) else None

        p = eventually(elr_shown)
        assert p is not None, admin.describe_topic_partitions([topic])
        tool = tool_partitions(b, topic)[0]
        assert (p.leader, p.isr, p.eligible_leader_replicas, p.last_known_elr) == (
            tool["leader"], tool["isr"], tool["elr"], tool["last_known_elr"])  # fmt: skip
