"""The client's view of a cluster: :mod:`.cluster` (connections per broker, metadata, coordinator lookup and
:meth:`~.cluster.Cluster.call`, the one request path with its retries, backoff and deadline), :mod:`.retry`
(which errors to retry and how long to wait), :mod:`.quirks` (every workaround for a broker that departs
from Kafka) and :mod:`.topics` (topic creation and deletion, which :class:`~kafkawire.client.Client` offers
itself).

Built on :mod:`kafkawire.client.net`; the consumer, group, producer and admin code is built on it.
"""
