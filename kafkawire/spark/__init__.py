"""Kafka as a PySpark data source, through kafkawire's columnar decoder (PySpark 4.x Python data sources).

Registered as ``kafkawire`` (automatically when kafkawire is installed, through the top-level
``pyspark_kafkawire`` module; otherwise with :func:`register` or :func:`session`)::

    from kafkawire.spark import session

    spark = session("local[2]")
    df = (spark.read.format("kafkawire")
          .option("kafka.bootstrap.servers", "127.0.0.1:9092")
          .option("subscribe", "events")
          .load())

It mirrors Spark's built-in ``kafka`` source. Read schema: ``key binary, value binary, topic string,
partition int, offset long, timestamp timestamp, timestampType int``, plus ``headers
array<struct<key:string,value:binary>>`` with ``includeHeaders=true`` (null when a record has none).

Read options (names case-insensitive): ``kafka.bootstrap.servers`` (required); exactly one of ``assign``
(``{"topic":[0,1]}``), ``subscribe`` (comma list), ``subscribePattern`` (regex, whole topic name);
``startingOffsets`` / ``endingOffsets`` (``earliest``, ``latest`` or ``{"topic":{"0":23,"1":-2}}``, -2
earliest, -1 latest; batch defaults earliest → latest, streaming starts at latest);
``startingTimestamp`` / ``startingOffsetsByTimestamp`` / ``endingTimestamp`` / ``endingOffsetsByTimestamp``
(ms; a timestamp wins over offsets), ``startingOffsetsByTimestampStrategy`` (``error``/``latest``),
``failOnDataLoss`` (default true), ``maxOffsetsPerTrigger``, ``minOffsetsPerTrigger``, ``maxTriggerDelay``,
``minPartitions``, ``maxRecordsPerPartition``, ``includeHeaders``, ``kafkaConsumer.pollTimeoutMs``, and
``kafka.*`` for the client (``client.id``, ``request.timeout.ms``, ``max.partition.fetch.bytes``,
``fetch.max.wait.ms``, ``isolation.level``).

Write options: ``kafka.bootstrap.servers``, ``topic`` (overrides a ``topic`` column), ``includeHeaders``
(unset: a ``headers`` column is written when present, as Spark's sink does; ``false``: headers are
dropped), ``kafka.acks``, ``kafka.compression.type``, ``kafka.enable.idempotence``. Written columns:
``value`` (string/binary, required), ``key`` (string/binary; keyed rows go to the murmur2 partition of the
key, like the Java producer), ``topic`` (string), ``partition`` (int), ``headers``
(``array<struct<key:string,value:binary>>``). Only the append save mode exists (as in Spark).

``exactlyOnce=true`` (batch and streaming writes; default false: at-least-once, like Spark's sink): each
task writes its rows inside a Kafka transaction and does not commit it; the job's (or micro-batch's)
commit in the driver ends every task's transaction and its abort aborts them. The transactional id is a
per-job prefix (streaming: the query id) and the task's partition id, so a retried or speculative attempt
fences the earlier one and aborts what it wrote. Readers must set ``isolation.level=read_committed`` to see
each row once. Cost: one transaction per task (per micro-batch), i.e. an InitProducerId, an
AddPartitionsToTxn per partition (none under Kafka 4's transaction protocol v2) and an EndTxn;
``kafka.transaction.timeout.ms`` (default 60000, capped by
the broker's ``transaction.max.timeout.ms``) must exceed the time from a task's first write to the
driver's commit (the trigger interval plus the batch's run time), else the coordinator aborts the
transaction and the commit fails as fenced. Until a batch commits, read_committed readers of the topic
stop at its first open transaction. Streaming: each task's transaction also commits a marker for its batch
(:mod:`kafkawire.spark.transactions`), so a query restarted after its driver died between the tasks' writes
and Spark's record of the commit re-runs that batch without writing committed rows again (docs/EXACTLY_ONCE.md).

Streaming progress: PySpark's Python streaming API reports no source metrics (``metrics`` is ``{}``);
:func:`kafkawire.spark.progress.offsets_behind_latest` computes Spark's Kafka source metrics from a progress
entry. Streaming offsets live in the query's checkpoint; a restarted query continues right after the last
committed offset. ``Trigger.AvailableNow`` reads what existed when the query started, honouring
``maxOffsetsPerTrigger`` per micro-batch.
"""

from __future__ import annotations

from typing import Any

from .errors import InvalidOptionError, KafkaDataLossError, KafkaSparkError, WriteSchemaError
from .session import SparkSetupError, activate, check_worker_python, prepare_environment, register, session

__all__ = [
    "InvalidOptionError",
    "KafkaDataLossError",
    "KafkaSparkError",
    "KafkaWireDataSource",
    "SparkSetupError",
    "WriteSchemaError",
    "activate",
    "check_worker_python",
    "prepare_environment",
    "register",
    "session",
]


def __getattr__(name: str) -> Any:
    # The data source class imports pyspark; keep `import kafkawire.spark` cheap without it.
    if name == "KafkaWireDataSource":
        from .._optional import require

        require("pyspark", "the kafkawire Spark data source")
        from .source import KafkaWireDataSource

        return KafkaWireDataSource
    raise AttributeError(name)
