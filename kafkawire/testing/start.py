"""``start_broker(kind)``: one entry point for every broker the tests, demos and the CLI start."""

from __future__ import annotations

from typing import Any

from .brokers import Broker
from .kafka import ApacheKafkaBroker
from .mock import MockCluster
from .noida import NoidaBroker
from .tansu import TansuBroker

__all__ = ["start_broker"]

_KINDS: dict[str, type[Broker]] = {
    "kafka": ApacheKafkaBroker,
    "noida": NoidaBroker,
    "tansu": TansuBroker,
    "mock": MockCluster,
}


def _broker_class(kind: str) -> type[Broker]:
    try:
        return _KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown broker kind {kind!r}; expected one of {sorted(_KINDS)}") from None


def start_broker(kind: str = "noida", **options: Any) -> Broker:
    """Start a broker of ``kind`` and wait until it answers.

    ``"kafka"`` is Apache Kafka itself (KRaft, one JVM; the reference broker, see
    :mod:`kafkawire.testing.kafka`); ``"noida"``, ``"tansu"`` and ``"mock"`` are the stand-ins that need no
    JVM. ``options`` go to the class: ``port``, ``log_dir``, ``startup_timeout``, ``keep_files`` for the
    subprocess brokers, ``version``/``config``/``heap``/``tls``/``sasl_mechanisms``/``users`` for kafka,
    ``data_dir`` for noida,
    ``tls``/``authentication``/``users`` for tansu, ``brokers`` for mock. Raises :class:`BrokerStartError`
    (with the broker's log tail) on failure.
    """
    cls = _broker_class(kind)
    broker = cls(**options)
    try:
        return broker.start()
    except BaseException:
        broker.stop()
        raise
