"""ApiVersions (API key 18): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
ApiVersionsRequest key=18 v0-4 flex=v3+
  client_software_name string v3+ ignorable
  client_software_version string v3+ ignorable
"""

RESPONSE = """
ApiVersionsResponse key=18 v0-4 flex=v3+
  error_code int16
  api_keys []ApiVersion
    api_key int16
    min_version int16
    max_version int16
  throttle_time_ms int32 v1+ ignorable
  supported_features []SupportedFeatureKey v3+ tag=0 ignorable
    name string
    min_version int16
    max_version int16
  finalized_features_epoch int64 v3+ tag=1 =-1 ignorable
  finalized_features []FinalizedFeatureKey v3+ tag=2 ignorable
    name string
    max_version_level int16
    min_version_level int16
  zk_migration_ready bool v3+ tag=3 =false ignorable
"""
