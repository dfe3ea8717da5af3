"""Every error the client and the admin raise themselves (as opposed to error codes a broker returns).

Broker error codes are classes in :mod:`kafkawire.protocol.errors`; both kinds carry ``retriable``,
which the client's retry loop consults::

    KafkaWireError
    ├── KafkaClientError                  base of the client's own errors
    │   ├── KafkaConnectionError          cannot connect, or the connection broke (retriable)
    │   │   └── NoBrokersAvailableError   none of the bootstrap servers answered (retriable)
    │   ├── KafkaTimeoutError             a response did not arrive in time (retriable)
    │   ├── AuthenticationFailedError     SASL refused or the server's SCRAM proof was wrong
    │   ├── ProduceFailedError            records not acknowledged after every retry (has .errors)
    │   ├── RecordDroppedError            a buffered record dropped unsent (abort_transaction)
    │   ├── TransactionError              a transactional call the state forbids, or an abortable failure
    │   ├── CommitFailedError             a group commit refused because the group rebalanced
    │   ├── GroupProtocolUnsupportedError the cluster has no KIP-848 consumer group protocol
    │   ├── RecordsLostError              records a bounded read needed are gone from the log
    │   ├── GroupNotInactiveError         an offset reset asked of a group with members (also ValueError)
    │   ├── ConfigError                   a Java client property kafkawire cannot use (also ValueError)
    │   └── KeyStoreError                 a key or trust store that cannot be read (also ValueError)
    └── ProtocolError
        ├── CorrelationIdMismatchError    the response answers some other request
        ├── ResponseTooLargeError         the announced response size is above the configured cap
        └── ListenerMismatchError         the peer answered in another protocol (TLS, HTTP): wrong security.protocol
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import KafkaWireError, ProtocolError

if TYPE_CHECKING:
    from .consumer.ranges import LostRange
    from .types import UnacknowledgedRecords

__all__ = [
    "AuthenticationFailedError",
    "CommitFailedError",
    "ConfigError",
    "CorrelationIdMismatchError",
    "GroupNotInactiveError",
    "GroupProtocolUnsupportedError",
    "KafkaClientError",
    "KafkaConnectionError",
    "KafkaTimeoutError",
    "KeyStoreError",
    "LogTruncationError",
    "NoOffsetForPartitionError",
    "NoBrokersAvailableError",
    "ProduceFailedError",
    "RecordDroppedError",
    "RecordsLostError",
    "ResponseTooLargeError",
    "ListenerMismatchError",
    "TransactionError",
    "WakeupError",
]


class KafkaClientError(KafkaWireError):
    """Base of errors raised by the client rather than returned by a broker."""

    #: Whether repeating the operation (after refreshing metadata / reconnecting) may succeed.
    retriable: bool = False


class KafkaConnectionError(KafkaClientError, ConnectionError):
    """A broker could not be reached, or the connection broke while a request was in flight.

    A request in flight when the connection broke may or may not have been applied by the broker.
    """

    retriable = True


class NoBrokersAvailableError(KafkaConnectionError):
    """None of the bootstrap servers (or known brokers) accepted a connection."""


class KafkaTimeoutError(KafkaClientError, TimeoutError):
    """A call's deadline passed, or no complete response arrived within the request timeout (the
    connection has then been closed: the rest of that response would be read as the next one).

    A call that gave up at its deadline sets ``last_error`` to the error of its last attempt.
    ``no_time_left`` is True when nothing was even tried because the deadline had already passed
    (the retry loop reports the error before it, which says why).
    """

    retriable = True
    last_error: BaseException | None = None
    no_time_left: bool = False

    @classmethod
    def nothing_left(cls, message: str) -> KafkaTimeoutError:
        """The error of a step that was not attempted because its deadline had passed."""
        err = cls(message)
        err.no_time_left = True
        return err


class AuthenticationFailedError(KafkaClientError):
    """SASL authentication failed (bad credentials, unsupported mechanism, or a forged server proof)."""


class ProduceFailedError(KafkaClientError):
    """Some records were not acknowledged. ``errors`` maps ``(topic, partition)`` to the last error;
    ``result`` (a :class:`~kafkawire.client.types.ProduceResult`) shows which records *were*
    acknowledged (offset >= 0) before the call gave up; ``unacknowledged`` maps each partition to an
    :class:`~kafkawire.client.types.UnacknowledgedRecords` holding the values, keys, headers and
    timestamps that were not, so the application can send them again. ``timed_out`` is True when the
    call's deadline (``retry_timeout_ms`` / ``timeout_ms``) ended the retries."""

    def __init__(
        self,
        message: str,
        errors: dict[tuple[str, int], BaseException] | None = None,
        result: object = None,
        unacknowledged: dict[int, UnacknowledgedRecords] | None = None,
        timed_out: bool = False,
    ) -> None:
        super().__init__(message)
        self.errors = dict(errors or {})
        self.result = result
        self.unacknowledged = dict(unacknowledged or {})
        self.timed_out = timed_out

    @property
    def unacknowledged_count(self) -> int:
        """Number of records handed back in ``unacknowledged``."""
        return sum(len(u) for u in self.unacknowledged.values())


class CorrelationIdMismatchError(ProtocolError):
    """A response carried a correlation id other than the one of the oldest request in flight.

    Kafka answers the requests of one connection in order, so this means a broken or foreign peer;
    the connection is closed.
    """

    retriable = False

    def __init__(self, expected: int, received: int) -> None:
        self.expected = expected
        self.received = received
        super().__init__(f"response correlation id {received} does not match the request's {expected}")

    def __reduce__(self) -> tuple[Any, ...]:  # picklable with its arguments
        return (type(self), (self.expected, self.received))


class ListenerMismatchError(ProtocolError):
    """The peer answered a Kafka request in another protocol: a TLS record (the listener expects
    ``security.protocol`` SSL or SASL_SSL), an HTTP response (a web server, not a Kafka listener), an SSH
    banner. The message names the host, port, what was seen and what to set. Not retriable: asking
    again gets the same answer."""

    retriable = False


class ResponseTooLargeError(ProtocolError):
    """A response announced more bytes than ``max_response_bytes``; nothing of it was read.

    Brokers are supposed to respect Fetch ``max_bytes``, but some (noida-db) do not, and a peer that is
    not Kafka at all can announce anything: the size prefix is checked before the body is allocated.
    """

    retriable = False

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(
            f"response of {size} bytes exceeds max_response_bytes={limit}; "
            "raise max_response_bytes (Spark option kafka.receive.message.max.bytes) or lower the fetch sizes"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.size, self.limit))


class RecordsLostError(KafkaClientError):
    """Records a bounded read needed are gone from the log (retention, DeleteRecords, a re-created topic)."""

    def __init__(self, lost: LostRange) -> None:
        self.lost = lost
        super().__init__(str(lost))

    def __reduce__(self) -> tuple[Any, ...]:  # picklable: raised in Spark executors, re-raised on the driver
        return (type(self), (self.lost,))


class LogTruncationError(KafkaClientError):
    """The log was truncated under a consumer (KIP-320; Java's ``LogTruncationException``): after a leader
    change, the epoch of the last records it read ends, on the new leader, below its position, so records it
    returned were never committed and others may now sit at their offsets. Raised by a consumer whose
    ``auto_offset_reset`` is ``"none"`` (otherwise it goes back to the divergence point itself).
    ``partition``, ``position`` and ``divergent_offset`` (the first offset known to diverge, or None when
    the leader knows nothing of the epoch) say where."""

    def __init__(self, partition: tuple[str, int], position: int, divergent_offset: int | None) -> None:
        self.partition = partition
        self.position = position
        self.divergent_offset = divergent_offset
        where = "an unknown offset" if divergent_offset is None else f"offset {divergent_offset}"
        super().__init__(
            f"{partition[0]}/{partition[1]}: the log was truncated below the position {position} after a "
            f"leader change; it diverges from {where}"
        )

    def __reduce__(self) -> tuple[Any, ...]:  # picklable, like the other client errors
        return (type(self), (self.partition, self.position, self.divergent_offset))


class NoOffsetForPartitionError(KafkaClientError):
    """A consumer with ``auto_offset_reset="none"`` has no position to start from: no committed offset, or
    its offset is out of range (Java's ``NoOffsetForPartitionException`` / ``OffsetOutOfRangeException``)."""


class ConfigError(KafkaClientError, ValueError):
    """A property kafkawire cannot use as given; ``property`` names it."""

    def __init__(self, prop: str, message: str, *, value: str | None = None) -> None:
        super().__init__(f"{prop}: {message}")
        self.property = prop
        self.reason = message
        #: The offending value, for non-secret properties whose value was malformed (else None).
        self.value = value


class KeyStoreError(KafkaClientError, ValueError):
    """A store that cannot be read: wrong password, damaged file, unsupported format or entry."""


class CommitFailedError(KafkaClientError):
    """A group commit was refused because the group rebalanced: the partitions may belong to another
    member now, whose reads will start from the last successful commit. After the member rejoins, every
    partition it holds restarts from its committed offset, so records whose commit failed come again."""


class GroupProtocolUnsupportedError(KafkaClientError):
    """The cluster does not speak the consumer group protocol (no ConsumerGroupHeartbeat, API 68, in
    its ApiVersions, or it answered UNSUPPORTED_VERSION): use ``group_protocol="classic"``."""


class TransactionError(KafkaClientError):
    """A transactional call made in a state that does not allow it (Java's ``IllegalStateException``),
    or an abortable failure of the current transaction (``abortable`` True: call ``abort_transaction()``)."""

    retriable = False

    def __init__(self, message: str, abortable: bool = False) -> None:
        super().__init__(message)
        self.abortable = abortable


class RecordDroppedError(KafkaClientError):
    """The record was never written: the producer dropped it from its buffer (``abort_transaction``)."""


class GroupNotInactiveError(KafkaClientError, ValueError):
    """A reset asked of a group that has active members (Kafka's tool refuses it the same way)."""


class ShareStateError(KafkaClientError):
    """A :class:`~kafkawire.client.ShareConsumer` call its state does not allow (Java's
    ``IllegalStateException``): ``poll()`` in explicit acknowledgement mode while records of the last poll
    are not acknowledged, ``acknowledge()`` in implicit mode, any call after ``close()``."""

    retriable = False


class ShareSessionLostError(KafkaClientError):
    """Acknowledgements that could not be delivered: the share session that acquired the records is gone
    (broker restart, lost connection, evicted session). The broker releases those records when their
    acquisition lock expires, and they are delivered again (KIP-932)."""


class WakeupError(KafkaClientError):
    """A blocking call was interrupted by ``wakeup()`` from another thread (Java's ``WakeupException``)."""

    retriable = False
