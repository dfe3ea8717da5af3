"""DescribeGroups (API key 15): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
DescribeGroupsRequest key=15 v0-6 flex=v5+
  groups []string
  include_authorized_operations bool v3+
"""

RESPONSE = """
DescribeGroupsResponse key=15 v0-6 flex=v5+
  throttle_time_ms int32 v1+ ignorable
  groups []DescribedGroup
    error_code int16
    error_message string v6+ null=v6+ =null
    group_id string
    group_state string
    protocol_type string
    protocol_data string
    members []DescribedGroupMember
      member_id string
      group_instance_id string v4+ null=v4+ =null ignorable
      client_id string
      client_host string
      member_metadata bytes
      member_assignment bytes
    authorized_operations int32 v3+ =-2147483648
"""
