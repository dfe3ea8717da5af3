"""The blocking Kafka client (:class:`Client`), a group :class:`Consumer`, a buffering :class:`Producer`,
and their building blocks.

Every public name is imported from here. The layout, bottom up (each layer uses only the ones below it):

* :mod:`.net`: one broker (:mod:`.net.connection`: a socket with framing, correlation ids, pipelining,
  deadlines, TLS and SASL; :mod:`.net.sasl`, :mod:`.net.oauth`, :mod:`.net.keystores`,
  :mod:`.net.deadline`, :mod:`.net.metrics`);
* :mod:`.cluster`: the cluster (:mod:`.cluster.cluster`: connections, metadata, coordinators and the one
  retry loop; :mod:`.cluster.retry`: backoff policy; :mod:`.cluster.quirks`: every workaround for a broker
  that departs from Kafka, see docs/BROKERS.md; :mod:`.cluster.topics`: create and delete topics);
* :class:`Client` (:mod:`.client`), the facade over them and the operations of
  :mod:`.consumer.fetch`, :mod:`.consumer.offsets` and :mod:`.producer.produce`;
* :mod:`.consumer` (the :class:`Consumer`, fetch sessions, offset ranges, rebalance listeners),
  :mod:`.group` (group membership, classic and KIP-848, and the assignors) and :mod:`.producer` (the
  :class:`Producer`, partitioner, transactions, delivery futures);
* :mod:`.share`: share groups (KIP-932): the :class:`ShareConsumer`, its membership, share sessions and
  acknowledgements;
* :mod:`kafkawire.admin` on top of the client.

:mod:`.config` turns the Java client's properties into client settings; :mod:`.errors` holds the client's
own exceptions and :mod:`.types` the result types. Logging goes to ``kafkawire.client.*``.
"""

from __future__ import annotations

from .client import EARLIEST, LATEST, Client
from .cluster.retry import RetryPolicy
from .consumer.consumer import Consumer
from .consumer.listeners import ConsumerRebalanceListener
from .errors import (
    AuthenticationFailedError,
    CommitFailedError,
    CorrelationIdMismatchError,
    GroupProtocolUnsupportedError,
    KafkaClientError,
    KafkaConnectionError,
    KafkaTimeoutError,
    ListenerMismatchError,
    NoBrokersAvailableError,
    ProduceFailedError,
    RecordDroppedError,
    ResponseTooLargeError,
    ShareSessionLostError,
    ShareStateError,
    TransactionError,
    WakeupError,
)
from .net.connection import BrokerConnection
from .net.deadline import Deadline
from .producer.delivery import DeliveryFuture, RecordMetadata
from .producer.partitioner import Partitioner, murmur2
from .producer.producer import Producer
from .producer.transaction import GroupMetadata, TransactionHandle, TransactionState, end_transaction
from .share import ShareConsumer, ShareRecordColumns
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
    "ListenerMismatchError",
    "ResponseTooLargeError",
    "RetryPolicy",
    "TopicMetadata",
    "TransactionError",
    "ShareConsumer",
    "ShareRecordColumns",
    "ShareSessionLostError",
    "ShareStateError",
    "WakeupError",
    "TransactionHandle",
    "TransactionState",
    "UnacknowledgedRecords",
    "end_transaction",
    "murmur2",
]
