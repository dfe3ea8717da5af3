"""Embedded Kafka-compatible brokers for tests, demos and the CLI.

Three independent broker implementations can run on loopback from PyPI wheels alone (no JVM)::

    from kafkawire.testing import start_broker

    with start_broker("noida") as broker:      # noida-db: persistent data dir, restart() supported
        print(broker.bootstrap)                # "127.0.0.1:PORT"
    with start_broker("tansu") as broker:      # Tansu 0.6: in-memory; SCRAM with authentication=True
        ...
    with start_broker("mock") as broker:       # librdkafka's in-process mock cluster
        broker.create_topic("t", partitions=3)  # it has no CreateTopics API

See :mod:`kafkawire.testing.brokers` for the options of each.
"""

from __future__ import annotations

from .brokers import (
    Broker,
    BrokerStartError,
    MockCluster,
    NoidaBroker,
    TansuBroker,
    free_port,
    start_broker,
    wait_for_port,
)

__all__ = [
    "Broker",
    "BrokerStartError",
    "MockCluster",
    "NoidaBroker",
    "TansuBroker",
    "free_port",
    "start_broker",
    "wait_for_port",
]
