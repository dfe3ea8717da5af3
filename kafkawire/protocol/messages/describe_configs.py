"""DescribeConfigs (API key 32): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
DescribeConfigsRequest key=32 v0-4 flex=v4+
  resources []DescribeConfigsResource
    resource_type int8
    resource_name string
    configuration_keys []string null=v0+
  include_synonyms bool v1+ =false
  include_documentation bool v3+ =false
"""

RESPONSE = """
DescribeConfigsResponse key=32 v0-4 flex=v4+
  throttle_time_ms int32
  results []DescribeConfigsResult
    error_code int16
    error_message string null=v0+
    resource_type int8
    resource_name string
    configs []DescribeConfigsResourceResult
      name string
      value string null=v0+
      read_only bool
      config_source int8 v1+ =-1 ignorable
      is_default bool v0
      is_sensitive bool
      synonyms []DescribeConfigsSynonym v1+ ignorable
        name string
        value string null=v1+
        source int8
      config_type int8 v3+ =0 ignorable
      documentation string v3+ null=v3+ ignorable
"""
