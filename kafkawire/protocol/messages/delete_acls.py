"""DeleteAcls (API key 31, KIP-140): schema of the request and the response.

From Apache Kafka's ``DeleteAclsRequest.json`` / ``DeleteAclsResponse.json``. Deletes the ACL bindings
matching each filter; each result lists the bindings it removed. v1 adds the resource pattern type
(KIP-290); v0 (removed in Kafka 4.0, KIP-896) is kept for older brokers.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``; see
:mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
DeleteAclsRequest key=31 v0-3 flex=v2+
  filters []DeleteAclsFilter
    resource_type_filter int8
    resource_name_filter string null=v0+
    pattern_type_filter int8 v1+ =3
    principal_filter string null=v0+
    host_filter string null=v0+
    operation int8
    permission_type int8
"""

RESPONSE = """
DeleteAclsResponse key=31 v0-3 flex=v2+
  throttle_time_ms int32
  filter_results []DeleteAclsFilterResult
    error_code int16
    error_message string null=v0+
    matching_acls []DeleteAclsMatchingAcl
      error_code int16
      error_message string null=v0+
      resource_type int8
      resource_name string
      pattern_type int8 v1+ =3
      principal string
      host string
      operation int8
      permission_type int8
"""
