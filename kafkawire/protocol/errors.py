"""Kafka broker error codes: one table that makes the exception classes.

:data:`TABLE` lists every error code a Kafka 4.1 broker can return (``Errors.java``, codes -1 and
1..133): the code, Kafka's constant name, the class name, whether the error is retriable (True where
Kafka's exception derives from ``RetriableException``: the same request may succeed later, usually
after refreshing metadata or the coordinator) and Kafka's description. Each row becomes a subclass of
:class:`BrokerError` carrying ``code``, ``name``, ``retriable`` and ``text``; nothing else in the
package restates them (the client's retry loop reads ``retriable``). Code 0 (NONE) is success and
has no class.

    >>> error_for_code(6).__name__
    'NotLeaderOrFollowerError'
    >>> raise_for_code(0)  # no error: returns None
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import KafkaWireError

__all__ = [
    "BrokerError",
    "UnknownBrokerError",
    "broker_error",
    "raise_broker_error",
    "error_for_code",
    "raise_for_code",
    "ERRORS",
    "TABLE",
]


class BrokerError(KafkaWireError):
    """An error code returned by a broker. ``message`` is the broker's error message (or the client's
    note of where it happened), if any; without one the error reads Kafka's description (``text``)."""

    code: ClassVar[int] = -1
    name: ClassVar[str] = "UNKNOWN"
    retriable: ClassVar[bool] = False
    text: ClassVar[str] = ""

    def __init__(self, message: str | None = None) -> None:
        self.message = message
        head = f"[Error {self.code}] {self.name}"
        detail = message or self.text
        super().__init__(f"{head}: {detail}" if detail else head)

    def __reduce__(self) -> tuple[Any, ...]:  # picklable across processes (Spark executors)
        return (type(self), (self.message,))


class UnknownBrokerError(BrokerError):
    """A code not in the table (a newer broker); ``error_for_code`` makes a subclass carrying it."""

    def __reduce__(self) -> tuple[Any, ...]:
        # The generated subclass has no importable name: rebuild it from its code on unpickling, so an
        # unknown code raised on a Spark executor reaches the driver intact.
        return (_unknown_error, (self.code, self.message))


def _unknown_error(code: int, message: str | None) -> BrokerError:
    cls = error_for_code(code)
    assert cls is not None
    return cls(message)


#: ``(code, name, class name, retriable, text)`` per Kafka error code: the single source of the classes.
TABLE: tuple[tuple[int, str, str, bool, str], ...] = (
    (
        -1,
        "UNKNOWN_SERVER_ERROR",
        "UnknownServerError",
        False,
        "The server experienced an unexpected error when processing the request.",
    ),
    (
        1,
        "OFFSET_OUT_OF_RANGE",
        "OffsetOutOfRangeError",
        False,
        "The requested offset is not within the range of offsets maintained by the server.",
    ),
    (
        2,
        "CORRUPT_MESSAGE",
        "CorruptMessageError",
        True,
        "The message failed its CRC check, exceeds the valid size, or is otherwise corrupt.",
    ),
    (
        3,
        "UNKNOWN_TOPIC_OR_PARTITION",
        "UnknownTopicOrPartitionError",
        True,
        "This server does not host this topic-partition.",
    ),
    (4, "INVALID_FETCH_SIZE", "InvalidFetchSizeError", False, "The requested fetch size is invalid."),
    (
        5,
        "LEADER_NOT_AVAILABLE",
        "LeaderNotAvailableError",
        True,
        "There is no leader for this topic-partition as we are in the middle of a leadership election.",
    ),
    (
        6,
        "NOT_LEADER_OR_FOLLOWER",
        "NotLeaderOrFollowerError",
        True,
        "This broker is not the leader (or, for replica requests, not a replica) of the partition.",
    ),
    (7, "REQUEST_TIMED_OUT", "RequestTimedOutError", True, "The request timed out."),
    (8, "BROKER_NOT_AVAILABLE", "BrokerNotAvailableError", False, "The broker is not available."),
    (
        9,
        "REPLICA_NOT_AVAILABLE",
        "ReplicaNotAvailableError",
        True,
        "The replica is not available for the requested topic-partition.",
    ),
    (
        10,
        "MESSAGE_TOO_LARGE",
        "MessageTooLargeError",
        False,
        "The request included a message larger than the max message size the server will accept.",
    ),
    (11, "STALE_CONTROLLER_EPOCH", "StaleControllerEpochError", False, "The controller moved to another broker."),
    (
        12,
        "OFFSET_METADATA_TOO_LARGE",
        "OffsetMetadataTooLargeError",
        False,
        "The metadata field of the offset request was too large.",
    ),
    (13, "NETWORK_EXCEPTION", "NetworkExceptionError", True, "The server disconnected before a response was received."),
    (
        14,
        "COORDINATOR_LOAD_IN_PROGRESS",
        "CoordinatorLoadInProgressError",
        True,
        "The coordinator is loading and hence can't process requests.",
    ),
    (15, "COORDINATOR_NOT_AVAILABLE", "CoordinatorNotAvailableError", True, "The coordinator is not available."),
    (16, "NOT_COORDINATOR", "NotCoordinatorError", True, "This is not the correct coordinator."),
    (
        17,
        "INVALID_TOPIC_EXCEPTION",
        "InvalidTopicExceptionError",
        False,
        "The request attempted to perform an operation on an invalid topic.",
    ),
    (
        18,
        "RECORD_LIST_TOO_LARGE",
        "RecordListTooLargeError",
        False,
        "The request included a message batch larger than the configured segment size on the server.",
    ),
    (
        19,
        "NOT_ENOUGH_REPLICAS",
        "NotEnoughReplicasError",
        True,
        "Messages are rejected since there are fewer in-sync replicas than required.",
    ),
    (
        20,
        "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
        "NotEnoughReplicasAfterAppendError",
        True,
        "Messages are written to the log, but to fewer in-sync replicas than required.",
    ),
    (
        21,
        "INVALID_REQUIRED_ACKS",
        "InvalidRequiredAcksError",
        False,
        "Produce request specified an invalid value for required acks.",
    ),
    (22, "ILLEGAL_GENERATION", "IllegalGenerationError", False, "Specified group generation id is not valid."),
    (
        23,
        "INCONSISTENT_GROUP_PROTOCOL",
        "InconsistentGroupProtocolError",
        False,
        "The member's protocols are incompatible with those of the existing members, or empty.",
    ),
    (24, "INVALID_GROUP_ID", "InvalidGroupIdError", False, "The group id is invalid."),
    (25, "UNKNOWN_MEMBER_ID", "UnknownMemberIdError", False, "The coordinator is not aware of this member."),
    (
        26,
        "INVALID_SESSION_TIMEOUT",
        "InvalidSessionTimeoutError",
        False,
        "The session timeout is not within the range allowed by the broker.",
    ),
    (
        27,
        "REBALANCE_IN_PROGRESS",
        "RebalanceInProgressError",
        False,
        "The group is rebalancing, so a rejoin is needed.",
    ),
    (
        28,
        "INVALID_COMMIT_OFFSET_SIZE",
        "InvalidCommitOffsetSizeError",
        False,
        "The committing offset data size is not valid.",
    ),
    (29, "TOPIC_AUTHORIZATION_FAILED", "TopicAuthorizationFailedError", False, "Topic authorization failed."),
    (30, "GROUP_AUTHORIZATION_FAILED", "GroupAuthorizationFailedError", False, "Group authorization failed."),
    (31, "CLUSTER_AUTHORIZATION_FAILED", "ClusterAuthorizationFailedError", False, "Cluster authorization failed."),
    (
        32,
        "INVALID_TIMESTAMP",
        "InvalidTimestampError",
        False,
        "The timestamp of the message is out of acceptable range.",
    ),
    (
        33,
        "UNSUPPORTED_SASL_MECHANISM",
        "UnsupportedSaslMechanismError",
        False,
        "The broker does not support the requested SASL mechanism.",
    ),
    (34, "ILLEGAL_SASL_STATE", "IllegalSaslStateError", False, "Request is not valid given the current SASL state."),
    (35, "UNSUPPORTED_VERSION", "UnsupportedVersionError", False, "The version of API is not supported."),
    (36, "TOPIC_ALREADY_EXISTS", "TopicAlreadyExistsError", False, "Topic with this name already exists."),
    (37, "INVALID_PARTITIONS", "InvalidPartitionsError", False, "Number of partitions is below 1."),
    (
        38,
        "INVALID_REPLICATION_FACTOR",
        "InvalidReplicationFactorError",
        False,
        "Replication factor is below 1 or larger than the number of available brokers.",
    ),
    (39, "INVALID_REPLICA_ASSIGNMENT", "InvalidReplicaAssignmentError", False, "Replica assignment is invalid."),
    (40, "INVALID_CONFIG", "InvalidConfigError", False, "Configuration is invalid."),
    (41, "NOT_CONTROLLER", "NotControllerError", True, "This is not the correct controller for this cluster."),
    (
        42,
        "INVALID_REQUEST",
        "InvalidRequestError",
        False,
        "The request is malformed, or was sent to a broker that does not understand it.",
    ),
    (
        43,
        "UNSUPPORTED_FOR_MESSAGE_FORMAT",
        "UnsupportedForMessageFormatError",
        False,
        "The message format version on the broker does not support the request.",
    ),
    (44, "POLICY_VIOLATION", "PolicyViolationError", False, "Request parameters do not satisfy the configured policy."),
    (
        45,
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
        "OutOfOrderSequenceNumberError",
        False,
        "The broker received an out of order sequence number.",
    ),
    (
        46,
        "DUPLICATE_SEQUENCE_NUMBER",
        "DuplicateSequenceNumberError",
        False,
        "The broker received a duplicate sequence number.",
    ),
    (
        47,
        "INVALID_PRODUCER_EPOCH",
        "InvalidProducerEpochError",
        False,
        "Producer attempted to produce with an old epoch.",
    ),
    (
        48,
        "INVALID_TXN_STATE",
        "InvalidTxnStateError",
        False,
        "The producer attempted a transactional operation in an invalid state.",
    ),
    (
        49,
        "INVALID_PRODUCER_ID_MAPPING",
        "InvalidProducerIdMappingError",
        False,
        "The producer attempted to use a producer id which is not currently assigned to its transactional id.",
    ),
    (
        50,
        "INVALID_TRANSACTION_TIMEOUT",
        "InvalidTransactionTimeoutError",
        False,
        "The transaction timeout is larger than the maximum value allowed by the broker.",
    ),
    (
        51,
        "CONCURRENT_TRANSACTIONS",
        "ConcurrentTransactionsError",
        True,
        "Another operation on the same transaction is in progress.",
    ),
    (
        52,
        "TRANSACTION_COORDINATOR_FENCED",
        "TransactionCoordinatorFencedError",
        False,
        "The transaction coordinator sending WriteTxnMarkers is no longer the producer's coordinator.",
    ),
    (
        53,
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
        "TransactionalIdAuthorizationFailedError",
        False,
        "Transactional Id authorization failed.",
    ),
    (54, "SECURITY_DISABLED", "SecurityDisabledError", False, "Security features are disabled."),
    (
        55,
        "OPERATION_NOT_ATTEMPTED",
        "OperationNotAttemptedError",
        False,
        "The broker did not attempt to execute this operation (another part of the batch failed).",
    ),
    (56, "KAFKA_STORAGE_ERROR", "KafkaStorageError", True, "Disk error when trying to access log file on the disk."),
    (
        57,
        "LOG_DIR_NOT_FOUND",
        "LogDirNotFoundError",
        False,
        "The user-specified log directory is not found in the broker config.",
    ),
    (58, "SASL_AUTHENTICATION_FAILED", "SaslAuthenticationFailedError", False, "SASL Authentication failed."),
    (
        59,
        "UNKNOWN_PRODUCER_ID",
        "UnknownProducerIdError",
        False,
        "The broker could not find the producer state of this producer id.",
    ),
    (60, "REASSIGNMENT_IN_PROGRESS", "ReassignmentInProgressError", False, "A partition reassignment is in progress."),
    (
        61,
        "DELEGATION_TOKEN_AUTH_DISABLED",
        "DelegationTokenAuthDisabledError",
        False,
        "Delegation Token feature is not enabled.",
    ),
    (
        62,
        "DELEGATION_TOKEN_NOT_FOUND",
        "DelegationTokenNotFoundError",
        False,
        "Delegation Token is not found on server.",
    ),
    (
        63,
        "DELEGATION_TOKEN_OWNER_MISMATCH",
        "DelegationTokenOwnerMismatchError",
        False,
        "Specified Principal is not valid Owner/Renewer.",
    ),
    (
        64,
        "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED",
        "DelegationTokenRequestNotAllowedError",
        False,
        "Delegation token requests are not allowed on this kind of connection.",
    ),
    (
        65,
        "DELEGATION_TOKEN_AUTHORIZATION_FAILED",
        "DelegationTokenAuthorizationFailedError",
        False,
        "Delegation Token authorization failed.",
    ),
    (66, "DELEGATION_TOKEN_EXPIRED", "DelegationTokenExpiredError", False, "Delegation Token is expired."),
    (67, "INVALID_PRINCIPAL_TYPE", "InvalidPrincipalTypeError", False, "Supplied principalType is not supported."),
    (68, "NON_EMPTY_GROUP", "NonEmptyGroupError", False, "The group is not empty."),
    (69, "GROUP_ID_NOT_FOUND", "GroupIdNotFoundError", False, "The group id does not exist."),
    (70, "FETCH_SESSION_ID_NOT_FOUND", "FetchSessionIdNotFoundError", True, "The fetch session ID was not found."),
    (71, "INVALID_FETCH_SESSION_EPOCH", "InvalidFetchSessionEpochError", True, "The fetch session epoch is invalid."),
    (
        72,
        "LISTENER_NOT_FOUND",
        "ListenerNotFoundError",
        True,
        "There is no listener on the leader broker that matches the listener on which metadata request was processed.",
    ),
    (73, "TOPIC_DELETION_DISABLED", "TopicDeletionDisabledError", False, "Topic deletion is disabled."),
    (
        74,
        "FENCED_LEADER_EPOCH",
        "FencedLeaderEpochError",
        True,
        "The leader epoch in the request is older than the epoch on the broker.",
    ),
    (
        75,
        "UNKNOWN_LEADER_EPOCH",
        "UnknownLeaderEpochError",
        True,
        "The leader epoch in the request is newer than the epoch on the broker.",
    ),
    (
        76,
        "UNSUPPORTED_COMPRESSION_TYPE",
        "UnsupportedCompressionTypeError",
        False,
        "The requesting client does not support the compression type of given partition.",
    ),
    (77, "STALE_BROKER_EPOCH", "StaleBrokerEpochError", False, "Broker epoch has changed."),
    (
        78,
        "OFFSET_NOT_AVAILABLE",
        "OffsetNotAvailableError",
        True,
        "The new leader's high watermark has not caught up after an election: offsets may not be monotonic yet.",
    ),
    (
        79,
        "MEMBER_ID_REQUIRED",
        "MemberIdRequiredError",
        False,
        "The group member needs to have a valid member id before actually entering a consumer group.",
    ),
    (
        80,
        "PREFERRED_LEADER_NOT_AVAILABLE",
        "PreferredLeaderNotAvailableError",
        True,
        "The preferred leader was not available.",
    ),
    (81, "GROUP_MAX_SIZE_REACHED", "GroupMaxSizeReachedError", False, "The consumer group has reached its max size."),
    (
        82,
        "FENCED_INSTANCE_ID",
        "FencedInstanceIdError",
        False,
        "Another consumer with the same group.instance.id registered with a different member.id.",
    ),
    (
        83,
        "ELIGIBLE_LEADERS_NOT_AVAILABLE",
        "EligibleLeadersNotAvailableError",
        True,
        "Eligible topic partition leaders are not available.",
    ),
    (84, "ELECTION_NOT_NEEDED", "ElectionNotNeededError", True, "Leader election not needed for topic partition."),
    (
        85,
        "NO_REASSIGNMENT_IN_PROGRESS",
        "NoReassignmentInProgressError",
        False,
        "No partition reassignment is in progress.",
    ),
    (
        86,
        "GROUP_SUBSCRIBED_TO_TOPIC",
        "GroupSubscribedToTopicError",
        False,
        "Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.",
    ),
    (
        87,
        "INVALID_RECORD",
        "InvalidRecordError",
        False,
        "This record has failed the validation on broker and hence will be rejected.",
    ),
    (
        88,
        "UNSTABLE_OFFSET_COMMIT",
        "UnstableOffsetCommitError",
        True,
        "There are unstable offsets that need to be cleared.",
    ),
    (89, "THROTTLING_QUOTA_EXCEEDED", "ThrottlingQuotaExceededError", True, "The throttling quota has been exceeded."),
    (
        90,
        "PRODUCER_FENCED",
        "ProducerFencedError",
        False,
        "There is a newer producer with the same transactionalId which fences the current one.",
    ),
    (
        91,
        "RESOURCE_NOT_FOUND",
        "ResourceNotFoundError",
        False,
        "A request illegally referred to a resource that does not exist.",
    ),
    (
        92,
        "DUPLICATE_RESOURCE",
        "DuplicateResourceError",
        False,
        "A request illegally referred to the same resource twice.",
    ),
    (
        93,
        "UNACCEPTABLE_CREDENTIAL",
        "UnacceptableCredentialError",
        False,
        "Requested credential would not meet criteria for acceptability.",
    ),
    (
        94,
        "INCONSISTENT_VOTER_SET",
        "InconsistentVoterSetError",
        False,
        "Indicates that either the sender or recipient of a voter-only request is not one of the expected voters.",
    ),
    (95, "INVALID_UPDATE_VERSION", "InvalidUpdateVersionError", False, "The given update version was invalid."),
    (
        96,
        "FEATURE_UPDATE_FAILED",
        "FeatureUpdateFailedError",
        False,
        "Unable to update finalized features due to an unexpected server error.",
    ),
    (
        97,
        "PRINCIPAL_DESERIALIZATION_FAILURE",
        "PrincipalDeserializationFailureError",
        False,
        "Request principal deserialization failed during forwarding.",
    ),
    (98, "SNAPSHOT_NOT_FOUND", "SnapshotNotFoundError", False, "Requested snapshot was not found."),
    (
        99,
        "POSITION_OUT_OF_RANGE",
        "PositionOutOfRangeError",
        False,
        "Requested position is not greater than or equal to zero, and less than the size of the snapshot.",
    ),
    (100, "UNKNOWN_TOPIC_ID", "UnknownTopicIdError", True, "This server does not host this topic ID."),
    (
        101,
        "DUPLICATE_BROKER_REGISTRATION",
        "DuplicateBrokerRegistrationError",
        False,
        "This broker ID is already in use.",
    ),
    (102, "BROKER_ID_NOT_REGISTERED", "BrokerIdNotRegisteredError", False, "The given broker ID was not registered."),
    (
        103,
        "INCONSISTENT_TOPIC_ID",
        "InconsistentTopicIdError",
        True,
        "The log's topic ID did not match the topic ID in the request.",
    ),
    (
        104,
        "INCONSISTENT_CLUSTER_ID",
        "InconsistentClusterIdError",
        False,
        "The clusterId in the request does not match that found on the server.",
    ),
    (
        105,
        "TRANSACTIONAL_ID_NOT_FOUND",
        "TransactionalIdNotFoundError",
        False,
        "The transactionalId could not be found.",
    ),
    (
        106,
        "FETCH_SESSION_TOPIC_ID_ERROR",
        "FetchSessionTopicIdError",
        True,
        "The fetch session encountered inconsistent topic ID usage.",
    ),
    (
        107,
        "INELIGIBLE_REPLICA",
        "IneligibleReplicaError",
        False,
        "The new ISR contains at least one ineligible replica.",
    ),
    (
        108,
        "NEW_LEADER_ELECTED",
        "NewLeaderElectedError",
        False,
        "The AlterPartition request successfully updated the partition state but the leader has changed.",
    ),
    (
        109,
        "OFFSET_MOVED_TO_TIERED_STORAGE",
        "OffsetMovedToTieredStorageError",
        False,
        "The requested offset is moved to tiered storage.",
    ),
    (
        110,
        "FENCED_MEMBER_EPOCH",
        "FencedMemberEpochError",
        False,
        "The member epoch is fenced by the group coordinator; the member must abandon all its partitions and rejoin.",
    ),
    (
        111,
        "UNRELEASED_INSTANCE_ID",
        "UnreleasedInstanceIdError",
        False,
        "The instance ID is still used by another member in the consumer group; that member must leave first.",
    ),
    (
        112,
        "UNSUPPORTED_ASSIGNOR",
        "UnsupportedAssignorError",
        False,
        "The assignor or its version range is not supported by the consumer group.",
    ),
    (
        113,
        "STALE_MEMBER_EPOCH",
        "StaleMemberEpochError",
        False,
        "The member epoch is stale; the member must retry after receiving its updated member epoch via the heartbeat.",
    ),
    (
        114,
        "MISMATCHED_ENDPOINT_TYPE",
        "MismatchedEndpointTypeError",
        False,
        "The request was sent to an endpoint of the wrong type.",
    ),
    (
        115,
        "UNSUPPORTED_ENDPOINT_TYPE",
        "UnsupportedEndpointTypeError",
        False,
        "This endpoint type is not supported yet.",
    ),
    (116, "UNKNOWN_CONTROLLER_ID", "UnknownControllerIdError", False, "This controller ID is not known."),
    (
        117,
        "UNKNOWN_SUBSCRIPTION_ID",
        "UnknownSubscriptionIdError",
        False,
        "Client sent a push telemetry request with an invalid or outdated subscription ID.",
    ),
    (
        118,
        "TELEMETRY_TOO_LARGE",
        "TelemetryTooLargeError",
        False,
        "Client sent a push telemetry request larger than the maximum size the broker will accept.",
    ),
    (
        119,
        "INVALID_REGISTRATION",
        "InvalidRegistrationError",
        False,
        "The controller has considered the broker registration to be invalid.",
    ),
    (
        120,
        "TRANSACTION_ABORTABLE",
        "TransactionAbortableError",
        False,
        "The transaction failed; abort it to keep using this transactional id.",
    ),
    (
        121,
        "INVALID_RECORD_STATE",
        "InvalidRecordStateError",
        False,
        "The record state is invalid; the acknowledgement of delivery could not be completed.",
    ),
    (122, "SHARE_SESSION_NOT_FOUND", "ShareSessionNotFoundError", True, "The share session was not found."),
    (123, "INVALID_SHARE_SESSION_EPOCH", "InvalidShareSessionEpochError", True, "The share session epoch is invalid."),
    (
        124,
        "FENCED_STATE_EPOCH",
        "FencedStateEpochError",
        False,
        "The share coordinator rejected the request because the share-group state epoch did not match.",
    ),
    (
        125,
        "INVALID_VOTER_KEY",
        "InvalidVoterKeyError",
        False,
        "The voter key doesn't match the receiving replica's key.",
    ),
    (126, "DUPLICATE_VOTER", "DuplicateVoterError", False, "The voter is already part of the set of voters."),
    (127, "VOTER_NOT_FOUND", "VoterNotFoundError", False, "The voter is not part of the set of voters."),
    (128, "INVALID_REGULAR_EXPRESSION", "InvalidRegularExpressionError", False, "The regular expression is not valid."),
    (
        129,
        "REBOOTSTRAP_REQUIRED",
        "RebootstrapRequiredError",
        False,
        "Client metadata is stale; the client should rebootstrap to obtain new metadata.",
    ),
    (130, "STREAMS_INVALID_TOPOLOGY", "StreamsInvalidTopologyError", False, "The supplied topology is invalid."),
    (
        131,
        "STREAMS_INVALID_TOPOLOGY_EPOCH",
        "StreamsInvalidTopologyEpochError",
        False,
        "The supplied topology epoch is invalid.",
    ),
    (132, "STREAMS_TOPOLOGY_FENCED", "StreamsTopologyFencedError", False, "The supplied topology epoch is outdated."),
    (
        133,
        "SHARE_SESSION_LIMIT_REACHED",
        "ShareSessionLimitReachedError",
        True,
        "The limit of share sessions has been reached.",
    ),
)


def _make_class(code: int, name: str, class_name: str, retriable: bool, text: str) -> type[BrokerError]:
    doc = f"Kafka error {code}, {name}{' (retriable)' if retriable else ''}: {text}"
    namespace = {
        "code": code,
        "name": name,
        "retriable": retriable,
        "text": text,
        "__doc__": doc,
        "__module__": __name__,
        "__qualname__": class_name,
    }
    return type(class_name, (BrokerError,), namespace)


ERRORS: dict[int, type[BrokerError]] = {}
for _row in TABLE:
    ERRORS[_row[0]] = globals()[_row[2]] = _make_class(*_row)
    __all__.append(_row[2])
del _row

if TYPE_CHECKING:
    # What the loop above defines, spelled out for type checkers only (a test checks it against TABLE).
    class UnknownServerError(BrokerError): ...

    class OffsetOutOfRangeError(BrokerError): ...

    class CorruptMessageError(BrokerError): ...

    class UnknownTopicOrPartitionError(BrokerError): ...

    class InvalidFetchSizeError(BrokerError): ...

    class LeaderNotAvailableError(BrokerError): ...

    class NotLeaderOrFollowerError(BrokerError): ...

    class RequestTimedOutError(BrokerError): ...

    class BrokerNotAvailableError(BrokerError): ...

    class ReplicaNotAvailableError(BrokerError): ...

    class MessageTooLargeError(BrokerError): ...

    class StaleControllerEpochError(BrokerError): ...

    class OffsetMetadataTooLargeError(BrokerError): ...

    class NetworkExceptionError(BrokerError): ...

    class CoordinatorLoadInProgressError(BrokerError): ...

    class CoordinatorNotAvailableError(BrokerError): ...

    class NotCoordinatorError(BrokerError): ...

    class InvalidTopicExceptionError(BrokerError): ...

    class RecordListTooLargeError(BrokerError): ...

    class NotEnoughReplicasError(BrokerError): ...

    class NotEnoughReplicasAfterAppendError(BrokerError): ...

    class InvalidRequiredAcksError(BrokerError): ...

    class IllegalGenerationError(BrokerError): ...

    class InconsistentGroupProtocolError(BrokerError): ...

    class InvalidGroupIdError(BrokerError): ...

    class UnknownMemberIdError(BrokerError): ...

    class InvalidSessionTimeoutError(BrokerError): ...

    class RebalanceInProgressError(BrokerError): ...

    class InvalidCommitOffsetSizeError(BrokerError): ...

    class TopicAuthorizationFailedError(BrokerError): ...

    class GroupAuthorizationFailedError(BrokerError): ...

    class ClusterAuthorizationFailedError(BrokerError): ...

    class InvalidTimestampError(BrokerError): ...

    class UnsupportedSaslMechanismError(BrokerError): ...

    class IllegalSaslStateError(BrokerError): ...

    class UnsupportedVersionError(BrokerError): ...

    class TopicAlreadyExistsError(BrokerError): ...

    class InvalidPartitionsError(BrokerError): ...

    class InvalidReplicationFactorError(BrokerError): ...

    class InvalidReplicaAssignmentError(BrokerError): ...

    class InvalidConfigError(BrokerError): ...

    class NotControllerError(BrokerError): ...

    class InvalidRequestError(BrokerError): ...

    class UnsupportedForMessageFormatError(BrokerError): ...

    class PolicyViolationError(BrokerError): ...

    class OutOfOrderSequenceNumberError(BrokerError): ...

    class DuplicateSequenceNumberError(BrokerError): ...

    class InvalidProducerEpochError(BrokerError): ...

    class InvalidTxnStateError(BrokerError): ...

    class InvalidProducerIdMappingError(BrokerError): ...

    class InvalidTransactionTimeoutError(BrokerError): ...

    class ConcurrentTransactionsError(BrokerError): ...

    class TransactionCoordinatorFencedError(BrokerError): ...

    class TransactionalIdAuthorizationFailedError(BrokerError): ...

    class SecurityDisabledError(BrokerError): ...

    class OperationNotAttemptedError(BrokerError): ...

    class KafkaStorageError(BrokerError): ...

    class LogDirNotFoundError(BrokerError): ...

    class SaslAuthenticationFailedError(BrokerError): ...

    class UnknownProducerIdError(BrokerError): ...

    class ReassignmentInProgressError(BrokerError): ...

    class DelegationTokenAuthDisabledError(BrokerError): ...

    class DelegationTokenNotFoundError(BrokerError): ...

    class DelegationTokenOwnerMismatchError(BrokerError): ...

    class DelegationTokenRequestNotAllowedError(BrokerError): ...

    class DelegationTokenAuthorizationFailedError(BrokerError): ...

    class DelegationTokenExpiredError(BrokerError): ...

    class InvalidPrincipalTypeError(BrokerError): ...

    class NonEmptyGroupError(BrokerError): ...

    class GroupIdNotFoundError(BrokerError): ...

    class FetchSessionIdNotFoundError(BrokerError): ...

    class InvalidFetchSessionEpochError(BrokerError): ...

    class ListenerNotFoundError(BrokerError): ...

    class TopicDeletionDisabledError(BrokerError): ...

    class FencedLeaderEpochError(BrokerError): ...

    class UnknownLeaderEpochError(BrokerError): ...

    class UnsupportedCompressionTypeError(BrokerError): ...

    class StaleBrokerEpochError(BrokerError): ...

    class OffsetNotAvailableError(BrokerError): ...

    class MemberIdRequiredError(BrokerError): ...

    class PreferredLeaderNotAvailableError(BrokerError): ...

    class GroupMaxSizeReachedError(BrokerError): ...

    class FencedInstanceIdError(BrokerError): ...

    class EligibleLeadersNotAvailableError(BrokerError): ...

    class ElectionNotNeededError(BrokerError): ...

    class NoReassignmentInProgressError(BrokerError): ...

    class GroupSubscribedToTopicError(BrokerError): ...

    class InvalidRecordError(BrokerError): ...

    class UnstableOffsetCommitError(BrokerError): ...

    class ThrottlingQuotaExceededError(BrokerError): ...

    class ProducerFencedError(BrokerError): ...

    class ResourceNotFoundError(BrokerError): ...

    class DuplicateResourceError(BrokerError): ...

    class UnacceptableCredentialError(BrokerError): ...

    class InconsistentVoterSetError(BrokerError): ...

    class InvalidUpdateVersionError(BrokerError): ...

    class FeatureUpdateFailedError(BrokerError): ...

    class PrincipalDeserializationFailureError(BrokerError): ...

    class SnapshotNotFoundError(BrokerError): ...

    class PositionOutOfRangeError(BrokerError): ...

    class UnknownTopicIdError(BrokerError): ...

    class DuplicateBrokerRegistrationError(BrokerError): ...

    class BrokerIdNotRegisteredError(BrokerError): ...

    class InconsistentTopicIdError(BrokerError): ...

    class InconsistentClusterIdError(BrokerError): ...

    class TransactionalIdNotFoundError(BrokerError): ...

    class FetchSessionTopicIdError(BrokerError): ...

    class IneligibleReplicaError(BrokerError): ...

    class NewLeaderElectedError(BrokerError): ...

    class OffsetMovedToTieredStorageError(BrokerError): ...

    class FencedMemberEpochError(BrokerError): ...

    class UnreleasedInstanceIdError(BrokerError): ...

    class UnsupportedAssignorError(BrokerError): ...

    class StaleMemberEpochError(BrokerError): ...

    class MismatchedEndpointTypeError(BrokerError): ...

    class UnsupportedEndpointTypeError(BrokerError): ...

    class UnknownControllerIdError(BrokerError): ...

    class UnknownSubscriptionIdError(BrokerError): ...

    class TelemetryTooLargeError(BrokerError): ...

    class InvalidRegistrationError(BrokerError): ...

    class TransactionAbortableError(BrokerError): ...

    class InvalidRecordStateError(BrokerError): ...

    class ShareSessionNotFoundError(BrokerError): ...

    class InvalidShareSessionEpochError(BrokerError): ...

    class FencedStateEpochError(BrokerError): ...

    class InvalidVoterKeyError(BrokerError): ...

    class DuplicateVoterError(BrokerError): ...

    class VoterNotFoundError(BrokerError): ...

    class InvalidRegularExpressionError(BrokerError): ...

    class RebootstrapRequiredError(BrokerError): ...

    class StreamsInvalidTopologyError(BrokerError): ...

    class StreamsInvalidTopologyEpochError(BrokerError): ...

    class StreamsTopologyFencedError(BrokerError): ...

    class ShareSessionLimitReachedError(BrokerError): ...


_UNKNOWN: dict[int, type[BrokerError]] = {}


def error_for_code(code: int) -> type[BrokerError] | None:
    """The exception class for a broker error code: None for 0 (no error), a generated subclass of
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
    """Raise the exception for ``code`` (with ``message``) unless it is 0."""
    cls = error_for_code(code)
    if cls is not None:
        raise cls(message)


def broker_error(code: int, message: str | None = None, context: str = "") -> BrokerError | None:
    """The exception for a broker error ``code`` (None for 0): ``context`` (where it happened), then the
    broker's ``message``, or Kafka's description of the code when the broker sent none."""
    cls = error_for_code(code)
    if cls is None:
        return None
    detail = message or cls.text or None
    text = f"{context}: {detail}" if context and detail else (context or detail)
    return cls(text)


def raise_broker_error(code: int, message: str | None = None, context: str = "") -> None:
    """Raise :func:`broker_error`'s exception for ``code`` unless it is 0 (success)."""
    err = broker_error(code, message, context)
    if err is not None:
        raise err
