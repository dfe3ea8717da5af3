"""ShareGroupDescribe (API key 77, KIP-932): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation. Describes share groups (state, epochs, members and
their assignments); v1 is the first version Kafka 4.1+ speaks (v0 was Kafka 4.0's early access).
"""

REQUEST = """
ShareGroupDescribeRequest key=77 v1-1 flex=v0+
  group_ids []string
  include_authorized_operations bool
"""

RESPONSE = """
ShareGroupDescribeResponse key=77 v1-1 flex=v0+
  throttle_time_ms int32
  groups []DescribedGroup
    error_code int16
    error_message string null=v0+ =null
    group_id string
    group_state string
    group_epoch int32
    assignment_epoch int32
    assignor_name string
    members []Member
      member_id string
      rack_id string null=v0+ =null
      member_epoch int32
      client_id string
      client_host string
      subscribed_topic_names []string
      assignment Assignment
        topic_partitions []TopicPartitions
          topic_id uuid
          topic_name string
          partitions []int32
    authorized_operations int32 =-2147483648
"""
