"""DeleteRecords (API key 21): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
DeleteRecordsRequest key=21 v0-2 flex=v2+
  topics []DeleteRecordsTopic
    name string
    partitions []DeleteRecordsPartition
      partition_index int32
      offset int64
  timeout_ms int32
"""

RESPONSE = """
DeleteRecordsResponse key=21 v0-2 flex=v2+
  throttle_time_ms int32
  topics []DeleteRecordsTopicResult
    name string
    partitions []DeleteRecordsPartitionResult
      partition_index int32
      low_watermark int64
      error_code int16
"""
