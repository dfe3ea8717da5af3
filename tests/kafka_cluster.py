"""A multi-broker Apache Kafka cluster for tests that need replication: node 1 runs the KRaft controller
and a broker (``start_broker("kafka")``), the other nodes are brokers only, formatted with node 1's cluster
id and voting nothing (their ``controller.quorum.voters`` name node 1's controller). Stopping or killing
a node other than 1 never takes the controller down, so leader elections keep working.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from kafkawire.testing import start_broker
from kafkawire.testing.brokers import free_port
from kafkawire.testing.kafka import ApacheKafkaBroker

__all__ = ["kafka_cluster"]


@contextmanager
def kafka_cluster(size: int = 3, config: Mapping[str, Any] | None = None) -> Iterator[list[ApacheKafkaBroker]]:
    """Start ``size`` Apache Kafka nodes (node ids 1..size; ``nodes[i]`` is node ``i + 1``) sharing
    ``config``; stop them all on exit. ``nodes[0].bootstrap`` reaches the cluster."""
    shared = {str(k): str(v) for k, v in (config or {}).items()}
    first = start_broker("kafka", config=shared)
    nodes = [first]
    try:
        for node_id in range(2, size + 1):
            port = free_port(first.host)
            node = ApacheKafkaBroker(
                port=port,
                config={
                    **shared,
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
