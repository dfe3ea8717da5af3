"""DescribeUserScramCredentials (API key 50, KIP-554): schema of the request and the response.

From Apache Kafka's ``DescribeUserScramCredentialsRequest.json`` /
``DescribeUserScramCredentialsResponse.json``. Which SCRAM mechanisms (1 SHA-256, 2 SHA-512) and iteration
counts a user has; a null ``users`` describes every user.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``; see
:mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
DescribeUserScramCredentialsRequest key=50 v0 flex=v0+
  users []UserName null=v0+
    name string
"""

RESPONSE = """
DescribeUserScramCredentialsResponse key=50 v0 flex=v0+
  throttle_time_ms int32
  error_code int16
  error_message string null=v0+
  results []DescribeUserScramCredentialsResult
    user string
    error_code int16
    error_message string null=v0+
    credential_infos []CredentialInfo
      mechanism int8
      iterations int32
"""
