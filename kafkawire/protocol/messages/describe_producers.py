"""DescribeProducers (API key 61, KIP-664): schema of the request and the response.

From Apache Kafka's ``DescribeProducersRequest.json`` / ``DescribeProducersResponse.json``. Active
idempotent and transactional producers of partitions, as the partition leader sees them: what ``kafka-
transactions.sh describe-producers`` and ``find-hanging`` read.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``; see
:mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
DescribeProducersRequest key=61 v0 flex=v0+
  topics []TopicRequest
    name string
    partition_indexes []int32
"""

RESPONSE = """
DescribeProducersResponse key=61 v0 flex=v0+
  throttle_time_ms int32
  topics []TopicResponse
    name string
    partitions []PartitionResponse
      partition_index int32
      error_code int16
      error_message string null=v0+ =null
      active_producers []ProducerState
        producer_id int64
        producer_epoch int32
        last_sequence int32 =-1
        last_timestamp int64 =-1
        coordinator_epoch int32
        current_txn_start_offset int64 =-1
"""
