"""A user's second hour with the ``kafkawire`` command (issue 25), through the installed console script
against Apache Kafka: options where Kafka's tools accept them, errors at once, Java property names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kafkawire.admin import Admin
from kafkawire.client import Client
from kafkawire.protocol.errors import GroupIdNotFoundError

CONSOLE_SCRIPT = Path(sys.executable).parent / "kafkawire"

pytestmark = pytest.mark.broker


def kw(*args: str, stdin: bytes | None = None, timeout: float = 180) -> subprocess.CompletedProcess[bytes]:
    """Run ``kafkawire ARGS`` (no KAFKAWIRE_BOOTSTRAP: every test names its broker)."""
    env = {k: v for k, v in os.environ.items() if k != "KAFKAWIRE_BOOTSTRAP"}
    return subprocess.run([str(CONSOLE_SCRIPT), *args], input=stdin, capture_output=True, env=env,
                          timeout=timeout, check=False)


@pytest.fixture
def broker(kafka_broker: object) -> str:
    return kafka_broker.bootstrap  # type: ignore[attr-defined]


def _create(bootstrap: str, topic: str, partitions: int = 1) -> None:
    with Client(bootstrap) as c:
        c.create_topics({topic: partitions})


# ------------------------------------------------------------------- 6: global options before the command


def test_connection_options_before_the_command(broker: str, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("global")
    _create(broker, topic, 2)
    proc = kw("-b", broker, "topics", "list")
    assert proc.returncode == 0, proc.stderr
    assert topic in proc.stdout.decode()
    proc = kw(f"--bootstrap={broker}", "--timeout", "20", "-X", "client.id=cli-test", "produce", topic, "-q",
              stdin=b"a\nb\n")
    assert proc.returncode == 0, proc.stderr
    proc = kw("-b", broker, "consume", topic, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert sorted(json.loads(x)["value"] for x in proc.stdout.decode().splitlines()) == ["a", "b"]
    # Anything else before the command is still argparse's to judge.
    proc = kw("--no-such-option", "topics", "list")
    assert proc.returncode == 2 and b"unrecognized arguments: --no-such-option" in proc.stderr, proc.stderr


# ------------------------------------------------------------------- 2: produce to a missing topic


def test_produce_to_a_missing_topic_is_reported_at_once(broker: str, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("nosuch")
    proc = kw("produce", topic, "-b", broker, "--timeout", "60", stdin=b"x\n")
    assert proc.returncode == 1
    err = proc.stderr.decode()
    # One Metadata answer decides, as consume and offsets do; not "did not complete after 60.0 s".
    assert "UNKNOWN_TOPIC_OR_PARTITION" in err and f"topic {topic!r}" in err, err
    assert "did not complete" not in err, err
    with Client(broker) as c:
        assert topic not in c.metadata().topics  # nothing was created on the way
    _create(broker, topic)
    proc = kw("produce", topic, "-b", broker, "-p", "3", stdin=b"x\n")
    assert proc.returncode == 1 and f"topic {topic!r} has no partition 3".encode() in proc.stderr, proc.stderr


# ------------------------------------------------------------------- 3: Java property names, typos


def test_java_producer_and_consumer_properties_are_honoured(broker: str, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("javaprops")
    _create(broker, topic)
    proc = kw("produce", topic, "-b", broker, "-X", "compression.type=zstd", "-X", "acks=1", "-X", "linger.ms=5",
              stdin=b"".join(b"record %d\n" % i for i in range(50)))
    assert proc.returncode == 0, proc.stderr
    assert b"warning" not in proc.stderr, proc.stderr
    with Client(broker) as c:
        cols = c.fetch(topic, 0, 0)
    assert len(cols) == 50 and set(cols.batch_codec.tolist()) == {4}  # zstd on the wire, as -X asked
    # -z wins over -X, as a flag beats a property.
    proc = kw("produce", topic, "-b", broker, "-X", "compression.type=zstd", "-z", "gzip", stdin=b"g\n")
    assert proc.returncode == 0, proc.stderr
    with Client(broker) as c:
        assert c.fetch(topic, 0, 50).batch_codec.tolist() == [1]
    # group.id is --group: the read is committed for that group.
    proc = kw("consume", topic, "-b", broker, "-X", "group.id=java-named", "-q")
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    assert len(proc.stdout.splitlines()) == 51
    with Client(broker) as c:
        assert c.committed("java-named", [(topic, 0)])[(topic, 0)].offset == 51


@pytest.mark.parametrize("command", [["topics", "list"], ["produce", "T"], ["consume", "T"]])
def test_a_misspelt_property_gets_a_suggestion(broker: str, command: list[str]) -> None:
    proc = kw(*command, "-b", broker, "-X", "securty.protocol=SSL", stdin=b"")
    assert proc.returncode == 1
    assert b"securty.protocol" in proc.stderr and b"did you mean 'security.protocol'?" in proc.stderr, proc.stderr


def test_a_property_of_another_role_is_named_as_unused(broker: str) -> None:
    proc = kw("topics", "list", "-b", broker, "-X", "linger.ms=5")
    assert proc.returncode == 0, proc.stderr
    assert b"property 'linger.ms' is not used by `kafkawire topics list`" in proc.stderr, proc.stderr


# ------------------------------------------------------------------- 7: consume --group, -q, columns


def _fill(broker: str, topic: str, partitions: int, per_partition: int, start: int = 0) -> None:
    with Client(broker) as c:
        for p in range(partitions):
            c.produce(topic, [b"%d-%d" % (p, i) for i in range(start, start + per_partition)], partition=p)


def _committed(broker: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    with Client(broker) as c:
        got = c.committed(group, [(topic, p) for p in range(partitions)])
    return {p: got[(topic, p)].offset for p in range(partitions)}


def test_consume_group_interrupted_commits_exactly_what_it_wrote(
    broker: str, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    import signal
    import time

    topic, group = topic_name("ctrlc"), topic_name("g")
    _create(broker, topic, 2)
    _fill(broker, topic, 2, 100_000)  # ~26 MB of JSON: seconds of writing, so the signal lands mid-way
    out = tmp_path / "first.jsonl"
    env = {k: v for k, v in os.environ.items() if k != "KAFKAWIRE_BOOTSTRAP"}
    # --follow keeps it running however fast it reads; --max-wait-ms small so batches are small and many.
    proc = subprocess.Popen([str(CONSOLE_SCRIPT), "consume", topic, "-b", broker, "--group", group, "--follow",
                             "-f", "json", "-o", str(out), "--fetch-max-bytes", "65536"],
                            stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not out.exists() or out.stat().st_size < 200_000):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode in (0, 130), err
    docs = [json.loads(x) for x in out.read_text().splitlines()]
    assert 0 < len(docs) < 200_000, len(docs)
    committed = _committed(broker, group, topic, 2)
    for p in range(2):
        mine = [d["offset"] for d in docs if d["partition"] == p]
        assert mine == list(range(len(mine)))  # from the start, in order, nothing skipped
        assert committed[p] == (len(mine) if mine else -1), (p, committed, len(mine))
    assert f"consumed {len(docs)} records from {topic}".encode() in err, err
    # The restart reads exactly the rest: nothing twice, nothing lost.
    rest = tmp_path / "rest.jsonl"
    again = kw("consume", topic, "-b", broker, "--group", group, "-f", "json", "-o", str(rest), "-q")
    assert again.returncode == 0 and again.stderr == b"", again.stderr
    seen = [(d["partition"], d["offset"]) for d in docs] + [
        (d["partition"], d["offset"]) for d in (json.loads(x) for x in rest.read_text().splitlines())
    ]
    assert len(seen) == len(set(seen)) == 200_000
    assert _committed(broker, group, topic, 2) == {0: 100_000, 1: 100_000}


def test_two_cli_consumers_share_a_group(broker: str, topic_name: Callable[[str], str], tmp_path: Path) -> None:
    import time

    topic, group = topic_name("share"), topic_name("g")
    _create(broker, topic, 4)
    env = {k: v for k, v in os.environ.items() if k != "KAFKAWIRE_BOOTSTRAP"}
    outs = [tmp_path / f"m{i}.jsonl" for i in range(2)]
    procs = [subprocess.Popen([str(CONSOLE_SCRIPT), "consume", topic, "-b", broker, "--group", group, "--follow",
                               "-f", "json", "-o", str(o), "-q"], stderr=subprocess.PIPE, env=env) for o in outs]
    try:
        # Both members hold partitions before anything is written, so each reads only its own share.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with Client(broker) as c:
                try:
                    desc = Admin(client=c).describe_groups([group])[group]
                except GroupIdNotFoundError:  # no member has joined yet
                    desc = None
            members = desc.members if desc is not None and desc.state == "Stable" else []
            if len(members) == 2 and all(m.assignment for m in members):
                break
            time.sleep(0.2)
        else:
            raise AssertionError(f"the two members did not both get partitions: {desc}")
        _fill(broker, topic, 4, 250)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and sum(len(o.read_text().splitlines()) for o in outs if o.exists()) < 1000:
            time.sleep(0.1)
    finally:
        for proc in procs:
            proc.terminate()
        errs = [proc.communicate(timeout=120)[1] for proc in procs]
    docs = [[json.loads(x) for x in o.read_text().splitlines()] for o in outs]
    parts = [{d["partition"] for d in member} for member in docs]
    assert parts[0] and parts[1] and not parts[0] & parts[1], (parts, errs)
    assert sorted((d["partition"], d["offset"]) for m in docs for d in m) == [
        (p, i) for p in range(4) for i in range(250)
    ]


def test_json_and_parquet_have_sparks_columns(broker: str, topic_name: Callable[[str], str], tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    topic = topic_name("cols")
    _create(broker, topic)
    with Client(broker) as c:
        c.produce(topic, [b"v0", b"v1"], [b"k0", None], headers=[[("h", b"x")], None])
    proc = kw("consume", topic, "-b", broker, "-f", "json", "-q")
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    docs = [json.loads(x) for x in proc.stdout.splitlines()]
    spark = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"]
    assert [list(d) for d in docs] == [spark, spark]
    assert docs[0]["headers"] == [{"key": "h", "value": "x"}] and docs[1]["headers"] is None
    assert docs[1]["key"] is None and docs[0]["timestampType"] == 0 and docs[0]["topic"] == topic
    out = tmp_path / "o.parquet"
    assert kw("consume", topic, "-b", broker, "-f", "parquet", "-o", str(out), "-q").returncode == 0
    table = pq.read_table(out)
    assert table.column_names == spark
    assert table["topic"].to_pylist() == [topic, topic] and table["timestampType"].to_pylist() == [0, 0]
    assert table["headers"].to_pylist() == [[{"key": "h", "value": b"x"}], None]


# ------------------------------------------------------------------- 10: help text


def test_broker_help_names_the_brokers_it_runs() -> None:
    top = " ".join(kw("--help").stdout.decode().split())  # argparse wraps to the terminal's width
    assert "(noida-db or Tansu)" not in top
    assert "noida-db, Tansu or Apache Kafka" in top
    assert "kafkawire -b HOST:PORT topics list" in top  # where the connection options may go


# ------------------------------------------------------------------- 11: bench on a secured cluster


@pytest.fixture(scope="module")
def secured() -> object:
    """Apache Kafka with TLS and SCRAM listeners (alice/secret) beside PLAINTEXT."""
    from kafkawire.testing import start_broker

    broker = start_broker("kafka", tls=True, sasl_mechanisms=("SCRAM-SHA-512",), users={"alice": "secret"})
    yield broker
    broker.stop()


def test_bench_produce_and_consume_on_sasl_ssl_with_start_up_explained(secured: object, tmp_path: Path) -> None:
    jaas = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="secret";'
    proc = kw("bench", "-b", secured.bootstrap_for("SASL_SSL"),  # type: ignore[attr-defined]
              "-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanism=SCRAM-SHA-512",
              "-X", f"sasl.jaas.config={jaas}",
              "--ca-file", str(secured.ca_file),  # type: ignore[attr-defined]
              "--records", "5000", "--batch-size", "500", "--repeat", "1", "--slow-records", "500", "--no-chart",
              timeout=600)
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    out = proc.stdout.decode()
    for case in ("produce", "consume"):
        for who in ("kafkawire", "confluent-kafka"):
            assert f"| {case} | {who} | 5000 |" in out, out
            assert f"  {case} {who}: " in out  # its start-up, and the rate after it
    assert "in short runs it dominates their figures and ratios" in out
