"""OffsetFetch (API key 9): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
OffsetFetchRequest key=9 v0-10 flex=v6+
  group_id string v0-7
  topics []OffsetFetchRequestTopic v0-7 null=v2-7
    name string
    partition_indexes []int32
  groups []OffsetFetchRequestGroup v8+
    group_id string
    member_id string v9+ null=v9+ =null ignorable
    member_epoch int32 v9+ =-1 ignorable
    topics []OffsetFetchRequestTopics null=v8+
      name string v8-9 ignorable
      topic_id uuid v10+ ignorable
      partition_indexes []int32
  require_stable bool v7+ =false
"""

RESPONSE = """
OffsetFetchResponse key=9 v0-10 flex=v6+
  throttle_time_ms int32 v3+ ignorable
  topics []OffsetFetchResponseTopic v0-7
    name string
    partitions []OffsetFetchResponsePartition
      partition_index int32
      committed_offset int64
      committed_leader_epoch int32 v5-7 =-1 ignorable
      metadata string null=v0-7
      error_code int16
  error_code int16 v2-7 =0 ignorable
  groups []OffsetFetchResponseGroup v8+
    group_id string
    topics []OffsetFetchResponseTopics
      name string v8-9 ignorable
      topic_id uuid v10+ ignorable
      partitions []OffsetFetchResponsePartitions
        partition_index int32
        committed_offset int64
        committed_leader_epoch int32 =-1 ignorable
        metadata string null=v8+
        error_code int16
    error_code int16 =0
"""
