"""ConsumerGroupHeartbeat (API key 68, KIP-848): schema of the request and the response.

From Apache Kafka's ``ConsumerGroupHeartbeatRequest.json`` / ``ConsumerGroupHeartbeatResponse.json``.
Version 1 adds ``subscribed_topic_regex`` and has the consumer generate its own member id (KIP-1082).

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
ConsumerGroupHeartbeatRequest key=68 v0-1 flex=v0+
  group_id string
  member_id string
  member_epoch int32
  instance_id string null=v0+ =null
  rack_id string null=v0+ =null
  rebalance_timeout_ms int32 =-1
  subscribed_topic_names []string null=v0+ =null
  subscribed_topic_regex string v1+ null=v1+ =null
  server_assignor string null=v0+ =null
  topic_partitions []TopicPartitions null=v0+ =null
    topic_id uuid
    partitions []int32
"""

RESPONSE = """
ConsumerGroupHeartbeatResponse key=68 v0-1 flex=v0+
  throttle_time_ms int32
  error_code int16
  error_message string null=v0+ =null
  member_id string null=v0+ =null
  member_epoch int32
  heartbeat_interval_ms int32
  assignment Assignment null=v0+ =null
    topic_partitions []TopicPartitions
      topic_id uuid
      partitions []int32
"""
