"""ListTransactions (API key 66, KIP-664): schema of the request and the response.

From Apache Kafka's ``ListTransactionsRequest.json`` / ``ListTransactionsResponse.json``. Transactions a
coordinator knows, filtered by state and producer id; v1 adds the duration filter (KIP-994), v2 a
transactional id pattern (KIP-1152).

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``; see
:mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
ListTransactionsRequest key=66 v0-2 flex=v0+
  state_filters []string
  producer_id_filters []int64
  duration_filter int64 v1+ =-1
  transactional_id_pattern string v2+ null=v2+ =null
"""

RESPONSE = """
ListTransactionsResponse key=66 v0-2 flex=v0+
  throttle_time_ms int32
  error_code int16
  unknown_state_filters []string
  transaction_states []TransactionState
    transactional_id string
    producer_id int64
    transaction_state string
"""
