"""The README's main job (`./dev demo` → `kafkawire demo`) runs end to end: embedded broker, produce,
Spark through format("kafkawire"), aggregates written to Parquet, and every produced event accounted for.

Each run goes against Apache Kafka (the session's ``kafka_broker``, through ``--bootstrap``) and against the
demo's default embedded broker (noida-db, started by the demo itself)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest


@pytest.fixture(params=["kafka", "embedded"])
def where(request: pytest.FixtureRequest) -> list[str]:
    """Demo arguments choosing the broker: Kafka by address (a topic of its own), or the embedded default."""
    if request.param == "embedded":
        return []
    kafka = request.getfixturevalue("kafka_broker")
    return ["--bootstrap", kafka.bootstrap, "--topic", f"demo-{uuid.uuid4().hex[:8]}"]


@pytest.mark.slow
@pytest.mark.broker
def test_demo_pipeline_end_to_end(tmp_path: Path, where: list[str]) -> None:
    out = tmp_path / "aggregates"
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
    proc = subprocess.run(
        [sys.executable, "-m", "kafkawire.cli", "demo", "--records", "20000", "--users", "500",
         "--output", str(out), *where],
        capture_output=True, text=True, timeout=900, env=env,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "produced 20,000 events" in proc.stdout
    assert "Spark read 20,000 records" in proc.stdout
    table = pq.read_table(out)
    assert set(table.column_names) >= {"window_start", "window_end", "page", "events", "users", "purchases"}
    assert sum(table.column("events").to_pylist()) == 20_000


@pytest.mark.broker
def test_demo_without_spark_reads_back_everything(where: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kafkawire.cli", "demo", "--records", "5000", "--no-spark", "--compression", "zstd",
         *where],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "read back 5,000 records" in proc.stdout
