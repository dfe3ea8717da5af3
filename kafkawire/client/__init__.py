"""The blocking Kafka client (:class:`Client`), a group :class:`Consumer`, a buffering :class:`Producer`,
and their building blocks.

:mod:`.connection` (one socket per broker: framing, correlation ids, pipelining, timeouts, TLS, SASL),
:mod:`.partitioner` (the Java client's murmur2 partitioner), :mod:`.retry` (backoff policy),
:mod:`.sasl` (PLAIN and SCRAM tokens), :mod:`.group` (consumer protocol payloads, range assignor),
:mod:`.errors` (the client's own exceptions) and :mod:`.types` (result types).
"""

from __future__ import annotations

from .client import EARLIEST, LATEST, Client
from .connection import BrokerConnection
from .consumer import CommitFailedError, Consumer
from .errors import (
    AuthenticationFailedError,
    CorrelationIdMismatchError,
    KafkaClientError,
    KafkaConnectionError,
    KafkaTimeoutError,
    NoBrokersAvailableError,
    ProduceFailedError,
    ResponseTooLargeError,
)
from .partitioner import Partitioner, murmur2
from .producer import Producer
from .retry import RetryPolicy
from .types import (
    BrokerMetadata,
    ClusterMetadata,
    CommittedOffset,
    FetchResult,
    ListedOffset,
    NewTopic,
    PartitionMetadata,
    ProduceResult,
    TopicMetadata,
)

__all__ = [
    "AuthenticationFailedError",
    "BrokerConnection",
    "BrokerMetadata",
    "Client",
    "ClusterMetadata",
    "CommitFailedError",
    "Consumer",
    "CommittedOffset",
    "CorrelationIdMismatchError",
    "EARLIEST",
    "FetchResult",
    "KafkaClientError",
    "KafkaConnectionError",
    "KafkaTimeoutError",
    "LATEST",
    "ListedOffset",
    "NewTopic",
    "NoBrokersAvailableError",
    "PartitionMetadata",
    "Partitioner",
    "ProduceFailedError",
    "Producer",
    "ProduceResult",
    "ResponseTooLargeError",
    "RetryPolicy",
    "TopicMetadata",
    "murmur2",
]
