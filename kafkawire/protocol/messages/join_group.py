"""JoinGroup (API key 11): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
JoinGroupRequest key=11 v0-9 flex=v6+
  group_id string
  session_timeout_ms int32
  rebalance_timeout_ms int32 v1+ =-1 ignorable
  member_id string
  group_instance_id string v5+ null=v5+ =null
  protocol_type string
  protocols []JoinGroupRequestProtocol
    name string
    metadata bytes
  reason string v8+ null=v8+ =null ignorable
"""

RESPONSE = """
JoinGroupResponse key=11 v0-9 flex=v6+
  throttle_time_ms int32 v2+ ignorable
  error_code int16
  generation_id int32 =-1
  protocol_type string v7+ null=v7+ =null ignorable
  protocol_name string null=v7+
  leader string
  skip_assignment bool v9+ =false
  member_id string
  members []JoinGroupResponseMember
    member_id string
    group_instance_id string v5+ null=v5+ =null ignorable
    metadata bytes
"""
