"""AlterPartitionReassignments (API key 45, KIP-455): schema of the request and the response.

From Apache Kafka's ``AlterPartitionReassignmentsRequest.json`` /
``AlterPartitionReassignmentsResponse.json``. Starts (replica list) or cancels (null replicas)
reassignments. v1 adds ``allow_replication_factor_change`` (KIP-860).

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``; see
:mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
AlterPartitionReassignmentsRequest key=45 v0-1 flex=v0+
  timeout_ms int32 =60000
  allow_replication_factor_change bool v1+ =true
  topics []ReassignableTopic
    name string
    partitions []ReassignablePartition
      partition_index int32
      replicas []int32 null=v0+ =null
"""

RESPONSE = """
AlterPartitionReassignmentsResponse key=45 v0-1 flex=v0+
  throttle_time_ms int32
  allow_replication_factor_change bool v1+ =true ignorable
  error_code int16
  error_message string null=v0+
  responses []ReassignableTopicResponse
    name string
    partitions []ReassignablePartitionResponse
      partition_index int32
      error_code int16
      error_message string null=v0+
"""
