"""LeaveGroup (API key 13): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
LeaveGroupRequest key=13 v0-5 flex=v4+
  group_id string
  member_id string v0-2
  members []MemberIdentity v3+
    member_id string
    group_instance_id string null=v3+ =null
    reason string v5+ null=v5+ =null ignorable
"""

RESPONSE = """
LeaveGroupResponse key=13 v0-5 flex=v4+
  throttle_time_ms int32 v1+ ignorable
  error_code int16
  members []MemberResponse v3+
    member_id string
    group_instance_id string null=v3+
    error_code int16
"""
