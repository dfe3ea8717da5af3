"""A multi-broker Apache Kafka cluster for tests that need replication: node 1 runs the KRaft controller
and a broker (``start_broker("kafka")``), the other nodes are brokers only, formatted with node 1's cluster
id and voting nothing (their ``controller.quorum.voters`` name node 1's controller). Stopping or killing
a node other than 1 never takes the controller down, so leader elections keep working.

:func:`prepare_divergence` and :func:`diverge` script a truncated log (KIP-320's case): a leader takes
records its follower lacks, dies, and the follower wins an unclean election and takes other records at the
same offsets.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from kafkawire.testing import start_broker
from kafkawire.testing.brokers import free_port
from kafkawire.testing.kafka import ApacheKafkaBroker

__all__ = ["kafka_cluster", "prepare_divergence", "diverge", "Divergence"]


@contextmanager
def kafka_cluster(
    size: int = 3,
    config: Mapping[str, Any] | None = None,
    node_config: Mapping[int, Mapping[str, Any]] | None = None,
) -> Iterator[list[ApacheKafkaBroker]]:
    """Start ``size`` Apache Kafka nodes (node ids 1..size; ``nodes[i]`` is node ``i + 1``) sharing
    ``config``, plus ``node_config[node id]`` for that node alone (e.g. its ``broker.rack``); stop them all on
    exit. ``nodes[0].bootstrap`` reaches the cluster."""
    shared = {str(k): str(v) for k, v in (config or {}).items()}

    def own(node_id: int) -> dict[str, str]:
        return {str(k): str(v) for k, v in ((node_config or {}).get(node_id) or {}).items()}

    first = start_broker("kafka", config={**shared, **own(1)})
    nodes = [first]
    try:
        for node_id in range(2, size + 1):
            port = free_port(first.host)
            node = ApacheKafkaBroker(
                port=port,
                config={
                    **shared,
                    **own(node_id),
                    "node.id": str(node_id),
                    "process.roles": "broker",
                    # A broker-only node listens for clients and replicas only; the controller is node 1's.
                    "listeners": f"PLAINTEXT://{first.host}:{port}",
                    "controller.quorum.voters": f"1@{first.host}:{first.controller_port}",
                },
            )
            node.cluster_id = first.cluster_id  # one cluster: StorageTool formats each node with its id
            nodes.append(node)
            node.start()
        yield nodes
    finally:
        for node in reversed(nodes):
            node.stop()


def _eventually(check: Any, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (result := check()) and time.monotonic() < deadline:
        time.sleep(0.25)
    return result


@dataclass
class Divergence:
    """What :func:`diverge` did: the leader epoch of the lost records and of the new ones."""

    old_epoch: int
    new_epoch: int


def prepare_divergence(nodes: list[ApacheKafkaBroker], admin: Any, topic: str) -> int:
    """Partition 0 of a new ``topic`` on nodes 2 (leader) and 3, 10 records on both ("both-0".."both-9"),
    then node 3 killed and 5 records only on node 2 ("lost-0".."lost-4", offsets 10-14). Returns their
    leader epoch. Readers may now read them; :func:`diverge` finishes the scenario."""
    admin.create_topics({topic: 1}, replication_factor=2)
    # Replicas on nodes 2 and 3 (never node 1, whose controller must stay up), node 2 preferred.
    assert admin.alter_partition_reassignments({(topic, 0): [2, 3]}) == {(topic, 0): None}

    def partition() -> Any:
        return admin.describe_topic_partitions([topic])[topic].partitions[0]

    assert _eventually(lambda: partition().replicas == (2, 3) and admin.list_partition_reassignments() == {})
    if partition().leader != 2:
        admin.elect_leaders([(topic, 0)])
    assert _eventually(lambda: partition().leader == 2 and sorted(partition().isr) == [2, 3])
    admin.client.produce(topic, [b"both-%d" % i for i in range(10)], partition=0)  # acks=all: on 2 and 3
    nodes[2].kill_process(signal.SIGKILL)  # node 3 goes; the ISR shrinks to node 2 alone
    assert _eventually(lambda: partition().isr == (2,))
    admin.client.produce(topic, [b"lost-%d" % i for i in range(5)], partition=0)  # 10-14, only on node 2
    return int(partition().leader_epoch)


def diverge(nodes: list[ApacheKafkaBroker], admin: Any, topic: str, old_epoch: int, new: int = 3) -> Divergence:
    """After :func:`prepare_divergence`: node 2 (the only in-sync replica) dies, node 3 comes back without
    offsets 10-14 and wins an unclean election (KIP-460), then takes ``new`` other records at offsets
    10.. ("new-0".."); node 2 comes back and truncates its log to node 3's."""

    def partition() -> Any:
        return admin.describe_topic_partitions([topic])[topic].partitions[0]

    nodes[1].kill_process(signal.SIGKILL)
    nodes[2].start()

    def unclean() -> bool:
        return admin.elect_leaders([(topic, 0)], election="unclean")[(topic, 0)] is None or partition().leader == 3

    assert _eventually(unclean)
    assert _eventually(lambda: partition().leader == 3)
    new_epoch = int(partition().leader_epoch)
    assert new_epoch > old_epoch
    admin.client.produce(topic, [b"new-%d" % i for i in range(new)], partition=0)
    nodes[1].start()
    assert _eventually(lambda: sorted(partition().isr) == [2, 3])
    return Divergence(old_epoch, new_epoch)
