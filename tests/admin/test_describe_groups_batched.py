"""``Admin.describe_groups`` for many groups sends one DescribeGroups per coordinator (as Java's Admin does),
and what it reports for each group agrees with ``kafka-consumer-groups --describe --state`` on Apache Kafka."""

from __future__ import annotations

import os

import pytest

from kafkawire.admin import Admin
from kafkawire.client.consumer.consumer import Consumer
from kafkawire.protocol.errors import GroupIdNotFoundError

from .kafka_tools import GROUP_COMMAND, parse_table, run_tool


@pytest.mark.broker
def test_many_groups_one_request_per_coordinator_and_kafka_agrees(kafka_broker) -> None:  # type: ignore[no-untyped-def]
    prefix = f"adm-batch-{os.getpid()}"
    topic = f"{prefix}-t"
    with Admin(kafka_broker.bootstrap, retry_timeout_ms=30_000) as setup:
        setup.create_topics({topic: 2})
        idle = [f"{prefix}-idle-{i}" for i in range(6)]
        for i, group in enumerate(idle):
            setup.alter_consumer_group_offsets(group, {(topic, 0): i})
    active = f"{prefix}-active"
    member = Consumer(kafka_broker.bootstrap, group_id=active, session_timeout_ms=45_000, enable_auto_commit=False)
    try:
        member.subscribe([topic])
        for _ in range(150):
            if member.assignment():
                break
            member.poll(200)
        assert member.assignment()
        groups = [*idle, active]
        with Admin(kafka_broker.bootstrap, retry_timeout_ms=30_000) as admin:
            described = admin.describe_groups(groups)
            apis = admin.client.metrics()["apis"]
            coordinators = {d.coordinator for d in described.values()}
            assert apis["DescribeGroups"]["requests"] == len(coordinators) == 1
            assert apis.get("ConsumerGroupDescribe", {}).get("requests", 0) == 0  # all of them are classic
            with pytest.raises(GroupIdNotFoundError):
                admin.describe_groups([idle[0], f"{prefix}-never-used"])
        args = ["--bootstrap-server", kafka_broker.bootstrap, "--describe", "--state"]
        for group in groups:
            args += ["--group", group]
        rows = parse_table(run_tool(GROUP_COMMAND, *args))
    finally:
        member.close()
    assert list(described) == groups
    assert {r["GROUP"] for r in rows} == set(groups)
    for row in rows:
        d = described[row["GROUP"]]
        assert row["STATE"] == d.state
        assert row["#MEMBERS"] == str(len(d.members))
        assert row["ASSIGNMENT-STRATEGY"] == (d.protocol or "-")
        assert row["COORDINATOR (ID)"].endswith(f"({d.coordinator})")
    assert described[active].state == "Stable" and len(described[active].members) == 1
    assert all(described[g].state == "Empty" for g in idle)
