"""ConsumerGroupDescribe (API key 69, KIP-848): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation. Describes groups of the new consumer protocol
(``group.protocol=consumer``), which DescribeGroups does not; v1 adds the member type (KIP-1099: -1
unknown, 0 classic, 1 consumer). Fields as in Kafka 4.4's generated ``ConsumerGroupDescribeResponseData``.
"""

REQUEST = """
ConsumerGroupDescribeRequest key=69 v0-1 flex=v0+
  group_ids []string
  include_authorized_operations bool
"""

RESPONSE = """
ConsumerGroupDescribeResponse key=69 v0-1 flex=v0+
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
      instance_id string null=v0+ =null
      rack_id string null=v0+ =null
      member_epoch int32
      client_id string
      client_host string
      subscribed_topic_names []string
      subscribed_topic_regex string null=v0+ =null
      assignment Assignment
        topic_partitions []TopicPartitions
          topic_id uuid
          topic_name string
          partitions []int32
      target_assignment Assignment
        topic_partitions []TopicPartitions
          topic_id uuid
          topic_name string
          partitions []int32
      member_type int8 v1+ =-1 ignorable
    authorized_operations int32 =-2147483648
"""
