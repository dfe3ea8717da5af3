"""InitProducerId (API key 22): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
InitProducerIdRequest key=22 v0-5 flex=v2+
  transactional_id string null=v0+
  transaction_timeout_ms int32
  producer_id int64 v3+ =-1
  producer_epoch int16 v3+ =-1
"""

RESPONSE = """
InitProducerIdResponse key=22 v0-5 flex=v2+
  throttle_time_ms int32 ignorable
  error_code int16
  producer_id int64 =-1
  producer_epoch int16
"""
