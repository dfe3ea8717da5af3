"""DescribeShareGroupOffsets (API key 90, KIP-932): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation. The start offset of each share-partition (below
it every record is done with); ``topics`` null asks for every partition the group has state for. v1 adds
the lag.
"""

REQUEST = """
DescribeShareGroupOffsetsRequest key=90 v0-1 flex=v0+
  groups []DescribeShareGroupOffsetsRequestGroup
    group_id string
    topics []DescribeShareGroupOffsetsRequestTopic null=v0+
      topic_name string
      partitions []int32
"""

RESPONSE = """
DescribeShareGroupOffsetsResponse key=90 v0-1 flex=v0+
  throttle_time_ms int32
  groups []DescribeShareGroupOffsetsResponseGroup
    group_id string
    topics []DescribeShareGroupOffsetsResponseTopic
      topic_name string
      topic_id uuid
      partitions []DescribeShareGroupOffsetsResponsePartition
        partition_index int32
        start_offset int64
        leader_epoch int32
        lag int64 v1+ =-1 ignorable
        error_code int16
        error_message string null=v0+ =null
    error_code int16
    error_message string null=v0+ =null
"""
