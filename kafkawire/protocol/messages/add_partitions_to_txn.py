"""AddPartitionsToTxn (API key 24): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.

Versions 0-3 are the ones a client sends (one transaction: ``v3_and_below_*`` fields); versions 4+ batch
several transactions and are sent by brokers to the coordinator (KIP-890's verification), so a client
never negotiates above 3 (``kafkawire.client.producer.transaction`` caps it).
"""

REQUEST = """
AddPartitionsToTxnRequest key=24 v0-5 flex=v3+
  transactions []AddPartitionsToTxnTransaction v4+
    transactional_id string
    producer_id int64
    producer_epoch int16
    verify_only bool =false
    topics []AddPartitionsToTxnTopic
      name string
      partitions []int32
  v3_and_below_transactional_id string v0-3
  v3_and_below_producer_id int64 v0-3
  v3_and_below_producer_epoch int16 v0-3
  v3_and_below_topics []AddPartitionsToTxnTopic v0-3
    name string
    partitions []int32
"""

RESPONSE = """
AddPartitionsToTxnResponse key=24 v0-5 flex=v3+
  throttle_time_ms int32
  error_code int16 v4+ ignorable
  results_by_transaction []AddPartitionsToTxnResult v4+
    transactional_id string
    topic_results []AddPartitionsToTxnTopicResult
      name string
      results_by_partition []AddPartitionsToTxnPartitionResult
        partition_index int32
        partition_error_code int16
  results_by_topic_v3_and_below []AddPartitionsToTxnTopicResult v0-3
    name string
    results_by_partition []AddPartitionsToTxnPartitionResult
      partition_index int32
      partition_error_code int16
"""
