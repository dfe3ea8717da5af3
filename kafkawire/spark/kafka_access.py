"""Everything the Spark source needs from Kafka, behind one small class: the only module that touches the client.

:class:`KafkaAccess` lists the partitions a query subscribes to, resolves earliest / latest / by-timestamp
offsets, fetches an offset range as a sequence of :class:`~kafkawire.columns.RecordColumns` and produces
the rows of an Arrow batch. It is built from the ``kafka.*`` options alone (cheap, picklable) and opens
its :class:`kafkawire.Client` on first use, because Spark builds readers and writers in one process and
runs them in others.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..client import Client, KafkaTimeoutError
from ..client.consumer.ranges import LostRange, read_range
from ..client.net.deadline import Deadline
from ..columns import RecordColumns
from .errors import InvalidOptionError, KafkaDataLossError, tp_str
from .options import SourceOptions, TopicPartition

__all__ = ["KafkaAccess", "check_kafka_params", "client_kwargs"]

log = logging.getLogger("kafkawire.spark")

#: ``kafka.<name>`` options that tune fetches (consumer names as Spark users know them).
_FETCH_PARAMS = ("max.partition.fetch.bytes", "fetch.max.bytes", "fetch.max.wait.ms", "isolation.level")
#: ``kafka.<name>`` options that tune produce requests (``transaction.timeout.ms``: exactlyOnce writes,
#: read by ``source._write``).
_PRODUCE_PARAMS = ("acks", "compression.type", "transaction.timeout.ms", "delivery.timeout.ms")
_IGNORED = ("bootstrap.servers", "group.id", "key.serializer", "value.serializer")

#: Default bytes asked for per fetch of one partition (the broker may send more; the client guards).
DEFAULT_FETCH_BYTES = 8 * 1024 * 1024


#: ``kafka.<name>`` options the source and sink read themselves (no "unused" warning for them).
_SOURCE_HANDLED = (*_FETCH_PARAMS, *_PRODUCE_PARAMS, *_IGNORED, "default.api.timeout.ms")


def _config_error(e: Any) -> InvalidOptionError:
    if e.value is not None:  # Kafka's ConfigException wording for a malformed value
        return InvalidOptionError(f"Invalid value {e.value} for configuration {e.property}: {e.reason}")
    return InvalidOptionError(f"Invalid option 'kafka.{e.property}': {e.reason}")


def check_kafka_params(kafka_params: Mapping[str, str], role: str) -> None:
    """Judge the ``kafka.*`` options once per query, on the driver (the reader's or writer's creation), with
    kafkawire's one mapping of the Java client's names (:mod:`kafkawire.client.config`) for ``role``
    (``"consumer"`` for reads, ``"producer"`` for writes): a misspelt name close to a known one raises
    :class:`InvalidOptionError` with a suggestion; a property kafkawire has no use for is logged once here
    (tasks build their clients silently, so a query does not log it once per task)."""
    from ..client import config as cfg

    def warn(key: str) -> None:
        if key not in _SOURCE_HANDLED:
            log.warning("Kafka option 'kafka.%s' was supplied but isn't used by kafkawire; ignored.", key)

    judge = cfg.consumer_kwargs_from_properties if role == "consumer" else cfg.producer_kwargs_from_properties
    try:
        judge(kafka_params, warn=warn)
    except cfg.ConfigError as e:
        raise _config_error(e) from None


def client_kwargs(kafka_params: Mapping[str, str]) -> dict[str, Any]:
    """Constructor keyword arguments for the client from ``kafka.*`` options (prefix already removed).

    Every option goes through :func:`kafkawire.client.config.config_from_properties`, which knows the Java
    client's names (``security.protocol``, ``sasl.jaas.config``, ``ssl.truststore.*``, ...). Options the
    client has no use for are ignored here (:func:`check_kafka_params` reported them once, on the driver);
    a bad or unsupported one raises :class:`InvalidOptionError` naming ``kafka.<option>``.
    """
    from ..client.config import ConfigError, config_from_properties

    try:
        out = config_from_properties(kafka_params, handled=_SOURCE_HANDLED, warn=lambda key: None)
    except ConfigError as e:
        raise _config_error(e) from None
    out.setdefault("client_id", "kafkawire-spark")
    # Java's default.api.timeout.ms (60 s) bounds every call without its own timeout: topic listing and
    # offset lookups on the driver, metadata refreshes in tasks (the client's own default is two minutes).
    out.setdefault("retry_timeout_ms", api_timeout_ms(kafka_params))
    return out


def api_timeout_ms(kafka_params: Mapping[str, str]) -> int:
    """``kafka.default.api.timeout.ms`` (the Java consumer's name and default, 60 000 ms)."""
    from ..client.config import ConfigError
    from ..client.config.values import int_value

    try:
        return int_value("default.api.timeout.ms", kafka_params.get("default.api.timeout.ms", 60_000))
    except ConfigError as e:
        raise _config_error(e) from None


class KafkaAccess:
    """A lazily connected view of a Kafka cluster, sized for what one Spark task or planner does."""

    def __init__(self, kafka_params: Mapping[str, str]) -> None:
        self.kafka_params = dict(kafka_params)
        if "bootstrap.servers" not in self.kafka_params:
            raise InvalidOptionError(
                "Option 'kafka.bootstrap.servers' must be specified for configuring Kafka consumer"
            )
        self._client: Any = None
        # Fail in the driver, naming the option, rather than in every task (the result is rebuilt there:
        # an SSLContext does not pickle).
        client_kwargs(self.kafka_params)

    # ------------------------------------------------------------------------------------ lifecycle

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = Client(self.kafka_params["bootstrap.servers"], **client_kwargs(self.kafka_params))
        return self._client

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def __enter__(self) -> KafkaAccess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:  # never ship a live connection to another process
        return {"kafka_params": self.kafka_params, "_client": None}

    # ------------------------------------------------------------------------------------- metadata

    def topic_partitions(self, opts: SourceOptions, *, missing_topic: str = "ignore") -> list[TopicPartition]:
        """The partitions ``assign`` / ``subscribe`` / ``subscribePattern`` select, sorted.

        ``assign`` keeps the assigned partitions that exist, as Spark's ``AssignStrategy`` does (it filters
        the topics' partitions by the assignment: an unknown partition is left out, not an error, and a
        query that waits on it would hang); ``subscribe`` ignores topics that do not exist yet (they join
        when they appear). An assigned topic the cluster does not have at all is, with ``missing_topic``
        ``"raise"`` (a batch read), an :class:`InvalidOptionError`, with ``"warn"`` (a stream's start) a
        warning: reading it would return nothing without a word.
        """
        topics = self._topics()
        if opts.strategy == "assign":
            assigned: list[TopicPartition] = list(opts.strategy_value)  # type: ignore[arg-type]
            absent = sorted({t for t, _ in assigned if t not in topics})
            if absent and missing_topic != "ignore":
                text = (f"Option 'assign' names topic{'s' if len(absent) > 1 else ''} "
                        f"{', '.join(repr(t) for t in absent)}, which the cluster at "
                        f"{self.kafka_params['bootstrap.servers']} does not have")
                if missing_topic == "raise":
                    raise InvalidOptionError(text)
                log.warning("%s; the query reads nothing from it until it exists", text)
            return sorted(tp for tp in assigned if tp[1] in topics.get(tp[0], ()))
        out = [(t, p) for t, parts in topics.items() if opts.matches_topic(t) for p in parts]
        return sorted(out)

    def _topics(self) -> dict[str, list[int]]:
        """``{topic: [partition, ...]}`` for every topic the cluster reports (internal ones excluded)."""
        md = self.client.metadata()
        out: dict[str, list[int]] = {}
        for name, t in md.topics.items():
            if t.error is not None or t.is_internal or name.startswith("__"):
                continue
            out[name] = sorted(t.partitions)
        return out

    # -------------------------------------------------------------------------------------- offsets

    def earliest_offsets(self, tps: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        return self._list_offsets({tp: -2 for tp in tps})

    def latest_offsets(self, tps: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        return self._list_offsets({tp: -1 for tp in tps})

    def offsets_for_times(self, query: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        return self._list_offsets(dict(query))

    def _list_offsets(self, query: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """One ListOffsets per (topic, timestamp): -2 earliest, -1 latest, else the first offset at or
        after that time (-1 when there is none)."""
        isolation = self.kafka_params.get("isolation.level", "read_uncommitted")
        groups: dict[tuple[str, int], list[int]] = {}
        for (topic, partition), ts in query.items():
            groups.setdefault((topic, int(ts)), []).append(partition)
        out: dict[TopicPartition, int] = {}
        for (topic, ts), partitions in sorted(groups.items()):
            found = self.client.list_offsets(topic, partitions, timestamp=ts, isolation=isolation)
            for p in partitions:
                out[(topic, p)] = int(found[p].offset)
        return out

    # ---------------------------------------------------------------------------------------- fetch

    def fetch_range(
        self,
        topic: str,
        partition: int,
        start: int,
        end: int,
        *,
        fail_on_data_loss: bool = True,
        poll_timeout_ms: int = 120_000,
    ) -> Iterator[tuple[RecordColumns, int, int]]:
        """Fetch offsets ``[start, end)`` of one partition: yields ``(columns, lo, hi)``.

        Rows ``lo:hi`` of each :class:`RecordColumns` are the records inside the range. The loop is
        :func:`kafkawire.client.consumer.ranges.read_range` (gaps from compaction, transaction markers and aborted
        batches are normal there). Records that are gone (a start below the log start, an end beyond the
        log) are data loss: :class:`KafkaDataLossError`, or a warning and a skip with
        ``failOnDataLoss=false``. A partition that makes no progress for ``kafkaConsumer.pollTimeoutMs``
        is a ``TimeoutError`` worded as Spark's.
        """
        max_bytes = int(self.kafka_params.get("max.partition.fetch.bytes", DEFAULT_FETCH_BYTES))

        def on_loss(lost: LostRange) -> None:
            if fail_on_data_loss:
                raise KafkaDataLossError(str(lost))
            log.warning("%s; skipping what is gone", lost)

        position = start
        try:
            for s in read_range(
                self.client,
                topic,
                partition,
                start,
                end,
                # The task itself has no deadline (Spark has none); a partition that stops moving does.
                deadline=Deadline(None),
                stall_timeout_ms=poll_timeout_ms,
                max_bytes=max_bytes,
                max_wait_ms=int(self.kafka_params.get("fetch.max.wait.ms", 500)),
                isolation=self.kafka_params.get("isolation.level", "read_uncommitted"),
                on_loss=on_loss,
            ):
                position = s.next_offset
                yield s.columns, s.lo, s.hi
        except KafkaTimeoutError as e:  # Spark's KafkaDataConsumer words it this way
            raise TimeoutError(
                f"Cannot fetch record for offset {position} of {tp_str(topic, partition)} in {poll_timeout_ms} "
                f"milliseconds ({e})"
            ) from e

    # -------------------------------------------------------------------------------------- produce

    def produce(
        self,
        topic: str,
        values: Any,
        *,
        keys: Any = None,
        partition: int | None = None,
        headers: list[list[tuple[str, bytes | None]] | None] | None = None,
    ) -> int:
        """Produce one group of rows (Arrow binary arrays for keys/values) and wait for the acks."""
        acks_text = str(self.kafka_params.get("acks", "all")).strip().lower()
        acks = -1 if acks_text in ("all", "-1") else int(acks_text)
        compression = self.kafka_params.get("compression.type")
        if compression in (None, "", "none"):
            compression = None
        self.client.produce(
            topic,
            values,
            keys=keys,
            partition=partition,
            headers=headers,
            acks=acks,
            compression=compression,
            # The Java producer's bound on a send, retries included (its default), not the API timeout.
            timeout_ms=int(self.kafka_params.get("delivery.timeout.ms", 120_000)),
        )
        return len(values)
