"""FindCoordinator (API key 10): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
FindCoordinatorRequest key=10 v0-6 flex=v3+
  key string v0-3
  key_type int8 v1+ =0
  coordinator_keys []string v4+
"""

RESPONSE = """
FindCoordinatorResponse key=10 v0-6 flex=v3+
  throttle_time_ms int32 v1+ ignorable
  error_code int16 v0-3
  error_message string v1-3 null=v1-3 ignorable
  node_id int32 v0-3
  host string v0-3
  port int32 v0-3
  coordinators []Coordinator v4+
    key string
    node_id int32
    host string
    port int32
    error_code int16
    error_message string null=v4+ ignorable
"""
