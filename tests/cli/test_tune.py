"""``kafkawire tune`` on Apache Kafka: the quick sweep finishes, prints its table and recommendation, writes
its JSON and chart, and leaves no topic behind (also when interrupted); an existing topic is never written
to unless allowed."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from kafkawire.bench import tune
from kafkawire.bench.trial import Trial
from kafkawire.cli.main import main
from kafkawire.client import Client
from kafkawire.client.config import consumer_kwargs_from_properties, producer_kwargs_from_properties
from kafkawire.testing import Broker

pytestmark = pytest.mark.broker


def _tune_topics(bootstrap: str, wait_gone: bool = True) -> set[str]:
    """Topics named like the sweep's on the cluster (deletion shows in the metadata after a moment)."""
    with Client(bootstrap) as client:
        limit = time.monotonic() + 60
        while True:
            left = {t for t in client.metadata().topics if t.startswith("kafkawire-tune-")}
            if not left or not wait_gone or time.monotonic() > limit:
                return left
            time.sleep(0.5)


def _properties(block: str) -> dict[str, dict[str, str]]:
    """The ``key=value`` lines under each ``# recommended ROLE properties`` comment."""
    out: dict[str, dict[str, str]] = {}
    role = None
    for line in block.splitlines():
        if line.startswith("# recommended "):
            role = line.split()[2]
            out[role] = {}
        elif role and "=" in line and not line.startswith("#"):
            k, _, v = line.partition("=")
            out[role][k] = v
        elif not line.strip():
            role = None
    return out


def test_tune_quick(kafka_broker: Broker, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bootstrap = kafka_broker.bootstrap
    assert not _tune_topics(bootstrap)
    prefix = tmp_path / "sweep"
    assert main(["tune", "--bootstrap", bootstrap, "--quick", "--output", str(prefix)]) == 0
    captured = capsys.readouterr()
    out = captured.out
    header = next(line for line in out.splitlines() if line.startswith("role "))
    for column in ("records/s", "MB/s", "ack p50/p99 ms", "latency p50/p99 ms", "CPU us/record"):
        assert column in header
    rows = [line for line in out.splitlines() if line.startswith(("producer ", "consumer "))]
    assert {r.split()[0] for r in rows if r.split()[1] == "baseline"} == {"producer", "consumer"}
    assert not any(" failed " in r for r in rows), out
    assert sum(bool(re.match(r"(producer|consumer) +\S+ \* ", r)) for r in rows) == 2  # each role's best marked
    # The progress bar went to stderr: one line per trial (not a terminal), the last one complete.
    bars = [line for line in captured.err.splitlines() if line.startswith("[")]
    assert len(bars) == len(rows) and bars[-1].startswith("[" + "#" * 24 + "]"), captured.err
    # The recommendation is Java client properties that kafkawire's own mapping takes without a warning.
    props = _properties(out)
    assert set(props) == {"producer", "consumer"}
    assert {"linger.ms", "compression.type", "acks"} <= set(props["producer"])
    assert {"max.partition.fetch.bytes", "fetch.max.wait.ms"} <= set(props["consumer"])

    def refuse(key: str) -> None:
        raise AssertionError(f"recommended property {key} is not used")

    producer_kwargs_from_properties({**props["producer"], "bootstrap.servers": bootstrap}, warn=refuse)
    consumer_kwargs_from_properties({**props["consumer"], "bootstrap.servers": bootstrap}, warn=refuse)
    # JSON and chart written.
    data = json.loads(Path(f"{prefix}.json").read_text())
    assert data["goal"] == "throughput" and len(data["trials"]) == len(rows)
    assert data["recommended"]["producer"] == props["producer"]
    assert all(t["records_per_s"] > 0 and t["records"] > 0 for t in data["trials"])
    producing = [t for t in data["trials"] if t["role"] == "producer"]
    assert producing and all(t["ack_ms"] is not None and t["latency_ms"] is not None for t in producing)
    chart = Path(f"{prefix}.png")
    assert f"chart: {chart}" in out and chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Every topic the sweep made is gone.
    assert data["topics_created"] and sorted(data["topics_deleted"]) == sorted(data["topics_created"])
    assert not _tune_topics(bootstrap)


def test_tune_interrupted_deletes_its_topics(kafka_broker: Broker) -> None:
    seen: list[Trial] = []

    def progress(done: int, total: int, trial: Trial) -> None:
        seen.append(trial)
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tune(kafka_broker.bootstrap, quick=True, records=2_000, consumer_records=2_000, repeat=2,
             progress=progress)
    assert len(seen) == 2 and all(t.error is None for t in seen)
    assert not _tune_topics(kafka_broker.bootstrap)


def test_tune_never_writes_to_an_existing_topic_unless_allowed(
    kafka_broker: Broker, capsys: pytest.CaptureFixture
) -> None:
    bootstrap = kafka_broker.bootstrap
    topic = f"tune-existing-{time.time_ns()}"
    with Client(bootstrap) as client:
        client.create_topics({topic: 2})
        try:
            assert main(["tune", "-b", bootstrap, "--quick", "--topic", topic, "--no-chart", "-o", "/dev/null"]) == 1
            assert "--allow-existing" in capsys.readouterr().err
            assert sum(lo.offset for lo in client.list_offsets(topic).values()) == 0
            # Allowed: the trials run on it (its partition count fixed), and it is kept.
            report = tune(bootstrap, quick=True, records=1_000, consumer_records=1_000, roles=("producer",),
                          topic=topic, allow_existing=True, overrides={"compression.type": ["none"], "acks": ["all"]})
            assert {t.settings["partitions"] for t in report.trials} == {"2"}
            assert report.topics_created == [] and report.topics_deleted == []
            assert sum(lo.offset for lo in client.list_offsets(topic).values()) > 0
        finally:
            client.delete_topics([topic], missing_ok=True)
