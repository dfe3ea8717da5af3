"""kafkawire.admin against Apache Kafka: every call's result compared with what Kafka's own tools report
for the same cluster (kafka-cluster, kafka-topics, kafka-configs, kafka-get-offsets, kafka-consumer-groups).
"""

from __future__ import annotations

import itertools
import os
import time

import pytest

from kafkawire.admin import Admin, AlterConfigOp, ConfigResource, GroupNotInactiveError
from kafkawire.client.consumer.consumer import Consumer
from kafkawire.protocol.errors import GroupIdNotFoundError, InvalidPartitionsError, UnknownTopicOrPartitionError

from .kafka_tools import (
    CLUSTER_TOOL,
    CONFIG_COMMAND,
    GET_OFFSET_SHELL,
    GROUP_COMMAND,
    TOPIC_COMMAND,
    parse_config_describe,
    parse_table,
    parse_topic_describe,
    run_tool,
)

_counter = itertools.count()


def unique(prefix: str) -> str:
    """A topic or group name no other test or concurrent run uses (the session broker is shared)."""
    return f"adm-{prefix}-{os.getpid()}-{next(_counter)}"


@pytest.fixture(scope="module")
def admin(kafka_broker):  # type: ignore[no-untyped-def]
    with Admin(kafka_broker.bootstrap, retry_timeout_ms=30_000) as a:
        yield a


@pytest.mark.broker
def test_describe_cluster_matches_kafka_cluster_tool(admin: Admin, kafka_broker) -> None:  # type: ignore[no-untyped-def]
    desc = admin.describe_cluster()
    cluster_id = run_tool(CLUSTER_TOOL, "cluster-id", "--bootstrap-server", kafka_broker.bootstrap)
    assert cluster_id.strip() == f"Cluster ID: {desc.cluster_id}"
    endpoints = parse_table(run_tool(CLUSTER_TOOL, "list-endpoints", "--bootstrap-server", kafka_broker.bootstrap))
    assert [
        (int(e["ID"]), e["HOST"], int(e["PORT"]), None if e["RACK"] == "null" else e["RACK"], e["STATE"] == "fenced")
        for e in endpoints
    ] == [(b.node_id, b.host, b.port, b.rack, b.fenced) for b in desc.brokers]
    assert desc.controller_id in [b.node_id for b in desc.brokers] or desc.controller_id == -1
    # Client.admin(): the same calls on an existing client's connections.
    assert admin.client.admin().describe_cluster() == desc


@pytest.mark.broker
def test_describe_topics_and_configs_match_kafka_topics(admin: Admin, kafka_broker) -> None:  # type: ignore[no-untyped-def]
    prefix = unique("desc")
    a, b = f"{prefix}-a", f"{prefix}-b"
    admin.create_topics({a: 3, b: 2}, configs={"retention.ms": "7200000"})
    ours = admin.describe_topics([a, b])
    configs = admin.describe_configs([a, b])
    theirs = parse_topic_describe(
        run_tool(TOPIC_COMMAND, "--bootstrap-server", kafka_broker.bootstrap, "--describe", "--topic", f"{prefix}-.*")
    )
    assert sorted(theirs) == sorted(ours) == [a, b]
    for name, t in ours.items():
        ref = theirs[name]
        assert t.topic_id == ref["topic_id"]
        assert t.num_partitions == ref["partition_count"]
        assert t.replication_factor == ref["replication_factor"]
        assert {
            p.partition: {"leader": p.leader, "replicas": p.replicas, "isr": p.isr} for p in t.partitions
        } == ref["partitions"]
        # kafka-topics prints the configs that do not come from the defaults.
        entries = configs[ConfigResource.topic(name)]
        assert {n: e.value for n, e in entries.items() if not e.is_default} == ref["configs"]
        assert ref["configs"]["retention.ms"] == "7200000"
    # describe_topics() without names lists every non-internal topic, as kafka-topics --exclude-internal.
    everything = admin.describe_topics()
    assert {a, b} <= set(everything) and not any(t.is_internal for t in everything.values())
    with pytest.raises(UnknownTopicOrPartitionError):
        admin.describe_topics([f"{prefix}-missing"], timeout_ms=5_000)


@pytest.mark.broker
def test_alter_configs_then_describe_matches_kafka_configs(admin: Admin, kafka_broker) -> None:  # type: ignore[no-untyped-def]
    topic = unique("cfg")
    admin.create_topics([topic], configs={"segment.ms": "3600000", "retention.bytes": "1000000"})
    admin.alter_configs(
        {
            topic: [
                AlterConfigOp("retention.ms", "set", "3600000"),
                AlterConfigOp("cleanup.policy", "append", "compact"),  # delete -> delete,compact
                AlterConfigOp("segment.ms", "delete"),  # back to the default
                AlterConfigOp("retention.bytes", "set", "2000000"),
            ]
        }
    )
    admin.alter_configs({topic: [AlterConfigOp("cleanup.policy", "subtract", "delete")]})
    # validate_only changes nothing.
    admin.alter_configs({topic: [AlterConfigOp("retention.ms", "set", "1")]}, validate_only=True)
    ours = admin.describe_configs([topic], synonyms=True)[ConfigResource.topic(topic)]
    theirs = parse_config_describe(
        run_tool(
            CONFIG_COMMAND, "--bootstrap-server", kafka_broker.bootstrap,
            "--describe", "--entity-type", "topics", "--entity-name", topic, "--all",
        )
    )
    assert theirs, "kafka-configs printed no configs"
    assert sorted(ours) == sorted(theirs)
    for name, ref in theirs.items():
        entry = ours[name]
        assert (entry.value or "") == ref["value"], name
        assert entry.is_sensitive == ref["sensitive"], name
        assert [(s.source, s.name, s.value or "") for s in entry.synonyms] == ref["synonyms"], name
    assert ours["cleanup.policy"].value == "compact" and ours["cleanup.policy"].source == "DYNAMIC_TOPIC_CONFIG"
    assert ours["retention.ms"].value == "3600000"
    assert ours["retention.bytes"].value == "2000000"
    assert ours["segment.ms"].is_default
    # A broker's own configs come from that broker.
    broker_cfg = admin.describe_configs([ConfigResource.broker(1)], names=["num.partitions", "log.dirs"])
    assert broker_cfg[ConfigResource.broker(1)]["num.partitions"].value == kafka_broker.server_properties()[
        "num.partitions"
    ]


@pytest.mark.broker
def test_create_partitions_and_delete_records_match_kafka_get_offsets(admin: Admin, kafka_broker) -> None:  # type: ignore[no-untyped-def]
    topic = unique("grow")
    admin.create_topics({topic: 2})
    admin.client.produce(topic, [b"v"] * 40, partition=0)
    admin.client.produce(topic, [b"v"] * 25, partition=1)
    admin.create_partitions({topic: 4})
    with pytest.raises(InvalidPartitionsError):
        admin.create_partitions({topic: 3}, timeout_ms=10_000)  # fewer than now
    low = admin.delete_records({(topic, 0): 15, (topic, 1): -1})  # -1: up to the high watermark
    assert low == {(topic, 0): 15, (topic, 1): 25}
    earliest = {}
    for line in run_tool(
        GET_OFFSET_SHELL, "--bootstrap-server", kafka_broker.bootstrap, "--topic", topic, "--time", "-2"
    ).split():
        name, part, off = line.rsplit(":", 2)
        earliest[(name, int(part))] = int(off)
    assert earliest == {(topic, 0): 15, (topic, 1): 25, (topic, 2): 0, (topic, 3): 0}
    assert admin.describe_topics([topic])[topic].num_partitions == 4


def _join(bootstrap: str, group: str, topics: list[str]) -> Consumer:
    """A classic-protocol member of ``group`` with its assignment (session long enough for the tools)."""
    c = Consumer(bootstrap, group_id=group, session_timeout_ms=45_000, enable_auto_commit=False)
    c.subscribe(topics)
    deadline = time.monotonic() + 30
    while not c.assignment() and time.monotonic() < deadline:
        c.poll(200)
    assert c.assignment(), "the consumer got no assignment"
    return c


@pytest.mark.broker
def test_groups_match_kafka_consumer_groups(admin: Admin, kafka_broker) -> None:  # type: ignore[no-untyped-def]
    prefix = unique("grp")
    t1, t2 = f"{prefix}-t1", f"{prefix}-t2"
    admin.create_topics({t1: 3, t2: 2})
    admin.client.produce(t1, [b"v"] * 30, partition=0)
    admin.client.produce(t1, [b"v"] * 12, partition=2)
    idle, active, doomed = f"{prefix}-idle", f"{prefix}-active", f"{prefix}-doomed"
    admin.alter_consumer_group_offsets(idle, {(t1, 0): 10, (t1, 2): 12, (t2, 1): 0})
    admin.alter_consumer_group_offsets(doomed, {(t1, 0): 1})
    admin.delete_groups([doomed])
    with pytest.raises(GroupIdNotFoundError):
        admin.delete_groups([doomed], timeout_ms=5_000)
    admin.delete_groups([doomed], missing_ok=True)
    member = _join(kafka_broker.bootstrap, active, [t1, t2])
    try:
        listed = {g.group_id: g for g in admin.list_groups() if g.group_id.startswith(prefix)}
        described = admin.describe_groups([idle, active])
        offsets = admin.list_consumer_group_offsets(idle)
        boot = ("--bootstrap-server", kafka_broker.bootstrap)
        tool_list = parse_table(run_tool(GROUP_COMMAND, *boot, "--list", "--state"))
        tool_state = parse_table(
            run_tool(GROUP_COMMAND, *boot, "--describe", "--group", idle, "--group", active, "--state")
        )
        tool_offsets = parse_table(run_tool(GROUP_COMMAND, *boot, "--describe", "--group", idle, "--offsets"))
        tool_members = parse_table(
            run_tool(GROUP_COMMAND, *boot, "--describe", "--group", active, "--members", "--verbose")
        )
        with pytest.raises(GroupNotInactiveError):
            admin.reset_consumer_group_offsets(active, [t1], to="earliest")
    finally:
        member.close()

    # --list --state: the same groups in the same states (the deleted one gone).
    assert {r["GROUP"]: r["STATE"] for r in tool_list if r["GROUP"].startswith(prefix)} == {
        g: listed[g].state for g in listed
    } == {idle: "Empty", active: "Stable"}
    # --describe --state: coordinator, assignor, state, member count.
    for row in tool_state:
        d = described[row["GROUP"]]
        assert row["STATE"] == d.state
        assert row["#MEMBERS"] == str(len(d.members))
        assert row["ASSIGNMENT-STRATEGY"] == (d.protocol or "-")
        assert row["COORDINATOR (ID)"].endswith(f"({d.coordinator})")
    assert {r["GROUP"] for r in tool_state} == {idle, active}
    # --describe --offsets: committed, log end and lag per partition.
    assert {
        (r["TOPIC"], int(r["PARTITION"])): (int(r["CURRENT-OFFSET"]), int(r["LOG-END-OFFSET"]), int(r["LAG"]))
        for r in tool_offsets
    } == {tp: (o.committed, o.end_offset, o.lag) for tp, o in offsets.items()}
    assert offsets[(t1, 0)].lag == 20
    # --members --verbose: member id, host, client id and the assignment decoded from its bytes.
    (m,) = described[active].members
    (row,) = tool_members
    assert (row["CONSUMER-ID"], row["HOST"], row["CLIENT-ID"]) == (m.member_id, m.client_host, m.client_id)
    assert row["#PARTITIONS"] == str(sum(len(ps) for ps in m.assignment.values()))
    assert row["CURRENT-ASSIGNMENT"] == ";".join(
        f"{t}:{','.join(map(str, sorted(ps)))}" for t, ps in sorted(m.assignment.items())
    )
    assert m.assignment == {t1: [0, 1, 2], t2: [0, 1]}


@pytest.mark.broker
def test_reset_offsets_match_kafka_consumer_groups_plans(admin: Admin, kafka_broker) -> None:  # type: ignore[no-untyped-def]
    prefix = unique("reset")
    topic, group = f"{prefix}-t", f"{prefix}-g"
    admin.create_topics({topic: 3})
    now = int(time.time() * 1000)
    # Partition 0 has old and new records around ``now``; partition 1 only old ones; partition 2 none.
    admin.client.produce(topic, [b"old"] * 5, partition=0, timestamps=[now - 60_000] * 5)
    admin.client.produce(topic, [b"new"] * 5, partition=0, timestamps=[now + 60_000] * 5)
    admin.client.produce(topic, [b"old"] * 7, partition=1, timestamps=[now - 60_000] * 7)
    admin.delete_records({(topic, 1): 2})
    admin.alter_consumer_group_offsets(group, {(topic, 0): 6, (topic, 1): 4, (topic, 2): 0})
    boot = ("--bootstrap-server", kafka_broker.bootstrap)
    when = time.strftime("%Y-%m-%dT%H:%M:%S.000", time.gmtime(now / 1000))

    def tool_plan(*spec: str) -> dict[tuple[str, int], int]:
        out = run_tool(GROUP_COMMAND, *boot, "--reset-offsets", "--group", group, "--topic", topic, *spec, "--dry-run")
        return {(r["TOPIC"], int(r["PARTITION"])): int(r["NEW-OFFSET"]) for r in parse_table(out)}

    # Kafka's tool reads --to-datetime without a zone as local time: give it UTC explicitly.
    plans = {
        "datetime": (tool_plan("--to-datetime", when + "Z"), {"to_timestamp": now}),
        "shift": (tool_plan("--shift-by", "-3"), {"shift_by": -3}),
        "offset": (tool_plan("--to-offset", "9"), {"to": 9}),  # past the end of partitions 1 and 2: clamped
    }
    committed_before = admin.list_consumer_group_offsets(group)
    for name, (theirs, spec) in plans.items():
        ours = admin.reset_consumer_group_offsets(group, [topic], dry_run=True, **spec)
        assert ours == theirs, name
    assert admin.list_consumer_group_offsets(group) == committed_before  # dry runs commit nothing
    assert plans["datetime"][0] == {(topic, 0): 5, (topic, 1): 7, (topic, 2): 0}
    # Executed: what the group then has committed is the plan.
    done = admin.reset_consumer_group_offsets(group, None, to="earliest")
    assert done == {(topic, 0): 0, (topic, 1): 2, (topic, 2): 0}
    assert {tp: o.committed for tp, o in admin.list_consumer_group_offsets(group).items()} == done


@pytest.mark.broker
def test_offsets_of_a_deleted_topic(admin: Admin) -> None:
    prefix = unique("gone")
    kept, gone, group = f"{prefix}-kept", f"{prefix}-gone", f"{prefix}-g"
    admin.create_topics({kept: 1, gone: 1})
    admin.client.produce(kept, [b"v"] * 4, partition=0)
    admin.alter_consumer_group_offsets(group, {(kept, 0): 1, (gone, 0): 0})
    admin.delete_topics([gone])
    # The committed offset outlives the topic: reported with no log end and no lag, not retried until the deadline.
    offsets = admin.list_consumer_group_offsets(group, timeout_ms=10_000)
    assert offsets[(kept, 0)].end_offset == 4 and offsets[(kept, 0)].lag == 3
    assert offsets[(gone, 0)].end_offset == -1 and offsets[(gone, 0)].lag is None
    with pytest.raises(UnknownTopicOrPartitionError):
        admin.reset_consumer_group_offsets(group, [gone], to="earliest", timeout_ms=10_000)
    assert admin.reset_consumer_group_offsets(group, None, to="latest", timeout_ms=10_000) == {(kept, 0): 4}


@pytest.mark.broker
def test_kip848_consumer_group_matches_kafka_consumer_groups(admin: Admin, kafka_broker) -> None:  # type: ignore[no-untyped-def]
    """A group of the new consumer protocol (KIP-848; Kafka's console consumer with group.protocol=consumer):
    DescribeGroups does not know it, ConsumerGroupDescribe does."""
    import subprocess

    from kafkawire.testing.kafka import java_binary, kafka_classpath

    prefix = unique("kip848")
    topic, group = f"{prefix}-t", f"{prefix}-g"
    admin.create_topics({topic: 3})
    consumer = subprocess.Popen(
        [
            java_binary(), "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", kafka_classpath(),
            "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", kafka_broker.bootstrap,
            "--topic", topic, "--group", group,
            "--consumer-property", "group.protocol=consumer", "--consumer-property", f"client.id={prefix}-client",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        listed = None
        while time.monotonic() < deadline:
            listed = next((g for g in admin.list_groups() if g.group_id == group), None)
            if listed is not None and listed.state == "Stable":
                break
            time.sleep(0.2)  # polling a state the broker reaches on its own schedule, bounded by the deadline
        assert listed is not None and listed.state == "Stable" and listed.type == "consumer", listed
        described = admin.describe_groups([group])[group]
        rows = parse_table(
            run_tool(GROUP_COMMAND, "--bootstrap-server", kafka_broker.bootstrap,
                     "--describe", "--group", group, "--members", "--verbose")
        )
        with pytest.raises(GroupNotInactiveError):
            admin.reset_consumer_group_offsets(group, [topic], to="earliest")
    finally:
        consumer.terminate()
        consumer.wait(30)
    assert (described.type, described.state, described.protocol_type) == ("consumer", "Stable", "consumer")
    (m,) = described.members
    (row,) = rows
    assert (row["CONSUMER-ID"], row["HOST"], row["CLIENT-ID"]) == (m.member_id, m.client_host, m.client_id)
    assert m.client_id == f"{prefix}-client"
    assert row["CURRENT-ASSIGNMENT"] == ";".join(
        f"{t}:{','.join(map(str, ps))}" for t, ps in sorted(m.assignment.items())
    )
    assert m.assignment == {topic: [0, 1, 2]}
