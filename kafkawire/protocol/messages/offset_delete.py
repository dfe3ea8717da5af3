"""OffsetDelete (API key 47, KIP-496): schema of the request and the response.

From Apache Kafka's ``OffsetDeleteRequest.json`` / ``OffsetDeleteResponse.json``. Deletes committed offsets
of a consumer group for partitions it no longer subscribes to.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``; see
:mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
OffsetDeleteRequest key=47 v0 flex=none
  group_id string
  topics []OffsetDeleteRequestTopic
    name string
    partitions []OffsetDeleteRequestPartition
      partition_index int32
"""

RESPONSE = """
OffsetDeleteResponse key=47 v0 flex=none
  error_code int16
  throttle_time_ms int32 ignorable
  topics []OffsetDeleteResponseTopic
    name string
    partitions []OffsetDeleteResponsePartition
      partition_index int32
      error_code int16
"""
