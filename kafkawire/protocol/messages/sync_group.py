"""SyncGroup (API key 14): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
SyncGroupRequest key=14 v0-5 flex=v4+
  group_id string
  generation_id int32
  member_id string
  group_instance_id string v3+ null=v3+ =null
  protocol_type string v5+ null=v5+ =null ignorable
  protocol_name string v5+ null=v5+ =null ignorable
  assignments []SyncGroupRequestAssignment
    member_id string
    assignment bytes
"""

RESPONSE = """
SyncGroupResponse key=14 v0-5 flex=v4+
  throttle_time_ms int32 v1+ ignorable
  error_code int16
  protocol_type string v5+ null=v5+ =null ignorable
  protocol_name string v5+ null=v5+ =null ignorable
  assignment bytes
"""
