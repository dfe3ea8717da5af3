"""A Spark job for ``test_exactly_once_write.py`` (its own process: it needs task retries, local[2,2]).

``python exactly_once_job.py BOOTSTRAP TOPIC ROWS EXACTLY_ONCE [SOURCE_TOPIC CHECKPOINT]``

With SOURCE_TOPIC (holding the values ``str(i)`` for i < ROWS) the job is a streaming query instead:
``readStream`` from it, ``writeStream`` to TOPIC (availableNow, at most ROWS/4 records per micro-batch),
with the same failure injected into one task of one micro-batch.

Writes ``ROWS`` distinct values (``str(id)``) in 4 partitions with ``df.write.format("kafkawire")``. The
first attempt of partition 0's task fails in the writer after ~90% of its rows were produced (a UDF gives
one row a partition the topic does not have, on attempt 0 only), and Spark retries it. Prints
``{"done": true, "failed_attempts": n}`` (n from a marker file the UDF appends to when it injects the
failure).
"""

from __future__ import annotations

import json
import sys

from pyspark import TaskContext
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType

from kafkawire.spark import session


def main() -> None:
    bootstrap, topic, rows, exactly_once = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    source, checkpoint = (sys.argv[5], sys.argv[6]) if len(sys.argv) > 6 else (None, None)
    spark = session(
        "local[2,2]",  # two cores, and a failed task is retried once
        app_name="kafkawire-exactly-once",
        config={"spark.sql.execution.arrow.maxRecordsPerBatch": "500", "spark.ui.showConsoleProgress": "false"},
    )
    spark.sparkContext.setLogLevel("ERROR")
    per_partition = rows // 4
    fail_at = int(per_partition * 0.9)
    marker = f"/tmp/kafkawire-eos-{topic}.failed"

    @F.udf(returnType=IntegerType())
    def partition(i: int) -> int | None:
        # The failure happens in the writer itself, on the row after ~90% of the task's rows were produced:
        # a partition the topic does not have (UnknownTopicOrPartitionError) on attempt 0 only.
        ctx = TaskContext.get()
        if ctx.partitionId() == 0 and ctx.attemptNumber() == 0 and i == fail_at:
            with open(marker, "a") as f:
                f.write("failed\n")
            return 99
        return None

    @F.udf(returnType=IntegerType())
    def partition_stream(i: int) -> int | None:
        ctx = TaskContext.get()
        if ctx.attemptNumber() == 0 and i == fail_at:
            with open(marker, "a") as f:
                f.write("failed\n")
            return 99
        return None

    if source is None:
        df = spark.range(0, rows, numPartitions=4).select(
            F.col("id").cast("string").cast("binary").alias("value"), partition("id").alias("partition")
        )
        (
            df.write.format("kafkawire")
            .mode("append")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("topic", topic)
            .option("exactlyOnce", exactly_once)
            .save()
        )
    else:
        stream = (
            spark.readStream.format("kafkawire")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", source)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", str(rows // 4))
            .load()
        )
        # The failing row is the one whose value is fail_at; TaskContext.partitionId() is that of the
        # micro-batch's task, so inject on whichever task meets the value (attempt 0 only).
        fail_value = F.col("value").cast("string").cast("long")
        query = (
            stream.select("value", partition_stream(fail_value).alias("partition"))
            .writeStream.format("kafkawire")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("topic", topic)
            .option("exactlyOnce", exactly_once)
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(400)
        if query.exception() is not None:
            raise RuntimeError(f"query failed: {query.exception()}")
    try:
        with open(marker) as f:
            failed = len(f.read().splitlines())
    except FileNotFoundError:
        failed = 0
    print(json.dumps({"done": True, "failed_attempts": failed}), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
