"""ListOffsets (API key 2): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
ListOffsetsRequest key=2 v0-11 flex=v6+
  replica_id int32
  isolation_level int8 v2+
  topics []ListOffsetsTopic
    name string
    partitions []ListOffsetsPartition
      partition_index int32
      current_leader_epoch int32 v4+ =-1 ignorable
      timestamp int64
      max_num_offsets int32 v0 =1
  timeout_ms int32 v10+ ignorable
"""

RESPONSE = """
ListOffsetsResponse key=2 v0-11 flex=v6+
  throttle_time_ms int32 v2+ ignorable
  topics []ListOffsetsTopicResponse
    name string
    partitions []ListOffsetsPartitionResponse
      partition_index int32
      error_code int16
      old_style_offsets []int64 v0
      timestamp int64 v1+ =-1
      offset int64 v1+ =-1
      leader_epoch int32 v4+ =-1
"""
