"""Helpers of the share group tests: the broker config they need, fresh groups and topics."""

from __future__ import annotations

import itertools
import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from kafkawire.admin import Admin, AlterConfigOp
from kafkawire.admin.types import ConfigResource
from kafkawire.client import ShareConsumer
from kafkawire.client.cluster.retry import is_retriable
from kafkawire.testing.java import java_command

LOCK_MS = 5_000
DELIVERY_LIMIT = 3
SHARE_BROKER_CONFIG = {
    "group.share.min.record.lock.duration.ms": "1000",
    "group.share.record.lock.duration.ms": str(LOCK_MS),
    "group.share.delivery.count.limit": str(DELIVERY_LIMIT),
}
_names = itertools.count()
JAVA_MEMBER = Path(__file__).parent / "java" / "ShareMember.java"


def new_group(bootstrap: str, prefix: str = "sg") -> str:
    """A fresh share group that starts at the earliest offset (a new one starts at the latest)."""
    name = f"{prefix}-{next(_names)}"
    with Admin(bootstrap) as admin:
        admin.alter_configs({ConfigResource.group(name): [AlterConfigOp("share.auto.offset.reset", "set", "earliest")]})
    return name


def new_topic(client: Any, partitions: int, prefix: str = "st") -> str:
    name = f"{prefix}-{next(_names)}"
    client.create_topics({name: partitions})
    return name


class JavaMember:
    """Kafka's KafkaShareConsumer in a JVM: what it accepted, read from its stdout by a thread."""

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        cmd = java_command(JAVA_MEMBER, bootstrap, topic, group, "50")
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.accepted: list[tuple[int, int, int]] = []
        self.failed = 0
        self.unconfirmed: list[tuple[int, int, int]] = []
        self.ready = threading.Event()
        self.closed = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if not line.startswith("{"):
                continue
            msg = json.loads(line)
            if msg.get("ready"):
                self.ready.set()
            if msg.get("closed"):
                self.closed.set()
            self.accepted.extend(tuple(r) for r in msg.get("accepted", ()))
            self.failed += msg.get("failed", 0)
            self.unconfirmed.extend(tuple(r) for r in msg.get("unconfirmed", ()))

    def stop(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.write("stop\n")
            self.proc.stdin.flush()
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(timeout=10)


def resilient_member(
    bootstrap: str, topic: str, group: str, stop: threading.Event, ledger: dict, errors: list, pace: float = 0.0
) -> None:
    """A kafkawire member that polls, accepts everything and commits after every poll until ``stop`` (then
    closes: it leaves the group), riding out retriable errors (a broker restart). ``ledger`` lists gain
    (partition, offset) pairs: ``delivered``, ``confirmed`` (the commit confirmed the partition's
    acknowledgement) or ``unconfirmed``; ``retried`` the errors ridden out. Other errors go to ``errors``."""
    try:
        with ShareConsumer(bootstrap, group_id=group, acknowledgement_mode="explicit", max_poll_records=100) as c:
            c.subscribe([topic])
            while not stop.is_set():
                out = {}
                try:
                    out = c.poll(1000)
                    for tp, cols in out.items():
                        c.acknowledge(tp, cols.offset, "accept")
                    results = c.commit(timeout_ms=15_000) if out else {}
                except Exception as e:
                    if not is_retriable(e):
                        raise
                    ledger["retried"].append(repr(e))
                    results = {}  # a commit without an answer: what this poll delivered is unconfirmed
                for (_, p), cols in out.items():
                    recs = [(p, int(o)) for o in cols.offset]
                    ledger["delivered"].extend(recs)
                    confirmed = results.get((topic, p), "none") is None
                    (ledger["confirmed"] if confirmed else ledger["unconfirmed"]).extend(recs)
                time.sleep(pace)  # leave the other members a share of the records
    except BaseException as e:
        errors.append(e)
