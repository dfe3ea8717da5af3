"""DescribeCluster (API key 60, KIP-700): schema of the request and the response.

Field lines read ``name type [versions] [null=versions] [tag=N] [=default] [ignorable]``;
see :mod:`kafkawire.protocol.schema` for the notation. v1 adds the endpoint type (KIP-919: 1 brokers,
2 controllers), v2 fenced brokers (KIP-1073).
"""

REQUEST = """
DescribeClusterRequest key=60 v0-2 flex=v0+
  include_cluster_authorized_operations bool
  endpoint_type int8 v1+ =1
  include_fenced_brokers bool v2+ =false
"""

RESPONSE = """
DescribeClusterResponse key=60 v0-2 flex=v0+
  throttle_time_ms int32
  error_code int16
  error_message string null=v0+ =null
  endpoint_type int8 v1+ =1
  cluster_id string
  controller_id int32 =-1
  brokers []DescribeClusterBroker
    broker_id int32
    host string
    port int32
    rack string null=v0+ =null
    is_fenced bool v2+ =false
  cluster_authorized_operations int32 =-2147483648
"""
