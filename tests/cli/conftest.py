"""Fixtures for the command-line tests: one noida-db broker for the session (started here, never skipped)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest

from kafkawire.testing import NoidaBroker, start_broker

_names = itertools.count()


@pytest.fixture(scope="session")
def noida() -> Iterator[NoidaBroker]:
    broker = start_broker("noida")
    assert isinstance(broker, NoidaBroker)
    yield broker
    broker.stop()


@pytest.fixture
def bootstrap(noida: NoidaBroker, monkeypatch: pytest.MonkeyPatch) -> str:
    """The broker's address, also exported as KAFKAWIRE_BOOTSTRAP (the CLI's documented default)."""
    monkeypatch.setenv("KAFKAWIRE_BOOTSTRAP", noida.bootstrap)
    return noida.bootstrap


@pytest.fixture
def topic_name() -> Callable[[str], str]:
    """Unique topic names, so tests sharing the session broker never see each other's records."""
    return lambda prefix="t": f"cli-{prefix}-{next(_names)}"
