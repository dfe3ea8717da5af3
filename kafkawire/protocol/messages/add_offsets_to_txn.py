"""AddOffsetsToTxn (API key 25): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
AddOffsetsToTxnRequest key=25 v0-4 flex=v3+
  transactional_id string
  producer_id int64
  producer_epoch int16
  group_id string
"""

RESPONSE = """
AddOffsetsToTxnResponse key=25 v0-4 flex=v3+
  throttle_time_ms int32
  error_code int16
"""
