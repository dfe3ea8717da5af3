"""Exactly once through a crash: consume-transform-produce with transactions (issue 14).

A worker process (``txn_worker.py``) reads an input topic as a group member and, per poll, writes the
records to an output topic and the group's offsets in one transaction. The test SIGKILLs it while a
transaction is open (records written, offsets sent, not committed), then starts a second worker with the
same transactional id: its ``init_transactions`` fences the dead one and aborts the open transaction,
and it carries on from the offsets the last committed transaction left. A read_committed reader of the
output must then see every input value exactly once (ledger: lost 0, duplicated 0), while the log itself
holds the aborted records too (so the kill really landed mid-transaction).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from visibility import read_values, wait_stable

from kafkawire.client import Client, TransactionHandle, end_transaction

from .ledger import Ledger

WORKER = Path(__file__).with_name("txn_worker.py")
TASK = Path(__file__).with_name("txn_task.py")


def _start(args: list[str], script: Path = WORKER) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def _events(proc: subprocess.Popen[str], until: str, timeout: float) -> list[dict[str, Any]]:
    """Read the worker's JSON lines until an event named ``until`` (or its exit)."""
    assert proc.stdout is not None
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("{"):
            seen.append(json.loads(line))
            if seen[-1]["event"] == until:
                return seen
    err = proc.stderr.read() if proc.poll() is not None and proc.stderr else ""
    raise AssertionError(f"worker never said {until!r}; saw {[e['event'] for e in seen]}; stderr: {err[-3000:]}")


@pytest.mark.broker
def test_consume_transform_produce_exactly_once_through_a_worker_crash(kafka_broker: Any) -> None:
    bootstrap = kafka_broker.bootstrap
    run = f"eos-{os.getpid()}-{int(time.time() * 1000) % 100_000}"
    source, sink, group, tid = f"{run}-in", f"{run}-out", f"{run}-g", f"{run}-tx"
    ledger = Ledger(run)
    with Client(bootstrap) as c:
        c.create_topics({source: 2, sink: 2})
        for _ in range(40):  # 40 produce calls of 50: many batches, so many small transactions
            values = ledger.make(50)
            c.produce(source, values)
            ledger.acknowledged(values)

    args = [bootstrap, source, sink, group, tid]
    first = _start([*args, "400"])
    try:
        events = _events(first, "in-txn", 90)  # the first transaction is open ...
        events += _events(first, "committed", 30)
        events += _events(first, "in-txn", 30)  # ... some committed, and another one open: kill it now
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    finally:
        if first.poll() is None:
            first.kill()
    committed_before = sum(e["records"] for e in events if e["event"] == "committed")
    assert 0 < committed_before < 2000, committed_before

    second = _start([*args, "0"])
    try:
        events2 = _events(second, "finished", 180)
        assert second.wait(30) == 0
    finally:
        if second.poll() is None:
            second.kill()
    assert events2[0]["event"] == "started"

    with Client(bootstrap) as c:
        wait_stable(c, sink)  # the second worker's last EndTxn returned before its commit markers were written
        out = read_values(c, sink, "read_committed", timeout=60)
        raw = read_values(c, sink, "read_uncommitted", timeout=60)
    ledger.read(out)
    report = ledger.report()
    print(f"\nconsume-transform-produce through SIGKILL: {report}; records in the log {len(raw)}")
    assert report.lost == 0, sorted(ledger.lost_values())[:10]
    assert report.duplicated == 0
    assert report.unexpected == 0
    assert report.read_back == 2000
    # The killed worker's open transaction was written to the log and aborted: not visible, but there.
    assert len(raw) > len(out)


@pytest.mark.broker
def test_a_task_that_dies_after_handing_over_is_committed_once_by_the_driver(kafka_broker: Any) -> None:
    """The write side of an exactly-once Spark sink without Spark: attempt 1 of a task writes half its
    rows and is SIGKILLed; attempt 2 (same deterministic transactional id) fences it, which aborts those
    rows, writes all of them, hands the transaction over and is SIGKILLed too; the "driver" then commits
    with the handle (twice, as a driver unsure of its first commit would). read_committed: every row once."""
    bootstrap = kafka_broker.bootstrap
    run = f"handover-{os.getpid()}-{int(time.time() * 1000) % 100_000}"
    topic = f"{run}-out"
    ledger = Ledger(run)
    values = ledger.make(1000)
    with Client(bootstrap) as c:
        c.create_topics({topic: 2})
    args = [bootstrap, topic, f"{run}-task-0", "0", str(len(values))]

    attempt1 = _start([*args, "die-halfway"], TASK)
    try:
        _events(attempt1, "half", 90)
    finally:
        attempt1.send_signal(signal.SIGKILL)
        attempt1.wait(10)
    attempt2 = _start([*args, "hand-over"], TASK)
    try:
        event = _events(attempt2, "handle", 90)[-1]
    finally:
        attempt2.send_signal(signal.SIGKILL)
        attempt2.wait(10)
    ledger.acknowledged(values)  # handed over: written and flushed, waiting for the commit
    handle = TransactionHandle(event["transactional_id"], event["producer_id"], event["producer_epoch"])

    with Client(bootstrap) as c:
        assert read_values(c, topic, "read_committed", timeout=60) == []  # nothing visible before the driver's commit
        end_transaction(c, handle, commit=True)
        end_transaction(c, handle, commit=True)
        wait_stable(c, topic)  # EndTxn returned; the commit markers may still be coming
        out = read_values(c, topic, "read_committed", timeout=60)
        raw = read_values(c, topic, "read_uncommitted", timeout=60)
    ledger.read(out)
    report = ledger.report()
    print(f"\ntask attempts killed, driver commit by handle: {report}; records in the log {len(raw)}")
    assert (report.lost, report.duplicated, report.unexpected, report.read_back) == (0, 0, 0, 1000)
    assert len(raw) == 1500  # attempt 1's half is in the log, aborted by attempt 2's init_transactions
