"""The consumer's and the producer's properties (Java's names and librdkafka's) -> :class:`kafkawire.Consumer` and
:class:`kafkawire.Producer` keyword arguments; a misspelt name raises :class:`ConfigError` with a suggestion."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .properties import (
    CLIENT_PARAMS,
    NO_EFFECT,
    SECURITY,
    UNSUPPORTED,
    bootstrap_from_properties,
    config_from_properties,
    load_properties_file,
    warn_unknown,
)
from .values import bool_value, choice, int_value, str_value

__all__ = ["CONSUMER_PARAMS", "IGNORED_COMMON", "IGNORED_CONSUMER", "IGNORED_PRODUCER", "JAVA_ASSIGNORS",
           "PRODUCER_PARAMS", "client_kwargs_from_properties", "consumer_kwargs_from_properties",
           "producer_kwargs_from_properties", "role_kwargs"]

log = logging.getLogger("kafkawire.config")


#: The Java client's assignor classes (and their short names) -> kafkawire's assignor names.
JAVA_ASSIGNORS = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.StickyAssignor": "sticky",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
}
_ASSIGNOR_NAMES = {
    **JAVA_ASSIGNORS,
    **{cls.rsplit(".", 1)[1]: short for cls, short in JAVA_ASSIGNORS.items()},
    **{short: short for short in JAVA_ASSIGNORS.values()},
}


def _assignors(prop: str, value: Any) -> tuple[str, ...]:
    """``partition.assignment.strategy``: a comma-separated list of Java class names, their simple names or
    kafkawire's (librdkafka's) short names, in order of preference."""
    names = [n.strip() for n in str(value).split(",") if n.strip()]
    if not names:
        raise ConfigError(prop, "expected one or more assignors", value=str(value))
    out = []
    for name in names:
        if name not in _ASSIGNOR_NAMES:
            raise ConfigError(prop, f"unknown assignor {name!r} (kafkawire has {', '.join(JAVA_ASSIGNORS)} and "
                              f"their short names {', '.join(sorted(set(JAVA_ASSIGNORS.values())))})", value=name)
        out.append(_ASSIGNOR_NAMES[name])
    return tuple(out)


def _acks(prop: str, value: Any) -> int:
    text = str(value).strip().lower()
    if text in ("all", "-1"):
        return -1
    if text in ("0", "1"):
        return int(text)
    raise ConfigError(prop, f"expected all, -1, 0 or 1, not {value!r}", value=str(value))


def _compression(prop: str, value: Any) -> str | None:
    text = choice("none", "gzip", "snappy", "lz4", "zstd")(prop, value)
    return None if text == "none" else text


def _offset_reset(prop: str, value: Any) -> str:
    text = str(value).strip().lower()
    # librdkafka's synonyms too; "none" fails without a committed offset and raises LogTruncationError (KIP-320).
    return choice("earliest", "latest", "none", aliases={"smallest": "earliest", "beginning": "earliest",
                                                  "largest": "latest", "end": "latest"})(prop, text)


#: Consumer properties -> :class:`kafkawire.Consumer` keyword and converter.
CONSUMER_PARAMS: dict[str, tuple[str, Callable[[str, Any], Any]]] = {
    "group.id": ("group_id", str_value),
    "group.instance.id": ("group_instance_id", str_value),
    "group.protocol": ("group_protocol", choice("classic", "consumer")),
    "group.remote.assignor": ("group_remote_assignor", str_value),
    "partition.assignment.strategy": ("partition_assignment_strategy", _assignors),
    "session.timeout.ms": ("session_timeout_ms", int_value),
    "heartbeat.interval.ms": ("heartbeat_interval_ms", int_value),
    # KIP-62: the poll timer of the background heartbeat thread, also sent as the rebalance timeout.
    "max.poll.interval.ms": ("max_poll_interval_ms", int_value),
    "enable.auto.commit": ("enable_auto_commit", bool_value),
    "auto.commit.interval.ms": ("auto_commit_interval_ms", int_value),
    "auto.offset.reset": ("auto_offset_reset", _offset_reset),
    "isolation.level": ("isolation", choice("read_uncommitted", "read_committed")),
    "fetch.max.bytes": ("max_bytes", int_value),
    "max.partition.fetch.bytes": ("partition_max_bytes", int_value),
    "fetch.max.wait.ms": ("max_wait_ms", int_value),
    "fetch.wait.max.ms": ("max_wait_ms", int_value),  # librdkafka
    "exclude.internal.topics": ("exclude_internal_topics", bool_value),
}

#: Producer properties -> :class:`kafkawire.Producer` keyword and converter.
PRODUCER_PARAMS: dict[str, tuple[str, Callable[[str, Any], Any]]] = {
    "acks": ("acks", _acks),
    "request.required.acks": ("acks", _acks),  # librdkafka
    "linger.ms": ("linger_ms", int_value),
    "queue.buffering.max.ms": ("linger_ms", int_value),  # librdkafka
    # Java's batch.size caps one partition's batch; kafkawire writes a topic's buffer once it holds this much.
    "batch.size": ("batch_bytes", int_value),
    "batch.num.messages": ("batch_records", int_value),  # librdkafka
    "compression.type": ("compression", _compression),
    "compression.codec": ("compression", _compression),  # librdkafka
    "delivery.timeout.ms": ("delivery_timeout_ms", int_value),
    "message.timeout.ms": ("delivery_timeout_ms", int_value),  # librdkafka
    "transactional.id": ("transactional_id", str_value),
    "transaction.timeout.ms": ("transaction_timeout_ms", int_value),
    # What send() may buffer before it blocks, and for how long (issue 32).
    "buffer.memory": ("buffer_memory", int_value),
    "max.block.ms": ("max_block_ms", int_value),
    "queue.buffering.max.kbytes": ("buffer_memory", lambda name, v: int_value(name, v) * 1024),  # librdkafka
}

# Java client properties with no kafkawire equivalent: a warning naming the property says it is ignored.
IGNORED_COMMON = {
    "client.dns.lookup", "connections.max.idle.ms", "metadata.recovery.strategy",
    "metadata.recovery.rebootstrap.trigger.ms", "metric.reporters", "metrics.num.samples", "metrics.recording.level",
    "metrics.sample.window.ms", "auto.include.jmx.reporter", "receive.buffer.bytes", "send.buffer.bytes",
    "reconnect.backoff.ms", "reconnect.backoff.max.ms", "socket.connection.setup.timeout.max.ms",
    "enable.metrics.push", "default.api.timeout.ms", "interceptor.classes",
}
IGNORED_CONSUMER = IGNORED_COMMON | {
    "max.poll.records",  # poll() returns what one fetch brought, as columns (no per-record cap)
    "fetch.min.bytes",  # the consumer's fetches ask for at least one byte
    "check.crcs", "key.deserializer", "value.deserializer", "allow.auto.create.topics",
    "internal.leave.group.on.close", "internal.throw.on.fetch.stable.offset.unsupported",
}
IGNORED_PRODUCER = IGNORED_COMMON | {
    "key.serializer", "value.serializer", "partitioner.class",
    "partitioner.ignore.keys", "partitioner.adaptive.partitioning.enable", "partitioner.availability.timeout.ms",
    "compression.gzip.level", "compression.lz4.level", "compression.zstd.level", "metadata.max.idle.ms",
}


def role_kwargs(properties: Mapping[str, Any] | str | os.PathLike[str], role: str,
                 params: Mapping[str, tuple[str, Callable[[str, Any], Any]]], ignored: set[str],
                 others: Iterable[str], warn: Callable[[str], None] | None) -> dict[str, Any]:
    """The keyword arguments of one client ``role`` from Java properties: ``params`` converted, ``ignored``
    (and the ``others`` roles' names) reported to ``warn``, a misspelt name refused with a suggestion."""
    import difflib

    if isinstance(properties, (str, os.PathLike)):
        properties = load_properties_file(Path(properties))
    props = {str(k).strip(): str(v) for k, v in properties.items() if v is not None}
    out: dict[str, Any] = {"bootstrap_servers": bootstrap_from_properties(props)}
    for key, value in props.items():
        if key in params:
            name, conv = params[key]
            out[name] = conv(key, value)
    unknown: list[str] = []
    out.update(config_from_properties(props, handled=(*params, *ignored), warn=unknown.append))
    known = [*params, *CLIENT_PARAMS, *SECURITY, *NO_EFFECT, *UNSUPPORTED, *ignored]
    other = set(others)
    for key in props:
        if key in ignored:
            if warn is not None:
                warn(key)
            else:
                log.warning("The configuration '%s' of the Java %s has no kafkawire equivalent; ignored.", key, role)
    report = warn or warn_unknown
    for key in unknown:
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.85)
        if key not in other and close:
            raise ConfigError(key, f"not a {role} property; did you mean {close[0]!r}?")
        report(key)
    return out


def client_kwargs_from_properties(properties: Mapping[str, Any] | str | os.PathLike[str], *,
                                  warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """:class:`kafkawire.Client` keyword arguments (``bootstrap_servers`` included) from the Java client's
    properties (a mapping or a ``.properties`` file), through the same mapping as the consumer's and the
    producer's: a name close to a known one (``securty.protocol``) raises :class:`ConfigError` with a
    suggestion; a consumer's or producer's property, or one kafkawire does not know, goes to ``warn``
    (default: a logged warning naming it) and is ignored."""
    return role_kwargs(properties, "client", {}, set(IGNORED_COMMON),
                        (*CONSUMER_PARAMS, *PRODUCER_PARAMS, *IGNORED_CONSUMER, *IGNORED_PRODUCER), warn)


def consumer_kwargs_from_properties(properties: Mapping[str, Any] | str | os.PathLike[str], *,
                                    warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """:class:`kafkawire.Consumer` keyword arguments (``bootstrap_servers`` included) from the Java consumer's
    properties (a mapping or a ``.properties`` file): :data:`CONSUMER_PARAMS` (``group.id``,
    ``group.protocol``, ``partition.assignment.strategy`` with Java class names, ``isolation.level``, ...) and
    everything :func:`config_from_properties` knows. A Java consumer property kafkawire has no equivalent for
    (``max.poll.records``, ``fetch.min.bytes``, deserializers, ...) and a producer's property are reported to
    ``warn`` (default: a logged warning naming it) and ignored; an unknown name close to a known one (a typo)
    raises :class:`ConfigError` naming it."""
    return role_kwargs(properties, "consumer", CONSUMER_PARAMS, IGNORED_CONSUMER,
                        (*PRODUCER_PARAMS, *IGNORED_PRODUCER), warn)


def producer_kwargs_from_properties(properties: Mapping[str, Any] | str | os.PathLike[str], *,
                                    warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """:class:`kafkawire.Producer` keyword arguments (``bootstrap_servers`` included) from the Java producer's
    properties (a mapping or a ``.properties`` file): :data:`PRODUCER_PARAMS` (``acks``, ``linger.ms``,
    ``compression.type``, ``transactional.id``, ...), ``enable.idempotence`` and everything
    :func:`config_from_properties` knows; unknown and ignored properties as in
    :func:`consumer_kwargs_from_properties`."""
    return role_kwargs(properties, "producer", PRODUCER_PARAMS, IGNORED_PRODUCER,
                        (*CONSUMER_PARAMS, *IGNORED_CONSUMER), warn)
