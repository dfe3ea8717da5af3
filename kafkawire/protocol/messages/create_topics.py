"""CreateTopics (API key 19): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
CreateTopicsRequest key=19 v0-7 flex=v5+
  topics []CreatableTopic
    name string
    num_partitions int32
    replication_factor int16
    assignments []CreatableReplicaAssignment
      partition_index int32
      broker_ids []int32
    configs []CreatableTopicConfig
      name string
      value string null=v0+
  timeout_ms int32 =60000
  validate_only bool v1+ =false
"""

RESPONSE = """
CreateTopicsResponse key=19 v0-7 flex=v5+
  throttle_time_ms int32 v2+ ignorable
  topics []CreatableTopicResult
    name string
    topic_id uuid v7+ ignorable
    error_code int16
    error_message string v1+ null=v1+ ignorable
    topic_config_error_code int16 v5+ tag=0 ignorable
    num_partitions int32 v5+ =-1 ignorable
    replication_factor int16 v5+ =-1 ignorable
    configs []CreatableTopicConfigs v5+ null=v5+ ignorable
      name string
      value string null=v5+
      read_only bool
      config_source int8 =-1 ignorable
      is_sensitive bool
"""
