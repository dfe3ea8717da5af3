"""Produce (API key 0): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
ProduceRequest key=0 v0-13 flex=v9+
  transactional_id string v3+ null=v3+ =null
  acks int16
  timeout_ms int32
  topic_data []TopicProduceData
    name string v0-12 ignorable
    topic_id uuid v13+ ignorable
    partition_data []PartitionProduceData
      index int32
      records records null=v0+
"""

RESPONSE = """
ProduceResponse key=0 v0-13 flex=v9+
  responses []TopicProduceResponse
    name string v0-12 ignorable
    topic_id uuid v13+ ignorable
    partition_responses []PartitionProduceResponse
      index int32
      error_code int16
      base_offset int64
      log_append_time_ms int64 v2+ =-1 ignorable
      log_start_offset int64 v5+ =-1 ignorable
      record_errors []BatchIndexAndErrorMessage v8+ ignorable
        batch_index int32
        batch_index_error_message string null=v8+ =null
      error_message string v8+ null=v8+ =null ignorable
      current_leader LeaderIdAndEpoch v10+ tag=0
        leader_id int32 =-1
        leader_epoch int32 =-1
  throttle_time_ms int32 v1+ =0 ignorable
  node_endpoints []NodeEndpoint v10+ tag=0
    node_id int32
    host string
    port int32
    rack string null=v10+ =null
"""
