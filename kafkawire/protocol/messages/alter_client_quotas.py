"""AlterClientQuotas (API key 49, KIP-546): schema of the request and the response.

From Apache Kafka's ``AlterClientQuotasRequest.json`` / ``AlterClientQuotasResponse.json``. Sets or removes
quota values of entities; ``validate_only`` checks without applying.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``; see
:mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
AlterClientQuotasRequest key=49 v0-1 flex=v1+
  entries []EntryData
    entity []EntityData
      entity_type string
      entity_name string null=v0+
    ops []OpData
      key string
      value float64
      remove bool
  validate_only bool
"""

RESPONSE = """
AlterClientQuotasResponse key=49 v0-1 flex=v1+
  throttle_time_ms int32
  entries []EntryData
    error_code int16
    error_message string null=v0+
    entity []EntityData
      entity_type string
      entity_name string null=v0+
"""
