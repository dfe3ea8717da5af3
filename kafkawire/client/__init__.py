"""The blocking Kafka client (:class:`Client`), a group :class:`Consumer`, a buffering :class:`Producer`,
and their building blocks.

:class:`Client` is a facade over :mod:`.cluster` (connections, metadata, coordinators and the one retry
loop, bounded by a :class:`~.deadline.Deadline`) and the operation modules :mod:`.admin`,
:mod:`.produce`, :mod:`.fetch` and :mod:`.offsets`. Below them: :mod:`.connection` (one socket per
broker: framing, correlation ids, pipelining, deadlines, TLS, SASL), :mod:`.partitioner` (the Java
client's murmur2 partitioner), :mod:`.retry` (backoff policy), :mod:`.sasl` (PLAIN and SCRAM tokens),
:mod:`.group` (consumer protocol payloads, range assignor), :mod:`.quirks` (every workaround for a
broker that departs from Kafka, see docs/BROKERS.md), :mod:`.metrics` (traffic counters),
:mod:`.errors` (the client's own exceptions) and :mod:`.types` (result types). Logging goes to
``kafkawire.client.*``.
"""

from __future__ import annotations

from .client import EARLIEST, LATEST, Client
from .connection import BrokerConnection
from .consumer import CommitFailedError, Consumer
from .consumer_protocol import GroupProtocolUnsupportedError
from .deadline import Deadline
from .delivery import DeliveryFuture, RecordDroppedError, RecordMetadata
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
from .listeners import ConsumerRebalanceListener
from .partitioner import Partitioner, murmur2
from .producer import Producer
from .retry import RetryPolicy
from .transaction import GroupMetadata, TransactionError, TransactionHandle, TransactionState, end_transaction
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
    UnacknowledgedRecords,
)

__all__ = [
    "AuthenticationFailedError",
    "BrokerConnection",
    "BrokerMetadata",
    "Client",
    "ClusterMetadata",
    "CommitFailedError",
    "Consumer",
    "ConsumerRebalanceListener",
    "CommittedOffset",
    "CorrelationIdMismatchError",
    "Deadline",
    "DeliveryFuture",
    "EARLIEST",
    "GroupProtocolUnsupportedError",
    "FetchResult",
    "GroupMetadata",
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
    "RecordDroppedError",
    "RecordMetadata",
    "ResponseTooLargeError",
    "RetryPolicy",
    "TopicMetadata",
    "TransactionError",
    "TransactionHandle",
    "TransactionState",
    "UnacknowledgedRecords",
    "end_transaction",
    "murmur2",
]
