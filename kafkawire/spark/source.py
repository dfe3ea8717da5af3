"""The ``kafkawire`` PySpark data source: batch and streaming reads, batch and streaming writes.

Readers and writers are pickled and rebuilt in other processes (the planner, Python workers on
executors), so their constructors only keep parsed options; connections open inside ``partitions()``,
``latestOffset()``, ``read()`` and ``write()`` and are never pickled (``__getstate__``).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from . import codec_report
from .arrow import ArrowBuilder, check_write_schema
from .errors import InvalidOptionError, KafkaDataLossError, driver_errors, tp_str, user_errors
from .group_commits import ProgressCommits
from .kafka_access import KafkaAccess, api_timeout_ms, check_kafka_params
from .options import (
    SinkOptions,
    SourceOptions,
    TopicPartition,
    include_headers,
    parse_sink_options,
    parse_source_options,
)
from .planning import (
    OffsetRange,
    check_ranges,
    offsets_from_json,
    offsets_to_json,
    pending_records,
    rate_limit,
    resolve,
    split_ranges,
)
from .values import ValueDecoding, ValueEncoding, read_topics, value_decoding, value_encoding

__all__ = ["KafkaInputPartition", "KafkaWireDataSource", "kafka_schema"]

log = logging.getLogger("kafkawire.spark")

#: Largest Arrow batch handed to Spark (Spark's own default, spark.sql.execution.arrow.maxRecordsPerBatch,
#: is 10 000). A fetch can hold far more records (some brokers ignore the fetch size); slicing is
#: zero-copy and lets the JVM start on one batch while the next is built. benchmarks/bench_spark.py,
#: 500k x 100 B, best of 3: one batch per fetch 3.64 s wall; 32 768 rows 2.60 s; 8 192 rows 2.34 s.
ARROW_BATCH_ROWS = 1 << 13

HEADERS_SPARK_TYPE = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))


def kafka_schema(with_headers: bool) -> StructType:
    """The schema of Spark's Kafka source (``KafkaRecordToRowConverter.kafkaSchema``)."""
    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if with_headers:
        fields.append(StructField("headers", HEADERS_SPARK_TYPE))
    return StructType(fields)


class KafkaInputPartition(InputPartition):
    """One Spark task: offsets ``[start, end)`` of one topic-partition, and the codec the planner ran
    (:mod:`kafkawire.spark.codec_report`: the task compares it with its own)."""

    def __init__(self, r: OffsetRange) -> None:
        super().__init__((r.topic, r.partition, r.start, r.end))
        self.range = r
        self.planner_codec = codec_report.identity()

    def __repr__(self) -> str:
        r = self.range
        return f"KafkaInputPartition({tp_str(r.topic, r.partition)} [{r.start}, {r.end}))"


def _read(opts: SourceOptions, partition: InputPartition, values: ValueDecoding | None = None) -> Iterator[Any]:
    """The records of one task as Arrow batches (shared by the batch and the streaming reader); ``values``:
    the key/value decoding the read asked for (``valueFormat``, :mod:`kafkawire.spark.values`)."""
    if not isinstance(partition, KafkaInputPartition):  # Spark's placeholder when there is nothing to read
        return
    r = partition.range
    codec_report.check_task(getattr(partition, "planner_codec", None))
    builder = ArrowBuilder(r.topic, r.partition, opts.include_headers)
    with KafkaAccess(opts.kafka_params) as access:
        for cols, lo, hi in access.fetch_range(
            r.topic,
            r.partition,
            r.start,
            r.end,
            fail_on_data_loss=opts.fail_on_data_loss,
            poll_timeout_ms=opts.poll_timeout_ms,
        ):
            for a in range(lo, hi, ARROW_BATCH_ROWS):
                batch = builder.build(cols, a, min(a + ARROW_BATCH_ROWS, hi))
                yield batch if values is None else values.decode(batch, r.partition)


def _tasks(opts: SourceOptions, ranges: list[OffsetRange]) -> list[InputPartition]:
    pieces = split_ranges(
        ranges, min_partitions=opts.min_partitions, max_records_per_partition=opts.max_records_per_partition
    )
    return [KafkaInputPartition(r) for r in pieces]


class _Lazy:
    """Keeps a :class:`KafkaAccess` out of pickles and opens it on first use."""

    opts: SourceOptions
    _access: KafkaAccess | None
    #: valueFormat/keyFormat decoding (set by KafkaWireDataSource when the options ask for it)
    values: ValueDecoding | None = None

    @property
    def access(self) -> KafkaAccess:
        if self._access is None:
            self._access = KafkaAccess(self.opts.kafka_params)
        return self._access

    def _close(self) -> None:
        if self._access is not None:
            self._access.close()
            self._access = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_access"] = None
        return state


# ------------------------------------------------------------------------------------------ batch


class KafkaBatchReader(_Lazy, DataSourceReader):
    """``spark.read.format("kafkawire")``: offsets resolved once on the driver, one task per range."""

    def __init__(self, opts: SourceOptions) -> None:
        self.opts = opts
        self._access = None

    def partitions(self) -> list[InputPartition]:
        codec_report.report_planner()  # once per query: Spark plans a batch read once
        try:
            with driver_errors("listing topics and offsets", api_timeout_ms(self.opts.kafka_params)):
                access = self.access
                tps = access.topic_partitions(self.opts, missing_topic="raise")
                start = resolve(self.opts.starting, tps, access, is_start=True)
                assert self.opts.ending is not None
                end = resolve(self.opts.ending, tps, access, is_start=False)
                ranges = check_ranges(start, end, fail_on_data_loss=self.opts.fail_on_data_loss)
            return _tasks(self.opts, ranges)
        finally:
            self._close()

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return _read(self.opts, partition, self.values)


# -------------------------------------------------------------------------------------- streaming


class KafkaStreamReader(_Lazy, DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream.format("kafkawire")``.

    Offsets are ``{topic: {"partition": next offset}}`` and live in Spark's checkpoint; a restarted query
    gets its last committed end offset back as ``start`` and continues right after it. Nothing is read
    from Kafka's consumer groups; with ``kafka.group.id`` each finished micro-batch's end offsets are
    committed to that group for lag monitors (:mod:`.group_commits`), never read back.
    """

    def __init__(self, opts: SourceOptions) -> None:
        self.opts = opts
        self._access = None
        self._target: dict[TopicPartition, int] | None = None  # Trigger.AvailableNow end
        self._last_trigger = time.monotonic()
        self._codec_reported = False
        self._progress = ProgressCommits(opts.kafka_params.get("group.id"))  # kafka.group.id (SPARK-27549)

    # --- offsets (driver)

    def _driver(self, what: str) -> Any:
        """Driver-side calls bounded by kafka.default.api.timeout.ms, their errors led by the cause."""
        return driver_errors(what, api_timeout_ms(self.opts.kafka_params))

    def initialOffset(self) -> dict[str, Any]:
        with self._driver("the query's initial offsets"):
            tps = self.access.topic_partitions(self.opts, missing_topic="warn")
            return offsets_to_json(resolve(self.opts.starting, tps, self.access, is_start=True))

    def prepareForTriggerAvailableNow(self) -> None:
        with self._driver("the latest offsets"):
            tps = self.access.topic_partitions(self.opts)
            self._target = self.access.latest_offsets(tps)

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.opts.max_offsets_per_trigger:
            return ReadMaxRows(self.opts.max_offsets_per_trigger)
        if self.opts.min_offsets_per_trigger:
            return ReadMinRows(self.opts.min_offsets_per_trigger)
        return ReadAllAvailable()

    def _latest(self) -> dict[TopicPartition, int]:
        if self._target is not None:
            return dict(self._target)
        tps = self.access.topic_partitions(self.opts)
        return self.access.latest_offsets(tps)

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        # Spark asks only once the micro-batch ending at ``start`` is committed: that is the query's position
        # for kafka.group.id (commit() comes a batch later, and never for an availableNow run's last batch).
        self._progress.commit(self.access, start, api_timeout_ms(self.opts.kafka_params))
        with self._driver("the latest offsets"):
            return self._latest_offset(start, limit)

    def _latest_offset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        begin = offsets_from_json(start)
        latest = self._latest()
        deleted = [tp for tp in begin if tp not in latest]
        if deleted:
            if self.opts.fail_on_data_loss and self._target is None:
                names = ", ".join(tp_str(*tp) for tp in sorted(deleted))
                raise KafkaDataLossError(f"Partitions Set({names}) have been deleted.")
            for tp in deleted:  # keep their last position so the checkpoint does not forget them
                latest[tp] = begin[tp]
        new = [tp for tp in latest if tp not in begin]
        full_begin = dict(begin)
        if new:
            full_begin.update(self.access.earliest_offsets(new))
        end = latest
        if not isinstance(limit, ReadAllAvailable):
            if self.opts.max_offsets_per_trigger and isinstance(limit, ReadMaxRows):
                end = rate_limit(full_begin, latest, limit.max_rows)
            min_rows = limit.min_rows if isinstance(limit, ReadMinRows) else self.opts.min_offsets_per_trigger
            if min_rows and self._target is None:
                waited_ms = (time.monotonic() - self._last_trigger) * 1000
                if pending_records(full_begin, end) < min_rows and waited_ms < self.opts.max_trigger_delay_ms:
                    return offsets_to_json(begin)
        out = offsets_to_json(end)
        if out != offsets_to_json(begin):
            self._last_trigger = time.monotonic()
        return out

    def reportLatestOffset(self) -> dict[str, Any] | None:
        tps = self.access.topic_partitions(self.opts)
        return offsets_to_json(self.access.latest_offsets(tps))

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        if not self._codec_reported:  # this reader lives in one driver-side worker for the whole query
            self._codec_reported = True
            codec_report.report_planner()
        with self._driver("the offsets of a micro-batch"):
            return self._partitions(start, end)

    def _partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        begin, stop = offsets_from_json(start), offsets_from_json(end)
        new = [tp for tp in stop if tp not in begin]
        if new:
            # Partitions that appeared during the query are read from their beginning (Spark does the same
            # and reports data loss if that is not offset 0, i.e. records aged out before we saw them).
            earliest_new = self.access.earliest_offsets(new)
            for tp, off in earliest_new.items():
                if off != 0 and self.opts.fail_on_data_loss:
                    raise KafkaDataLossError(f"Added partition {tp_str(*tp)} starts from {off} instead of 0.")
                begin[tp] = off
        earliest = self.access.earliest_offsets(sorted(stop))
        ranges = check_ranges(begin, stop, fail_on_data_loss=self.opts.fail_on_data_loss, earliest=earliest)
        return _tasks(self.opts, ranges)

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return _read(self.opts, partition, self.values)

    def commit(self, end: dict[str, Any]) -> None:
        """Spark committed the micro-batch ending at ``end``. With ``kafka.group.id`` its end offsets are
        committed to that group so Kafka's tools show the query's lag (:mod:`.group_commits`; monitoring
        only, the checkpoint stays the source of truth)."""
        self._progress.commit(self.access, end, api_timeout_ms(self.opts.kafka_params))

    def stop(self) -> None:
        self._close()


# ---------------------------------------------------------------------------------------- writing


@dataclass
class KafkaCommitMessage(WriterCommitMessage):
    """What one write task sent; with ``exactlyOnce``, the handle of its open transaction
    (``(transactional_id, producer_id, producer_epoch)``), which the driver's commit ends."""

    records: int
    transaction: tuple[str, int, int] | None = None


def _exactly_once(options: Any) -> bool:
    """The ``exactlyOnce`` write option (case-insensitive name, like every option)."""
    value = {str(k).lower(): v for k, v in dict(options).items()}.get("exactlyonce", "false")
    if str(value).strip().lower() not in ("true", "false"):
        raise InvalidOptionError(f"Option 'exactlyOnce' must be true or false, not {value!r}")
    return str(value).strip().lower() == "true"


def _write(opts: SinkOptions, batches: Iterator[Any], txn_prefix: str | None = None) -> KafkaCommitMessage:
    """Produce the task's rows. With ``txn_prefix`` (batch exactlyOnce) they go into one transaction whose id
    is the prefix and the task's partition id: a retried or speculative attempt of the same task fences the
    earlier one (aborting what it wrote, KIP-98); the transaction is handed to the driver, not committed.
    (Streaming exactlyOnce writes through :func:`kafkawire.spark.transactions.write_stream_task`.)"""
    from .transactions import produce_groups, produce_in_transaction
    from .writing import ProduceThread

    with KafkaAccess(opts.kafka_params) as access:
        if txn_prefix is None:

            def produce(g: Any) -> int:
                return access.produce(g.topic, g.values, keys=g.keys, partition=g.partition, headers=g.headers)

            with ProduceThread(produce) as thread:  # produces one group while the next is read (.writing)
                for g in produce_groups(opts, batches):
                    thread.submit(g)
                return KafkaCommitMessage(thread.finish())
        from pyspark import TaskContext

        from ..client import Producer

        ctx = TaskContext.get()
        tid = f"{txn_prefix}-{ctx.partitionId() if ctx is not None else 0}"
        timeout = int(opts.kafka_params.get("transaction.timeout.ms", 60_000))
        producer = Producer(client=access.client, transactional_id=tid, transaction_timeout_ms=timeout)
        producer.init_transactions()
        sent, handle = produce_in_transaction(opts, access.client, producer, produce_groups(opts, batches))
    if handle is None:
        return KafkaCommitMessage(0)
    # Every field of the handle, the transaction protocol it was written with included (EndTxn must speak it).
    return KafkaCommitMessage(sent, dataclasses.astuple(handle))


def _end_transactions(opts: SinkOptions, messages: list[Any], commit: bool) -> None:
    """The driver's side of exactlyOnce: EndTxn for every task's transaction (commit, or abort)."""
    from ..client import TransactionHandle, end_transaction

    handles = [TransactionHandle(*m.transaction) for m in messages if m is not None and m.transaction]
    if not handles:
        return
    with KafkaAccess(opts.kafka_params) as access:
        for handle in handles:
            end_transaction(access.client, handle, commit=commit)


class KafkaBatchWriter(DataSourceArrowWriter):
    """``df.write.format("kafkawire")``: each task produces its rows; at-least-once like Spark's sink.

    With ``exactlyOnce``: each task writes inside a transaction (id: a prefix made once per write job in
    the driver, and the task's partition id) and hands it over uncommitted; the job's commit ends every
    task's transaction, its abort aborts them. read_committed readers see each row once."""

    def __init__(self, opts: SinkOptions, exactly_once: bool = False) -> None:
        import uuid

        self.opts = opts
        self.txn_prefix = f"kafkawire-spark-{uuid.uuid4().hex}" if exactly_once else None
        self.values: ValueEncoding | None = None  # valueFormat=avro (kafkawire/spark/values.py)

    def write(self, iterator: Iterator[Any]) -> KafkaCommitMessage:
        if self.values is not None:
            iterator = self.values.encode_all(iterator)
        return _write(self.opts, iterator, self.txn_prefix)

    def commit(self, messages: list[Any]) -> None:
        _end_transactions(self.opts, messages, commit=True)

    def abort(self, messages: list[Any]) -> None:
        _end_transactions(self.opts, messages, commit=False)


class KafkaStreamWriter(DataSourceStreamArrowWriter):
    """``df.writeStream.format("kafkawire")``: every micro-batch is produced as it is written.

    With ``exactlyOnce``: each task of a micro-batch writes in a transaction (id: ``kafkawire-spark-stream``,
    the query id and the task's partition id) together with a marker saying that this task's rows of this
    batch are committed; the batch's commit ends the transactions and its abort aborts them. A query restarted
    after its driver died between the writes and Spark's record of the commit re-runs the batch: its tasks
    abort what was left open and skip what the marker says committed (:mod:`kafkawire.spark.transactions`,
    docs/EXACTLY_ONCE.md)."""

    def __init__(self, opts: SinkOptions, exactly_once: bool = False) -> None:
        self.opts = opts
        self.exactly_once = exactly_once
        self.values: ValueEncoding | None = None  # valueFormat=avro (kafkawire/spark/values.py)

    def write(self, iterator: Iterator[Any]) -> KafkaCommitMessage:
        if self.values is not None:
            iterator = self.values.encode_all(iterator)
        if not self.exactly_once:
            return _write(self.opts, iterator)
        from .transactions import write_stream_task

        sent, handle = write_stream_task(self.opts, iterator)
        if handle is None:
            return KafkaCommitMessage(sent)
        # Every field of the handle, the transaction protocol it was written with included (EndTxn must speak it).
        return KafkaCommitMessage(sent, dataclasses.astuple(handle))

    def commit(self, messages: list[Any], batchId: int) -> None:  # noqa: N803 (Spark's name)
        """Without exactlyOnce records are visible once acknowledged; with it, the tasks' transactions end here."""
        _end_transactions(self.opts, messages, commit=True)

    def abort(self, messages: list[Any], batchId: int) -> None:  # noqa: N803
        """Without exactlyOnce what was sent stays; with it, the tasks' transactions are aborted (best effort)."""
        from ..client import TransactionHandle
        from .transactions import abort_transactions

        abort_transactions(self.opts, [TransactionHandle(*m.transaction) for m in messages if m and m.transaction])


# ------------------------------------------------------------------------------------- the source


def _value_encoding(options: Any, schema: StructType, topic: str | None) -> ValueEncoding | None:
    return value_encoding(options, {f.name: f.dataType.simpleString() for f in schema.fields}, topic)


def _sink_opts(options: Any, schema: StructType, overwrite: bool) -> SinkOptions:
    if overwrite:
        raise InvalidOptionError(
            "Save mode Overwrite not allowed for Kafka. Allowed save modes are Append and ErrorIfExists (default)."
        )
    opts = parse_sink_options(options)
    check_kafka_params(opts.kafka_params, "producer")  # once per query, here on the driver
    columns = {f.name: f.dataType.simpleString() for f in schema.fields}
    if value_encoding(options, columns, opts.topic) is not None:
        columns["value"] = "binary"  # valueFormat=avro: the struct is encoded before the checks that matter
    check_write_schema(columns, opts.topic)
    return opts


class KafkaWireDataSource(DataSource):
    """Kafka through kafkawire, with the schema and options of Spark's built-in ``kafka`` source.

    Read schema: ``key binary, value binary, topic string, partition int, offset long, timestamp timestamp,
    timestampType int`` (+ ``headers array<struct<key:string,value:binary>>`` with ``includeHeaders``).
    Write columns: ``value`` (required), ``key``, ``topic`` (or the ``topic`` option), ``partition``,
    ``headers``. See :mod:`kafkawire.spark` for the options.
    """

    @classmethod
    def name(cls) -> str:
        return "kafkawire"

    def schema(self) -> StructType:
        base = kafka_schema(include_headers(self.options))
        values = self._values()
        return base if values is None else values.spark_schema(base)

    def _values(self) -> ValueDecoding | None:
        """The key/value decoding the options ask for (resolved once: it asks the registry)."""
        if not hasattr(self, "_decoding"):
            self._decoding = value_decoding(self.options, read_topics(self.options))
        return self._decoding

    def _check_schema(self, schema: StructType) -> None:
        if schema.simpleString() != self.schema().simpleString():
            raise InvalidOptionError("Kafka source has a fixed schema and cannot be set with a custom one")

    def reader(self, schema: StructType) -> DataSourceReader:
        with user_errors():
            self._check_schema(schema)
            opts = parse_source_options(self.options, streaming=False)
            check_kafka_params(opts.kafka_params, "consumer")  # once per query, here on the driver
        reader = KafkaBatchReader(opts)
        reader.values = self._values()
        return reader

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        # Not user_errors(): PySpark 4.2's streaming runner then fails in its own `finally: reader.stop()`
        # (UnboundLocalError), and only its traceback would show that error chained to this one.
        self._check_schema(schema)
        opts = parse_source_options(self.options, streaming=True)
        check_kafka_params(opts.kafka_params, "consumer")  # once per query, here on the driver
        reader = KafkaStreamReader(opts)
        reader.values = self._values()
        return reader

    def writer(self, schema: StructType, overwrite: bool) -> KafkaBatchWriter:
        with user_errors():
            opts = _sink_opts(self.options, schema, overwrite)
            writer = KafkaBatchWriter(opts, _exactly_once(self.options))
            writer.values = _value_encoding(self.options, schema, opts.topic)
        return writer

    def streamWriter(self, schema: StructType, overwrite: bool) -> KafkaStreamWriter:
        # Spark's Kafka sink accepts the Complete/Update output modes too; "overwrite" here is Complete mode.
        with user_errors():
            opts = _sink_opts(self.options, schema, False)
            writer = KafkaStreamWriter(opts, _exactly_once(self.options))
            writer.values = _value_encoding(self.options, schema, opts.topic)
        return writer
