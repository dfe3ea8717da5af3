"""DescribeTransactions (API key 65, KIP-664): schema of the request and the response.

From Apache Kafka's ``DescribeTransactionsRequest.json`` / ``DescribeTransactionsResponse.json``. State,
timeout, start time, producer and partitions of transactions, from their coordinators.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``; see
:mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
DescribeTransactionsRequest key=65 v0 flex=v0+
  transactional_ids []string
"""

RESPONSE = """
DescribeTransactionsResponse key=65 v0 flex=v0+
  throttle_time_ms int32
  transaction_states []TransactionState
    error_code int16
    transactional_id string
    transaction_state string
    transaction_timeout_ms int32
    transaction_start_time_ms int64
    producer_id int64
    producer_epoch int16
    topics []TopicData
      topic string
      partitions []int32
"""
