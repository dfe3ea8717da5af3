"""UpdateFeatures (API key 57, KIP-584): schema of the request and the response.

From Apache Kafka's ``UpdateFeaturesRequest.json`` / ``UpdateFeaturesResponse.json``. Changes finalized
feature levels; v1 replaces ``allow_downgrade`` by ``upgrade_type`` (1 upgrade, 2 safe downgrade, 3 unsafe
downgrade) and adds ``validate_only`` (KIP-778); from v2 the response no longer lists per-feature results.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``; see
:mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
UpdateFeaturesRequest key=57 v0-2 flex=v0+
  timeout_ms int32 =60000
  feature_updates []FeatureUpdateKey
    feature string
    max_version_level int16
    allow_downgrade bool v0
    upgrade_type int8 v1+ =1
  validate_only bool v1+ =false
"""

RESPONSE = """
UpdateFeaturesResponse key=57 v0-2 flex=v0+
  throttle_time_ms int32
  error_code int16
  error_message string null=v0+
  results []UpdatableFeatureResult v0-1 ignorable
    feature string
    error_code int16
    error_message string null=v0+
"""
