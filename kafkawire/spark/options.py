"""Parse and validate the options of the ``kafkawire`` source and sink, the way Spark's Kafka connector does.

Option names are case-insensitive (Spark passes a ``CaseInsensitiveMap``); values keep their case. The
checks, their order and their messages follow ``KafkaSourceProvider.validateGeneralOptions``,
``validateBatchOptions``, ``validateStreamOptions``, ``getKafkaOffsetRangeLimit`` and ``JsonUtils`` so a
query that Spark's ``format("kafka")`` rejects is rejected here with the same words. Nothing in this
module talks to a broker or imports pyspark: it runs wherever the options are.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from .errors import InvalidOptionError, tp_str

__all__ = [
    "EARLIEST",
    "LATEST",
    "OffsetSpec",
    "SinkOptions",
    "SourceOptions",
    "TopicPartition",
    "parse_sink_options",
    "parse_source_options",
]

log = logging.getLogger("kafkawire.spark")

TopicPartition = tuple[str, int]

#: Kafka's sentinel offsets in ``startingOffsets`` / ``endingOffsets`` JSON (and in ListOffsets).
LATEST = -1
EARLIEST = -2

ASSIGN = "assign"
SUBSCRIBE = "subscribe"
SUBSCRIBE_PATTERN = "subscribepattern"
# Spark prints its Set("subscribe", "subscribepattern", "assign") in this order.
STRATEGY_OPTION_KEYS = (SUBSCRIBE, SUBSCRIBE_PATTERN, ASSIGN)

_ASSIGN_EXAMPLE = '{"topicA":[0,1],"topicB":[0,1]}'
_OFFSETS_EXAMPLE = '{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}'
_TIMESTAMPS_EXAMPLE = '{"topicA": {"0": 123456789, "1": 123456789},\n"topicB": {"0": 123456789, "1": 123456789}}'

_AUTO_OFFSET_RESET_MESSAGE = (
    "\nKafka option 'auto.offset.reset' is not supported.\n"
    "Instead set the source option 'startingoffsets' to 'earliest' or 'latest'\n"
    "to specify where to start. Structured Streaming manages which offsets are consumed\n"
    "internally, rather than relying on the kafkaConsumer to do it. This will ensure that no\n"
    "data is missed when new topics/partitions are dynamically subscribed. Note that\n"
    "'startingoffsets' only applies when a new Streaming query is started, and\n"
    "that resuming will always pick up from where the query left off. See the docs for more\n"
    "details.\n"
)


@dataclass(frozen=True)
class OffsetSpec:
    """Where a read starts or ends, before it is resolved against the broker.

    ``kind`` is ``"earliest"``, ``"latest"``, ``"offsets"`` (``per_partition`` maps topic-partitions to
    offsets, -2 earliest / -1 latest), ``"timestamp"`` (one ``timestamp`` in ms for every partition) or
    ``"timestamps"`` (``per_partition`` maps topic-partitions to timestamps). ``no_match_latest`` is the
    ``startingOffsetsByTimestampStrategy``: when no record has a timestamp at or after the requested one,
    use the latest offset instead of failing.
    """

    kind: Literal["earliest", "latest", "offsets", "timestamp", "timestamps"]
    per_partition: dict[TopicPartition, int] | None = None
    timestamp: int | None = None
    no_match_latest: bool = False


@dataclass(frozen=True)
class SourceOptions:
    """Validated options of a read (batch or streaming); cheap to pickle."""

    strategy: Literal["assign", "subscribe", "subscribepattern"]
    #: assign: list of (topic, partition); subscribe: list of topic names; subscribepattern: the regex.
    strategy_value: tuple[TopicPartition, ...] | tuple[str, ...] | str
    starting: OffsetSpec
    ending: OffsetSpec | None
    fail_on_data_loss: bool = True
    include_headers: bool = False
    min_partitions: int | None = None
    max_records_per_partition: int | None = None
    max_offsets_per_trigger: int | None = None
    min_offsets_per_trigger: int | None = None
    max_trigger_delay_ms: int = 15 * 60 * 1000
    poll_timeout_ms: int = 120_000
    #: ``kafka.*`` options with the prefix removed (``bootstrap.servers`` is always present).
    kafka_params: dict[str, str] = field(default_factory=dict, repr=False)  # secrets inside (issue 34)

    @property
    def bootstrap_servers(self) -> str:
        return self.kafka_params["bootstrap.servers"]

    def matches_topic(self, topic: str) -> bool:
        """Whether ``subscribe``/``subscribePattern`` selects ``topic`` (Java ``Pattern.matches``: whole name)."""
        if self.strategy == SUBSCRIBE:
            return topic in self.strategy_value
        if self.strategy == SUBSCRIBE_PATTERN:
            return re.fullmatch(str(self.strategy_value), topic) is not None
        assigned: tuple[TopicPartition, ...] = self.strategy_value  # type: ignore[assignment]  # assign: pairs
        return any(t == topic for t, _ in assigned)


@dataclass(frozen=True)
class SinkOptions:
    """Validated options of a write."""

    topic: str | None
    #: None (unset): write the ``headers`` column when the DataFrame has one, as Spark's sink does;
    #: False: never write headers; True: write them (same as unset, stated explicitly).
    include_headers: bool | None = None
    kafka_params: dict[str, str] = field(default_factory=dict, repr=False)  # secrets inside (issue 34)

    @property
    def bootstrap_servers(self) -> str:
        return self.kafka_params["bootstrap.servers"]


#: The read options of Spark's Kafka source (``KafkaSourceProvider``) that kafkawire knows, as written in
#: its docs; names are compared case-insensitively. ``kafka.*`` options are judged by the client mapping.
SOURCE_OPTIONS = (
    "assign", "subscribe", "subscribePattern", "startingOffsets", "endingOffsets", "startingTimestamp",
    "endingTimestamp", "startingOffsetsByTimestamp", "endingOffsetsByTimestamp",
    "startingOffsetsByTimestampStrategy", "failOnDataLoss", "maxOffsetsPerTrigger", "minOffsetsPerTrigger",
    "maxTriggerDelay", "minPartitions", "maxRecordsPerPartition", "includeHeaders", "kafkaConsumer.pollTimeoutMs",
    "fetchOffset.numRetries", "fetchOffset.retryIntervalMs", "groupIdPrefix",
    # Value decoding (kafkawire/spark/values.py); schema.registry.* and basic/bearer.auth.* pass through.
    "valueFormat", "keyFormat", "schema.registry.url", "valueSubject", "keySubject", "avroSchema", "keyAvroSchema",
    "mode",
)
#: The write options (``topic``, ``includeHeaders``; ``exactlyOnce`` is kafkawire's).
SINK_OPTIONS = ("topic", "includeHeaders", "exactlyOnce", "valueFormat", "keyFormat", "schema.registry.url",
                "valueSubject", "keySubject", "avroSchema", "keyAvroSchema", "mode")


#: Option prefixes judged elsewhere: the client mapping (kafka.*), the Schema Registry client (values.py).
_PASSED_PREFIXES = ("kafka.", "schema.registry.", "basic.auth.", "bearer.auth.")


def check_option_names(opts: Mapping[str, str], known: tuple[str, ...]) -> None:
    """A misspelt option (``startingOffset``) is an :class:`InvalidOptionError` with a suggestion.

    Spark ignores options it does not know, so a typo would silently read from the wrong place; an unknown
    name that is not close to a known one is left alone (another layer may own it, as Spark's ``path``).
    """
    import difflib

    by_lower = {k.lower(): k for k in known}
    for key in map(str, opts):
        if key.lower() in by_lower or key.lower().startswith(_PASSED_PREFIXES):
            continue
        close = difflib.get_close_matches(key.lower(), list(by_lower), n=1, cutoff=0.85)
        if close:
            raise InvalidOptionError(f"Unknown option '{key}': did you mean '{by_lower[close[0]]}'?")


# ----------------------------------------------------------------------------------------- helpers


def _lower(options: Mapping[str, str]) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in options.items() if v is not None}


def _kafka_params(opts: Mapping[str, str]) -> dict[str, str]:
    return {k[len("kafka.") :]: v for k, v in opts.items() if k.startswith("kafka.")}


def _bool(opts: Mapping[str, str], key: str, default: bool) -> bool:
    # Scala's String.toBoolean: "true"/"false" in any case, anything else is an error.
    if key not in opts:
        return default
    v = opts[key].strip().lower()
    if v in ("true", "false"):
        return v == "true"
    raise InvalidOptionError(f"For input string: \"{opts[key]}\" (option '{key}' must be 'true' or 'false')")


def _long(opts: Mapping[str, str], key: str) -> int | None:
    if key not in opts:
        return None
    try:
        return int(opts[key].strip())
    except ValueError:
        raise InvalidOptionError(f"For input string: \"{opts[key]}\" (option '{key}' must be a number)") from None


_DURATION = re.compile(r"^\s*(\d+)\s*(ms|s|m|min|h|d)?\s*$", re.IGNORECASE)
_DURATION_MS = {"ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}


def _duration_ms(text: str) -> int:
    """Spark's ``Utils.timeStringAsMs`` for the units that make sense here (no suffix means ms)."""
    m = _DURATION.match(text)
    if not m:
        raise InvalidOptionError(f"Invalid time string: {text}")
    return int(m.group(1)) * _DURATION_MS[(m.group(2) or "ms").lower()]


def _int_keys(raw: object) -> dict[int, int]:
    if not isinstance(raw, dict):
        raise ValueError("not an object")
    out: dict[int, int] = {}
    for k, v in raw.items():
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError("not an integer")
        out[int(k)] = v
    return out


def parse_assign(value: str) -> tuple[TopicPartition, ...]:
    """``{"topicA":[0,1],"topicB":[0,1]}`` → ``(("topicA", 0), ...)`` (``JsonUtils.partitions``)."""
    try:
        raw = json.loads(value)
        if not isinstance(raw, dict):
            raise ValueError("not an object")
        out: list[TopicPartition] = []
        for topic, parts in raw.items():
            if not isinstance(parts, list) or any(isinstance(p, bool) or not isinstance(p, int) for p in parts):
                raise ValueError("not a list of partitions")
            out.extend((str(topic), int(p)) for p in parts)
        return tuple(out)
    except ValueError:
        raise InvalidOptionError(f"Expected e.g. {_ASSIGN_EXAMPLE}, got {value}") from None


def parse_partition_offsets(value: str) -> dict[TopicPartition, int]:
    """``{"topicA":{"0":23,"1":-1}}`` → ``{("topicA", 0): 23, ...}`` (``JsonUtils.partitionOffsets``)."""
    return _per_partition(value, _OFFSETS_EXAMPLE)


def parse_partition_timestamps(value: str) -> dict[TopicPartition, int]:
    """Per-partition timestamps in the same JSON shape (``JsonUtils.partitionTimestamps``)."""
    return _per_partition(value, _TIMESTAMPS_EXAMPLE)


def _per_partition(value: str, example: str) -> dict[TopicPartition, int]:
    """``{"topic":{"0":n,...}}`` → ``{("topic", 0): n, ...}``; anything else names ``example``."""
    try:
        raw = json.loads(value)
        if not isinstance(raw, dict):
            raise ValueError("not an object")
        return {(str(t), p): n for t, parts in raw.items() for p, n in _int_keys(parts).items()}
    except ValueError:
        raise InvalidOptionError(f"Expected e.g. {example}, got {value}") from None


def offset_spec(
    opts: Mapping[str, str], timestamp_key: str, by_timestamp_key: str, offsets_key: str, default: OffsetSpec
) -> OffsetSpec:
    """``getKafkaOffsetRangeLimit``: a global timestamp wins over per-partition timestamps over offsets."""
    strategy = opts.get("startingoffsetsbytimestampstrategy", "error").strip().lower()
    if strategy not in ("error", "latest"):
        raise InvalidOptionError(
            f"Invalid value '{opts['startingoffsetsbytimestampstrategy']}' for option "
            "'startingOffsetsByTimestampStrategy': expected 'error' or 'latest'"
        )
    no_match_latest = strategy == "latest"
    if timestamp_key in opts:
        text = opts[timestamp_key].strip()
        try:
            ts = int(text)
        except ValueError:
            raise InvalidOptionError(f"Expected a single long value, got {text}") from None
        return OffsetSpec("timestamp", timestamp=ts, no_match_latest=no_match_latest)
    if by_timestamp_key in opts:
        return OffsetSpec(
            "timestamps",
            per_partition=parse_partition_timestamps(opts[by_timestamp_key].strip()),
            no_match_latest=no_match_latest,
        )
    if offsets_key in opts:
        text = opts[offsets_key].strip()
        if text.lower() == "latest":
            return OffsetSpec("latest")
        if text.lower() == "earliest":
            return OffsetSpec("earliest")
        return OffsetSpec("offsets", per_partition=parse_partition_offsets(text))
    return default


def _starting(opts: Mapping[str, str], default: OffsetSpec) -> OffsetSpec:
    return offset_spec(opts, "startingtimestamp", "startingoffsetsbytimestamp", "startingoffsets", default)


def _ending(opts: Mapping[str, str]) -> OffsetSpec:
    return offset_spec(opts, "endingtimestamp", "endingoffsetsbytimestamp", "endingoffsets", OffsetSpec("latest"))


# ------------------------------------------------------------------------------------- validation


def _validate_general(opts: Mapping[str, str]) -> None:
    specified = [k for k in STRATEGY_OPTION_KEYS if k in opts]
    keys = ", ".join(STRATEGY_OPTION_KEYS)
    if not specified:
        raise InvalidOptionError(
            f"One of the following options must be specified for Kafka source: {keys}. See the docs for more details."
        )
    if len(specified) > 1:
        raise InvalidOptionError(
            f"Only one of the following options can be specified for Kafka source: {keys}. "
            "See the docs for more details."
        )
    name = specified[0]
    value = opts[name]
    if name == ASSIGN and not value.strip().startswith("{"):
        raise InvalidOptionError(f"No topicpartitions to assign as specified value for option 'assign' is '{value}'")
    if name == SUBSCRIBE and not [t for t in value.split(",") if t.strip()]:
        raise InvalidOptionError(f"No topics to subscribe to as specified value for option 'subscribe' is '{value}'")
    if name == SUBSCRIBE_PATTERN:
        if not value.strip():
            raise InvalidOptionError(
                f"Pattern to subscribe is empty as specified value for option 'subscribePattern' is '{value}'"
            )
        try:
            re.compile(value.strip())
        except re.error as e:
            raise InvalidOptionError(f"Invalid regular expression for option 'subscribePattern': {e}") from None

    min_partitions = _long(opts, "minpartitions")
    if min_partitions is not None and min_partitions <= 0:
        raise InvalidOptionError("minPartitions must be positive")
    max_records = _long(opts, "maxrecordsperpartition")
    if max_records is not None and max_records <= 0:
        raise InvalidOptionError("maxrecordsperpartition must be positive")

    # kafka.group.id: kafkawire reads by offset and never joins a group; a streaming query commits its
    # finished micro-batches' end offsets to that group for lag monitors (spark/group_commits.py).
    if "kafka.auto.offset.reset" in opts:
        raise InvalidOptionError(_AUTO_OFFSET_RESET_MESSAGE)
    if "kafka.key.deserializer" in opts:
        raise InvalidOptionError(
            "Kafka option 'key.deserializer' is not supported as keys are deserialized as byte arrays with "
            "ByteArrayDeserializer. Use DataFrame operations to explicitly deserialize the keys."
        )
    if "kafka.value.deserializer" in opts:
        raise InvalidOptionError(
            "Kafka option 'value.deserializer' is not supported as values are deserialized as byte arrays with "
            "ByteArrayDeserializer. Use DataFrame operations to explicitly deserialize the values."
        )
    for unsupported in ("enable.auto.commit", "interceptor.classes"):
        if f"kafka.{unsupported}" in opts:
            raise InvalidOptionError(f"Kafka option '{unsupported}' is not supported")
    if "kafka.bootstrap.servers" not in opts:
        raise InvalidOptionError("Option 'kafka.bootstrap.servers' must be specified for configuring Kafka consumer")

    min_off = _long(opts, "minoffsetspertrigger")
    max_off = _long(opts, "maxoffsetspertrigger")
    if min_off is not None and max_off is not None and min_off > max_off:
        raise InvalidOptionError(
            f"The value of minOffsetPerTrigger({min_off}) is higher than the maxOffsetsPerTrigger({max_off})."
        )
    for key in ("maxoffsetspertrigger", "minoffsetspertrigger"):
        v = _long(opts, key)
        if v is not None and v <= 0:
            raise InvalidOptionError(f"{key} must be positive")


def _refuse_in_batch(spec: OffsetSpec, kind: str, sentinel: int, whole: str, per_partition: str) -> None:
    """A batch query may not start at latest nor end at earliest, as a whole (``kind``) or for one partition
    (``sentinel``), in Spark's words."""
    if spec.kind == kind:
        raise InvalidOptionError(f"{whole} can't be {kind} for batch queries on Kafka")
    if spec.kind == "offsets":
        for (t, p), off in (spec.per_partition or {}).items():
            if off == sentinel:
                where = f"{per_partition} for {tp_str(t, p)}"
                raise InvalidOptionError(f"{where} can't be {kind} for batch queries on Kafka")


def _validate_batch(opts: Mapping[str, str]) -> tuple[OffsetSpec, OffsetSpec]:
    starting = _starting(opts, OffsetSpec("earliest"))
    _refuse_in_batch(starting, "latest", LATEST, "starting offset", "startingOffsets")
    ending = _ending(opts)
    _refuse_in_batch(ending, "earliest", EARLIEST, "ending offset", "ending offset")
    _validate_general(opts)
    for key in ("maxoffsetspertrigger", "minoffsetspertrigger", "maxtriggerdelay"):
        if key in opts:
            log.warning("%s option ignored in batch queries", key)
    return starting, ending


def _check_offset_limit_validity(start: OffsetSpec, end: OffsetSpec) -> None:
    """``checkOffsetLimitValidity``: explicit start and end must name the same partitions, start <= end."""
    if start.kind != end.kind or start.kind not in ("offsets", "timestamps"):
        return
    s, e = start.per_partition or {}, end.per_partition or {}
    if set(s) != set(e):

        def fmt(tps: Iterable[TopicPartition]) -> str:
            return "Set(" + ", ".join(sorted(tp_str(*tp) for tp in tps)) + ")"

        raise InvalidOptionError(
            "[MISMATCHED_TOPIC_PARTITIONS_BETWEEN_START_OFFSET_AND_END_OFFSET] The specified start offset and end "
            "offset should have the same topic-partitions. "
            f"Topic-partitions for start offset: {fmt(s)}, topic-partitions for end offset: {fmt(e)}."
        )
    for (t, p), so in s.items():
        eo = e[(t, p)]
        if so > eo and so >= 0 and eo >= 0:  # earliest/latest are negative and not compared
            what = "offset" if start.kind == "offsets" else "timestamp"
            cls = "UNRESOLVED_START_OFFSET_GREATER_THAN_END_OFFSET"
            if what == "timestamp":
                cls = "UNRESOLVED_START_TIMESTAMP_GREATER_THAN_END_TIMESTAMP"
            raise InvalidOptionError(
                f"[{cls}] The specified start {what} {so} is greater than the end {what} {eo} "
                f"for topic {t} partition {p}."
            )


def _strategy(opts: Mapping[str, str]) -> tuple[str, tuple[TopicPartition, ...] | tuple[str, ...] | str]:
    if ASSIGN in opts:
        return ASSIGN, parse_assign(opts[ASSIGN])
    if SUBSCRIBE in opts:
        return SUBSCRIBE, tuple(t.strip() for t in opts[SUBSCRIBE].split(",") if t.strip())
    return SUBSCRIBE_PATTERN, opts[SUBSCRIBE_PATTERN].strip()


def parse_source_options(options: Mapping[str, str], *, streaming: bool) -> SourceOptions:
    """Validate the options of a read and return them parsed.

    Batch reads start at ``earliest`` and end at ``latest`` unless told otherwise; streaming reads start at
    ``latest`` and may not have an end. Raises :class:`InvalidOptionError` with Spark's wording.
    """
    check_option_names(options, SOURCE_OPTIONS)
    opts = _lower(options)
    ending: OffsetSpec | None
    if streaming:
        if "endingoffsets" in opts:
            raise InvalidOptionError("ending offset not valid in streaming queries")
        if "endingoffsetsbytimestamp" in opts or "endingtimestamp" in opts:
            raise InvalidOptionError("ending timestamp not valid in streaming queries")
        _validate_general(opts)
        starting, ending = _starting(opts, OffsetSpec("latest")), None
    else:
        starting, ending = _validate_batch(opts)
        _check_offset_limit_validity(starting, ending)
    strategy, value = _strategy(opts)
    return SourceOptions(
        strategy=strategy,  # type: ignore[arg-type]
        strategy_value=value,
        starting=starting,
        ending=ending,
        fail_on_data_loss=_bool(opts, "failondataloss", True),
        include_headers=_bool(opts, "includeheaders", False),
        min_partitions=_long(opts, "minpartitions"),
        max_records_per_partition=_long(opts, "maxrecordsperpartition"),
        max_offsets_per_trigger=_long(opts, "maxoffsetspertrigger"),
        min_offsets_per_trigger=_long(opts, "minoffsetspertrigger"),
        max_trigger_delay_ms=_duration_ms(opts.get("maxtriggerdelay", "15m")),
        poll_timeout_ms=_long(opts, "kafkaconsumer.polltimeoutms") or 120_000,
        kafka_params=_kafka_params(opts),
    )


def include_headers(options: Mapping[str, str]) -> bool:
    """The ``includeHeaders`` option alone (what the schema depends on)."""
    return _bool(_lower(options), "includeheaders", False)


def parse_sink_options(options: Mapping[str, str]) -> SinkOptions:
    """Validate the options of a write (``kafkaParamsForProducer`` plus the ``topic`` option)."""
    check_option_names(options, SINK_OPTIONS)
    opts = _lower(options)
    if "kafka.key.serializer" in opts:
        raise InvalidOptionError(
            "Kafka option 'key.serializer' is not supported as keys are serialized with ByteArraySerializer."
        )
    if "kafka.value.serializer" in opts:
        raise InvalidOptionError(
            "Kafka option 'value.serializer' is not supported as value are serialized with ByteArraySerializer."
        )
    if "kafka.bootstrap.servers" not in opts:
        raise InvalidOptionError("Option 'kafka.bootstrap.servers' must be specified for configuring Kafka producer")
    topic = opts.get("topic")
    return SinkOptions(
        topic=topic.strip() if topic is not None else None,
        include_headers=_bool(opts, "includeheaders", False) if "includeheaders" in opts else None,
        kafka_params=_kafka_params(opts),
    )
