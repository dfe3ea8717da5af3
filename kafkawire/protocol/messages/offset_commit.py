"""OffsetCommit (API key 8): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
OffsetCommitRequest key=8 v0-10 flex=v8+
  group_id string
  generation_id_or_member_epoch int32 v1+ =-1 ignorable
  member_id string v1+ ignorable
  group_instance_id string v7+ null=v7+ =null
  retention_time_ms int64 v2-4 =-1 ignorable
  topics []OffsetCommitRequestTopic
    name string v0-9 ignorable
    topic_id uuid v10+ ignorable
    partitions []OffsetCommitRequestPartition
      partition_index int32
      committed_offset int64
      committed_leader_epoch int32 v6+ =-1 ignorable
      commit_timestamp int64 v1 =-1
      committed_metadata string null=v0+
"""

RESPONSE = """
OffsetCommitResponse key=8 v0-10 flex=v8+
  throttle_time_ms int32 v3+ ignorable
  topics []OffsetCommitResponseTopic
    name string v0-9 ignorable
    topic_id uuid v10+ ignorable
    partitions []OffsetCommitResponsePartition
      partition_index int32
      error_code int16
"""
