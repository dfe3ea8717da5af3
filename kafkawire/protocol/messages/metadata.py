"""Metadata (API key 3): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation.
"""

REQUEST = """
MetadataRequest key=3 v0-13 flex=v9+
  topics []MetadataRequestTopic null=v1+
    topic_id uuid v10+ ignorable
    name string null=v10+
  allow_auto_topic_creation bool v4+ =true
  include_cluster_authorized_operations bool v8-10
  include_topic_authorized_operations bool v8+
"""

RESPONSE = """
MetadataResponse key=3 v0-13 flex=v9+
  throttle_time_ms int32 v3+ ignorable
  brokers []MetadataResponseBroker
    node_id int32
    host string
    port int32
    rack string v1+ null=v1+ =null ignorable
  cluster_id string v2+ null=v2+ =null ignorable
  controller_id int32 v1+ =-1 ignorable
  topics []MetadataResponseTopic
    error_code int16
    name string null=v12+
    topic_id uuid v10+ ignorable
    is_internal bool v1+ =false ignorable
    partitions []MetadataResponsePartition
      error_code int16
      partition_index int32
      leader_id int32
      leader_epoch int32 v7+ =-1 ignorable
      replica_nodes []int32
      isr_nodes []int32
      offline_replicas []int32 v5+ ignorable
    topic_authorized_operations int32 v8+ =-2147483648
  cluster_authorized_operations int32 v8-10 =-2147483648
  error_code int16 v13+ ignorable
"""
