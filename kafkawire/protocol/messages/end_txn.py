"""EndTxn (API key 26): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.

Version 5 (KIP-890 part 2, transaction protocol v2) bumps the producer epoch on every transaction and
returns the new producer id and epoch.
"""

REQUEST = """
EndTxnRequest key=26 v0-5 flex=v3+
  transactional_id string
  producer_id int64
  producer_epoch int16
  committed bool
"""

RESPONSE = """
EndTxnResponse key=26 v0-5 flex=v3+
  throttle_time_ms int32
  error_code int16
  producer_id int64 v5+ =-1 ignorable
  producer_epoch int16 v5+ =-1 ignorable
"""
