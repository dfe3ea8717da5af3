"""Share group administration on Apache Kafka 4.4: ``Admin`` and ``kafkawire share-groups`` against what
Kafka's own ``kafka-share-groups`` tool (ShareGroupCommand, run from the test broker's jars) reports for the
same cluster: list, describe (state, members, assignments), start offsets and lag, reset, delete."""

from __future__ import annotations

import itertools
import json
import os

import pytest

from kafkawire.admin import Admin, AlterConfigOp, ConfigResource
from kafkawire.cli.main import main
from kafkawire.client import Client, ShareConsumer

from .kafka_tools import parse_table, run_tool

pytestmark = pytest.mark.broker

SHARE_GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"
_names = itertools.count()


def new_group(admin: Admin) -> str:
    """A fresh share group that starts at the earliest offset (a new one starts at the latest)."""
    name = f"adm-share-{os.getpid()}-{next(_names)}"
    admin.alter_configs({ConfigResource.group(name): [AlterConfigOp("share.auto.offset.reset", "set", "earliest")]})
    return name


def cli(capsys: pytest.CaptureFixture[str], bootstrap: str, *argv: str) -> str:
    code = main([*argv, "--bootstrap", bootstrap, "--timeout", "30"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_share_group_admin_and_cli_agree_with_kafkas_tool(kafka_broker, capsys):
    b = kafka_broker.bootstrap
    client = Client(b)
    admin = Admin(b, retry_timeout_ms=30_000)
    topic = f"adm-share-t-{os.getpid()}-{next(_names)}"
    client.create_topics({topic: 3})
    for p in range(3):
        client.produce(topic, [b"x"] * 10, partition=p)
    group = new_group(admin)
    tool = ("--bootstrap-server", b)
    try:
        # The group config set by new_group() reads back through ConfigResource.group().
        configs = admin.describe_configs([ConfigResource.group(group)], names=["share.auto.offset.reset"])
        assert configs[ConfigResource.group(group)]["share.auto.offset.reset"].value == "earliest"
        consumer = ShareConsumer(b, group_id=group, client_id="kw-share-admin")
        consumer.subscribe([topic])
        got = 0
        for _ in range(60):
            got += sum(len(c) for c in consumer.poll(1000).values())
            if got >= 30:
                break
        assert got == 30
        consumer.commit(timeout_ms=30_000)

        # A live member: described by kafkawire as Kafka's tool describes it.
        (described,) = admin.describe_share_groups([group]).values()
        assert described.state == "Stable" and len(described.members) == 1
        member = described.members[0]
        assert member.member_id == consumer.member_id and member.client_id == "kw-share-admin"
        assert member.assignment == {topic: [0, 1, 2]} and member.subscribed_topics == [topic]
        assert group in {g.group_id for g in admin.list_share_groups()}
        assert group in run_tool(SHARE_GROUP_COMMAND, *tool, "--list").split()
        (row,) = parse_table(run_tool(SHARE_GROUP_COMMAND, *tool, "--describe", "--group", group, "--members"))
        assert (row["CONSUMER-ID"], row["CLIENT-ID"], row["#PARTITIONS"], row["ASSIGNMENT"]) == (
            member.member_id,
            "kw-share-admin",
            "3",
            f"{topic}:0,1,2",
        )
        (state,) = parse_table(run_tool(SHARE_GROUP_COMMAND, *tool, "--describe", "--group", group, "--state"))
        assert (state["STATE"], state["#MEMBERS"]) == ("Stable", "1")
        (shown,) = json.loads(cli(capsys, b, "share-groups", "describe", group, "--json"))
        assert shown["state"] == "Stable" and shown["members"][0]["member_id"] == member.member_id
        assert shown["members"][0]["assignment"] == {topic: [0, 1, 2]}
        consumer.close()

        # Start offsets and lag, as the tool prints them.
        def tool_offsets() -> set:
            rows = parse_table(run_tool(SHARE_GROUP_COMMAND, *tool, "--describe", "--group", group))
            return {(r["TOPIC"], int(r["PARTITION"]), int(r["START-OFFSET"]), int(r["LAG"])) for r in rows}

        ours = {(t, p, o.start_offset, o.lag) for (t, p), o in admin.list_share_group_offsets(group).items()}
        assert ours == tool_offsets() and all(lag == 0 for *_, lag in ours)
        # Reset: a dry run changes nothing; --execute moves every partition back to the start.
        plan = parse_table(cli(capsys, b, "share-groups", "reset-offsets", group, "--topic", topic, "--to-earliest"))
        assert {(r["TOPIC"], r["PARTITION"], r["NEW-OFFSET"]) for r in plan} == {(topic, str(p), "0") for p in range(3)}
        assert all(o.lag == 0 for o in admin.list_share_group_offsets(group).values())
        cli(capsys, b, "share-groups", "reset-offsets", group, "--topic", topic, "--to-earliest", "--execute")
        ours = {(t, p, o.start_offset, o.lag) for (t, p), o in admin.list_share_group_offsets(group).items()}
        assert ours == tool_offsets() == {(topic, p, 0, 10) for p in range(3)}
        admin.alter_share_group_offsets(group, {(topic, 1): 4})
        assert admin.list_share_group_offsets(group, [topic])[(topic, 1)].start_offset == 4
        with pytest.raises(TypeError):
            admin.alter_share_group_offsets(group, {(topic, "1"): 4})  # type: ignore[dict-item]

        listed = json.loads(cli(capsys, b, "share-groups", "list", "--json"))
        assert {"group": group, "state": "Empty"} in listed
        cli(capsys, b, "share-groups", "delete", group, "--topic", topic)
        assert admin.list_share_group_offsets(group) == {}
        cli(capsys, b, "share-groups", "delete", group)
        assert group not in {g.group_id for g in admin.list_share_groups()}
        assert group not in run_tool(SHARE_GROUP_COMMAND, *tool, "--list").split()
        # Group configs through ConfigResource.group (IncrementalAlterConfigs on resource type 32).
        other = new_group(admin)
        admin.alter_configs(
            {ConfigResource.group(other): [AlterConfigOp("share.record.lock.duration.ms", "set", "20000")]}
        )
        got_cfg = admin.describe_configs([ConfigResource.group(other)], names=["share.record.lock.duration.ms"])
        assert got_cfg[ConfigResource.group(other)]["share.record.lock.duration.ms"].value == "20000"
    finally:
        admin.close()
        client.close()
