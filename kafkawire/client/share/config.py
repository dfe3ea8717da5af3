"""The Java share consumer's properties (``KafkaShareConsumer``) as :class:`ShareConsumer` keyword arguments,
through the client's one property mapping (:mod:`kafkawire.client.config`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from ..config import (
    CONSUMER_PARAMS,
    IGNORED_COMMON,
    PRODUCER_PARAMS,
    bool_value,
    choice,
    int_value,
    role_kwargs,
    str_value,
)

__all__ = ["SHARE_CONSUMER_PARAMS", "share_consumer_kwargs_from_properties"]

#: Share consumer properties -> :class:`kafkawire.client.ShareConsumer` keyword and converter.
SHARE_CONSUMER_PARAMS: dict[str, tuple[str, Callable[[str, Any], Any]]] = {
    **{name: CONSUMER_PARAMS[name] for name in ("group.id", "fetch.max.wait.ms", "fetch.max.bytes")},
    "share.acknowledgement.mode": ("acknowledgement_mode", choice("implicit", "explicit")),
    "max.poll.records": ("max_poll_records", int_value),
    "check.crcs": ("check_crcs", bool_value),
    "client.rack": ("rack_id", str_value),
}

_IGNORED_SHARE = (IGNORED_COMMON - {"client.rack"}) | {
    "key.deserializer",
    "value.deserializer",
    "fetch.min.bytes",
    "max.partition.fetch.bytes",
    "share.acquire.mode",  # records are fetched in the broker's batches, as Java's default batch_optimized
    "share.acknowledgement.commit.callback.class",
}


def share_consumer_kwargs_from_properties(
    properties: Mapping[str, Any] | str | os.PathLike[str], *, warn: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """:class:`~kafkawire.client.ShareConsumer` keyword arguments (``bootstrap_servers`` included) from the
    Java share consumer's properties (a mapping or a ``.properties`` file): :data:`SHARE_CONSUMER_PARAMS`
    (``group.id``, ``share.acknowledgement.mode``, ``max.poll.records``, ...) and the connection and
    security properties every client takes. A property with no kafkawire equivalent is reported to
    ``warn`` (default: a logged warning naming it) and ignored; a name close to a known one raises
    :class:`~kafkawire.client.errors.ConfigError`."""
    return role_kwargs(
        properties, "share consumer", SHARE_CONSUMER_PARAMS, set(_IGNORED_SHARE), (*PRODUCER_PARAMS,), warn
    )
