"""DeleteShareGroupOffsets (API key 92, KIP-932): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation. Deletes a group's share-partition state for whole
topics (the group must have no members).
"""

REQUEST = """
DeleteShareGroupOffsetsRequest key=92 v0-0 flex=v0+
  group_id string
  topics []DeleteShareGroupOffsetsRequestTopic
    topic_name string
"""

RESPONSE = """
DeleteShareGroupOffsetsResponse key=92 v0-0 flex=v0+
  throttle_time_ms int32
  error_code int16
  error_message string null=v0+ =null
  responses []DeleteShareGroupOffsetsResponseTopic
    topic_name string
    topic_id uuid
    error_code int16
    error_message string null=v0+ =null
"""
