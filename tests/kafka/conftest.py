"""Fixtures of the Apache Kafka suite: unique topic names (the brokers outlive single tests)."""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable

import pytest

_counter = itertools.count()


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """A function giving a topic name no other test (or concurrent run) uses."""

    def make(prefix: str = "t") -> str:
        # Kafka topic names allow only [a-zA-Z0-9._-] (at most 249 characters).
        base = re.sub(r"[^a-zA-Z0-9._-]+", "-", request.node.name)[:80]
        return f"{prefix}-{base}-{os.getpid()}-{next(_counter)}"

    return make
