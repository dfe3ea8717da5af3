"""TxnOffsetCommit (API key 28): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.

Version 3 adds the consumer's generation, member id and group instance id (KIP-447); version 5 may only
be used with transaction protocol v2 (KIP-890 part 2); version 6 names topics by id only (KIP-1319).
"""

REQUEST = """
TxnOffsetCommitRequest key=28 v0-6 flex=v3+
  transactional_id string
  group_id string
  producer_id int64
  producer_epoch int16
  generation_id_or_member_epoch int32 v3+ =-1
  member_id string v3+ =""
  group_instance_id string v3+ null=v3+ =null
  topics []TxnOffsetCommitRequestTopic
    name string v0-5 ignorable
    topic_id uuid v6+ ignorable
    partitions []TxnOffsetCommitRequestPartition
      partition_index int32
      committed_offset int64
      committed_leader_epoch int32 v2+ =-1 ignorable
      committed_metadata string null=v0+
"""

RESPONSE = """
TxnOffsetCommitResponse key=28 v0-6 flex=v3+
  throttle_time_ms int32
  topics []TxnOffsetCommitResponseTopic
    name string v0-5 ignorable
    topic_id uuid v6+ ignorable
    partitions []TxnOffsetCommitResponsePartition
      partition_index int32
      error_code int16
"""
