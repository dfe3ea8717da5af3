"""The calls :class:`~kafkawire.client.Client` makes on the cluster's metadata and topics (metadata, partitions,
topic creation and deletion), with the deadline every call of the client starts from. :class:`Client` inherits
them; each is one blocking call bounded by one :class:`~kafkawire.client.net.deadline.Deadline`, through
:meth:`Cluster.call`, the client's one retry loop."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ..net.deadline import Deadline
from ..types import ClusterMetadata, NewTopic
from . import topics as _topics
from .cluster import Cluster
from .retry import RetryPolicy

__all__ = ["ClusterCalls"]


class ClusterCalls:
    """Metadata and topic calls of :class:`~kafkawire.client.Client` (its base class)."""

    #: Connections, metadata, coordinators and the retry loop (set by :class:`~kafkawire.client.Client`).
    cluster: Cluster
    retry_policy: RetryPolicy

    # ------------------------------------------------------------------------------------ deadlines
    def deadline(self, timeout_ms: float | None = None, deadline: Deadline | None = None) -> Deadline:
        """The deadline of a call: ``deadline`` when given, else ``timeout_ms`` from now (default
        ``retry_timeout_ms``)."""
        if deadline is not None:
            return deadline
        return Deadline.from_ms(self.retry_policy.timeout_ms if timeout_ms is None else timeout_ms)

    # ------------------------------------------------------------------------------------- metadata
    def metadata(
        self,
        topics: Sequence[str] | None = None,
        *,
        allow_auto_create: bool = False,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> ClusterMetadata:
        """Metadata of ``topics`` (all topics when None); refreshes the client's cache."""
        d = self.deadline(timeout_ms, deadline)
        with self.cluster.held(d, "metadata"):
            return self.cluster.call(
                d,
                lambda dd: self.cluster.fetch_metadata(topics, dd, allow_auto_create),
                what="metadata",
                before_retry=lambda dd, e: None,  # the attempt itself is a refresh
            )

    def partitions_for(
        self, topic: str, *, timeout_ms: float | None = None, deadline: Deadline | None = None
    ) -> list[int]:
        """The partition ids of ``topic``."""
        d = self.deadline(timeout_ms, deadline)
        with self.cluster.held(d, f"metadata of {topic!r}"):
            tm = self.cluster.call(
                d, lambda dd: self.cluster.topic(topic, dd, refresh=True), what=f"metadata of {topic!r}", topics=[]
            )
            return list(tm.partitions)

    # ---------------------------------------------------------------------------------------- admin
    def create_topics(
        self,
        topics: Iterable[str | NewTopic] | Mapping[str, int],
        *,
        num_partitions: int = 1,
        replication_factor: int = 1,
        configs: Mapping[str, str] | None = None,
        timeout_ms: int = 30_000,
        exist_ok: bool = False,
        wait: bool = True,
        deadline: Deadline | None = None,
    ) -> None:
        """Create topics: names (with ``num_partitions`` / ``replication_factor`` / ``configs``),
        :class:`NewTopic` objects, or a ``{name: num_partitions}`` mapping.

        Raises ``TopicAlreadyExistsError`` unless ``exist_ok``. With ``wait`` (default), returns once
        every partition of the new topics has a leader in the metadata. ``timeout_ms`` bounds the whole
        call, the wait included.
        """
        d = self.deadline(timeout_ms, deadline)
        with self.cluster.held(d, "create_topics"):
            _topics.create_topics(
                self.cluster,
                d,
                topics,
                num_partitions=num_partitions,
                replication_factor=replication_factor,
                configs=configs,
                exist_ok=exist_ok,
                wait=wait,
            )

    def delete_topics(
        self,
        names: Iterable[str],
        *,
        timeout_ms: int = 30_000,
        missing_ok: bool = False,
        deadline: Deadline | None = None,
    ) -> None:
        """Delete topics by name (``UnknownTopicOrPartitionError`` for a missing one unless ``missing_ok``)."""
        d = self.deadline(timeout_ms, deadline)
        with self.cluster.held(d, "delete_topics"):
            _topics.delete_topics(self.cluster, d, list(names), missing_ok=missing_ok)
