"""Errors raised by the client itself (as opposed to error codes a broker returns).

Broker error codes are classes in :mod:`kafkawire.protocol.errors`; both kinds carry ``retriable``,
which the client's retry loop consults::

    KafkaWireError
    ├── KafkaClientError                  base of the client's own errors
    │   ├── KafkaConnectionError          cannot connect, or the connection broke (retriable)
    │   │   └── NoBrokersAvailableError   none of the bootstrap servers answered (retriable)
    │   ├── KafkaTimeoutError             a response did not arrive in time (retriable)
    │   ├── AuthenticationFailedError     SASL refused or the server's SCRAM proof was wrong
    │   └── ProduceFailedError            records not acknowledged after every retry (has .errors)
    └── ProtocolError
        ├── CorrelationIdMismatchError    the response answers some other request
        └── ResponseTooLargeError         the announced response size is above the configured cap
"""

from __future__ import annotations

from ..errors import KafkaWireError, ProtocolError

__all__ = [
    "AuthenticationFailedError",
    "CorrelationIdMismatchError",
    "KafkaClientError",
    "KafkaConnectionError",
    "KafkaTimeoutError",
    "NoBrokersAvailableError",
    "ProduceFailedError",
    "ResponseTooLargeError",
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
        unacknowledged: dict[int, object] | None = None,
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
        return sum(len(u) for u in self.unacknowledged.values())  # type: ignore[arg-type]


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

    def __reduce__(self):  # picklable with its arguments
        return (type(self), (self.expected, self.received))


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

    def __reduce__(self):
        return (type(self), (self.size, self.limit))
