"""DescribeTopicPartitions (API key 75, KIP-966): schema of the request and the response.

From Apache Kafka's ``DescribeTopicPartitionsRequest.json`` / ``DescribeTopicPartitionsResponse.json``.
Topics with their partitions' leaders, replicas, ISR and eligible leader replicas (ELR), paged by a cursor
and ``response_partition_limit``.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``; see
:mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
DescribeTopicPartitionsRequest key=75 v0 flex=v0+
  topics []TopicRequest
    name string
  response_partition_limit int32 =2000
  cursor Cursor null=v0+ =null
    topic_name string
    partition_index int32
"""

RESPONSE = """
DescribeTopicPartitionsResponse key=75 v0 flex=v0+
  throttle_time_ms int32 ignorable
  topics []DescribeTopicPartitionsResponseTopic
    error_code int16
    name string null=v0+
    topic_id uuid ignorable
    is_internal bool =false ignorable
    partitions []DescribeTopicPartitionsResponsePartition
      error_code int16
      partition_index int32
      leader_id int32
      leader_epoch int32 =-1 ignorable
      replica_nodes []int32
      isr_nodes []int32
      eligible_leader_replicas []int32 null=v0+ =null
      last_known_elr []int32 null=v0+ =null
      offline_replicas []int32 ignorable
    topic_authorized_operations int32 =-2147483648
  next_cursor Cursor null=v0+ =null
    topic_name string
    partition_index int32
"""
