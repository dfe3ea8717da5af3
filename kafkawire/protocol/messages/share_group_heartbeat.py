"""ShareGroupHeartbeat (API key 76, KIP-932): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation. A share group member joins with epoch 0 and a
member id it generated itself, leaves with epoch -1; the broker assigns partitions (any number of members
may share one). Version 0 was the early-access protocol of Kafka 4.0, which Kafka 4.1 removed when share
groups became production ready: v1 is the first version a broker of today speaks.
"""

REQUEST = """
ShareGroupHeartbeatRequest key=76 v1-1 flex=v0+
  group_id string
  member_id string
  member_epoch int32
  rack_id string null=v0+ =null
  subscribed_topic_names []string null=v0+ =null
"""

RESPONSE = """
ShareGroupHeartbeatResponse key=76 v1-1 flex=v0+
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
