"""DeleteGroups (API key 42): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
DeleteGroupsRequest key=42 v0-3 flex=v2+
  groups_names []string
"""

RESPONSE = """
DeleteGroupsResponse key=42 v0-3 flex=v2+
  throttle_time_ms int32
  results []DeletableGroupResult
    group_id string
    error_code int16
    error_message string v3+ null=v3+ =null ignorable
"""
