"""DeleteTopics (API key 20): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
DeleteTopicsRequest key=20 v0-6 flex=v4+
  topics []DeleteTopicState v6+
    name string null=v6+ =null
    topic_id uuid
  topic_names []string v0-5 ignorable
  timeout_ms int32
"""

RESPONSE = """
DeleteTopicsResponse key=20 v0-6 flex=v4+
  throttle_time_ms int32 v1+ ignorable
  responses []DeletableTopicResult
    name string null=v6+
    topic_id uuid v6+ ignorable
    error_code int16
    error_message string v5+ null=v5+ =null ignorable
"""
