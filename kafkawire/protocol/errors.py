"""Kafka broker error codes as exception classes.

Every error code a Kafka 4.1 broker can return (``Errors.java``, codes -1 and 1..133) has a subclass of
:class:`BrokerError` carrying ``code``, ``name`` (Kafka's constant name) and ``retriable`` (True where
Kafka's exception derives from ``RetriableException``, i.e. the same request may succeed later, usually
after refreshing metadata or the coordinator). Code 0 (NONE) is success and has no class.

    >>> error_for_code(6).__name__
    'NotLeaderOrFollowerError'
    >>> raise_for_code(0)  # no error: returns None
"""

from __future__ import annotations

from typing import ClassVar

from ..errors import KafkaWireError

__all__ = ["BrokerError", "UnknownBrokerError", "error_for_code", "raise_for_code", "ERRORS"]


class BrokerError(KafkaWireError):
    """An error code returned by a broker. ``message`` is the broker's error message, if it sent one."""

    code: ClassVar[int] = -1
    name: ClassVar[str] = "UNKNOWN"
    retriable: ClassVar[bool] = False

    def __init__(self, message: str | None = None) -> None:
        self.message = message
        text = f"[Error {self.code}] {self.name}"
        super().__init__(f"{text}: {message}" if message else text)

    def __reduce__(self):  # picklable across processes (Spark executors)
        return (type(self), (self.message,))


class UnknownBrokerError(BrokerError):
    """A code not in the table (a newer broker); ``error_for_code`` makes a subclass carrying it."""

    def __reduce__(self):
        # The generated subclass has no importable name: rebuild it from its code on unpickling, so an
        # unknown code raised on a Spark executor reaches the driver intact.
        return (_unknown_error, (self.code, self.message))


def _unknown_error(code: int, message: str | None) -> BrokerError:
    cls = error_for_code(code)
    assert cls is not None
    return cls(message)


class UnknownServerError(BrokerError):
    """Kafka error -1, UNKNOWN_SERVER_ERROR."""

    code = -1
    name = "UNKNOWN_SERVER_ERROR"
    retriable = False


class OffsetOutOfRangeError(BrokerError):
    """Kafka error 1, OFFSET_OUT_OF_RANGE."""

    code = 1
    name = "OFFSET_OUT_OF_RANGE"
    retriable = False


class CorruptMessageError(BrokerError):
    """Kafka error 2, CORRUPT_MESSAGE (retriable)."""

    code = 2
    name = "CORRUPT_MESSAGE"
    retriable = True


class UnknownTopicOrPartitionError(BrokerError):
    """Kafka error 3, UNKNOWN_TOPIC_OR_PARTITION (retriable)."""

    code = 3
    name = "UNKNOWN_TOPIC_OR_PARTITION"
    retriable = True


class InvalidFetchSizeError(BrokerError):
    """Kafka error 4, INVALID_FETCH_SIZE."""

    code = 4
    name = "INVALID_FETCH_SIZE"
    retriable = False


class LeaderNotAvailableError(BrokerError):
    """Kafka error 5, LEADER_NOT_AVAILABLE (retriable)."""

    code = 5
    name = "LEADER_NOT_AVAILABLE"
    retriable = True


class NotLeaderOrFollowerError(BrokerError):
    """Kafka error 6, NOT_LEADER_OR_FOLLOWER (retriable)."""

    code = 6
    name = "NOT_LEADER_OR_FOLLOWER"
    retriable = True


class RequestTimedOutError(BrokerError):
    """Kafka error 7, REQUEST_TIMED_OUT (retriable)."""

    code = 7
    name = "REQUEST_TIMED_OUT"
    retriable = True


class BrokerNotAvailableError(BrokerError):
    """Kafka error 8, BROKER_NOT_AVAILABLE."""

    code = 8
    name = "BROKER_NOT_AVAILABLE"
    retriable = False


class ReplicaNotAvailableError(BrokerError):
    """Kafka error 9, REPLICA_NOT_AVAILABLE (retriable)."""

    code = 9
    name = "REPLICA_NOT_AVAILABLE"
    retriable = True


class MessageTooLargeError(BrokerError):
    """Kafka error 10, MESSAGE_TOO_LARGE."""

    code = 10
    name = "MESSAGE_TOO_LARGE"
    retriable = False


class StaleControllerEpochError(BrokerError):
    """Kafka error 11, STALE_CONTROLLER_EPOCH."""

    code = 11
    name = "STALE_CONTROLLER_EPOCH"
    retriable = False


class OffsetMetadataTooLargeError(BrokerError):
    """Kafka error 12, OFFSET_METADATA_TOO_LARGE."""

    code = 12
    name = "OFFSET_METADATA_TOO_LARGE"
    retriable = False


class NetworkExceptionError(BrokerError):
    """Kafka error 13, NETWORK_EXCEPTION (retriable)."""

    code = 13
    name = "NETWORK_EXCEPTION"
    retriable = True


class CoordinatorLoadInProgressError(BrokerError):
    """Kafka error 14, COORDINATOR_LOAD_IN_PROGRESS (retriable)."""

    code = 14
    name = "COORDINATOR_LOAD_IN_PROGRESS"
    retriable = True


class CoordinatorNotAvailableError(BrokerError):
    """Kafka error 15, COORDINATOR_NOT_AVAILABLE (retriable)."""

    code = 15
    name = "COORDINATOR_NOT_AVAILABLE"
    retriable = True


class NotCoordinatorError(BrokerError):
    """Kafka error 16, NOT_COORDINATOR (retriable)."""

    code = 16
    name = "NOT_COORDINATOR"
    retriable = True


class InvalidTopicExceptionError(BrokerError):
    """Kafka error 17, INVALID_TOPIC_EXCEPTION."""

    code = 17
    name = "INVALID_TOPIC_EXCEPTION"
    retriable = False


class RecordListTooLargeError(BrokerError):
    """Kafka error 18, RECORD_LIST_TOO_LARGE."""

    code = 18
    name = "RECORD_LIST_TOO_LARGE"
    retriable = False


class NotEnoughReplicasError(BrokerError):
    """Kafka error 19, NOT_ENOUGH_REPLICAS (retriable)."""

    code = 19
    name = "NOT_ENOUGH_REPLICAS"
    retriable = True


class NotEnoughReplicasAfterAppendError(BrokerError):
    """Kafka error 20, NOT_ENOUGH_REPLICAS_AFTER_APPEND (retriable)."""

    code = 20
    name = "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
    retriable = True


class InvalidRequiredAcksError(BrokerError):
    """Kafka error 21, INVALID_REQUIRED_ACKS."""

    code = 21
    name = "INVALID_REQUIRED_ACKS"
    retriable = False


class IllegalGenerationError(BrokerError):
    """Kafka error 22, ILLEGAL_GENERATION."""

    code = 22
    name = "ILLEGAL_GENERATION"
    retriable = False


class InconsistentGroupProtocolError(BrokerError):
    """Kafka error 23, INCONSISTENT_GROUP_PROTOCOL."""

    code = 23
    name = "INCONSISTENT_GROUP_PROTOCOL"
    retriable = False


class InvalidGroupIdError(BrokerError):
    """Kafka error 24, INVALID_GROUP_ID."""

    code = 24
    name = "INVALID_GROUP_ID"
    retriable = False


class UnknownMemberIdError(BrokerError):
    """Kafka error 25, UNKNOWN_MEMBER_ID."""

    code = 25
    name = "UNKNOWN_MEMBER_ID"
    retriable = False


class InvalidSessionTimeoutError(BrokerError):
    """Kafka error 26, INVALID_SESSION_TIMEOUT."""

    code = 26
    name = "INVALID_SESSION_TIMEOUT"
    retriable = False


class RebalanceInProgressError(BrokerError):
    """Kafka error 27, REBALANCE_IN_PROGRESS."""

    code = 27
    name = "REBALANCE_IN_PROGRESS"
    retriable = False


class InvalidCommitOffsetSizeError(BrokerError):
    """Kafka error 28, INVALID_COMMIT_OFFSET_SIZE."""

    code = 28
    name = "INVALID_COMMIT_OFFSET_SIZE"
    retriable = False


class TopicAuthorizationFailedError(BrokerError):
    """Kafka error 29, TOPIC_AUTHORIZATION_FAILED."""

    code = 29
    name = "TOPIC_AUTHORIZATION_FAILED"
    retriable = False


class GroupAuthorizationFailedError(BrokerError):
    """Kafka error 30, GROUP_AUTHORIZATION_FAILED."""

    code = 30
    name = "GROUP_AUTHORIZATION_FAILED"
    retriable = False


class ClusterAuthorizationFailedError(BrokerError):
    """Kafka error 31, CLUSTER_AUTHORIZATION_FAILED."""

    code = 31
    name = "CLUSTER_AUTHORIZATION_FAILED"
    retriable = False


class InvalidTimestampError(BrokerError):
    """Kafka error 32, INVALID_TIMESTAMP."""

    code = 32
    name = "INVALID_TIMESTAMP"
    retriable = False


class UnsupportedSaslMechanismError(BrokerError):
    """Kafka error 33, UNSUPPORTED_SASL_MECHANISM."""

    code = 33
    name = "UNSUPPORTED_SASL_MECHANISM"
    retriable = False


class IllegalSaslStateError(BrokerError):
    """Kafka error 34, ILLEGAL_SASL_STATE."""

    code = 34
    name = "ILLEGAL_SASL_STATE"
    retriable = False


class UnsupportedVersionError(BrokerError):
    """Kafka error 35, UNSUPPORTED_VERSION."""

    code = 35
    name = "UNSUPPORTED_VERSION"
    retriable = False


class TopicAlreadyExistsError(BrokerError):
    """Kafka error 36, TOPIC_ALREADY_EXISTS."""

    code = 36
    name = "TOPIC_ALREADY_EXISTS"
    retriable = False


class InvalidPartitionsError(BrokerError):
    """Kafka error 37, INVALID_PARTITIONS."""

    code = 37
    name = "INVALID_PARTITIONS"
    retriable = False


class InvalidReplicationFactorError(BrokerError):
    """Kafka error 38, INVALID_REPLICATION_FACTOR."""

    code = 38
    name = "INVALID_REPLICATION_FACTOR"
    retriable = False


class InvalidReplicaAssignmentError(BrokerError):
    """Kafka error 39, INVALID_REPLICA_ASSIGNMENT."""

    code = 39
    name = "INVALID_REPLICA_ASSIGNMENT"
    retriable = False


class InvalidConfigError(BrokerError):
    """Kafka error 40, INVALID_CONFIG."""

    code = 40
    name = "INVALID_CONFIG"
    retriable = False


class NotControllerError(BrokerError):
    """Kafka error 41, NOT_CONTROLLER (retriable)."""

    code = 41
    name = "NOT_CONTROLLER"
    retriable = True


class InvalidRequestError(BrokerError):
    """Kafka error 42, INVALID_REQUEST."""

    code = 42
    name = "INVALID_REQUEST"
    retriable = False


class UnsupportedForMessageFormatError(BrokerError):
    """Kafka error 43, UNSUPPORTED_FOR_MESSAGE_FORMAT."""

    code = 43
    name = "UNSUPPORTED_FOR_MESSAGE_FORMAT"
    retriable = False


class PolicyViolationError(BrokerError):
    """Kafka error 44, POLICY_VIOLATION."""

    code = 44
    name = "POLICY_VIOLATION"
    retriable = False


class OutOfOrderSequenceNumberError(BrokerError):
    """Kafka error 45, OUT_OF_ORDER_SEQUENCE_NUMBER."""

    code = 45
    name = "OUT_OF_ORDER_SEQUENCE_NUMBER"
    retriable = False


class DuplicateSequenceNumberError(BrokerError):
    """Kafka error 46, DUPLICATE_SEQUENCE_NUMBER."""

    code = 46
    name = "DUPLICATE_SEQUENCE_NUMBER"
    retriable = False


class InvalidProducerEpochError(BrokerError):
    """Kafka error 47, INVALID_PRODUCER_EPOCH."""

    code = 47
    name = "INVALID_PRODUCER_EPOCH"
    retriable = False


class InvalidTxnStateError(BrokerError):
    """Kafka error 48, INVALID_TXN_STATE."""

    code = 48
    name = "INVALID_TXN_STATE"
    retriable = False


class InvalidProducerIdMappingError(BrokerError):
    """Kafka error 49, INVALID_PRODUCER_ID_MAPPING."""

    code = 49
    name = "INVALID_PRODUCER_ID_MAPPING"
    retriable = False


class InvalidTransactionTimeoutError(BrokerError):
    """Kafka error 50, INVALID_TRANSACTION_TIMEOUT."""

    code = 50
    name = "INVALID_TRANSACTION_TIMEOUT"
    retriable = False


class ConcurrentTransactionsError(BrokerError):
    """Kafka error 51, CONCURRENT_TRANSACTIONS (retriable)."""

    code = 51
    name = "CONCURRENT_TRANSACTIONS"
    retriable = True


class TransactionCoordinatorFencedError(BrokerError):
    """Kafka error 52, TRANSACTION_COORDINATOR_FENCED."""

    code = 52
    name = "TRANSACTION_COORDINATOR_FENCED"
    retriable = False


class TransactionalIdAuthorizationFailedError(BrokerError):
    """Kafka error 53, TRANSACTIONAL_ID_AUTHORIZATION_FAILED."""

    code = 53
    name = "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"
    retriable = False


class SecurityDisabledError(BrokerError):
    """Kafka error 54, SECURITY_DISABLED."""

    code = 54
    name = "SECURITY_DISABLED"
    retriable = False


class OperationNotAttemptedError(BrokerError):
    """Kafka error 55, OPERATION_NOT_ATTEMPTED."""

    code = 55
    name = "OPERATION_NOT_ATTEMPTED"
    retriable = False


class KafkaStorageError(BrokerError):
    """Kafka error 56, KAFKA_STORAGE_ERROR (retriable)."""

    code = 56
    name = "KAFKA_STORAGE_ERROR"
    retriable = True


class LogDirNotFoundError(BrokerError):
    """Kafka error 57, LOG_DIR_NOT_FOUND."""

    code = 57
    name = "LOG_DIR_NOT_FOUND"
    retriable = False


class SaslAuthenticationFailedError(BrokerError):
    """Kafka error 58, SASL_AUTHENTICATION_FAILED."""

    code = 58
    name = "SASL_AUTHENTICATION_FAILED"
    retriable = False


class UnknownProducerIdError(BrokerError):
    """Kafka error 59, UNKNOWN_PRODUCER_ID."""

    code = 59
    name = "UNKNOWN_PRODUCER_ID"
    retriable = False


class ReassignmentInProgressError(BrokerError):
    """Kafka error 60, REASSIGNMENT_IN_PROGRESS."""

    code = 60
    name = "REASSIGNMENT_IN_PROGRESS"
    retriable = False


class DelegationTokenAuthDisabledError(BrokerError):
    """Kafka error 61, DELEGATION_TOKEN_AUTH_DISABLED."""

    code = 61
    name = "DELEGATION_TOKEN_AUTH_DISABLED"
    retriable = False


class DelegationTokenNotFoundError(BrokerError):
    """Kafka error 62, DELEGATION_TOKEN_NOT_FOUND."""

    code = 62
    name = "DELEGATION_TOKEN_NOT_FOUND"
    retriable = False


class DelegationTokenOwnerMismatchError(BrokerError):
    """Kafka error 63, DELEGATION_TOKEN_OWNER_MISMATCH."""

    code = 63
    name = "DELEGATION_TOKEN_OWNER_MISMATCH"
    retriable = False


class DelegationTokenRequestNotAllowedError(BrokerError):
    """Kafka error 64, DELEGATION_TOKEN_REQUEST_NOT_ALLOWED."""

    code = 64
    name = "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED"
    retriable = False


class DelegationTokenAuthorizationFailedError(BrokerError):
    """Kafka error 65, DELEGATION_TOKEN_AUTHORIZATION_FAILED."""

    code = 65
    name = "DELEGATION_TOKEN_AUTHORIZATION_FAILED"
    retriable = False


class DelegationTokenExpiredError(BrokerError):
    """Kafka error 66, DELEGATION_TOKEN_EXPIRED."""

    code = 66
    name = "DELEGATION_TOKEN_EXPIRED"
    retriable = False


class InvalidPrincipalTypeError(BrokerError):
    """Kafka error 67, INVALID_PRINCIPAL_TYPE."""

    code = 67
    name = "INVALID_PRINCIPAL_TYPE"
    retriable = False


class NonEmptyGroupError(BrokerError):
    """Kafka error 68, NON_EMPTY_GROUP."""

    code = 68
    name = "NON_EMPTY_GROUP"
    retriable = False


class GroupIdNotFoundError(BrokerError):
    """Kafka error 69, GROUP_ID_NOT_FOUND."""

    code = 69
    name = "GROUP_ID_NOT_FOUND"
    retriable = False


class FetchSessionIdNotFoundError(BrokerError):
    """Kafka error 70, FETCH_SESSION_ID_NOT_FOUND (retriable)."""

    code = 70
    name = "FETCH_SESSION_ID_NOT_FOUND"
    retriable = True


class InvalidFetchSessionEpochError(BrokerError):
    """Kafka error 71, INVALID_FETCH_SESSION_EPOCH (retriable)."""

    code = 71
    name = "INVALID_FETCH_SESSION_EPOCH"
    retriable = True


class ListenerNotFoundError(BrokerError):
    """Kafka error 72, LISTENER_NOT_FOUND (retriable)."""

    code = 72
    name = "LISTENER_NOT_FOUND"
    retriable = True


class TopicDeletionDisabledError(BrokerError):
    """Kafka error 73, TOPIC_DELETION_DISABLED."""

    code = 73
    name = "TOPIC_DELETION_DISABLED"
    retriable = False


class FencedLeaderEpochError(BrokerError):
    """Kafka error 74, FENCED_LEADER_EPOCH (retriable)."""

    code = 74
    name = "FENCED_LEADER_EPOCH"
    retriable = True


class UnknownLeaderEpochError(BrokerError):
    """Kafka error 75, UNKNOWN_LEADER_EPOCH (retriable)."""

    code = 75
    name = "UNKNOWN_LEADER_EPOCH"
    retriable = True


class UnsupportedCompressionTypeError(BrokerError):
    """Kafka error 76, UNSUPPORTED_COMPRESSION_TYPE."""

    code = 76
    name = "UNSUPPORTED_COMPRESSION_TYPE"
    retriable = False


class StaleBrokerEpochError(BrokerError):
    """Kafka error 77, STALE_BROKER_EPOCH."""

    code = 77
    name = "STALE_BROKER_EPOCH"
    retriable = False


class OffsetNotAvailableError(BrokerError):
    """Kafka error 78, OFFSET_NOT_AVAILABLE (retriable)."""

    code = 78
    name = "OFFSET_NOT_AVAILABLE"
    retriable = True


class MemberIdRequiredError(BrokerError):
    """Kafka error 79, MEMBER_ID_REQUIRED."""

    code = 79
    name = "MEMBER_ID_REQUIRED"
    retriable = False


class PreferredLeaderNotAvailableError(BrokerError):
    """Kafka error 80, PREFERRED_LEADER_NOT_AVAILABLE (retriable)."""

    code = 80
    name = "PREFERRED_LEADER_NOT_AVAILABLE"
    retriable = True


class GroupMaxSizeReachedError(BrokerError):
    """Kafka error 81, GROUP_MAX_SIZE_REACHED."""

    code = 81
    name = "GROUP_MAX_SIZE_REACHED"
    retriable = False


class FencedInstanceIdError(BrokerError):
    """Kafka error 82, FENCED_INSTANCE_ID."""

    code = 82
    name = "FENCED_INSTANCE_ID"
    retriable = False


class EligibleLeadersNotAvailableError(BrokerError):
    """Kafka error 83, ELIGIBLE_LEADERS_NOT_AVAILABLE (retriable)."""

    code = 83
    name = "ELIGIBLE_LEADERS_NOT_AVAILABLE"
    retriable = True


class ElectionNotNeededError(BrokerError):
    """Kafka error 84, ELECTION_NOT_NEEDED (retriable)."""

    code = 84
    name = "ELECTION_NOT_NEEDED"
    retriable = True


class NoReassignmentInProgressError(BrokerError):
    """Kafka error 85, NO_REASSIGNMENT_IN_PROGRESS."""

    code = 85
    name = "NO_REASSIGNMENT_IN_PROGRESS"
    retriable = False


class GroupSubscribedToTopicError(BrokerError):
    """Kafka error 86, GROUP_SUBSCRIBED_TO_TOPIC."""

    code = 86
    name = "GROUP_SUBSCRIBED_TO_TOPIC"
    retriable = False


class InvalidRecordError(BrokerError):
    """Kafka error 87, INVALID_RECORD."""

    code = 87
    name = "INVALID_RECORD"
    retriable = False


class UnstableOffsetCommitError(BrokerError):
    """Kafka error 88, UNSTABLE_OFFSET_COMMIT (retriable)."""

    code = 88
    name = "UNSTABLE_OFFSET_COMMIT"
    retriable = True


class ThrottlingQuotaExceededError(BrokerError):
    """Kafka error 89, THROTTLING_QUOTA_EXCEEDED (retriable)."""

    code = 89
    name = "THROTTLING_QUOTA_EXCEEDED"
    retriable = True


class ProducerFencedError(BrokerError):
    """Kafka error 90, PRODUCER_FENCED."""

    code = 90
    name = "PRODUCER_FENCED"
    retriable = False


class ResourceNotFoundError(BrokerError):
    """Kafka error 91, RESOURCE_NOT_FOUND."""

    code = 91
    name = "RESOURCE_NOT_FOUND"
    retriable = False


class DuplicateResourceError(BrokerError):
    """Kafka error 92, DUPLICATE_RESOURCE."""

    code = 92
    name = "DUPLICATE_RESOURCE"
    retriable = False


class UnacceptableCredentialError(BrokerError):
    """Kafka error 93, UNACCEPTABLE_CREDENTIAL."""

    code = 93
    name = "UNACCEPTABLE_CREDENTIAL"
    retriable = False


class InconsistentVoterSetError(BrokerError):
    """Kafka error 94, INCONSISTENT_VOTER_SET."""

    code = 94
    name = "INCONSISTENT_VOTER_SET"
    retriable = False


class InvalidUpdateVersionError(BrokerError):
    """Kafka error 95, INVALID_UPDATE_VERSION."""

    code = 95
    name = "INVALID_UPDATE_VERSION"
    retriable = False


class FeatureUpdateFailedError(BrokerError):
    """Kafka error 96, FEATURE_UPDATE_FAILED."""

    code = 96
    name = "FEATURE_UPDATE_FAILED"
    retriable = False


class PrincipalDeserializationFailureError(BrokerError):
    """Kafka error 97, PRINCIPAL_DESERIALIZATION_FAILURE."""

    code = 97
    name = "PRINCIPAL_DESERIALIZATION_FAILURE"
    retriable = False


class SnapshotNotFoundError(BrokerError):
    """Kafka error 98, SNAPSHOT_NOT_FOUND."""

    code = 98
    name = "SNAPSHOT_NOT_FOUND"
    retriable = False


class PositionOutOfRangeError(BrokerError):
    """Kafka error 99, POSITION_OUT_OF_RANGE."""

    code = 99
    name = "POSITION_OUT_OF_RANGE"
    retriable = False


class UnknownTopicIdError(BrokerError):
    """Kafka error 100, UNKNOWN_TOPIC_ID (retriable)."""

    code = 100
    name = "UNKNOWN_TOPIC_ID"
    retriable = True


class DuplicateBrokerRegistrationError(BrokerError):
    """Kafka error 101, DUPLICATE_BROKER_REGISTRATION."""

    code = 101
    name = "DUPLICATE_BROKER_REGISTRATION"
    retriable = False


class BrokerIdNotRegisteredError(BrokerError):
    """Kafka error 102, BROKER_ID_NOT_REGISTERED."""

    code = 102
    name = "BROKER_ID_NOT_REGISTERED"
    retriable = False


class InconsistentTopicIdError(BrokerError):
    """Kafka error 103, INCONSISTENT_TOPIC_ID (retriable)."""

    code = 103
    name = "INCONSISTENT_TOPIC_ID"
    retriable = True


class InconsistentClusterIdError(BrokerError):
    """Kafka error 104, INCONSISTENT_CLUSTER_ID."""

    code = 104
    name = "INCONSISTENT_CLUSTER_ID"
    retriable = False


class TransactionalIdNotFoundError(BrokerError):
    """Kafka error 105, TRANSACTIONAL_ID_NOT_FOUND."""

    code = 105
    name = "TRANSACTIONAL_ID_NOT_FOUND"
    retriable = False


class FetchSessionTopicIdError(BrokerError):
    """Kafka error 106, FETCH_SESSION_TOPIC_ID_ERROR (retriable)."""

    code = 106
    name = "FETCH_SESSION_TOPIC_ID_ERROR"
    retriable = True


class IneligibleReplicaError(BrokerError):
    """Kafka error 107, INELIGIBLE_REPLICA."""

    code = 107
    name = "INELIGIBLE_REPLICA"
    retriable = False


class NewLeaderElectedError(BrokerError):
    """Kafka error 108, NEW_LEADER_ELECTED."""

    code = 108
    name = "NEW_LEADER_ELECTED"
    retriable = False


class OffsetMovedToTieredStorageError(BrokerError):
    """Kafka error 109, OFFSET_MOVED_TO_TIERED_STORAGE."""

    code = 109
    name = "OFFSET_MOVED_TO_TIERED_STORAGE"
    retriable = False


class FencedMemberEpochError(BrokerError):
    """Kafka error 110, FENCED_MEMBER_EPOCH."""

    code = 110
    name = "FENCED_MEMBER_EPOCH"
    retriable = False


class UnreleasedInstanceIdError(BrokerError):
    """Kafka error 111, UNRELEASED_INSTANCE_ID."""

    code = 111
    name = "UNRELEASED_INSTANCE_ID"
    retriable = False


class UnsupportedAssignorError(BrokerError):
    """Kafka error 112, UNSUPPORTED_ASSIGNOR."""

    code = 112
    name = "UNSUPPORTED_ASSIGNOR"
    retriable = False


class StaleMemberEpochError(BrokerError):
    """Kafka error 113, STALE_MEMBER_EPOCH."""

    code = 113
    name = "STALE_MEMBER_EPOCH"
    retriable = False


class MismatchedEndpointTypeError(BrokerError):
    """Kafka error 114, MISMATCHED_ENDPOINT_TYPE."""

    code = 114
    name = "MISMATCHED_ENDPOINT_TYPE"
    retriable = False


class UnsupportedEndpointTypeError(BrokerError):
    """Kafka error 115, UNSUPPORTED_ENDPOINT_TYPE."""

    code = 115
    name = "UNSUPPORTED_ENDPOINT_TYPE"
    retriable = False


class UnknownControllerIdError(BrokerError):
    """Kafka error 116, UNKNOWN_CONTROLLER_ID."""

    code = 116
    name = "UNKNOWN_CONTROLLER_ID"
    retriable = False


class UnknownSubscriptionIdError(BrokerError):
    """Kafka error 117, UNKNOWN_SUBSCRIPTION_ID."""

    code = 117
    name = "UNKNOWN_SUBSCRIPTION_ID"
    retriable = False


class TelemetryTooLargeError(BrokerError):
    """Kafka error 118, TELEMETRY_TOO_LARGE."""

    code = 118
    name = "TELEMETRY_TOO_LARGE"
    retriable = False


class InvalidRegistrationError(BrokerError):
    """Kafka error 119, INVALID_REGISTRATION."""

    code = 119
    name = "INVALID_REGISTRATION"
    retriable = False


class TransactionAbortableError(BrokerError):
    """Kafka error 120, TRANSACTION_ABORTABLE."""

    code = 120
    name = "TRANSACTION_ABORTABLE"
    retriable = False


class InvalidRecordStateError(BrokerError):
    """Kafka error 121, INVALID_RECORD_STATE."""

    code = 121
    name = "INVALID_RECORD_STATE"
    retriable = False


class ShareSessionNotFoundError(BrokerError):
    """Kafka error 122, SHARE_SESSION_NOT_FOUND (retriable)."""

    code = 122
    name = "SHARE_SESSION_NOT_FOUND"
    retriable = True


class InvalidShareSessionEpochError(BrokerError):
    """Kafka error 123, INVALID_SHARE_SESSION_EPOCH (retriable)."""

    code = 123
    name = "INVALID_SHARE_SESSION_EPOCH"
    retriable = True


class FencedStateEpochError(BrokerError):
    """Kafka error 124, FENCED_STATE_EPOCH."""

    code = 124
    name = "FENCED_STATE_EPOCH"
    retriable = False


class InvalidVoterKeyError(BrokerError):
    """Kafka error 125, INVALID_VOTER_KEY."""

    code = 125
    name = "INVALID_VOTER_KEY"
    retriable = False


class DuplicateVoterError(BrokerError):
    """Kafka error 126, DUPLICATE_VOTER."""

    code = 126
    name = "DUPLICATE_VOTER"
    retriable = False


class VoterNotFoundError(BrokerError):
    """Kafka error 127, VOTER_NOT_FOUND."""

    code = 127
    name = "VOTER_NOT_FOUND"
    retriable = False


class InvalidRegularExpressionError(BrokerError):
    """Kafka error 128, INVALID_REGULAR_EXPRESSION."""

    code = 128
    name = "INVALID_REGULAR_EXPRESSION"
    retriable = False


class RebootstrapRequiredError(BrokerError):
    """Kafka error 129, REBOOTSTRAP_REQUIRED."""

    code = 129
    name = "REBOOTSTRAP_REQUIRED"
    retriable = False


class StreamsInvalidTopologyError(BrokerError):
    """Kafka error 130, STREAMS_INVALID_TOPOLOGY."""

    code = 130
    name = "STREAMS_INVALID_TOPOLOGY"
    retriable = False


class StreamsInvalidTopologyEpochError(BrokerError):
    """Kafka error 131, STREAMS_INVALID_TOPOLOGY_EPOCH."""

    code = 131
    name = "STREAMS_INVALID_TOPOLOGY_EPOCH"
    retriable = False


class StreamsTopologyFencedError(BrokerError):
    """Kafka error 132, STREAMS_TOPOLOGY_FENCED."""

    code = 132
    name = "STREAMS_TOPOLOGY_FENCED"
    retriable = False


class ShareSessionLimitReachedError(BrokerError):
    """Kafka error 133, SHARE_SESSION_LIMIT_REACHED (retriable)."""

    code = 133
    name = "SHARE_SESSION_LIMIT_REACHED"
    retriable = True


#: code -> exception class, for every known code.
ERRORS: dict[int, type[BrokerError]] = {
    cls.code: cls for cls in BrokerError.__subclasses__() if cls is not UnknownBrokerError
}
_UNKNOWN: dict[int, type[BrokerError]] = {}


def error_for_code(code: int) -> type[BrokerError] | None:
    """The exception class for ``code``; None for 0 (no error); a generated subclass of
    :class:`UnknownBrokerError` for a code this table does not know (so the code is never lost)."""
    if code == 0:
        return None
    cls = ERRORS.get(code)
    if cls is None:
        cls = _UNKNOWN.get(code)
        if cls is None:
            cls = type(f"UnknownBrokerError{code}", (UnknownBrokerError,), {"code": code, "name": f"UNKNOWN_{code}"})
            _UNKNOWN[code] = cls
    return cls


def raise_for_code(code: int, message: str | None = None) -> None:
    """Raise the exception for ``code`` (with the broker's ``message``), or return if ``code`` is 0."""
    cls = error_for_code(code)
    if cls is not None:
        raise cls(message)


__all__ += [
    "UnknownServerError",
    "OffsetOutOfRangeError",
    "CorruptMessageError",
    "UnknownTopicOrPartitionError",
    "InvalidFetchSizeError",
    "LeaderNotAvailableError",
    "NotLeaderOrFollowerError",
    "RequestTimedOutError",
    "BrokerNotAvailableError",
    "ReplicaNotAvailableError",
    "MessageTooLargeError",
    "StaleControllerEpochError",
    "OffsetMetadataTooLargeError",
    "NetworkExceptionError",
    "CoordinatorLoadInProgressError",
    "CoordinatorNotAvailableError",
    "NotCoordinatorError",
    "InvalidTopicExceptionError",
    "RecordListTooLargeError",
    "NotEnoughReplicasError",
    "NotEnoughReplicasAfterAppendError",
    "InvalidRequiredAcksError",
    "IllegalGenerationError",
    "InconsistentGroupProtocolError",
    "InvalidGroupIdError",
    "UnknownMemberIdError",
    "InvalidSessionTimeoutError",
    "RebalanceInProgressError",
    "InvalidCommitOffsetSizeError",
    "TopicAuthorizationFailedError",
    "GroupAuthorizationFailedError",
    "ClusterAuthorizationFailedError",
    "InvalidTimestampError",
    "UnsupportedSaslMechanismError",
    "IllegalSaslStateError",
    "UnsupportedVersionError",
    "TopicAlreadyExistsError",
    "InvalidPartitionsError",
    "InvalidReplicationFactorError",
    "InvalidReplicaAssignmentError",
    "InvalidConfigError",
    "NotControllerError",
    "InvalidRequestError",
    "UnsupportedForMessageFormatError",
    "PolicyViolationError",
    "OutOfOrderSequenceNumberError",
    "DuplicateSequenceNumberError",
    "InvalidProducerEpochError",
    "InvalidTxnStateError",
    "InvalidProducerIdMappingError",
    "InvalidTransactionTimeoutError",
    "ConcurrentTransactionsError",
    "TransactionCoordinatorFencedError",
    "TransactionalIdAuthorizationFailedError",
    "SecurityDisabledError",
    "OperationNotAttemptedError",
    "KafkaStorageError",
    "LogDirNotFoundError",
    "SaslAuthenticationFailedError",
    "UnknownProducerIdError",
    "ReassignmentInProgressError",
    "DelegationTokenAuthDisabledError",
    "DelegationTokenNotFoundError",
    "DelegationTokenOwnerMismatchError",
    "DelegationTokenRequestNotAllowedError",
    "DelegationTokenAuthorizationFailedError",
    "DelegationTokenExpiredError",
    "InvalidPrincipalTypeError",
    "NonEmptyGroupError",
    "GroupIdNotFoundError",
    "FetchSessionIdNotFoundError",
    "InvalidFetchSessionEpochError",
    "ListenerNotFoundError",
    "TopicDeletionDisabledError",
    "FencedLeaderEpochError",
    "UnknownLeaderEpochError",
    "UnsupportedCompressionTypeError",
    "StaleBrokerEpochError",
    "OffsetNotAvailableError",
    "MemberIdRequiredError",
    "PreferredLeaderNotAvailableError",
    "GroupMaxSizeReachedError",
    "FencedInstanceIdError",
    "EligibleLeadersNotAvailableError",
    "ElectionNotNeededError",
    "NoReassignmentInProgressError",
    "GroupSubscribedToTopicError",
    "InvalidRecordError",
    "UnstableOffsetCommitError",
    "ThrottlingQuotaExceededError",
    "ProducerFencedError",
    "ResourceNotFoundError",
    "DuplicateResourceError",
    "UnacceptableCredentialError",
    "InconsistentVoterSetError",
    "InvalidUpdateVersionError",
    "FeatureUpdateFailedError",
    "PrincipalDeserializationFailureError",
    "SnapshotNotFoundError",
    "PositionOutOfRangeError",
    "UnknownTopicIdError",
    "DuplicateBrokerRegistrationError",
    "BrokerIdNotRegisteredError",
    "InconsistentTopicIdError",
    "InconsistentClusterIdError",
    "TransactionalIdNotFoundError",
    "FetchSessionTopicIdError",
    "IneligibleReplicaError",
    "NewLeaderElectedError",
    "OffsetMovedToTieredStorageError",
    "FencedMemberEpochError",
    "UnreleasedInstanceIdError",
    "UnsupportedAssignorError",
    "StaleMemberEpochError",
    "MismatchedEndpointTypeError",
    "UnsupportedEndpointTypeError",
    "UnknownControllerIdError",
    "UnknownSubscriptionIdError",
    "TelemetryTooLargeError",
    "InvalidRegistrationError",
    "TransactionAbortableError",
    "InvalidRecordStateError",
    "ShareSessionNotFoundError",
    "InvalidShareSessionEpochError",
    "FencedStateEpochError",
    "InvalidVoterKeyError",
    "DuplicateVoterError",
    "VoterNotFoundError",
    "InvalidRegularExpressionError",
    "RebootstrapRequiredError",
    "StreamsInvalidTopologyError",
    "StreamsInvalidTopologyEpochError",
    "StreamsTopologyFencedError",
    "ShareSessionLimitReachedError",
]
