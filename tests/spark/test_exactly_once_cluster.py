"""``exactlyOnce`` writes (issue 14) at scale on Apache Kafka: a Spark job on ``local-cluster[2,1,1024]``
(two executor JVMs) writes 1M distinct rows while the first attempt of one task fails after producing half
its rows and one executor JVM is SIGKILLed mid-job.

With ``exactlyOnce=true`` read_committed readers (kafkawire's ``Consumer`` and librdkafka) see each row
exactly once, and no transaction is left open when the job returns (the last stable offset is the log end:
the failed and killed attempts' transactions were aborted by their retries' InitProducerId, not by the
coordinator's timeout, which the job sets to 10 minutes). Without the option the same job leaves
duplicates (so the test can fail). The job runs in its own process (``exactly_once_cluster_job.py``); this
test watches the topic and kills an executor while tasks are writing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from faults.ledger import Ledger, LedgerReport

from kafkawire.client import Client, Consumer

JOB = Path(__file__).with_name("exactly_once_cluster_job.py")
ROWS = 1_000_000
PARTITIONS = 8  # the job's tasks (exactly_once_cluster_job.PARTITIONS): task t writes ids [t * PER_TASK, ...)
PER_TASK = ROWS // PARTITIONS
FAILING_PARTITION, VICTIM_PARTITION = 0, 5  # as in exactly_once_cluster_job.py
TOPIC_PARTITIONS = 3
JOB_TIMEOUT_S = 400


@dataclass
class JobRun:
    rc: int
    stdout: str
    stderr: str
    killed: tuple[int, str] | None  # (pid, command line) of the executor JVM that was SIGKILLed
    wall_s: float


def _executor_of(pid: int) -> tuple[int, str]:
    """The Spark executor JVM that ``pid`` (a Python worker) runs under: (pid, command line)."""
    while pid > 1:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        if "CoarseGrainedExecutorBackend" in cmd:
            return pid, cmd
        with open(f"/proc/{pid}/stat") as f:
            pid = int(f.read().rsplit(")", 1)[1].split()[1])  # the comm field may hold spaces: split after ")"
    raise AssertionError("the victim task's Python worker is not under an executor JVM")


def _log_end(client: Client, topic: str, isolation: str = "read_uncommitted") -> dict[int, int]:
    return {p: lo.offset for p, lo in client.list_offsets(topic, isolation=isolation).items()}


class _LogTail:
    """Reads a topic's log (read_uncommitted) incrementally, from the start, remembering nothing but whether
    a value was seen."""

    def __init__(self, client: Client, topic: str) -> None:
        self.client, self.topic = client, topic
        self.cursor = dict.fromkeys(range(TOPIC_PARTITIONS), 0)

    def has(self, value: bytes) -> bool:
        for p, end in _log_end(self.client, self.topic).items():
            while self.cursor[p] < end:
                cols = self.client.fetch(self.topic, p, self.cursor[p], max_bytes=8 << 20, max_wait_ms=100)
                if value in cols.value.to_pylist():
                    return True
                self.cursor[p] = max(self.cursor[p], int(cols.next_offset))
        return False


def _run_job(bootstrap: str, topic: str, exactly_once: str, run: str, tmp: Path) -> JobRun:
    """Start the job; once its victim task has written half its rows (the value it names is in the log),
    SIGKILL the executor JVM running it; wait for the job to finish."""
    marker, kill_marker = tmp / f"{run}.failed", tmp / f"{run}.kill"
    out, err = tmp / f"{run}.out", tmp / f"{run}.err"
    started = time.monotonic()
    with open(out, "w") as fo, open(err, "w") as fe, Client(bootstrap) as client:
        proc = subprocess.Popen(
            [sys.executable, str(JOB), bootstrap, topic, str(ROWS), exactly_once, run, str(marker), str(kill_marker)],
            stdout=fo,
            stderr=fe,
        )
        killed = None
        tail = _LogTail(client, topic)
        try:
            while proc.poll() is None:
                assert time.monotonic() - started < JOB_TIMEOUT_S, f"job still running after {JOB_TIMEOUT_S} s"
                if killed is None and kill_marker.exists():
                    victim = json.loads(kill_marker.read_text())
                    if tail.has(victim["value"].encode()):
                        killed = _executor_of(victim["pid"])
                        os.kill(killed[0], signal.SIGKILL)
                try:
                    proc.wait(timeout=0.5)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            if proc.poll() is None:  # a failed assertion above: do not leave the job (and its JVMs) running
                proc.kill()
                proc.wait()
    return JobRun(proc.returncode, out.read_text(), err.read_text(), killed, time.monotonic() - started)


def _read_kafkawire(bootstrap: str, topic: str, isolation: str) -> list[bytes]:
    """Every value of ``topic`` up to the end offsets for ``isolation`` (the last stable offset under
    read_committed), through a kafkawire ``Consumer`` on all partitions."""
    values: list[bytes] = []
    with Client(bootstrap) as client:
        ends = _log_end(client, topic, isolation)
        consumer = Consumer(client=client, auto_offset_reset="earliest", isolation=isolation)
        try:
            consumer.assign([(topic, p) for p in ends])
            deadline = time.monotonic() + 120
            while any(consumer.position((topic, p)) < end for p, end in ends.items()):
                assert time.monotonic() < deadline, f"kafkawire consumer stuck after {len(values)} records"
                for cols in consumer.poll(500).values():
                    values += cols.value.to_pylist()
        finally:
            consumer.close()
    return values


def _read_librdkafka(bootstrap: str, topic: str) -> list[bytes]:
    """Every value of ``topic`` with a read_committed librdkafka consumer (independent of kafkawire)."""
    from confluent_kafka import Consumer as RdConsumer
    from confluent_kafka import TopicPartition

    c = RdConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"{topic}-reader",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    values: list[bytes] = []
    try:
        c.assign([TopicPartition(topic, p, 0) for p in range(TOPIC_PARTITIONS)])
        at_eof: set[int] = set()
        deadline = time.monotonic() + 120
        while len(at_eof) < TOPIC_PARTITIONS:
            assert time.monotonic() < deadline, f"librdkafka consumer stuck after {len(values)} records"
            for m in c.consume(10_000, timeout=1.0):
                if m.error() is None:
                    values.append(m.value())
                elif m.error().code() == -191:  # KafkaError._PARTITION_EOF: caught up with the LSO
                    at_eof.add(m.partition())
                else:
                    raise AssertionError(m.error())
    finally:
        c.close()
    return values


def _extra_per_task(values: list[bytes]) -> Counter[int]:
    """Per task (by the id in the value), how many more records than it has rows."""
    per_task = Counter(int(v.rsplit(b"-", 1)[1]) // PER_TASK for v in values)
    return Counter({t: c - PER_TASK for t, c in per_task.items()})


def _ledger(run: str, values: list[bytes]) -> LedgerReport:
    ledger = Ledger(run)
    sent = ledger.make(ROWS)  # the job writes exactly these values: b"<run>-<id>" for id < ROWS
    ledger.acknowledged(sent)  # the job succeeded: every row was acknowledged (and, exactly once, committed)
    ledger.read(values)
    return ledger.report()


@pytest.mark.slow
@pytest.mark.parametrize("exactly_once", ["true", "false"])
def test_local_cluster_job_with_a_failed_attempt_and_a_killed_executor(
    kafka_broker: Any, exactly_once: str, tmp_path: Path
) -> None:
    bootstrap = kafka_broker.bootstrap
    run = f"eosc-{exactly_once}-{os.getpid()}-{int(time.time() * 1000) % 1_000_000}"
    topic = f"{run}-out"
    with Client(bootstrap) as c:
        c.create_topics({topic: TOPIC_PARTITIONS})

    job = _run_job(bootstrap, topic, exactly_once, run, tmp_path)
    assert job.rc == 0, job.stderr[-6000:]
    (done,) = [json.loads(line) for line in job.stdout.splitlines() if line.startswith("{")]
    assert done["failed_attempts"] == 1, done  # the failure was injected, once
    assert "has no partition 99" in job.stderr  # ... and made the writer fail (TaskSetManager's WARN)
    assert job.killed is not None, "the job ended before an executor could be killed"
    assert done["app_id"] in job.killed[1]  # the JVM killed was an executor of this job
    assert "Lost executor" in job.stderr  # ... and Spark saw it die and rescheduled its tasks

    with Client(bootstrap) as c:
        log_end = _log_end(c, topic)
        stable = _log_end(c, topic, "read_committed")
    raw = _read_kafkawire(bootstrap, topic, "read_uncommitted")
    extra = _extra_per_task(raw)
    # The failed attempt, and the attempt whose executor was killed, each wrote at least half their rows
    # before their retries wrote them all again: those are in the log, aborted or duplicated.
    assert extra[FAILING_PARTITION] >= PER_TASK // 2 and extra[VICTIM_PARTITION] >= PER_TASK // 2, extra
    assert len(raw) == ROWS + sum(extra.values())
    if exactly_once == "true":
        # No transaction is left open: the failed and the killed attempts' transactions were aborted by
        # their retries (InitProducerId with the same transactional id), not by the coordinator's timeout.
        assert stable == log_end
        committed = _read_kafkawire(bootstrap, topic, "read_committed")
        librdkafka = _read_librdkafka(bootstrap, topic)
        report = _ledger(run, committed)
        print(
            f"\nexactlyOnce=true: job {job.wall_s:.1f} s; log {len(raw)} records ({dict(extra)} aborted per task); "
            f"read_committed kafkawire {len(committed)} ({len(set(committed))} distinct), librdkafka "
            f"{len(librdkafka)} ({len(set(librdkafka))} distinct); ledger {report}"
        )
        assert len(committed) == ROWS and len(set(committed)) == ROWS  # no reader sees the aborted ones
        assert len(librdkafka) == ROWS and len(set(librdkafka)) == ROWS
        assert Counter(librdkafka) == Counter(committed)
        assert (report.read_back, report.lost, report.duplicated, report.unexpected) == (ROWS, 0, 0, 0)
    else:
        report = _ledger(run, raw)
        print(
            f"\nexactlyOnce=false: job {job.wall_s:.1f} s; log {len(raw)} records ({dict(extra)} extra per task); "
            f"ledger {report}"
        )
        assert (report.read_back, report.lost, report.unexpected) == (ROWS, 0, 0)
        assert report.duplicated == sum(extra.values()) >= PER_TASK  # at-least-once: both halves twice
