"""OffsetForLeaderEpoch (API key 23, KIP-101/KIP-320): schema of the request and the response.

From Apache Kafka's ``OffsetForLeaderEpochRequest.json`` / ``OffsetForLeaderEpochResponse.json``. A consumer
validates its position after a leader change with it and detects log truncation (KIP-320): the answer is the
end offset of the requested leader epoch on the current leader. v2 adds the current leader epoch (fencing),
v3 ``replica_id`` (-1 for a consumer; the default -2 is Kafka's "debug" replica id), v4 is flexible; v0-v1
(removed in Kafka 4.0, KIP-896) are kept for older brokers.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``; see
:mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
OffsetForLeaderEpochRequest key=23 v0-4 flex=v4+
  replica_id int32 v3+ =-2 ignorable
  topics []OffsetForLeaderTopic
    topic string
    partitions []OffsetForLeaderPartition
      partition int32
      current_leader_epoch int32 v2+ =-1 ignorable
      leader_epoch int32
"""

RESPONSE = """
OffsetForLeaderEpochResponse key=23 v0-4 flex=v4+
  throttle_time_ms int32 v2+ ignorable
  topics []OffsetForLeaderTopicResult
    topic string
    partitions []EpochEndOffset
      error_code int16
      partition int32
      leader_epoch int32 v1+ =-1 ignorable
      end_offset int64 =-1
"""
