"""ElectLeaders (API key 43, KIP-460): schema of the request and the response.

From Apache Kafka's ``ElectLeadersRequest.json`` / ``ElectLeadersResponse.json``. Triggers preferred
(``election_type`` 0) or unclean (1) leader election; a null ``topic_partitions`` means every partition. v1
adds the election type and a top-level error code.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``; see
:mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
ElectLeadersRequest key=43 v0-2 flex=v2+
  election_type int8 v1+
  topic_partitions []TopicPartitions null=v0+
    topic string
    partitions []int32
  timeout_ms int32 =60000
"""

RESPONSE = """
ElectLeadersResponse key=43 v0-2 flex=v2+
  throttle_time_ms int32
  error_code int16 v1+
  replica_election_results []ReplicaElectionResult
    topic string
    partition_result []PartitionResult
      partition_id int32
      error_code int16
      error_message string null=v0+
"""
