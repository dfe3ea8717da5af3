"""Heartbeat (API key 12): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
HeartbeatRequest key=12 v0-4 flex=v4+
  group_id string
  generation_id int32
  member_id string
  group_instance_id string v3+ null=v3+ =null
"""

RESPONSE = """
HeartbeatResponse key=12 v0-4 flex=v4+
  throttle_time_ms int32 v1+ ignorable
  error_code int16
"""
