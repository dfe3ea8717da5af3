"""``kafkawire groups ...`` and the admin actions of ``kafkawire topics ...`` against Apache Kafka: what the
commands change is what Kafka's own tools (or kafkawire.admin, itself checked against them) then report."""

from __future__ import annotations

import json
import os
import time

import pytest

from kafkawire.admin import Admin, ConfigResource
from kafkawire.cli.main import main

from .kafka_tools import GROUP_COMMAND, parse_table, run_tool


@pytest.fixture(scope="module")
def admin(kafka_broker):  # type: ignore[no-untyped-def]
    with Admin(kafka_broker.bootstrap, retry_timeout_ms=30_000) as a:
        yield a


def cli(capsys: pytest.CaptureFixture[str], bootstrap: str, *argv: str) -> str:
    """Run ``kafkawire argv --bootstrap ...``; its stdout (fails on a non-zero exit with stderr)."""
    code = main([*argv, "--bootstrap", bootstrap, "--timeout", "20"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


@pytest.mark.broker
def test_topic_admin_commands(admin: Admin, kafka_broker, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    topic = f"adm-cli-topic-{os.getpid()}-{time.monotonic_ns()}"
    b = kafka_broker.bootstrap
    admin.create_topics({topic: 2})
    admin.client.produce(topic, [b"v"] * 20, partition=0)
    cli(capsys, b, "topics", "alter-config", topic, "--set", "retention.ms=3600000",
        "--append", "cleanup.policy=compact")
    shown = {c["name"]: c for c in json.loads(cli(capsys, b, "topics", "configs", topic, "--json"))}
    entries = admin.describe_configs([topic])[ConfigResource.topic(topic)]
    assert {n: c["value"] for n, c in shown.items()} == {n: e.value for n, e in entries.items() if not e.is_default}
    assert shown["cleanup.policy"]["value"] == "delete,compact"
    assert shown["retention.ms"]["source"] == "DYNAMIC_TOPIC_CONFIG"
    cli(capsys, b, "topics", "alter-config", topic, "--delete", "retention.ms")
    # Kafka applies a config change through its metadata log: DescribeConfigs right after the
    # IncrementalAlterConfigs answer may still show the old value (seen once in a CI run), so look again.
    wait_until = time.monotonic() + 30
    while True:
        after = admin.describe_configs([topic], names=["retention.ms"])[ConfigResource.topic(topic)]
        if after["retention.ms"].is_default or time.monotonic() > wait_until:
            break
        time.sleep(0.1)
    assert after["retention.ms"].is_default

    cli(capsys, b, "topics", "add-partitions", topic, "--partitions", "3")
    assert admin.describe_topics([topic])[topic].num_partitions == 3
    out = cli(capsys, b, "topics", "delete-records", topic, "--partition", "0", "--before", "12")
    assert parse_table(out) == [{"TOPIC": topic, "PARTITION": "0", "LOW-WATERMARK": "12"}]
    assert admin.client.list_offsets(topic, [0], timestamp="earliest")[0].offset == 12

    # Errors are one line, exit status 1.
    assert main(["topics", "add-partitions", topic, "--partitions", "2", "--bootstrap", b, "--timeout", "5"]) == 1
    assert "InvalidPartitionsError" in capsys.readouterr().err


@pytest.mark.broker
def test_group_commands_agree_with_kafka_consumer_groups(admin: Admin, kafka_broker, capsys) -> None:  # type: ignore[no-untyped-def]
    stem = f"adm-cli-grp-{os.getpid()}-{time.monotonic_ns()}"
    topic, group, other = f"{stem}-t", f"{stem}-g", f"{stem}-other"
    b = kafka_broker.bootstrap
    admin.create_topics({topic: 2})
    admin.client.produce(topic, [b"v"] * 10, partition=0)
    admin.client.produce(topic, [b"v"] * 4, partition=1)
    admin.alter_consumer_group_offsets(group, {(topic, 0): 7, (topic, 1): 1})
    admin.alter_consumer_group_offsets(other, {(topic, 0): 0})

    listed = {g["group"]: g for g in json.loads(cli(capsys, b, "groups", "list", "--type", "classic", "--json"))}
    assert listed[group]["state"] == "Empty" and listed[other]["state"] == "Empty"
    (described,) = json.loads(cli(capsys, b, "groups", "describe", group, "--json"))
    assert (described["type"], described["state"], described["members"]) == ("classic", "Empty", [])
    assert [(p["topic"], p["partition"], p["committed"], p["end_offset"], p["lag"]) for p in described["offsets"]] == [
        (topic, 0, 7, 10, 3),
        (topic, 1, 1, 4, 3),
    ]
    # A dry run commits nothing; --execute does.
    plan = parse_table(cli(capsys, b, "groups", "reset-offsets", group, "--topic", f"{topic}:0", "--shift-by", "-5"))
    assert plan == [{"GROUP": group, "TOPIC": topic, "PARTITION": "0", "NEW-OFFSET": "2"}]
    assert admin.list_consumer_group_offsets(group)[(topic, 0)].committed == 7
    cli(capsys, b, "groups", "reset-offsets", group, "--all-topics", "--to-latest", "--execute")
    cli(capsys, b, "groups", "delete", other)

    boot = ("--bootstrap-server", b)
    rows = parse_table(run_tool(GROUP_COMMAND, *boot, "--describe", "--group", group, "--offsets"))
    assert {(r["TOPIC"], r["PARTITION"], r["CURRENT-OFFSET"], r["LAG"]) for r in rows} == {
        (topic, "0", "10", "0"),
        (topic, "1", "4", "0"),
    }
    assert other not in {g.group_id for g in admin.list_groups()}
