"""Exactly-once streaming writes: one transaction per task and micro-batch, with a marker that survives the driver.

A micro-batch's tasks each write in a transaction and hand it over uncommitted; the batch's commit on the
driver ends them with EndTxn (:func:`kafkawire.client.end_transaction`). Those EndTxn calls are separate
requests to the transaction coordinator, one per task, and Spark records the batch as done (its
checkpoint's ``commits/`` log) only after the commit returns. A driver killed in between leaves Kafka in one
of three states, and a restarted query re-runs the same batch id (its offsets are in ``offsets/``, not
``commits/``) with the same input in every case:

1. no transaction of the batch committed (killed before, or during, the writes);
2. some committed (killed between two EndTxn calls);
3. all committed (killed after the commit, before Spark wrote ``commits/``).

How the re-run tells them apart: each task's transaction also commits a *marker*, a consumer-group offset
(KIP-98's consume-transform-produce: output records and the position they were made from commit
atomically) in the group named like the task's transactional id, saying "batch N of this task is
committed" (offset ``N + 1``, like a consumer's next position). A task of the re-run

* calls InitProducerId with its transactional id (``kafkawire-spark-stream-<query id>-<task partition>``:
  the query id lives in the checkpoint, so it is the same after a restart), which fences every earlier
  writer of that id and aborts a transaction a killed driver left open (case 1, and the uncommitted tasks
  of case 2), and waits for a commit already under way to finish;
* then reads its marker (OffsetFetch with ``require_stable``, KIP-447): if it says batch N committed
  (case 3, and the committed tasks of case 2), the task writes nothing; otherwise it writes its rows, and
  its marker, in a new transaction that the re-run's commit ends.

So every task's rows become visible exactly once, whichever of the three states the driver left.

This differs from Flink's KafkaSink, which keeps each pre-committed transaction in the checkpoint and, on
recovery, commits it again ("roll forward", ``KafkaCommitter``) and aborts lingering ones by probing
transactional ids (``TransactionAborter``). Spark hands a sink's commit messages to nothing durable before
calling its commit, so the re-run cannot roll forward; it rolls back what was not committed and recomputes
it, which needs the micro-batch to be deterministic (Spark re-runs a batch from the offsets in its
checkpoint; ``foreachBatch``'s exactly-once recipe rests on the same property). Spark's own file sink does
the same at batch granularity: it skips a batch id its ``_spark_metadata`` log already holds.

See docs/EXACTLY_ONCE.md for the cost and the caveats (what readers set, ``transaction.timeout.ms``,
speculation).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .arrow import ProduceGroup, batch_to_produce_groups
from .kafka_access import KafkaAccess
from .options import SinkOptions
from .writing import ProduceThread

__all__ = [
    "BATCH_ID_PROPERTY",
    "QUERY_ID_PROPERTY",
    "STREAM_TXN_PREFIX",
    "NonDeterministicBatchError",
    "StreamTask",
    "abort_transactions",
    "committed_batches",
    "current_stream_task",
    "write_stream_task",
]

log = logging.getLogger("kafkawire.spark")

#: Prefix of the transactional ids (and marker groups) of exactly-once streaming writes.
STREAM_TXN_PREFIX = "kafkawire-spark-stream"
#: Local properties a micro-batch's tasks carry (Spark's ``MicroBatchExecution.BATCH_ID_KEY`` and
#: ``StreamExecution.QUERY_ID_KEY``; the query id is the one persisted in the checkpoint, not the run id).
BATCH_ID_PROPERTY = "streaming.sql.batchId"
QUERY_ID_PROPERTY = "sql.streaming.queryId"
#: Partition of each written topic under which a marker is kept (partition 0 exists in every topic).
MARKER_PARTITION = 0


@dataclass(frozen=True)
class StreamTask:
    """Which task of which micro-batch of which query is writing."""

    query_id: str
    batch_id: int
    partition: int

    @property
    def transactional_id(self) -> str:
        """The same for every batch of this task partition: a re-run fences and aborts what an earlier run
        left open, and the coordinator keeps one id per task partition rather than one per batch."""
        return f"{STREAM_TXN_PREFIX}-{self.query_id}-{self.partition}"

    @property
    def marker_group(self) -> str:
        """The consumer group whose committed offset is this task's marker (named like the transactional id)."""
        return self.transactional_id


def current_stream_task() -> StreamTask:
    """The :class:`StreamTask` of the Spark task this runs in (from ``TaskContext`` local properties)."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:
        raise RuntimeError("exactlyOnce streaming writes run inside a Spark task (no TaskContext)")
    query, batch = ctx.getLocalProperty(QUERY_ID_PROPERTY), ctx.getLocalProperty(BATCH_ID_PROPERTY)
    if not query or batch is None:
        raise RuntimeError(
            f"exactlyOnce: the task has no {QUERY_ID_PROPERTY!r} / {BATCH_ID_PROPERTY!r} local property "
            "(only micro-batch streaming queries set them)"
        )
    return StreamTask(query, int(batch), ctx.partitionId())


def marker_metadata(task: StreamTask, rows: int) -> str:
    """The offset metadata of a marker: who wrote it, and how many rows the task committed with it."""
    return f"kafkawire-spark query={task.query_id} batch={task.batch_id} rows={rows}"


def committed_batches(client: Any, task: StreamTask, topic: str) -> tuple[int, int | None]:
    """How many batches of ``task``'s partition have committed, as its marker under ``topic`` says (the
    next batch id; 0 when there is no marker), and how many rows the last of them wrote (None if unknown).
    OffsetFetch with ``require_stable`` waits for a marker that a transaction is still committing (KIP-447)
    instead of reading the one before it."""
    got = client.committed(task.marker_group, [(topic, MARKER_PARTITION)])[(topic, MARKER_PARTITION)]
    rows = None
    for part in (got.metadata or "").split():
        if part.startswith("rows=") and part[5:].isdigit():
            rows = int(part[5:])
    return max(int(got.offset), 0), rows


class NonDeterministicBatchError(RuntimeError):
    """A re-run micro-batch gave a task other rows than the run whose transaction committed them."""


class _Counted:
    """An iterator of Arrow batches that counts their rows."""

    def __init__(self, batches: Iterator[Any]) -> None:
        self._it = iter(batches)
        self.rows = 0

    def __iter__(self) -> _Counted:
        return self

    def __next__(self) -> Any:
        batch = next(self._it)
        self.rows += batch.num_rows
        return batch


def produce_groups(opts: SinkOptions, batches: Iterator[Any]) -> Iterator[ProduceGroup]:
    """A task's Arrow batches split by (topic, partition), for :class:`~kafkawire.spark.writing.ProduceThread`."""
    for batch in batches:
        for g in batch_to_produce_groups(batch, opts.topic):
            if opts.include_headers is False:
                g.headers = None
            yield g


def write_stream_task(opts: SinkOptions, batches: Iterator[Any]) -> tuple[int, Any]:
    """Write one task's rows of a micro-batch in a transaction with its marker, and hand it over.

    Returns ``(records sent, TransactionHandle or None)``: None when there was nothing to write or when the
    marker says an earlier run already committed this task's rows for this batch (see the module docstring).
    """
    from ..client import Producer

    task = current_stream_task()
    batches = _Counted(batches)
    timeout = int(opts.kafka_params.get("transaction.timeout.ms", 60_000))
    with KafkaAccess(opts.kafka_params) as access:
        client = access.client
        producer = Producer(client=client, transactional_id=task.transactional_id, transaction_timeout_ms=timeout)
        # Fences earlier attempts of this task and aborts a transaction a killed driver left open: after this
        # the previous transaction of this id is complete, committed or aborted, and so is its marker.
        producer.init_transactions()
        groups = produce_groups(opts, batches)
        first = next(groups, None)
        if first is None:
            return 0, None
        done, rows = committed_batches(client, task, first.topic)
        if done > task.batch_id:
            # A driver died after this task's transaction of this batch committed; the re-run writes nothing.
            # The input is still read to its end (the JVM is feeding it), and counted: a re-run that gives this
            # task another number of rows is not the batch that committed (SPARK-28650: Spark does not promise
            # the same rows per (partition, batch) across restarts, e.g. after an upgrade or a changed split
            # size), and writing nothing, or everything, could lose or duplicate rows: fail instead.
            for _ in batches:
                pass
            if rows is not None and rows != batches.rows:
                raise NonDeterministicBatchError(
                    f"exactlyOnce: batch {task.batch_id} of query {task.query_id} was committed with {rows} rows "
                    f"in task {task.partition}, and its re-run gives that task {batches.rows}: the micro-batch is "
                    "not the same after the restart, so exactly-once cannot be kept (see docs/EXACTLY_ONCE.md)"
                )
            log.info(
                "exactlyOnce: batch %d of query %s, task %d: committed by an earlier run, not written again",
                task.batch_id,
                task.query_id,
                task.partition,
            )
            return 0, None

        def add_marker(topics: set[str], sent: int) -> None:
            # The marker goes under every topic written: a re-run whose first row goes to another of them (rows
            # in another order) still finds it.
            meta = marker_metadata(task, sent)
            producer.send_offsets_to_transaction(
                {(t, MARKER_PARTITION): (task.batch_id + 1, meta) for t in sorted(topics)}, task.marker_group
            )

        return produce_in_transaction(opts, client, producer, itertools.chain([first], groups), add_marker)


def produce_in_transaction(
    opts: SinkOptions,
    client: Any,
    producer: Any,
    groups: Iterator[ProduceGroup],
    before_hand_over: Callable[[set[str], int], None] | None = None,
) -> tuple[int, Any]:
    """One task's rows in one transaction of ``producer`` (``init_transactions()`` done), handed over
    uncommitted: ``(records sent, TransactionHandle)``, or ``(0, None)`` when there was nothing to write.
    ``before_hand_over(topics, sent)`` adds to the transaction what must commit with the rows (the streaming
    marker). Used by the batch and the streaming writers alike."""
    compression = opts.kafka_params.get("compression.type")
    compression = None if compression in (None, "", "none") else compression
    producer.begin_transaction()
    topics: set[str] = set()

    def produce(g: ProduceGroup) -> int:
        client.produce(
            g.topic,
            g.values,
            keys=g.keys,
            partition=g.partition,
            headers=g.headers,
            compression=compression,
            producer_state=producer.transaction_manager,
        )
        return len(g.values)

    try:
        with ProduceThread(produce) as thread:  # produces one group while the next is read (.writing)
            for g in groups:
                thread.submit(g)
                topics.add(g.topic)
            sent = thread.finish()
        if not sent:
            # Nothing was added to the transaction: the coordinator knows no transaction to end (EndTxn would
            # be INVALID_TXN_STATE), so end it here and give the driver nothing to commit.
            producer.abort_transaction()
            return 0, None
        if before_hand_over is not None:
            before_hand_over(topics, sent)
        return sent, producer.hand_over_transaction()
    except Exception:
        # A failed attempt aborts its transaction at once. Left open, it stops read_committed readers of its
        # partitions (the last stable offset, KIP-98) until a retry's InitProducerId fences it or, when Spark
        # gives up on the task, until transaction.timeout.ms: the job's abort only gets the handles of tasks
        # that succeeded. Best effort: a fenced attempt cannot abort, and the task's own error is the one to
        # report.
        try:
            producer.abort_transaction()
        except Exception as abort_error:  # noqa: BLE001
            log.debug("exactlyOnce: the failed attempt's transaction was not aborted: %r", abort_error)
        raise


def abort_transactions(opts: SinkOptions, handles: list[Any]) -> None:
    """A micro-batch's abort: EndTxn (abort) on every handle, each tried even when another fails.

    Spark calls abort after the commit failed, e.g. because one transaction had timed out on the coordinator
    and its EndTxn was refused as fenced while others had committed already; those refuse the abort too.
    Nothing here is needed for correctness (the coordinator aborts what stays open after
    ``transaction.timeout.ms``, and a restarted query's tasks abort their own), it only ends open transactions
    early, so readers' last stable offset moves on. Failures are logged, never raised over Spark's error."""
    from ..client import end_transaction

    if not handles:
        return
    with KafkaAccess(opts.kafka_params) as access:
        for handle in handles:
            try:
                end_transaction(access.client, handle, commit=False)
            except Exception as e:  # noqa: BLE001 (best effort: the next handle must still be tried)
                log.warning("exactlyOnce: abort of %s failed: %s", handle.transactional_id, e)
