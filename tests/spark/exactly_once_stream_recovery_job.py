"""A streaming query for ``test_exactly_once_stream_recovery.py``, run as its own driver process so that a test
can kill the whole driver in the middle of a micro-batch's commit and restart the query from its checkpoint.

``python exactly_once_stream_recovery_job.py '<json>'`` with the keys ``bootstrap``, ``source`` (the input
topic), ``topic`` (the output topic), ``checkpoint``, ``exactly_once`` ("true"/"false"), ``max_per_trigger``
and ``fault`` (null, or ``{"window": "before" | "partial" | "after", "batch": K, "report": path}``).

The query reads ``source`` with ``format("kafkawire")`` (Trigger.AvailableNow, at most ``max_per_trigger``
records per micro-batch) and writes the values to ``topic`` with ``format("kafkawire")`` and
``exactlyOnce``. It prints ``{"done": true, ...}`` when it has written everything.

The fault is injected by a test-only subclass of the data source (``kafkawire_fault``) whose stream writer
wraps the real writer's commit of micro-batch K: the whole driver (this process, its JVM, the Python
workers) is SIGKILLed

* ``before``: when the batch's commit starts (every task's transaction written and open);
* ``partial``: after the first task's transaction was committed (EndTxn), before the others;
* ``after``: after the real commit returned (every transaction committed), before Spark records the batch in
  its checkpoint's ``commits/`` log.

Before killing, the hook appends one JSON line to the fault's ``report`` file (what it did), so the test can
tell the kill was the injected one.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

from kafkawire.spark import session
from kafkawire.spark.source import KafkaStreamWriter, KafkaWireDataSource, _exactly_once, _sink_opts


def _kill_driver(fault: dict, what: dict) -> None:
    """SIGKILL the driver process group (this job's Python process and its JVM), then this worker's own group
    (the PySpark daemon and its workers, which PySpark puts in a group of their own)."""
    with open(fault["report"], "a") as f:
        f.write(json.dumps(what) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.killpg(int(fault["driver_pgid"]), signal.SIGKILL)
    os.killpg(os.getpgrp(), signal.SIGKILL)


class FaultyStreamWriter(KafkaStreamWriter):
    """Test fault hook: the real writer, with the driver killed at one point of batch K's commit."""

    def __init__(self, opts: Any, exactly_once: bool, fault: dict | None) -> None:
        super().__init__(opts, exactly_once)
        self.fault = fault

    def commit(self, messages: list, batchId: int) -> None:  # noqa: N803 (Spark's name)
        fault = self.fault
        if fault is None or batchId != fault["batch"]:
            super().commit(messages, batchId)
            return
        handles = [m.transaction for m in messages if m is not None and m.transaction]
        base = {"window": fault["window"], "batch": batchId, "transactions": len(handles)}
        if fault["window"] == "before":
            _kill_driver(fault, {**base, "committed": 0})
        if fault["window"] == "partial":
            from kafkawire.client import Client, TransactionHandle, end_transaction

            if len(handles) < 2:
                raise AssertionError(f"the partial window needs two transactions in batch {batchId}: {handles}")
            with Client(self.opts.kafka_params["bootstrap.servers"]) as client:
                end_transaction(client, TransactionHandle(*handles[0]), commit=True)
            _kill_driver(fault, {**base, "committed": 1})
        super().commit(messages, batchId)
        _kill_driver(fault, {**base, "committed": len(handles)})


class FaultyKafkaWire(KafkaWireDataSource):
    """``format("kafkawire_fault")``: kafkawire with :class:`FaultyStreamWriter` (options ``faultWindow``,
    ``faultBatch``, ``faultReport``, ``faultDriverPgid``)."""

    @classmethod
    def name(cls) -> str:
        return "kafkawire_fault"

    def streamWriter(self, schema: Any, overwrite: bool) -> KafkaStreamWriter:  # noqa: N802 (Spark's name)
        o = {str(k).lower(): v for k, v in dict(self.options).items()}
        fault = None
        if o.get("faultwindow"):
            fault = {
                "window": o["faultwindow"],
                "batch": int(o["faultbatch"]),
                "report": o["faultreport"],
                "driver_pgid": o["faultdriverpgid"],
            }
        return FaultyStreamWriter(_sink_opts(self.options, schema, False), _exactly_once(self.options), fault)


def main() -> None:
    cfg = json.loads(sys.argv[1])
    started = time.monotonic()
    spark = session(
        "local[2]",
        app_name="kafkawire-exactly-once-recovery",
        config={"spark.ui.showConsoleProgress": "false", "spark.sql.shuffle.partitions": "2"},
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(FaultyKafkaWire)
    print(json.dumps({"session_s": round(time.monotonic() - started, 1)}), flush=True)
    fault = cfg.get("fault") or {}
    stream = (
        spark.readStream.format("kafkawire")
        .option("kafka.bootstrap.servers", cfg["bootstrap"])
        .option("subscribe", cfg["source"])
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(cfg["max_per_trigger"]))
        .load()
    )
    writer = (
        stream.select("value")
        .writeStream.format("kafkawire_fault")
        .option("kafka.bootstrap.servers", cfg["bootstrap"])
        .option("topic", cfg["topic"])
        .option("exactlyOnce", cfg["exactly_once"])
        .option("checkpointLocation", cfg["checkpoint"])
        .trigger(availableNow=True)
    )
    if fault:
        writer = (
            writer.option("faultWindow", fault["window"])
            .option("faultBatch", str(fault["batch"]))
            .option("faultReport", fault["report"])
            .option("faultDriverPgid", str(os.getpgrp()))
        )
    query = writer.start()
    query.awaitTermination(300)
    if query.exception() is not None:
        raise RuntimeError(f"query failed: {query.exception()}")
    progress = query.recentProgress
    print(
        json.dumps(
            {
                "done": True,
                "last_batch": progress[-1]["batchId"] if progress else None,
                "batch_ms": {p["batchId"]: p["durationMs"].get("triggerExecution") for p in progress},
            }
        ),
        flush=True,
    )
    spark.stop()


if __name__ == "__main__":
    main()
