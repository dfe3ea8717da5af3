"""IncrementalAlterConfigs (API key 44, KIP-339): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation. ``config_operation``: 0 SET, 1 DELETE, 2 APPEND,
3 SUBTRACT.
"""

REQUEST = """
IncrementalAlterConfigsRequest key=44 v0-1 flex=v1+
  resources []AlterConfigsResource
    resource_type int8
    resource_name string
    configs []AlterableConfig
      name string
      config_operation int8
      value string null=v0+
  validate_only bool
"""

RESPONSE = """
IncrementalAlterConfigsResponse key=44 v0-1 flex=v1+
  throttle_time_ms int32
  responses []AlterConfigsResourceResponse
    error_code int16
    error_message string null=v0+
    resource_type int8
    resource_name string
"""
