"""CreateAcls (API key 30, KIP-140): schema of the request and the response.

From Apache Kafka's ``CreateAclsRequest.json`` / ``CreateAclsResponse.json``. Creates ACL bindings; one
result per creation, in order. v1 adds the resource pattern type (KIP-290); v0 (removed in Kafka 4.0,
KIP-896) is kept for older brokers.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``; see
:mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
CreateAclsRequest key=30 v0-3 flex=v2+
  creations []AclCreation
    resource_type int8
    resource_name string
    resource_pattern_type int8 v1+ =3
    principal string
    host string
    operation int8
    permission_type int8
"""

RESPONSE = """
CreateAclsResponse key=30 v0-3 flex=v2+
  throttle_time_ms int32
  results []AclCreationResult
    error_code int16
    error_message string null=v0+
"""
