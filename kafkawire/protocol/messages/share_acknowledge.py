"""ShareAcknowledge (API key 79, KIP-932): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation. Acknowledges deliveries in the member's share
session without fetching (a commit, or acknowledgements on close with epoch -1); the types are
ShareFetch's (0 gap, 1 accept, 2 release, 3 reject, 4 renew). v1 is the first version Kafka 4.1+ speaks.
"""

REQUEST = """
ShareAcknowledgeRequest key=79 v1-2 flex=v0+
  group_id string null=v0+ =null
  member_id string null=v0+
  share_session_epoch int32
  is_renew_ack bool v2+ =false
  topics []AcknowledgeTopic
    topic_id uuid
    partitions []AcknowledgePartition
      partition_index int32
      acknowledgement_batches []AcknowledgementBatch
        first_offset int64
        last_offset int64
        acknowledge_types []int8
"""

RESPONSE = """
ShareAcknowledgeResponse key=79 v1-2 flex=v0+
  throttle_time_ms int32
  error_code int16
  error_message string null=v0+ =null
  acquisition_lock_timeout_ms int32 v2+ ignorable
  responses []ShareAcknowledgeTopicResponse
    topic_id uuid
    partitions []PartitionData
      partition_index int32
      error_code int16
      error_message string null=v0+ =null
      current_leader LeaderIdAndEpoch
        leader_id int32
        leader_epoch int32
  node_endpoints []NodeEndpoint
    node_id int32
    host string
    port int32
    rack string null=v0+ =null
"""
