"""``exactlyOnce`` writes (issue 14) on Apache Kafka: a task whose first attempt fails after writing most
of its rows leaves every row visible exactly once to read_committed readers with the option, and
duplicates without it (so the test can fail). The job runs in its own process (``exactly_once_job.py``)
because it needs a master that retries tasks (``local[2,2]``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from visibility import read_values, wait_stable

from kafkawire.client import Client

JOB = Path(__file__).with_name("exactly_once_job.py")
ROWS = 20_000


@pytest.mark.parametrize("streaming", [False, True], ids=["batch", "streaming"])
@pytest.mark.parametrize("exactly_once", ["true", "false"])
@pytest.mark.broker
def test_a_failed_task_attempt_leaves_each_row_once_only_with_exactly_once(
    kafka_broker: Any, exactly_once: str, streaming: bool, tmp_path: Path
) -> None:
    bootstrap = kafka_broker.bootstrap
    run = f"eos-spark-{exactly_once}-{int(streaming)}-{os.getpid()}-{int(time.time() * 1000) % 100_000}"
    topic = f"{run}-out"
    extra: list[str] = []
    with Client(bootstrap) as c:
        c.create_topics({topic: 3})
        if streaming:
            c.create_topics({f"{run}-in": 4})
            for part in range(4):  # the input: str(i) for every i, 4 partitions
                c.produce(f"{run}-in", [str(i).encode() for i in range(part, ROWS, 4)], partition=part)
            extra = [f"{run}-in", str(tmp_path / "checkpoint")]
    res = subprocess.run(
        [sys.executable, str(JOB), bootstrap, topic, str(ROWS), exactly_once, *extra],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-4000:]
    (done,) = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    assert done["failed_attempts"] == 1  # the failure was injected, and only once
    with Client(bootstrap) as c:
        # The driver's EndTxn returned before the commit markers moved the last stable offsets (KIP-98).
        wait_stable(c, topic)
        committed = read_values(c, topic, "read_committed", timeout=60)
        raw = read_values(c, topic, "read_uncommitted", timeout=60)
    counts = Counter(committed)
    expected = {str(i).encode() for i in range(ROWS)}
    print(
        f"\nstreaming={streaming} exactlyOnce={exactly_once}: read_committed {len(committed)} "
        f"({len(counts)} distinct), log {len(raw)}"
    )
    assert set(counts) == expected
    assert len(raw) > ROWS  # the failed attempt's rows reached the log either way
    if exactly_once == "true":
        assert len(committed) == ROWS  # ... and are invisible: each row exactly once
    else:
        assert len(committed) > ROWS  # at-least-once: the retried task's rows are duplicated
