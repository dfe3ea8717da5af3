"""A private Apache Kafka for the share group tests: short acquisition locks (so an expired lock is seen
in seconds, not the default 30 s) and a low delivery limit, set in the broker's config (helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafkawire.testing import Broker, start_broker

from .helpers import SHARE_BROKER_CONFIG


@pytest.fixture(scope="module")
def share_kafka() -> Iterator[Broker]:
    broker = start_broker("kafka", config=SHARE_BROKER_CONFIG)
    yield broker
    broker.stop()
