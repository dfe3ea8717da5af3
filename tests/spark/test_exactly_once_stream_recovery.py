"""A streaming query's driver killed in the middle of a micro-batch's commit, restarted from its checkpoint
(issue 14): with ``exactlyOnce`` every input row is visible exactly once to read_committed readers, whichever
window the kill hit; without it the re-run batch is duplicated (so the test can fail).

The driver is its own process (``exactly_once_stream_recovery_job.py``, Apache Kafka's own transaction
coordinator from the session's ``kafka_broker``). A test-only data source subclass in that script SIGKILLs
the whole driver (Python process, JVM, Python workers) at one point of micro-batch K's commit:

* ``before``: every task's transaction is written and open, none committed (Kafka window 1 of the issue);
* ``partial``: the first task's transaction committed, the other open (the driver died between EndTxn calls);
* ``after``: all committed, but Spark had not yet recorded the batch in ``commits/`` (window 2).

In each case the checkpoint holds batch K in ``offsets/`` but not in ``commits/``, so the restarted query
re-runs batch K. Rows are counted with :class:`tests.faults.ledger.Ledger` (sent / read back / lost /
duplicated) as read by kafkawire's Consumer and by librdkafka (confluent-kafka), both read_committed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from faults.ledger import Ledger, LedgerReport

from kafkawire.client import Client, Consumer

JOB = Path(__file__).with_name("exactly_once_stream_recovery_job.py")
IN_PARTITIONS = 2  # two tasks per micro-batch: both run at once on local[2]
OUT_PARTITIONS = 3
PER_TRIGGER = 1_000  # records per micro-batch: ROWS / PER_TRIGGER batches, each with one task per input partition


class Run:
    """One streaming query (its topics, checkpoint and input ledger) driven through several driver processes."""

    def __init__(self, bootstrap: str, tmp: Path, rows: int, exactly_once: bool) -> None:
        self.bootstrap = bootstrap
        self.tmp = tmp
        self.exactly_once = exactly_once
        name = f"eos-recovery-{int(exactly_once)}-{uuid.uuid4().hex[:8]}"
        self.source, self.topic = f"{name}-in", f"{name}-out"
        self.checkpoint = tmp / "checkpoint"
        self.report = tmp / "faults.jsonl"
        self.ledger = Ledger(name)
        self.values = self.ledger.make(rows)
        with Client(bootstrap) as c:
            c.create_topics({self.source: IN_PARTITIONS, self.topic: OUT_PARTITIONS})
            for part in range(IN_PARTITIONS):  # values[i] goes to partition i % 2, in order: offset i // 2
                c.produce(self.source, self.values[part::IN_PARTITIONS], partition=part)
        self.ledger.acknowledged(self.values)

    def drive(self, fault: dict | None) -> dict:
        """Run the driver once; with ``fault``, expect it killed by the hook and return what the hook wrote."""
        cfg = {
            "bootstrap": self.bootstrap,
            "source": self.source,
            "topic": self.topic,
            "checkpoint": str(self.checkpoint),
            "exactly_once": "true" if self.exactly_once else "false",
            "max_per_trigger": PER_TRIGGER,
            "fault": None if fault is None else {**fault, "report": str(self.report)},
        }
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, str(JOB), json.dumps(cfg)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group: the hook kills the group, not pytest
        )
        try:
            stdout, stderr = proc.communicate(timeout=500)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the driver's JVM too, not only the Python process
            stdout, stderr = proc.communicate()
            raise AssertionError(f"the driver did not finish within 500 s: {stderr[-4000:]}") from None
        took = time.monotonic() - started
        said = {k: v for line in stdout.splitlines() if line.startswith("{") for k, v in json.loads(line).items()}
        if fault is None:
            assert proc.returncode == 0, stderr[-4000:]
            assert said.get("done"), stdout[-4000:]
            print(f"\n  driver ran to the end in {took:.0f} s: {said}")
            return said
        assert proc.returncode == -signal.SIGKILL, (proc.returncode, stderr[-4000:])
        injected = [json.loads(line) for line in self.report.read_text().splitlines()]
        assert injected[-1]["window"] == fault["window"] and injected[-1]["batch"] == fault["batch"], injected
        print(f"\n  driver killed after {took:.0f} s (session start {said.get('session_s')} s): {injected[-1]}")
        return injected[-1]

    # --- the checkpoint

    def batch_end(self, batch: int) -> dict[int, int]:
        """The input end offsets of micro-batch ``batch``, from the checkpoint's ``offsets/`` log."""
        lines = (self.checkpoint / "offsets" / str(batch)).read_text().splitlines()
        ends = json.loads(lines[-1])[self.source]
        return {int(p): int(o) for p, o in ends.items()}

    def rows_through(self, batch: int) -> set[bytes]:
        """The input values of micro-batches 0..``batch`` (none for -1)."""
        ends = self.batch_end(batch) if batch >= 0 else {}
        return {v for i, v in enumerate(self.values) if i // IN_PARTITIONS < ends.get(i % IN_PARTITIONS, 0)}

    def assert_pending(self, batch: int) -> None:
        """Batch ``batch`` is planned (``offsets/``) but not done (``commits/``): a restart re-runs it."""
        assert (self.checkpoint / "offsets" / str(batch)).exists()
        assert not (self.checkpoint / "commits" / str(batch)).exists()
        assert not (self.checkpoint / "offsets" / str(batch + 1)).exists()

    # --- reading the output

    def in_log(self) -> int:
        """Records in the output topic's log, committed or not (transaction markers included)."""
        with Client(self.bootstrap) as c:
            return sum(o.offset for o in c.list_offsets(self.topic).values())

    def read_committed(self) -> list[bytes]:
        return _read_committed(self.bootstrap, self.topic)

    def read_committed_librdkafka(self) -> list[bytes]:
        """The same through librdkafka (confluent-kafka), isolation.level=read_committed, to the end."""
        from confluent_kafka import Consumer as RdConsumer
        from confluent_kafka import TopicPartition as RdTp

        c = RdConsumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": f"check-{uuid.uuid4().hex[:6]}",
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
                "enable.partition.eof": True,
            }
        )
        try:
            c.assign([RdTp(self.topic, p, 0) for p in range(OUT_PARTITIONS)])
            out: list[bytes] = []
            at_eof: set[int] = set()
            deadline = time.monotonic() + 60
            while len(at_eof) < OUT_PARTITIONS:
                assert time.monotonic() < deadline, at_eof
                for m in c.consume(1000, 0.5):
                    if m.error() is None:
                        out.append(m.value())
                        at_eof.discard(m.partition())
                    elif m.error().code() == -191:  # _PARTITION_EOF
                        at_eof.add(m.partition())
                    else:
                        raise AssertionError(m.error())
            return out
        finally:
            c.close()

    def count(self, values: list[bytes]) -> LedgerReport:
        """The ledger's counts for one read of the output (a fresh ledger: same values, sent and acknowledged)."""
        ledger = Ledger(self.ledger.run)
        ledger.acknowledged(ledger.make(len(self.values)))
        ledger.read(values)
        return ledger.report()


def _read_committed(bootstrap: str, topic: str) -> list[bytes]:
    """Every value of ``topic`` a read_committed kafkawire Consumer sees, up to the last stable offsets."""
    with Client(bootstrap) as c:
        lso = {p: o.offset for p, o in c.list_offsets(topic, isolation="read_committed").items()}
    tps = [(topic, p) for p in sorted(lso)]
    out: list[bytes] = []
    with Consumer(bootstrap, isolation="read_committed", auto_offset_reset="earliest") as consumer:
        consumer.assign(tps)
        consumer.seek_to_beginning(tps)
        deadline = time.monotonic() + 60
        while any(consumer.position(tp) < lso[tp[1]] for tp in tps):
            assert time.monotonic() < deadline, {tp: consumer.position(tp) for tp in tps}
            for cols in consumer.poll(500).values():
                out += [bytes(r.value) for r in cols]
    return out


def _assert_once(values: list[bytes], expected: set[bytes]) -> None:
    assert len(values) == len(set(values)), f"{len(values) - len(set(values))} duplicates"
    assert set(values) == expected, (len(set(values) - expected), len(expected - set(values)))


@pytest.mark.slow
@pytest.mark.broker
def test_a_driver_killed_in_each_commit_window_leaves_each_row_once(kafka_broker: Any, tmp_path: Path) -> None:
    """One query, 4 micro-batches of 2 tasks; its driver is killed in batch 0 before the commit, in batch 1
    after the first of two EndTxn calls, in batch 2 after both; each restart re-runs the batch it died in."""
    run = Run(kafka_broker.bootstrap, tmp_path, rows=4 * PER_TRIGGER, exactly_once=True)

    # Window 1: transactions written and open; the restart's tasks abort them (same transactional ids) and
    # write the batch again.
    hit = run.drive({"window": "before", "batch": 0})
    assert hit["transactions"] == IN_PARTITIONS
    run.assert_pending(0)
    assert run.in_log() >= PER_TRIGGER  # batch 0's rows are in the log ...
    assert run.read_committed() == []  # ... and invisible

    # Between EndTxn calls: one task's rows visible; the restart's task with the marker skips them, the
    # other aborts its transaction and writes again.
    hit = run.drive({"window": "partial", "batch": 1})
    assert hit["transactions"] == IN_PARTITIONS and hit["committed"] == 1
    run.assert_pending(1)
    seen = run.read_committed()
    assert len(seen) == len(set(seen)) and run.rows_through(0) <= set(seen) <= run.rows_through(1)

    # Window 2: every transaction committed, Spark's commits/ log not written; the restart writes nothing.
    hit = run.drive({"window": "after", "batch": 2})
    assert hit["committed"] == IN_PARTITIONS
    run.assert_pending(2)
    _assert_once(run.read_committed(), run.rows_through(2))

    done = run.drive(None)  # re-runs batch 2 (nothing written), then batch 3
    assert done["last_batch"] == 3 and (run.checkpoint / "commits" / "3").exists()
    for reader, values in (
        ("kafkawire", run.read_committed()),
        ("librdkafka", run.read_committed_librdkafka()),
    ):
        report = run.count(values)
        print(f"  exactlyOnce, read_committed via {reader}: {report}")
        assert report.read_back == report.sent == 4 * PER_TRIGGER
        assert report.lost == report.duplicated == report.unexpected == 0


@pytest.mark.slow
@pytest.mark.broker
def test_without_exactly_once_a_driver_killed_after_the_writes_duplicates_the_batch(
    kafka_broker: Any, tmp_path: Path
) -> None:
    """The same window 2 kill without the option: the re-run batch is written again, every row of it twice."""
    run = Run(kafka_broker.bootstrap, tmp_path, rows=2 * PER_TRIGGER, exactly_once=False)
    run.drive({"window": "after", "batch": 1})
    run.assert_pending(1)
    _assert_once(run.read_committed(), run.rows_through(1))
    run.drive(None)  # re-runs batch 1
    report = run.count(run.read_committed())
    print(f"  at-least-once, read_committed via kafkawire: {report}")
    assert report.read_back == report.sent and report.lost == report.unexpected == 0
    assert report.duplicated == len(run.rows_through(1) - run.rows_through(0)) > 0


@pytest.mark.broker
def test_a_task_re_run_skips_what_its_marker_says_committed_and_rewrites_the_rest(
    kafka_broker: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The task side of the recovery without Spark (a fake task identity): a committed task's re-run writes
    nothing, an open transaction is aborted by the re-run and written again, and a re-run with other rows
    than the committed run fails instead of guessing."""
    import pyarrow as pa

    from kafkawire.client import end_transaction
    from kafkawire.spark import transactions
    from kafkawire.spark.options import parse_sink_options

    bootstrap = kafka_broker.bootstrap
    topic = f"eos-task-{uuid.uuid4().hex[:8]}"
    with Client(bootstrap) as c:
        c.create_topics({topic: 1})
    opts = parse_sink_options({"kafka.bootstrap.servers": bootstrap, "topic": topic})
    query = uuid.uuid4().hex

    def task(batch: int, values: list[bytes]) -> tuple[int, Any]:
        monkeypatch.setattr(transactions, "current_stream_task", lambda: transactions.StreamTask(query, batch, 0))
        return transactions.write_stream_task(opts, iter([pa.record_batch([pa.array(values, pa.binary())], ["value"])]))

    def commit(handle: Any) -> None:
        with Client(bootstrap) as c:
            end_transaction(c, handle, commit=True)

    first = [f"a{i}".encode() for i in range(10)]
    sent, handle = task(0, first)
    assert sent == 10 and handle is not None
    commit(handle)  # batch 0 committed; the driver "dies" before Spark's commits/0
    assert task(0, first) == (0, None)  # the re-run: committed already, nothing written
    with pytest.raises(transactions.NonDeterministicBatchError):
        task(0, first[:9])  # a re-run that is not the same batch fails

    second = [f"b{i}".encode() for i in range(5)]
    sent, open_handle = task(1, second)  # batch 1 written, its transaction left open by a dead driver
    assert sent == 5
    sent, handle = task(1, second)  # the re-run aborts it (same transactional id) and writes again
    assert sent == 5 and handle.producer_epoch > open_handle.producer_epoch
    commit(handle)
    _assert_once(_read_committed(bootstrap, topic), set(first) | set(second))
