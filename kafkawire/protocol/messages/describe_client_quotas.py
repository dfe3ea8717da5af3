"""DescribeClientQuotas (API key 48, KIP-546): schema of the request and the response.

From Apache Kafka's ``DescribeClientQuotasRequest.json`` / ``DescribeClientQuotasResponse.json``. Quotas of
the entities (user, client-id, ip) matching the components. ``match_type``: 0 exact name, 1 default entity,
2 any.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``; see
:mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
DescribeClientQuotasRequest key=48 v0-1 flex=v1+
  components []ComponentData
    entity_type string
    match_type int8
    match string null=v0+
  strict bool
"""

RESPONSE = """
DescribeClientQuotasResponse key=48 v0-1 flex=v1+
  throttle_time_ms int32
  error_code int16
  error_message string null=v0+
  entries []EntryData null=v0+
    entity []EntityData
      entity_type string
      entity_name string null=v0+
    values []ValueData
      key string
      value float64
"""
