"""Embedded Kafka-compatible brokers for tests, demos and the CLI.

Apache Kafka itself is the reference broker (KRaft, one JVM; jars from Maven Central, cached)::

    with start_broker("kafka") as broker:      # pinned version; KAFKAWIRE_KAFKA_VERSION or version="3.9.2"
        print(broker.bootstrap)
    with start_broker("kafka", tls=True, sasl_mechanisms=("PLAIN", "SCRAM-SHA-256"), users={"alice": "pw"}) as b:
        b.bootstrap_for("SASL_SSL"), b.ca_file  # SSL, SASL_PLAINTEXT and SASL_SSL listeners beside PLAINTEXT

Three independent stand-ins run on loopback from PyPI wheels alone (no JVM)::

    from kafkawire.testing import start_broker

    with start_broker("noida") as broker:      # noida-db: persistent data dir, restart() supported
        print(broker.bootstrap)                # "127.0.0.1:PORT"
    with start_broker("tansu") as broker:      # Tansu 0.6: in-memory; SCRAM with authentication=True
        ...
    with start_broker("mock") as broker:       # librdkafka's in-process mock cluster
        broker.create_topic("t", partitions=3)  # it has no CreateTopics API

One module per broker: :mod:`.kafka`, :mod:`.noida`, :mod:`.tansu` and :mod:`.mock` (their options),
on :mod:`.brokers` (what they share); :mod:`.tls` makes the test certificates, :mod:`.maven` fetches jars,
:mod:`.java` compiles and runs Java peers, and :mod:`.kdc` runs a real MIT Kerberos KDC for the GSSAPI listener
(``start_broker("kafka", sasl_mechanisms=("GSSAPI",))`` starts one itself).

Faults: a broker handle's ``restart()`` (a crash), ``pause()`` / ``resume()`` (SIGSTOP / SIGCONT: a hung
broker, connections open, nothing answering) and :class:`~kafkawire.testing.proxy.FaultProxy` (latency and
jitter, a bandwidth cap, a blackhole, a half-open connection, resets mid-response; brokers advertise through
it, :func:`~kafkawire.testing.proxy.proxy_cluster` puts one before each broker of a cluster).
"""

from __future__ import annotations

from .brokers import Broker, BrokerStartError, free_port, wait_for_port
from .kafka import DEFAULT_KAFKA_VERSION, LEGACY_KAFKA_VERSION, ApacheKafkaBroker
from .mock import MockCluster
from .noida import NoidaBroker
from .proxy import FaultProxy, proxy_cluster
from .schema_registry import SchemaRegistryServer, start_schema_registry  # noqa: F401 (Apicurio, issue 20)
from .start import start_broker
from .tansu import TansuBroker

__all__ = [
    "DEFAULT_KAFKA_VERSION",
    "LEGACY_KAFKA_VERSION",
    "ApacheKafkaBroker",
    "Broker",
    "BrokerStartError",
    "FaultProxy",
    "MockCluster",
    "NoidaBroker",
    "TansuBroker",
    "free_port",
    "proxy_cluster",
    "start_broker",
    "wait_for_port",
]
