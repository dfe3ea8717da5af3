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

__all__ = ["KafkaAccess", "client_kwargs"]

log = logging.getLogger("kafkawire.spark")

#: ``kafka.<name>`` options that tune fetches (consumer names as Spark users know them).
_FETCH_PARAMS = ("max.partition.fetch.bytes", "fetch.max.bytes", "fetch.max.wait.ms", "isolation.level")
#: ``kafka.<name>`` options that tune produce requests (``transaction.timeout.ms``: exactlyOnce writes,
#: read by ``source._write``).
_PRODUCE_PARAMS = ("acks", "compression.type", "transaction.timeout.ms")
_IGNORED = ("bootstrap.servers", "group.id", "key.serializer", "value.serializer")

#: Default bytes asked for per fetch of one partition (the broker may send more; the client guards).
DEFAULT_FETCH_BYTES = 8 * 1024 * 1024


def client_kwargs(kafka_params: Mapping[str, str]) -> dict[str, Any]:
    """Constructor keyword arguments for the client from ``kafka.*`` options (prefix already removed).

    Every option goes through :func:`kafkawire.client.config.config_from_properties`, which knows the Java
    client's names (``security.protocol``, ``sasl.jaas.config``, ``ssl.truststore.*``, ...). Options the
    client has no use for are logged and ignored, as the Java client warns about unused configuration; a
    bad or unsupported one raises :class:`InvalidOptionError` naming ``kafka.<option>``.
    """
    from ..client.config import ConfigError, config_from_properties

    def warn(key: str) -> None:
        log.warning("The configuration '%s' was supplied but isn't used by kafkawire.", key)

    try:
        out = config_from_properties(kafka_params, handled=(*_FETCH_PARAMS, *_PRODUCE_PARAMS, *_IGNORED), warn=warn)
    except ConfigError as e:
        if e.value is not None:  # Kafka's ConfigException wording for a malformed value
            raise InvalidOptionError(f"Invalid value {e.value} for configuration {e.property}: {e.reason}") from None
        raise InvalidOptionError(f"Invalid option 'kafka.{e.property}': {e.reason}") from None
    out.setdefault("client_id", "kafkawire-spark")
    return out


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

    def topic_partitions(self, opts: SourceOptions) -> list[TopicPartition]:
        """The partitions ``assign`` / ``subscribe`` / ``subscribePattern`` select, sorted.

        ``assign`` keeps the assigned partitions that exist, as Spark's ``AssignStrategy`` does (it filters
        the topics' partitions by the assignment: an unknown partition is left out, not an error, and a
        query that waits on it would hang); ``subscribe`` ignores topics that do not exist yet (they join
        when they appear).
        """
        topics = self._topics()
        if opts.strategy == "assign":
            assigned: list[TopicPartition] = list(opts.strategy_value)  # type: ignore[arg-type]
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
        )
        return len(values)
