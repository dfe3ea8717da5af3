"""Fixtures for the command-line tests: every broker-backed test runs against Apache Kafka (the session's
``kafka_broker``) and against a noida-db broker started here for the session (never skipped)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator

import pytest

from kafkawire.testing import Broker, NoidaBroker, start_broker

_names = itertools.count()


@pytest.fixture(scope="session")
def noida() -> Iterator[NoidaBroker]:
    broker = start_broker("noida")
    assert isinstance(broker, NoidaBroker)
    yield broker
    broker.stop()


@pytest.fixture(params=["kafka", "noida"])
def cli_broker(request: pytest.FixtureRequest) -> Broker:
    """The broker a test runs against: Apache Kafka (the reference) or noida-db, both shared by the session."""
    return request.getfixturevalue("kafka_broker" if request.param == "kafka" else request.param)


@pytest.fixture
def bootstrap(cli_broker: Broker, monkeypatch: pytest.MonkeyPatch) -> str:
    """The broker's address, also exported as KAFKAWIRE_BOOTSTRAP (the CLI's documented default)."""
    monkeypatch.setenv("KAFKAWIRE_BOOTSTRAP", cli_broker.bootstrap)
    return cli_broker.bootstrap


@pytest.fixture
def topic_name() -> Callable[[str], str]:
    """Unique topic names, so tests sharing a session broker never see each other's records."""
    return lambda prefix="t": f"cli-{prefix}-{os.getpid()}-{next(_names)}"
