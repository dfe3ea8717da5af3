"""SaslAuthenticate (API key 36): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
SaslAuthenticateRequest key=36 v0-2 flex=v2+
  auth_bytes bytes
"""

RESPONSE = """
SaslAuthenticateResponse key=36 v0-2 flex=v2+
  error_code int16
  error_message string null=v0+
  auth_bytes bytes
  session_lifetime_ms int64 v1+ =0 ignorable
"""
