"""ShareFetch (API key 78, KIP-932): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation. A share fetch opens (epoch 0), continues (epoch
+1) or closes (epoch -1) a share session with one broker, carries acknowledgements of earlier deliveries
(``acknowledge_types`` 0 gap, 1 accept, 2 release, 3 reject, 4 renew) and answers with record batches and
the ranges of offsets this member acquired in them (``acquired_records``, with their delivery count): a
batch may hold records acquired by other members, which the consumer must not hand out. v1 is the
first version Kafka 4.1+ speaks (v0 was Kafka 4.0's early access); v2 adds the acquire mode and renew
acknowledgements (KIP-1222).
"""

REQUEST = """
ShareFetchRequest key=78 v1-2 flex=v0+
  group_id string null=v0+ =null
  member_id string null=v0+
  share_session_epoch int32
  max_wait_ms int32
  min_bytes int32
  max_bytes int32 =0x7fffffff
  max_records int32
  batch_size int32
  share_acquire_mode int8 v2+ =0 ignorable
  is_renew_ack bool v2+ =false
  topics []FetchTopic
    topic_id uuid
    partitions []FetchPartition
      partition_index int32
      acknowledgement_batches []AcknowledgementBatch
        first_offset int64
        last_offset int64
        acknowledge_types []int8
  forgotten_topics_data []ForgottenTopic
    topic_id uuid
    partitions []int32
"""

RESPONSE = """
ShareFetchResponse key=78 v1-2 flex=v0+
  throttle_time_ms int32
  error_code int16
  error_message string null=v0+ =null
  acquisition_lock_timeout_ms int32
  responses []ShareFetchableTopicResponse
    topic_id uuid
    partitions []PartitionData
      partition_index int32
      error_code int16
      error_message string null=v0+ =null
      acknowledge_error_code int16
      acknowledge_error_message string null=v0+ =null
      current_leader LeaderIdAndEpoch
        leader_id int32
        leader_epoch int32
      records records
      acquired_records []AcquiredRecords
        first_offset int64
        last_offset int64
        delivery_count int16
  node_endpoints []NodeEndpoint
    node_id int32
    host string
    port int32
    rack string null=v0+ =null
"""
