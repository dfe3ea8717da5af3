"""ListPartitionReassignments (API key 46, KIP-455): schema of the request and the response.

From Apache Kafka's ``ListPartitionReassignmentsRequest.json`` /
``ListPartitionReassignmentsResponse.json``. Ongoing replica reassignments; a null ``topics`` lists every
one.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``; see
:mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
ListPartitionReassignmentsRequest key=46 v0 flex=v0+
  timeout_ms int32 =60000
  topics []ListPartitionReassignmentsTopics null=v0+ =null
    name string
    partition_indexes []int32
"""

RESPONSE = """
ListPartitionReassignmentsResponse key=46 v0 flex=v0+
  throttle_time_ms int32
  error_code int16
  error_message string null=v0+
  topics []OngoingTopicReassignment
    name string
    partitions []OngoingPartitionReassignment
      partition_index int32
      replicas []int32
      adding_replicas []int32
      removing_replicas []int32
"""
