"""``exactlyOnce`` writes (issue 14) at scale on Apache Kafka: a Spark job on ``local-cluster[2,1,1024]``
(two executor JVMs) writes 1M distinct rows while the first attempt of one task fails after producing half
its rows, and the executor JVM of another task is SIGKILLed when that task has produced half of its rows.

With ``exactlyOnce=true`` read_committed readers (kafkawire's ``Consumer`` and librdkafka) see each row
exactly once, and no transaction is left open when the job returns (the last stable offset is the log end:
the failed attempt aborted its own transaction, the killed one's was aborted by its retry's InitProducerId
with the same transactional id, neither by the coordinator's timeout, which the job sets to 10 minutes). The
same write without the option (run next, in the same Spark application, with the same failure and kill)
leaves both halves duplicated, so the test can fail. The job runs in its own process
(``exactly_once_cluster_job.py``); this test watches the topics and kills the executors.
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
JOB_TIMEOUT_S = 600  # a guard against a hung job, not a speed figure (the machine may be loaded)
STABLE_WITHIN_S = 30  # far below the job's transaction.timeout.ms (10 minutes)


@dataclass
class Write:
    """One write of the job, as the test saw it."""

    topic: str
    exactly_once: str
    done: dict[str, Any] | None = None  # the job's line for it
    killed: tuple[int, str] | None = None  # (pid, command line) of the executor JVM SIGKILLed during it


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


def _run_job(bootstrap: str, writes: list[Write], tmp: Path) -> tuple[int, str, float]:
    """Run the job's writes in one Spark application; during each, once its victim task has written half its
    rows (the value it names is in the log), SIGKILL the executor JVM running it. Returns the job's exit code,
    its stderr and its wall time."""
    out, err = tmp / "job.out", tmp / "job.err"
    specs = [f"{w.topic}={w.exactly_once}" for w in writes]
    started = time.monotonic()
    with open(out, "w") as fo, open(err, "w") as fe, Client(bootstrap) as client:
        proc = subprocess.Popen(
            [sys.executable, str(JOB), bootstrap, str(ROWS), str(tmp), *specs], stdout=fo, stderr=fe
        )
        tails = {w.topic: _LogTail(client, w.topic) for w in writes}
        try:
            while proc.poll() is None:
                assert time.monotonic() - started < JOB_TIMEOUT_S, f"job still running after {JOB_TIMEOUT_S} s"
                for w in writes:
                    kill_marker = tmp / f"{w.topic}.kill"
                    if w.killed is None and kill_marker.exists():
                        victim = json.loads(kill_marker.read_text())
                        if tails[w.topic].has(victim["value"].encode()):
                            w.killed = _executor_of(victim["pid"])
                            os.kill(w.killed[0], signal.SIGKILL)
                try:
                    proc.wait(timeout=0.5)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            if proc.poll() is None:  # a failed assertion above: do not leave the job (and its JVMs) running
                proc.kill()
                proc.wait()
    done = {d["topic"]: d for d in (json.loads(x) for x in out.read_text().splitlines() if x.startswith("{"))}
    for w in writes:
        w.done = done.get(w.topic)
    return proc.returncode, err.read_text(), time.monotonic() - started


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
@pytest.mark.broker
def test_local_cluster_job_with_a_failed_attempt_and_a_killed_executor(kafka_broker: Any, tmp_path: Path) -> None:
    bootstrap = kafka_broker.bootstrap
    run = f"eosc-{os.getpid()}-{int(time.time() * 1000) % 1_000_000}"
    writes = [Write(f"{run}-eos", "true"), Write(f"{run}-plain", "false")]
    with Client(bootstrap) as c:
        c.create_topics({w.topic: TOPIC_PARTITIONS for w in writes})

    rc, stderr, wall_s = _run_job(bootstrap, writes, tmp_path)
    assert rc == 0, stderr[-6000:]
    print(f"\njob (both writes, one Spark application): {wall_s:.1f} s")
    for w in writes:
        assert w.done is not None, (w, stderr[-6000:])
        assert w.done["failed_attempts"] == 1, w  # the failure was injected, once
        assert w.killed is not None, f"{w.topic}: the write ended before its victim's executor was killed"
        assert w.done["app_id"] in w.killed[1]  # the JVM killed was an executor of this job
    assert stderr.count("has no partition 99") == len(writes)  # the failures hit the writer (TaskSetManager WARN)
    assert stderr.count("ERROR TaskSchedulerImpl: Lost executor") == len(writes)  # Spark saw both kills

    for w in writes:
        _check_write(bootstrap, w)


def _check_write(bootstrap: str, w: Write) -> None:
    """What readers see of one write (see the module docstring)."""
    run, topic = w.topic, w.topic
    if w.exactly_once == "true":
        # No transaction is left open: the failed attempt aborted its own, the killed attempt's was aborted by
        # its retry (InitProducerId with the same transactional id), the rest were committed by the driver;
        # none was ended by the coordinator's timeout (10 minutes). The last markers are written just after
        # EndTxn returns, hence a short wait.
        with Client(bootstrap) as c:
            deadline = time.monotonic() + STABLE_WITHIN_S
            while (stable := _log_end(c, topic, "read_committed")) != (log_end := _log_end(c, topic)):
                assert time.monotonic() < deadline, f"transaction left open: stable {stable}, log end {log_end}"
                time.sleep(0.2)
    raw = _read_kafkawire(bootstrap, topic, "read_uncommitted")
    extra = _extra_per_task(raw)
    # The failed attempt, and the attempt whose executor was killed, each wrote at least half their rows
    # before their retries wrote them all again: those are in the log, aborted or duplicated.
    assert extra[FAILING_PARTITION] >= PER_TASK // 2 and extra[VICTIM_PARTITION] >= PER_TASK // 2, extra
    assert len(raw) == ROWS + sum(extra.values())
    if w.exactly_once == "true":
        committed = _read_kafkawire(bootstrap, topic, "read_committed")
        librdkafka = _read_librdkafka(bootstrap, topic)
        report = _ledger(run, committed)
        print(
            f"exactlyOnce=true: log {len(raw)} records ({dict(extra)} aborted per task); read_committed "
            f"kafkawire {len(committed)} ({len(set(committed))} distinct), librdkafka {len(librdkafka)} "
            f"({len(set(librdkafka))} distinct); ledger {report}"
        )
        assert len(committed) == ROWS and len(set(committed)) == ROWS  # no reader sees the aborted ones
        assert len(librdkafka) == ROWS and len(set(librdkafka)) == ROWS
        assert Counter(librdkafka) == Counter(committed)
        assert (report.read_back, report.lost, report.duplicated, report.unexpected) == (ROWS, 0, 0, 0)
    else:
        report = _ledger(run, raw)
        print(f"exactlyOnce=false: log {len(raw)} records ({dict(extra)} extra per task); ledger {report}")
        assert (report.read_back, report.lost, report.unexpected) == (ROWS, 0, 0)
        assert report.duplicated == sum(extra.values()) >= PER_TASK  # at-least-once: both halves twice
