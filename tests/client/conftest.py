"""Broker fixtures for the client tests: each starts a real broker on loopback (never skipped).

``kafka`` (Apache Kafka, the reference: the session's ``kafka_broker``), ``noida``, ``tansu`` and
``mock_cluster`` are shared by the whole session; tests that crash or restart a
broker use ``noida_factory``-style fresh brokers instead so they cannot disturb the others.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable, Iterator

import pytest

from kafkawire.testing import Broker, MockCluster, NoidaBroker, TansuBroker, start_broker

_counter = itertools.count()


@pytest.fixture(scope="session")
def kafka(kafka_broker: Broker) -> Broker:
    """Apache Kafka, the reference broker (the session's ``kafka_broker``, see tests/conftest.py)."""
    return kafka_broker


@pytest.fixture(scope="session")
def noida() -> Iterator[NoidaBroker]:
    """A noida-db broker (the most complete of the three) for the whole session."""
    broker = start_broker("noida")
    assert isinstance(broker, NoidaBroker)
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def tansu() -> Iterator[TansuBroker]:
    """A Tansu broker with in-memory storage for the whole session."""
    broker = start_broker("tansu")
    assert isinstance(broker, TansuBroker)
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def mock_cluster() -> Iterator[MockCluster]:
    """librdkafka's mock cluster (one broker) inside the test process."""
    broker = start_broker("mock")
    assert isinstance(broker, MockCluster)
    yield broker
    broker.stop()


@pytest.fixture
def broker_factory() -> Iterator[Callable[..., Broker]]:
    """Start private brokers (for crash/restart tests); all of them are stopped after the test."""
    started: list[Broker] = []

    def make(kind: str = "noida", **options: object) -> Broker:
        broker = start_broker(kind, **options)
        started.append(broker)
        return broker

    yield make
    for broker in started:
        broker.stop()


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """Unique topic names per test (brokers are shared by the session)."""

    def make(prefix: str = "t") -> str:
        # Kafka topic names allow only [a-zA-Z0-9._-] (at most 249 characters).
        base = re.sub(r"[^a-zA-Z0-9._-]+", "-", request.node.name)[:80]
        return f"{prefix}-{base}-{os.getpid()}-{next(_counter)}"

    return make
