"""CreatePartitions (API key 37): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
CreatePartitionsRequest key=37 v0-3 flex=v2+
  topics []CreatePartitionsTopic
    name string
    count int32
    assignments []CreatePartitionsAssignment null=v0+
      broker_ids []int32
  timeout_ms int32
  validate_only bool
"""

RESPONSE = """
CreatePartitionsResponse key=37 v0-3 flex=v2+
  throttle_time_ms int32
  results []CreatePartitionsTopicResult
    name string
    error_code int16
    error_message string null=v0+ =null
"""
