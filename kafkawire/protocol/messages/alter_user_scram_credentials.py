"""AlterUserScramCredentials (API key 51, KIP-554): schema of the request and the response.

From Apache Kafka's ``AlterUserScramCredentialsRequest.json`` / ``AlterUserScramCredentialsResponse.json``.
Upserts (salted password computed by the client) and deletes SCRAM credentials.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``; see
:mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
AlterUserScramCredentialsRequest key=51 v0 flex=v0+
  deletions []ScramCredentialDeletion
    name string
    mechanism int8
  upsertions []ScramCredentialUpsertion
    name string
    mechanism int8
    iterations int32
    salt bytes
    salted_password bytes
"""

RESPONSE = """
AlterUserScramCredentialsResponse key=51 v0 flex=v0+
  throttle_time_ms int32
  results []AlterUserScramCredentialsResult
    user string
    error_code int16
    error_message string null=v0+
"""
