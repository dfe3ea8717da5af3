"""DescribeLogDirs (API key 35, KIP-113): schema of the request and the response.

From Apache Kafka's ``DescribeLogDirsRequest.json`` / ``DescribeLogDirsResponse.json``. Log directories of a
broker and the size of each replica in them; a null ``topics`` describes all. v3 adds the top-level error
code, v4 total/usable bytes (KIP-827), v5 ``is_cordoned``; v0 (removed in Kafka 4.0, KIP-896) is kept for
older brokers.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``; see
:mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
DescribeLogDirsRequest key=35 v0-5 flex=v2+
  topics []DescribableLogDirTopic null=v0+
    topic string
    partitions []int32
"""

RESPONSE = """
DescribeLogDirsResponse key=35 v0-5 flex=v2+
  throttle_time_ms int32
  error_code int16 v3+ ignorable
  results []DescribeLogDirsResult
    error_code int16
    log_dir string
    topics []DescribeLogDirsTopic
      name string
      partitions []DescribeLogDirsPartition
        partition_index int32
        partition_size int64
        offset_lag int64
        is_future_key bool
    total_bytes int64 v4+ =-1 ignorable
    usable_bytes int64 v4+ =-1 ignorable
    is_cordoned bool v5+ =false ignorable
"""
