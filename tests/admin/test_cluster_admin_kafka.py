"""Partitions and leaders, log dirs, features, group offset deletion, client quotas and SCRAM credentials
(``kafkawire.admin``) against Apache Kafka 4.4, each side by side with Kafka's own tool on the same
cluster: kafka-topics, kafka-leader-election, kafka-reassign-partitions, kafka-log-dirs, kafka-features,
kafka-consumer-groups and kafka-configs."""

from __future__ import annotations

import json
import os
import re
import time

import pytest

from kafkawire.admin import Admin, AlterConfigOp
from kafkawire.client import Client
from kafkawire.client.consumer.consumer import Consumer
from kafkawire.client.errors import AuthenticationFailedError
from kafkawire.protocol.errors import (
    ElectionNotNeededError,
    GroupSubscribedToTopicError,
    NoReassignmentInProgressError,
    UnknownTopicOrPartitionError,
)
from kafkawire.testing import start_broker

from .kafka_tools import (
    CONFIG_COMMAND,
    FEATURE_COMMAND,
    GROUP_COMMAND,
    LEADER_ELECTION_COMMAND,
    LOG_DIRS_COMMAND,
    REASSIGN_COMMAND,
    TOPIC_COMMAND,
    parse_table,
    run_tool,
)

pytestmark = pytest.mark.broker


def unique(prefix: str) -> str:
    return f"adm-{prefix}-{os.getpid()}-{time.monotonic_ns()}"


@pytest.fixture(scope="module")
def admin(kafka_broker):
    with Admin(kafka_broker.bootstrap, retry_timeout_ms=30_000) as a:
        yield a


def eventually(check, timeout: float = 30.0):
    """``check()`` until it returns a true value: KRaft brokers apply metadata changes (quotas, SCRAM
    credentials) a moment after the controller accepts them."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(0.2)


def test_describe_topic_partitions_matches_kafka_topics(admin, kafka_broker):
    topic = unique("dtp")
    admin.create_topics({topic: 5})
    # A page size of 2 makes the broker hand back a cursor twice (KIP-966 paging).
    desc = admin.describe_topic_partitions([topic], page_size=2)[topic]
    out = run_tool(TOPIC_COMMAND, "--bootstrap-server", kafka_broker.bootstrap, "--describe", "--topic", topic)
    rows = [dict(re.findall(r"(\w+): ?([^\t]*)", ln)) for ln in out.splitlines() if "Partition: " in ln]
    ints = lambda s: tuple(int(x) for x in s.split(",") if x)  # noqa: E731
    assert [
        (int(r["Partition"]), int(r["Leader"]), ints(r["Replicas"]), ints(r["Isr"]), ints(r["Elr"]),
         ints(r["LastKnownElr"])) for r in rows
    ] == [
        (p.partition, p.leader, p.replicas, p.isr, p.eligible_leader_replicas, p.last_known_elr)
        for p in desc.partitions
    ]  # fmt: skip
    assert len(desc.partitions) == 5 and desc.topic_id == admin.describe_topics([topic])[topic].topic_id
    with pytest.raises(UnknownTopicOrPartitionError):
        admin.describe_topic_partitions([unique("missing")])


def test_leader_election_and_reassignments_match_the_tools(admin, kafka_broker):
    b = kafka_broker.bootstrap
    topic = unique("elect")
    admin.create_topics({topic: 2})
    # One broker: the preferred (and only) replica leads already, for kafkawire and for the tool alike.
    result = admin.elect_leaders([(topic, 0), (topic, 1)])
    assert {tp: type(e) for tp, e in result.items()} == {(topic, 0): ElectionNotNeededError,
                                                         (topic, 1): ElectionNotNeededError}  # fmt: skip
    out = run_tool(LEADER_ELECTION_COMMAND, "--bootstrap-server", b, "--election-type", "preferred",
                   "--topic", topic, "--partition", "0")  # fmt: skip
    assert f"Valid replica already elected for partitions {topic}-0" in out
    assert isinstance(admin.elect_leaders([(topic, 0)], election="unclean")[(topic, 0)], ElectionNotNeededError)
    with pytest.raises(ValueError, match="preferred"):
        admin.elect_leaders([(topic, 0)], election="clean")

    # Reassigning to the current replicas completes at once; cancelling what is not running is an error.
    outcome = admin.alter_partition_reassignments({(topic, 0): [1], (topic, 1): None})
    assert outcome[(topic, 0)] is None and isinstance(outcome[(topic, 1)], NoReassignmentInProgressError)
    assert admin.list_partition_reassignments() == {}
    assert "No partition reassignments found." in run_tool(REASSIGN_COMMAND, "--bootstrap-server", b, "--list")
    assert admin.describe_topics([topic])[topic].partitions[0].replicas == (1,)


def test_log_dirs_match_kafka_log_dirs(admin, kafka_broker):
    topic = unique("logdirs")
    admin.create_topics({topic: 2})
    admin.client.produce(topic, [b"x" * 100] * 10, partition=0)
    # Partition 1 gets a record too: its log is made when the broker applies the new topic's metadata, and
    # described before that (CI, once), it was missing from our answer and present in the tool's later.
    admin.client.produce(topic, [b"y" * 10], partition=1)
    dirs = admin.describe_log_dirs()
    out = run_tool(LOG_DIRS_COMMAND, "--bootstrap-server", kafka_broker.bootstrap, "--describe", "--topic-list", topic)
    tool = json.loads(next(ln for ln in out.splitlines() if ln.startswith("{")))
    for broker in tool["brokers"]:
        mine = dirs[broker["broker"]]
        assert sorted(mine) == sorted(d["logDir"] for d in broker["logDirs"])
        for d in broker["logDirs"]:
            assert d["error"] is None and mine[d["logDir"]].error is None
            ours = {f"{t}-{p}": r for (t, p), r in mine[d["logDir"]].replicas.items() if t == topic}
            assert {p["partition"]: (p["size"], p["offsetLag"], p["isFuture"]) for p in d["partitions"]} == {
                name: (r.size, r.offset_lag, r.is_future) for name, r in ours.items()
            }
            assert mine[d["logDir"]].total_bytes >= mine[d["logDir"]].usable_bytes > 0
    assert {tp for d in dirs[1].values() for tp in d.replicas if tp[0] == topic} == {(topic, 0), (topic, 1)}


def tool_features(bootstrap: str) -> dict[str, dict[str, str]]:
    out = run_tool(FEATURE_COMMAND, "--bootstrap-server", bootstrap, "describe")
    return {f["Feature"]: f for f in (dict(re.findall(r"(\w+): (\S+)", ln)) for ln in out.splitlines()) if f}


def test_features_describe_and_update_match_kafka_features():
    broker = start_broker("kafka")  # its own: a feature downgrade must not reach the other tests' broker
    try:
        with Admin(broker.bootstrap, retry_timeout_ms=30_000) as admin:
            mine, tool = admin.describe_features(), tool_features(broker.bootstrap)
            assert set(mine.supported) == set(tool) and mine.epoch >= 0
            for name, f in tool.items():
                if name == "metadata.version":  # the tool prints release names (4.4-IV2) for its levels
                    assert name in mine.finalized
                    continue
                assert mine.supported[name] == (int(f["SupportedMinVersion"]), int(f["SupportedMaxVersion"]))
                assert mine.finalized.get(name, 0) == int(f["FinalizedVersionLevel"])
            level = mine.finalized["transaction.version"]
            assert level >= 1
            admin.update_features({"transaction.version": level - 1}, upgrade_type="safe_downgrade", validate_only=True)
            assert admin.describe_features().finalized["transaction.version"] == level  # validate only
            admin.update_features({"transaction.version": level - 1}, upgrade_type="safe_downgrade")
            assert eventually(lambda: tool_features(broker.bootstrap)["transaction.version"]["FinalizedVersionLevel"]
                              == str(level - 1))  # fmt: skip
            run_tool(FEATURE_COMMAND, "--bootstrap-server", broker.bootstrap, "upgrade", "--feature",
                     f"transaction.version={level}")  # fmt: skip
            assert eventually(lambda: admin.describe_features().finalized["transaction.version"] == level)
            with pytest.raises(ValueError, match="upgrade_type"):
                admin.update_features({"transaction.version": level}, upgrade_type="sideways")
    finally:
        broker.stop()


def test_delete_group_offsets_matches_kafka_consumer_groups(admin, kafka_broker):
    b = kafka_broker.bootstrap
    topic, group = unique("offdel"), unique("offdel-g")
    admin.create_topics({topic: 2})
    admin.alter_consumer_group_offsets(group, {(topic, 0): 3, (topic, 1): 5})
    admin.delete_consumer_group_offsets(group, [(topic, 0)])
    assert sorted(admin.list_consumer_group_offsets(group)) == [(topic, 1)]
    rows = parse_table(run_tool(GROUP_COMMAND, "--bootstrap-server", b, "--describe", "--group", group))
    assert [(r["PARTITION"], r["CURRENT-OFFSET"]) for r in rows] == [("1", "5")]
    # The tool deletes the other one; kafkawire sees none left.
    run_tool(GROUP_COMMAND, "--bootstrap-server", b, "--delete-offsets", "--group", group, "--topic", f"{topic}:1")
    assert admin.list_consumer_group_offsets(group) == {}
    # A topic an active member consumes cannot lose its offsets.
    with Consumer(b, group_id=group, auto_offset_reset="earliest") as consumer:
        consumer.subscribe([topic])
        assert eventually(lambda: consumer.poll(timeout_ms=500) is not None and consumer.assignment())
        with pytest.raises(GroupSubscribedToTopicError):
            admin.delete_consumer_group_offsets(group, [(topic, 0)])


def test_client_quotas_match_kafka_configs(admin, kafka_broker):
    b = kafka_broker.bootstrap
    client_id, user = unique("quota-c"), unique("quota-u")
    admin.alter_client_quotas([({"client-id": client_id}, {"producer_byte_rate": 1024, "consumer_byte_rate": 2048}),
                               ({"user": user, "client-id": client_id}, {"request_percentage": 12.5})])  # fmt: skip
    key = (("client-id", client_id),)
    got = eventually(lambda: admin.describe_client_quotas({"client-id": client_id}, strict=True).get(key))
    assert got == {"producer_byte_rate": 1024.0, "consumer_byte_rate": 2048.0}
    out = run_tool(CONFIG_COMMAND, "--bootstrap-server", b, "--describe", "--entity-type", "clients",
                   "--entity-name", client_id)  # fmt: skip
    shown = dict(kv.strip().split("=") for kv in out.strip().split(" are ", 1)[1].split(","))
    assert {k: float(v) for k, v in shown.items()} == got
    both = admin.describe_client_quotas({"client-id": client_id})  # not strict: the user+client entity too
    assert both[(("client-id", client_id), ("user", user))] == {"request_percentage": 12.5}
    # The tool removes one; kafkawire removes the other and sees nothing left.
    run_tool(CONFIG_COMMAND, "--bootstrap-server", b, "--alter", "--entity-type", "clients", "--entity-name",
             client_id, "--delete-config", "consumer_byte_rate")  # fmt: skip
    assert eventually(lambda: admin.describe_client_quotas({"client-id": client_id}, strict=True).get(key)
                      == {"producer_byte_rate": 1024.0})  # fmt: skip
    admin.alter_client_quotas([({"client-id": client_id}, {"producer_byte_rate": None}),
                               ({"user": user, "client-id": client_id}, {"request_percentage": None})])  # fmt: skip
    assert eventually(lambda: admin.describe_client_quotas({"client-id": client_id}) == {})
    with pytest.raises(ValueError, match="entity type"):
        admin.alter_client_quotas([({"group": "g"}, {"producer_byte_rate": 1})])


def test_scram_users_match_kafka_configs_and_log_in():
    broker = start_broker("kafka", sasl_mechanisms=["SCRAM-SHA-256", "SCRAM-SHA-512"])
    try:
        with Admin(broker.bootstrap, retry_timeout_ms=30_000) as admin:  # PLAINTEXT: no authorizer here
            # One alteration per user and request (Kafka answers DUPLICATE_RESOURCE otherwise, to Java too).
            admin.alter_user_scram_credentials(upsert=[("carol", "SCRAM-SHA-256", "carol-pw", 8192)])
            admin.alter_user_scram_credentials(upsert=[("carol", "SCRAM-SHA-512", "carol-pw", 4096)])
            got = eventually(lambda: admin.describe_user_scram_credentials(["carol"]).get("carol", {}).keys() == {
                "SCRAM-SHA-256", "SCRAM-SHA-512"} and admin.describe_user_scram_credentials(["carol"]))  # fmt: skip
            assert got == {"carol": {"SCRAM-SHA-256": 8192, "SCRAM-SHA-512": 4096}}
            out = run_tool(CONFIG_COMMAND, "--bootstrap-server", broker.bootstrap, "--describe", "--entity-type",
                           "users", "--entity-name", "carol")  # fmt: skip
            assert sorted(x.strip() for x in out.strip().split(" are ", 1)[1].split(",")) == [
                "SCRAM-SHA-256=iterations=8192", "SCRAM-SHA-512=iterations=4096"]  # fmt: skip

            def login(mechanism: str, password: str) -> None:
                with Client(broker.bootstrap_for("SASL_PLAINTEXT"), security_protocol="SASL_PLAINTEXT",
                            sasl_mechanism=mechanism, sasl_username="carol", sasl_password=password) as c:  # fmt: skip
                    c.metadata()

            # The salted password kafkawire computed is one the broker accepts, for both mechanisms.
            login("SCRAM-SHA-256", "carol-pw")
            login("SCRAM-SHA-512", "carol-pw")
            with pytest.raises(AuthenticationFailedError):
                login("SCRAM-SHA-256", "not-carols")
            # The tool deletes one mechanism; kafkawire deletes the other; then carol cannot log in.
            run_tool(CONFIG_COMMAND, "--bootstrap-server", broker.bootstrap, "--alter", "--entity-type", "users",
                     "--entity-name", "carol", "--delete-config", "SCRAM-SHA-512")  # fmt: skip
            admin.alter_user_scram_credentials(delete=[("carol", "SCRAM-SHA-256")])
            assert eventually(lambda: "carol" not in admin.describe_user_scram_credentials())
            with pytest.raises(AuthenticationFailedError):
                login("SCRAM-SHA-256", "carol-pw")
    finally:
        broker.stop()


def test_wrong_argument_types(admin):
    with pytest.raises(TypeError):
        admin.describe_log_dirs(["1"])
    with pytest.raises(TypeError):
        admin.alter_user_scram_credentials(upsert=[("u", "SCRAM-SHA-256", b"pw", 4096)])
    with pytest.raises(ValueError, match="mechanism"):
        admin.alter_user_scram_credentials(upsert=[("u", "SCRAM-MD5", "pw", 4096)])
    with pytest.raises(TypeError):
        admin.elect_leaders(["t-0"])
    with pytest.raises(TypeError):
        admin.update_features({"transaction.version": "2"})
    assert AlterConfigOp  # the config ops stay importable beside the new calls
