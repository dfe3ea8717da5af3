"""KIP-320 in the Consumer and the range reader, on a 3-node Apache Kafka 4.4 cluster whose log is truncated
under the readers (tests/kafka_cluster.py): a leader serves records 10-14 its follower never copied and dies;
the follower wins an unclean election and takes other records at offsets 10-12.

Two consumers had read through offset 14 (position 15, epoch E0). Neither may go on as if records 10-14 were
committed data: the one with ``auto_offset_reset="earliest"`` goes back to offset 10, the first offset known
to diverge, and reads the new records 10-12 (as Java's consumer does with a reset policy); the one with
``"none"`` raises LogTruncationError naming the position and the divergence point (Java's
LogTruncationException). A range reader (the Spark source's loop) that had yielded 0-14 raises it too: a
bounded read cannot reset. Java's KafkaConsumer runs beside them in the same scenario (tests/client/java/
TruncationReader.java) and does exactly that with the same two policies. Without KIP-320 the first would have
jumped to the log start or end (offset out of range) and the records at 10-12 been skipped or re-read with no
word of the truncation.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from kafka_cluster import diverge, kafka_cluster, prepare_divergence

from kafkawire.admin import Admin
from kafkawire.client import Client
from kafkawire.client.consumer.consumer import Consumer
from kafkawire.client.consumer.ranges import read_range
from kafkawire.client.errors import LogTruncationError, NoOffsetForPartitionError
from kafkawire.testing.java import java_command

pytestmark = [pytest.mark.broker, pytest.mark.slow]

# Node 3 stays leader once elected (the preferred node 2 would take the lead back after its check interval).
STAY = {"auto.leader.rebalance.enable": "false"}


def read(consumer: Consumer, until: int, timeout: float = 60.0) -> list[tuple[int, bytes]]:
    """Poll until ``until`` records came (offset, value), or ``timeout``."""
    got: list[tuple[int, bytes]] = []
    deadline = time.monotonic() + timeout
    while len(got) < until and time.monotonic() < deadline:
        for cols in consumer.poll(timeout_ms=500).values():
            got += [(int(o), v) for o, v in zip(cols.offset, cols.value.to_pylist())]
    return got


JAVA_READER = Path(__file__).parent / "java" / "TruncationReader.java"


def java_reader(bootstrap: str, topic: str, reset: str) -> subprocess.Popen[str]:
    """Java's KafkaConsumer reading the first 15 records, then waiting for the truncation (stdin)."""
    cmd = java_command(JAVA_READER, bootstrap, topic, reset, "15", heap="128m")
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def java_lines(proc: subprocess.Popen[str], until: str) -> list[dict]:
    """JSON lines of ``proc`` up to and including the event ``until``."""
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        if line.startswith("{"):
            lines.append(json.loads(line))
            if lines[-1].get("event") == until:
                return lines
    raise AssertionError(f"the Java reader ended before {until!r}: {lines}")


def test_consumers_detect_the_truncated_log_and_follow_their_reset_policy():
    topic, tp = "truncated", ("truncated", 0)
    with kafka_cluster(3, STAY) as nodes, Admin(nodes[0].bootstrap, retry_timeout_ms=60_000) as admin:
        old_epoch = prepare_divergence(nodes, admin, topic)
        options = dict(retry_timeout_ms=60_000, request_timeout_ms=10_000)
        resetting = Consumer(nodes[0].bootstrap, auto_offset_reset="earliest", **options)
        strict = Consumer(nodes[0].bootstrap, auto_offset_reset="none", **options)
        reader = Client(nodes[0].bootstrap, **options)
        javas: dict[str, subprocess.Popen[str]] = {}
        try:
            ranges = read_range(reader, topic, 0, 0, None, deadline=reader.deadline(600_000), max_wait_ms=200)
            seen: list[bytes] = []
            while len(seen) < 15:
                s = next(ranges)
                seen += s.columns.value.to_pylist()[s.lo : s.hi]
            assert seen[-1] == b"lost-4"
            javas = {reset: java_reader(nodes[0].bootstrap, topic, reset) for reset in ("earliest", "none")}
            for proc in javas.values():
                assert java_lines(proc, "read")[-1]["position"] == 15
            for c in (resetting, strict):
                c.assign([tp])
                c.seek(tp, 0)
                got = read(c, 15)
                assert [v for _, v in got] == [b"both-%d" % i for i in range(10)] + [b"lost-%d" % i for i in range(5)]
                assert c.position(tp) == 15

            d = diverge(nodes, admin, topic, old_epoch)
            java_after = {}
            for reset, proc in javas.items():
                assert proc.stdin is not None
                proc.stdin.write("go\n")
                proc.stdin.flush()
                java_after[reset] = [x for x in java_lines(proc, "done") if "event" not in x]
                proc.wait(timeout=60)
            # Java's consumer, same cluster, same moment: what kafkawire's must match.
            assert java_after["earliest"] == [{"o": 10, "v": "new-0"}, {"o": 11, "v": "new-1"}, {"o": 12, "v": "new-2"}]
            assert java_after["none"] == [{"error": "LogTruncationException", "position": 15, "divergent": 10}]

            # With a reset policy: back to 10, the first offset known to diverge; the new records 10-12 come,
            # and none of the lost ones again.
            got = read(resetting, 3)
            assert got == [(10, b"new-0"), (11, b"new-1"), (12, b"new-2")]
            assert resetting.position(tp) == 13
            assert read(resetting, 1, timeout=2) == []

            # Without one: the truncation is raised, with where it happened.
            with pytest.raises(LogTruncationError) as info:
                read(strict, 1)
            assert (info.value.partition, info.value.position, info.value.divergent_offset) == (tp, 15, 10)
            assert d.new_epoch > d.old_epoch

            # The range reader had yielded up to 14: it stops with the same error instead of going on.
            with pytest.raises(LogTruncationError) as info:
                next(ranges)
            assert (info.value.position, info.value.divergent_offset) == (15, 10)
        finally:
            for proc in javas.values():
                if proc.poll() is None:
                    proc.kill()
            reader.close()
            resetting.close()
            strict.close()


def test_none_policy_without_a_committed_offset(kafka_broker):
    with Admin(kafka_broker.bootstrap) as admin:
        topic = f"kip320-none-{time.monotonic_ns()}"
        admin.create_topics({topic: 1})
    with Consumer(kafka_broker.bootstrap, group_id=f"{topic}-g", auto_offset_reset="none") as c:
        c.assign([(topic, 0)])
        with pytest.raises(NoOffsetForPartitionError, match="none"):
            c.poll(timeout_ms=2000)
    with pytest.raises(ValueError, match="'none'"):
        Consumer(kafka_broker.bootstrap, auto_offset_reset="smallest")
