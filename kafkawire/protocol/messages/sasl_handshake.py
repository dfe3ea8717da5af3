"""SaslHandshake (API key 17): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
SaslHandshakeRequest key=17 v0-1 flex=none
  mechanism string
"""

RESPONSE = """
SaslHandshakeResponse key=17 v0-1 flex=none
  error_code int16
  mechanisms []string
"""
