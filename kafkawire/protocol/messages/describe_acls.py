"""DescribeAcls (API key 29, KIP-140): schema of the request and the response.

From Apache Kafka's ``DescribeAclsRequest.json`` / ``DescribeAclsResponse.json``. ACL bindings matching a
filter. Resource types, pattern types (3 = literal, KIP-290), operations and permission types are Kafka's
``AclOperation``/``ResourceType`` codes; v1 adds the resource pattern type (KIP-290); v0 (removed in Kafka
4.0, KIP-896) is kept for older brokers.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``; see
:mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
DescribeAclsRequest key=29 v0-3 flex=v2+
  resource_type_filter int8
  resource_name_filter string null=v0+
  pattern_type_filter int8 v1+ =3
  principal_filter string null=v0+
  host_filter string null=v0+
  operation int8
  permission_type int8
"""

RESPONSE = """
DescribeAclsResponse key=29 v0-3 flex=v2+
  throttle_time_ms int32
  error_code int16
  error_message string null=v0+
  resources []DescribeAclsResource
    resource_type int8
    resource_name string
    pattern_type int8 v1+ =3
    acls []AclDescription
      principal string
      host string
      operation int8
      permission_type int8
"""
