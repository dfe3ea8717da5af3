"""``kafkawire cluster|quotas|users`` and ``kafkawire groups delete-offsets`` against Apache Kafka 4.4: what
the commands print and change is what Kafka's own tools (or kafkawire.admin, itself checked against them in
test_cluster_admin_kafka.py) report for the same cluster."""

from __future__ import annotations

import io
import json
import os
import re
import time

import pytest

from kafkawire.admin import Admin
from kafkawire.cli.main import main

from .kafka_tools import CONFIG_COMMAND, GROUP_COMMAND, LOG_DIRS_COMMAND, TOPIC_COMMAND, run_tool

pytestmark = pytest.mark.broker


@pytest.fixture(scope="module")
def admin(kafka_broker):
    with Admin(kafka_broker.bootstrap, retry_timeout_ms=30_000) as a:
        yield a


@pytest.fixture
def cli(kafka_broker, capsys):
    def run(*argv: str, ok: bool = True) -> str:
        code = main([*argv, "--bootstrap", kafka_broker.bootstrap, "--timeout", "20"])
        out, err = capsys.readouterr()
        assert (code == 0) == ok, err
        return out if ok else err

    return run


def unique(prefix: str) -> str:
    return f"adm-cli-{prefix}-{os.getpid()}-{time.monotonic_ns()}"


def eventually(check, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while not (result := check()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return result


def test_cluster_partitions_elections_reassignments(cli, admin, kafka_broker):
    topic = unique("parts")
    admin.create_topics({topic: 3})
    rows = json.loads(cli("cluster", "partitions", topic, "--json"))
    out = run_tool(TOPIC_COMMAND, "--bootstrap-server", kafka_broker.bootstrap, "--describe", "--topic", topic)
    tool = [dict(re.findall(r"(\w+): ?([^\t]*)", ln)) for ln in out.splitlines() if "Partition: " in ln]
    assert [(r["partition"], r["leader"], r["replicas"], r["isr"]) for r in rows] == [
        (int(t["Partition"]), int(t["Leader"]), t["Replicas"], t["Isr"]) for t in tool
    ]
    out = cli("cluster", "elect-leaders", "--partition", f"{topic}:0", "--partition", f"{topic}:2")
    assert out.strip() == f"valid replica already elected for {topic}-0, {topic}-2"
    assert json.loads(cli("cluster", "reassignments", "--json")) == []
    assert f"reassigning {topic}-1 to [1]" in cli("cluster", "reassign", f"{topic}:1", "--replicas", "1")
    err = cli("cluster", "reassign", f"{topic}:1", "--cancel", ok=False)
    assert "NoReassignmentInProgressError" in err or "NO_REASSIGNMENT_IN_PROGRESS" in err


def test_cluster_log_dirs_and_features(cli, admin, kafka_broker):
    topic = unique("dirs")
    admin.create_topics({topic: 1})
    admin.client.produce(topic, [b"y" * 50] * 4, partition=0)
    rows = json.loads(cli("cluster", "log-dirs", "--topic", topic, "--json"))
    out = run_tool(LOG_DIRS_COMMAND, "--bootstrap-server", kafka_broker.bootstrap, "--describe", "--topic-list", topic)
    tool = json.loads(next(ln for ln in out.splitlines() if ln.startswith("{")))
    assert [(r["broker"], r["log_dir"], f"{r['topic']}-{r['partition']}", r["size"]) for r in rows] == [
        (b["broker"], d["logDir"], p["partition"], p["size"])
        for b in tool["brokers"]
        for d in b["logDirs"]
        for p in d["partitions"]
    ]
    feats = {r["feature"]: r for r in json.loads(cli("cluster", "features", "--json"))}
    described = admin.describe_features()
    assert {n: r["finalized"] for n, r in feats.items()} == {n: described.finalized.get(n, 0) for n in feats}
    level = feats["transaction.version"]["finalized"]
    out = cli("cluster", "update-features", "--feature", f"transaction.version={level}", "--validate-only")
    assert out.strip() == f"validated transaction.version={level}"
    assert "NAME=LEVEL" in cli("cluster", "update-features", "--feature", "transaction.version", ok=False)


def test_quotas_and_users_commands(cli, admin, kafka_broker, monkeypatch):
    b = kafka_broker.bootstrap
    client_id, user = unique("q"), unique("u")
    cli("quotas", "alter", "--client-id", client_id, "--set", "producer_byte_rate=4096,consumer_byte_rate=8192")
    out = eventually(lambda: run_tool(CONFIG_COMMAND, "--bootstrap-server", b, "--describe", "--entity-type",
                                      "clients", "--entity-name", client_id).strip())  # fmt: skip
    assert sorted(x.strip() for x in out.split(" are ", 1)[1].split(",")) == [
        "consumer_byte_rate=8192.0", "producer_byte_rate=4096.0"]  # fmt: skip
    rows = json.loads(cli("quotas", "describe", "--client-id", client_id, "--strict", "--json"))
    assert {(r["entity"], r["quota"], r["value"]) for r in rows} == {
        (f"client-id={client_id}", "consumer_byte_rate", 8192.0),
        (f"client-id={client_id}", "producer_byte_rate", 4096.0),
    }
    cli("quotas", "alter", "--client-id", client_id, "--delete", "producer_byte_rate", "--delete", "consumer_byte_rate")
    assert eventually(lambda: admin.describe_client_quotas({"client-id": client_id}) == {})
    assert "entity" in cli("quotas", "alter", "--set", "producer_byte_rate=1", ok=False)

    monkeypatch.setattr("sys.stdin", io.StringIO("s3cret\n"))
    cli("users", "set-scram", user, "--mechanism", "SCRAM-SHA-512", "--iterations", "4096", "--password-stdin")
    assert eventually(lambda: admin.describe_user_scram_credentials().get(user)) == {"SCRAM-SHA-512": 4096}
    out = run_tool(CONFIG_COMMAND, "--bootstrap-server", b, "--describe", "--entity-type", "users",
                   "--entity-name", user)  # fmt: skip
    assert out.strip().endswith("SCRAM-SHA-512=iterations=4096")
    rows = json.loads(cli("users", "describe", user, "--json"))
    assert rows == [{"user": user, "mechanism": "SCRAM-SHA-512", "iterations": 4096}]
    cli("users", "delete-scram", user, "--mechanism", "SCRAM-SHA-512")
    assert eventually(lambda: user not in admin.describe_user_scram_credentials())


def test_groups_delete_offsets_command(cli, admin, kafka_broker):
    topic, group = unique("go"), unique("go-g")
    admin.create_topics({topic: 3})
    admin.alter_consumer_group_offsets(group, {(topic, 0): 1, (topic, 1): 2, (topic, 2): 3})
    assert "on 2 partition(s)" in cli("groups", "delete-offsets", group, "--topic", f"{topic}:0,2")
    out = run_tool(GROUP_COMMAND, "--bootstrap-server", kafka_broker.bootstrap, "--describe", "--group", group)
    assert [ln.split()[2:4] for ln in out.splitlines() if ln.startswith(group)] == [["1", "2"]]
    cli("groups", "delete-offsets", group, "--topic", topic)
    assert admin.list_consumer_group_offsets(group) == {}
