"""AlterShareGroupOffsets (API key 91, KIP-932): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation. Sets share-partition start offsets of a group
that has no members (a reset).
"""

REQUEST = """
AlterShareGroupOffsetsRequest key=91 v0-0 flex=v0+
  group_id string
  topics []AlterShareGroupOffsetsRequestTopic
    topic_name string
    partitions []AlterShareGroupOffsetsRequestPartition
      partition_index int32
      start_offset int64
"""

RESPONSE = """
AlterShareGroupOffsetsResponse key=91 v0-0 flex=v0+
  throttle_time_ms int32
  error_code int16
  error_message string null=v0+ =null
  responses []AlterShareGroupOffsetsResponseTopic
    topic_name string
    topic_id uuid
    partitions []AlterShareGroupOffsetsResponsePartition
      partition_index int32
      error_code int16
      error_message string null=v0+ =null
"""
