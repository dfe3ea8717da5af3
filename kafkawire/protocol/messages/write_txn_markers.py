"""WriteTxnMarkers (API key 27, KIP-98): schema of the request and the response.

From Apache Kafka's ``WriteTxnMarkersRequest.json`` / ``WriteTxnMarkersResponse.json``. Commit or abort
markers written to partitions. Coordinators send it to partition leaders; Kafka's ``kafka-transactions.sh
abort`` sends it too, to end a hanging transaction (KIP-664). v2 adds the transaction version (KIP-1228); v0
(removed in Kafka 4.0, KIP-896) is kept for older brokers.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``; see
:mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
WriteTxnMarkersRequest key=27 v0-2 flex=v1+
  markers []WritableTxnMarker
    producer_id int64
    producer_epoch int16
    transaction_result bool
    topics []WritableTxnMarkerTopic
      name string
      partition_indexes []int32
    coordinator_epoch int32
    transaction_version int8 v2+ =0 ignorable
"""

RESPONSE = """
WriteTxnMarkersResponse key=27 v0-2 flex=v1+
  markers []WritableTxnMarkerResult
    producer_id int64
    topics []WritableTxnMarkerTopicResult
      name string
      partitions []WritableTxnMarkerPartitionResult
        partition_index int32
        error_code int16
"""
