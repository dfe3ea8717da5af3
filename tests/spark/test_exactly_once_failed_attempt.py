"""``exactlyOnce`` writes (issue 14): a task attempt that fails aborts its own transaction.

Left open, the transaction would stop every read_committed reader of the partitions it wrote at its first
record (the last stable offset) until a retry fenced it, or, when Spark gives up on the task and aborts the
job, until ``transaction.timeout.ms``: the job's abort only receives the handles of the tasks that
succeeded. The writer runs here without Spark (as a Python worker runs it; outside a task the partition id
is 0), against Apache Kafka's transaction coordinator, with a transaction timeout far longer than the test.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from kafkawire.client import Client
from kafkawire.spark.options import parse_sink_options
from kafkawire.spark.source import KafkaBatchWriter

TRANSACTION_TIMEOUT_MS = 600_000
#: The abort's markers are written after EndTxn returns (the coordinator answers once the abort is
#: prepared), so the last stable offset catches up shortly after: this bounds "shortly", far below the
#: transaction timeout that would otherwise end the transaction.
STABLE_WITHIN_S = 30


def _offsets(client: Client, topic: str, isolation: str) -> dict[int, int]:
    return {p: lo.offset for p, lo in client.list_offsets(topic, isolation=isolation).items()}


def _failing_batches(bootstrap: str, topic: str, rows: int) -> Iterator[pa.RecordBatch]:
    yield pa.RecordBatch.from_arrays([pa.array([str(i).encode() for i in range(rows)], pa.binary())], ["value"])
    # The writer produces on a thread of its own while it reads its input: fail once the records are in the log.
    with Client(bootstrap) as c:
        deadline = time.monotonic() + STABLE_WITHIN_S
        while sum(_offsets(c, topic, "read_uncommitted").values()) < rows:
            assert time.monotonic() < deadline, "the first batch never reached the log"
            time.sleep(0.05)
    raise RuntimeError("the task failed upstream of the writer")


@pytest.mark.parametrize("failure", ["upstream", "writer"])
@pytest.mark.broker
def test_a_failed_attempt_aborts_its_transaction(kafka_broker: Any, failure: str) -> None:
    bootstrap = kafka_broker.bootstrap
    topic = f"eos-failed-attempt-{failure}-{uuid.uuid4().hex[:8]}"
    with Client(bootstrap) as c:
        c.create_topics({topic: 2})
    opts = parse_sink_options(
        {
            "kafka.bootstrap.servers": bootstrap,
            "topic": topic,
            "kafka.transaction.timeout.ms": str(TRANSACTION_TIMEOUT_MS),
        }
    )
    writer = KafkaBatchWriter(opts, exactly_once=True)
    if failure == "upstream":
        batches = _failing_batches(bootstrap, topic, 500)
        expected: type[BaseException] = RuntimeError
    else:  # the writer's own produce fails after the first batch was written: a partition the topic lacks
        good = pa.RecordBatch.from_arrays(
            [pa.array([b"v"] * 500, pa.binary()), pa.array([0] * 500, pa.int32())], ["value", "partition"]
        )
        bad = pa.RecordBatch.from_arrays(
            [pa.array([b"v"], pa.binary()), pa.array([7], pa.int32())], ["value", "partition"]
        )
        batches = iter([good, bad])
        expected = Exception
    with pytest.raises(expected):
        writer.write(batches)

    with Client(bootstrap) as c:
        log_end = _offsets(c, topic, "read_uncommitted")
        assert sum(log_end.values()) >= 500  # the attempt's records reached the log before it failed
        deadline = time.monotonic() + STABLE_WITHIN_S
        while (stable := _offsets(c, topic, "read_committed")) != _offsets(c, topic, "read_uncommitted"):
            assert time.monotonic() < deadline, f"transaction still open: stable {stable}, log end {log_end}"
            time.sleep(0.2)
        committed = sum(len(c.fetch(topic, p, 0, isolation="read_committed", max_wait_ms=10)) for p in stable)
    assert committed == 0  # aborted: read_committed readers see none of it, and are not held up by it
