"""Admin calls whose answer is lost (Apache Kafka behind a proxy that drops one response and closes the
connection, as a broker crashing right after applying the request): the retry finds the work done and
succeeds, instead of failing with the error the repeated request gets."""

from __future__ import annotations

import importlib.util
import os
import time
from pathlib import Path

import pytest

from kafkawire.admin import Admin

# The fault-injecting proxy of the client tests (tests/client is not a package: load the module by path).
_spec = importlib.util.spec_from_file_location("client_fakes", Path(__file__).parents[1] / "client" / "client_fakes.py")
assert _spec is not None and _spec.loader is not None
_fakes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fakes)
KafkaProxy = _fakes.KafkaProxy


@pytest.mark.broker
def test_create_partitions_whose_answer_was_lost(kafka_broker) -> None:  # type: ignore[no-untyped-def]
    topic = f"adm-lost-{os.getpid()}-{time.monotonic_ns()}"
    host, port = kafka_broker.bootstrap.rsplit(":", 1)
    dropped_once = []

    def drop(api_key: int) -> bool:
        if api_key == 37 and not dropped_once:  # CreatePartitions
            dropped_once.append(api_key)
            return True
        return False

    with Admin(kafka_broker.bootstrap) as direct:
        direct.create_topics({topic: 2})
        with KafkaProxy(host, int(port), drop) as proxy, Admin(proxy.address, retry_timeout_ms=30_000) as admin:
            # The repeated request is refused with INVALID_PARTITIONS (the topic already has 4): success.
            admin.create_partitions({topic: 4})
            assert proxy.dropped == [37]
        assert direct.describe_topics([topic])[topic].num_partitions == 4


@pytest.mark.broker
def test_delete_group_whose_answer_was_lost(kafka_broker) -> None:  # type: ignore[no-untyped-def]
    stem = f"adm-lost-grp-{os.getpid()}-{time.monotonic_ns()}"
    topic, group = f"{stem}-t", f"{stem}-g"
    host, port = kafka_broker.bootstrap.rsplit(":", 1)
    dropped_once = []

    def drop(api_key: int) -> bool:
        if api_key == 42 and not dropped_once:  # DeleteGroups
            dropped_once.append(api_key)
            return True
        return False

    with Admin(kafka_broker.bootstrap) as direct:
        direct.create_topics([topic])
        direct.alter_consumer_group_offsets(group, {(topic, 0): 0})
        with KafkaProxy(host, int(port), drop) as proxy, Admin(proxy.address, retry_timeout_ms=30_000) as admin:
            # Brokers known from (proxied) Metadata first: the coordinator is then reached through the proxy
            # (the proxy rewrites Metadata, not FindCoordinator).
            admin.client.metadata([])
            # The repeated request gets GROUP_ID_NOT_FOUND (the first one deleted it): success.
            admin.delete_groups([group])
            assert proxy.dropped == [42]
        assert group not in {g.group_id for g in direct.list_groups()}
