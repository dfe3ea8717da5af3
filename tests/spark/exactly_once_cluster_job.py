"""The Spark job of ``test_exactly_once_cluster.py``: its own process, on ``local-cluster[2,1,1024]``.

``python exactly_once_cluster_job.py BOOTSTRAP ROWS DIR TOPIC=EXACTLY_ONCE [TOPIC=EXACTLY_ONCE ...]``

One Spark application (one driver and executor start-up for all the writes) runs one write per argument, in
order: ``ROWS`` distinct values ``b"<TOPIC>-<id>"`` (the values of ``tests/faults/ledger.Ledger(TOPIC).make``)
in ``PARTITIONS`` tasks with ``df.write.format("kafkawire")`` to TOPIC, option ``exactlyOnce`` as given, on
two executors (separate JVMs with one core each, so the test can SIGKILL one while tasks run; the cluster's
master starts a new one in its place).

The first attempt of task ``FAILING_PARTITION`` fails in the writer itself after half its rows were produced
and acknowledged: a ``mapInArrow`` gives the row at the half a partition the topic does not have (attempt 0
only), so the writer's produce of that group raises ``UnknownTopicOrPartitionError`` after every earlier
group was sent (in order, acks=all). The ``mapInArrow`` appends a line to ``DIR/TOPIC.failed`` when it
injects; Spark retries the task (``spark.task.maxFailures``).

The first attempt of task ``VICTIM_PARTITION`` (a later wave) is where the test kills an executor: once its
``mapInArrow`` has passed on a bit more than half the task's rows it writes ``DIR/TOPIC.kill`` (its pid, and
a value two Arrow batches back, which the writer has certainly been handed: the batches in between may still
sit in buffers between the two Python workers) and then holds the task there until its executor dies. The
test waits until that value is in the log (everything before it was produced too: the writer's produce thread
sends in order), then SIGKILLs the executor JVM above that pid: a task killed half-way through its writes.

Transactions get ``kafka.transaction.timeout.ms`` = 10 minutes: longer than the whole test, so nothing the
test sees can come from the coordinator timing a transaction out; every open transaction of a failed or
killed attempt must be ended by the job itself (the failed attempt aborts its own; the killed attempt's is
fenced and aborted by its retry's InitProducerId, the transactional id being the same for every attempt).

Prints ``{"topic": ..., "app_id": ..., "failed_attempts": n}`` after each write; the Spark log (WARN: failed
tasks and lost executors) goes to stderr.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql import functions as F

from kafkawire.spark import session

PARTITIONS = 8
FAILING_PARTITION = 0
VICTIM_PARTITION = 5
HOLD_S = 180  # how long the victim waits to be killed before it goes on (then the test fails: no kill)
TRANSACTION_TIMEOUT_MS = 600_000


def write(spark: Any, bootstrap: str, rows: int, topic: str, exactly_once: str, marker: str, kill_marker: str) -> None:
    """One write of ``rows`` values to ``topic``, with the failure and the victim described above."""
    per_task = rows // PARTITIONS
    start = FAILING_PARTITION * per_task  # spark.range splits [0, rows) into equal contiguous slices
    fail_at = start + per_task // 2

    def hold_until_killed(last_ids: list[int]) -> None:
        tmp = f"{kill_marker}.tmp"
        with open(tmp, "w") as f:
            json.dump({"pid": os.getpid(), "value": f"{topic}-{last_ids[-3]}"}, f)
        os.rename(tmp, kill_marker)  # the test never reads half a file
        parent = os.getppid()
        deadline = time.monotonic() + HOLD_S
        while os.getppid() == parent and time.monotonic() < deadline:  # the daemon dies with its executor
            time.sleep(0.2)

    def inject(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        ctx = TaskContext.get()
        armed = ctx.partitionId() == FAILING_PARTITION and ctx.attemptNumber() == 0
        victim = ctx.partitionId() == VICTIM_PARTITION and ctx.attemptNumber() == 0
        victim_start = VICTIM_PARTITION * per_task
        last_ids: list[int] = []
        for batch in batches:
            ids = batch.column(0)
            n = batch.num_rows
            parts: list[int | None] = [None] * n
            if armed:
                first, last = ids[0].as_py(), ids[n - 1].as_py()
                if first <= fail_at <= last:
                    parts[fail_at - first] = 99  # the topic has 3 partitions: the writer fails on this row
                    with open(marker, "a") as f:
                        f.write(f"partition {ctx.partitionId()} attempt {ctx.attemptNumber()} id {fail_at}\n")
            yield pa.RecordBatch.from_arrays([batch.column(1), pa.array(parts, pa.int32())], ["value", "partition"])
            if victim:
                last_ids.append(ids[n - 1].as_py())
                if len(last_ids) >= 3 and last_ids[-3] - victim_start + 1 >= per_task // 2:
                    hold_until_killed(last_ids)
                    victim = False

    df = (
        spark.range(0, rows, numPartitions=PARTITIONS)
        .select("id", F.concat(F.lit(f"{topic}-"), F.col("id").cast("string")).cast("binary").alias("value"))
        .mapInArrow(inject, "value binary, partition int")
    )
    (
        df.write.format("kafkawire")
        .mode("append")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("kafka.transaction.timeout.ms", str(TRANSACTION_TIMEOUT_MS))
        .option("topic", topic)
        .option("exactlyOnce", exactly_once)
        .save()
    )


def main() -> None:
    bootstrap, rows, out_dir, specs = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
    spark = session(
        "local-cluster[2,1,1024]",  # two executor JVMs, one core each
        app_name="kafkawire-exactly-once-cluster",
        config={
            "spark.task.maxFailures": "4",  # the injected failure, the killed executor's task, and slack
            "spark.executor.memory": "768m",
            "spark.ui.showConsoleProgress": "false",
        },
    )
    spark.sparkContext.setLogLevel("WARN")  # TaskSetManager reports failed attempts and lost executors at WARN
    for spec in specs:
        topic, exactly_once = spec.split("=")
        marker, kill_marker = f"{out_dir}/{topic}.failed", f"{out_dir}/{topic}.kill"
        write(spark, bootstrap, rows, topic, exactly_once, marker, kill_marker)
        try:
            with open(marker) as f:
                failed = len(f.read().splitlines())
        except FileNotFoundError:
            failed = 0
        app_id = spark.sparkContext.applicationId
        print(json.dumps({"topic": topic, "app_id": app_id, "failed_attempts": failed}), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
