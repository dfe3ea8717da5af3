"""The message classes of every API kafkawire speaks, built at import from ``messages/<api>.schema``.

Their fields and types are in ``_messages.pyi``, generated from the same schemas by
``scripts/gen_message_stubs.py`` (``tests/protocol/test_message_stubs.py`` fails when the two drift), so a type
checker sees every field of every request, response and nested struct while the runtime keeps building the
classes from the schemas (the compiled encoders and decoders stay the fast path).
"""

from __future__ import annotations

from ._registry import build_pair, read_schema_blocks
from .message import DataMessage, Request, Response, build_message

ProduceRequest, ProduceResponse = build_pair("produce")
FetchRequest, FetchResponse = build_pair("fetch")
ListOffsetsRequest, ListOffsetsResponse = build_pair("list_offsets")
MetadataRequest, MetadataResponse = build_pair("metadata")
OffsetCommitRequest, OffsetCommitResponse = build_pair("offset_commit")
OffsetFetchRequest, OffsetFetchResponse = build_pair("offset_fetch")
FindCoordinatorRequest, FindCoordinatorResponse = build_pair("find_coordinator")
JoinGroupRequest, JoinGroupResponse = build_pair("join_group")
HeartbeatRequest, HeartbeatResponse = build_pair("heartbeat")
LeaveGroupRequest, LeaveGroupResponse = build_pair("leave_group")
SyncGroupRequest, SyncGroupResponse = build_pair("sync_group")
DescribeGroupsRequest, DescribeGroupsResponse = build_pair("describe_groups")
ListGroupsRequest, ListGroupsResponse = build_pair("list_groups")
SaslHandshakeRequest, SaslHandshakeResponse = build_pair("sasl_handshake")
ApiVersionsRequest, ApiVersionsResponse = build_pair("api_versions")
CreateTopicsRequest, CreateTopicsResponse = build_pair("create_topics")
DeleteTopicsRequest, DeleteTopicsResponse = build_pair("delete_topics")
DeleteRecordsRequest, DeleteRecordsResponse = build_pair("delete_records")
InitProducerIdRequest, InitProducerIdResponse = build_pair("init_producer_id")
AddPartitionsToTxnRequest, AddPartitionsToTxnResponse = build_pair("add_partitions_to_txn")
AddOffsetsToTxnRequest, AddOffsetsToTxnResponse = build_pair("add_offsets_to_txn")
EndTxnRequest, EndTxnResponse = build_pair("end_txn")
TxnOffsetCommitRequest, TxnOffsetCommitResponse = build_pair("txn_offset_commit")
DescribeConfigsRequest, DescribeConfigsResponse = build_pair("describe_configs")
SaslAuthenticateRequest, SaslAuthenticateResponse = build_pair("sasl_authenticate")
CreatePartitionsRequest, CreatePartitionsResponse = build_pair("create_partitions")
DeleteGroupsRequest, DeleteGroupsResponse = build_pair("delete_groups")
IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse = build_pair("incremental_alter_configs")
DescribeClusterRequest, DescribeClusterResponse = build_pair("describe_cluster")
ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse = build_pair("consumer_group_heartbeat")
ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse = build_pair("consumer_group_describe")
OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse = build_pair("offset_for_leader_epoch")
WriteTxnMarkersRequest, WriteTxnMarkersResponse = build_pair("write_txn_markers")
DescribeAclsRequest, DescribeAclsResponse = build_pair("describe_acls")
CreateAclsRequest, CreateAclsResponse = build_pair("create_acls")
DeleteAclsRequest, DeleteAclsResponse = build_pair("delete_acls")
DescribeLogDirsRequest, DescribeLogDirsResponse = build_pair("describe_log_dirs")
ElectLeadersRequest, ElectLeadersResponse = build_pair("elect_leaders")
AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse = build_pair("alter_partition_reassignments")
ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse = build_pair("list_partition_reassignments")
OffsetDeleteRequest, OffsetDeleteResponse = build_pair("offset_delete")
DescribeClientQuotasRequest, DescribeClientQuotasResponse = build_pair("describe_client_quotas")
AlterClientQuotasRequest, AlterClientQuotasResponse = build_pair("alter_client_quotas")
DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse = build_pair(
    "describe_user_scram_credentials"
)
AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse = build_pair("alter_user_scram_credentials")
UpdateFeaturesRequest, UpdateFeaturesResponse = build_pair("update_features")
DescribeProducersRequest, DescribeProducersResponse = build_pair("describe_producers")
DescribeTransactionsRequest, DescribeTransactionsResponse = build_pair("describe_transactions")
ListTransactionsRequest, ListTransactionsResponse = build_pair("list_transactions")
DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse = build_pair("describe_topic_partitions")
ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse = build_pair("share_group_heartbeat")
ShareGroupDescribeRequest, ShareGroupDescribeResponse = build_pair("share_group_describe")
ShareFetchRequest, ShareFetchResponse = build_pair("share_fetch")
ShareAcknowledgeRequest, ShareAcknowledgeResponse = build_pair("share_acknowledge")
DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse = build_pair("describe_share_group_offsets")
AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse = build_pair("alter_share_group_offsets")
DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse = build_pair("delete_share_group_offsets")

#: API key -> (request class, response class), for every API this package speaks.
API_BY_KEY: dict[int, tuple[type[Request], type[Response]]] = {
    req.API_KEY: (req, req.RESPONSE)
    for req in (
        ProduceRequest,
        FetchRequest,
        ListOffsetsRequest,
        MetadataRequest,
        OffsetCommitRequest,
        OffsetFetchRequest,
        FindCoordinatorRequest,
        JoinGroupRequest,
        HeartbeatRequest,
        LeaveGroupRequest,
        SyncGroupRequest,
        DescribeGroupsRequest,
        ListGroupsRequest,
        SaslHandshakeRequest,
        ApiVersionsRequest,
        CreateTopicsRequest,
        DeleteTopicsRequest,
        DeleteRecordsRequest,
        InitProducerIdRequest,
        AddPartitionsToTxnRequest,
        AddOffsetsToTxnRequest,
        EndTxnRequest,
        TxnOffsetCommitRequest,
        DescribeConfigsRequest,
        SaslAuthenticateRequest,
        CreatePartitionsRequest,
        DeleteGroupsRequest,
        IncrementalAlterConfigsRequest,
        DescribeClusterRequest,
        ConsumerGroupHeartbeatRequest,
        ConsumerGroupDescribeRequest,
        OffsetForLeaderEpochRequest,
        WriteTxnMarkersRequest,
        DescribeAclsRequest,
        CreateAclsRequest,
        DeleteAclsRequest,
        DescribeLogDirsRequest,
        ElectLeadersRequest,
        AlterPartitionReassignmentsRequest,
        ListPartitionReassignmentsRequest,
        OffsetDeleteRequest,
        DescribeClientQuotasRequest,
        AlterClientQuotasRequest,
        DescribeUserScramCredentialsRequest,
        AlterUserScramCredentialsRequest,
        UpdateFeaturesRequest,
        DescribeProducersRequest,
        DescribeTransactionsRequest,
        ListTransactionsRequest,
        DescribeTopicPartitionsRequest,
        ShareGroupHeartbeatRequest,
        ShareGroupDescribeRequest,
        ShareFetchRequest,
        ShareAcknowledgeRequest,
        DescribeShareGroupOffsetsRequest,
        AlterShareGroupOffsetsRequest,
        DeleteShareGroupOffsetsRequest,
    )
}


# The classic consumer protocol's payloads (``messages/consumer_protocol.schema``): data messages, no API key.
_BLOCKS = {block.split()[0]: block for block in read_schema_blocks("consumer_protocol")}
ConsumerProtocolSubscription = build_message(_BLOCKS["ConsumerProtocolSubscription"], DataMessage)
ConsumerProtocolAssignment = build_message(_BLOCKS["ConsumerProtocolAssignment"], DataMessage)
StickyAssignorUserData = build_message(_BLOCKS["StickyAssignorUserData"], DataMessage)

#: The request and response class names, as ``kafkawire.protocol`` re-exports them.
__all__ = [name for req, resp in API_BY_KEY.values() for name in (req.__name__, resp.__name__)]
