"""ListGroups (API key 16): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
ListGroupsRequest key=16 v0-5 flex=v3+
  states_filter []string v4+
  types_filter []string v5+
"""

RESPONSE = """
ListGroupsResponse key=16 v0-5 flex=v3+
  throttle_time_ms int32 v1+ ignorable
  error_code int16
  groups []ListedGroup
    group_id string
    protocol_type string
    group_state string v4+ ignorable
    group_type string v5+ ignorable
"""
