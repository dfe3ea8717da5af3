"""Cluster-wide calls: the cluster and its brokers, topics and their configs, partitions and their leaders, replicas'
log directories, finalized features. Part of :class:`kafkawire.admin.Admin`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..client.net.deadline import Deadline
from ..client.types import NewTopic
from ..protocol.errors import BrokerError
from . import features as _features
from . import log_dirs as _log_dirs
from . import partitions as _partitions
from . import topics as _topics
from .base import AdminBase
from .features import FeatureMetadata
from .log_dirs import LogDirDescription
from .partitions import Reassignment, TopicPartitionsDescription
from .types import (
    AlterConfigOp,
    ClusterDescription,
    ConfigEntry,
    ConfigResource,
    TopicDescription,
)

__all__ = ["ClusterApi"]


class ClusterApi(AdminBase):
    """Cluster-wide calls: the cluster and its brokers, topics and their configs, partitions and their leaders,
    replicas' log directories, finalized features."""

    # ------------------------------------------------------------------------------------- cluster
    def describe_cluster(
        self, *, timeout_ms: float | None = None, deadline: Deadline | None = None
    ) -> ClusterDescription:
        """The cluster id, the controller's node id and every broker (host, port, rack, fenced)."""
        return self._run(timeout_ms, deadline, _topics.describe_cluster)

    # -------------------------------------------------------------------------------------- topics
    def create_topics(self, topics: Iterable[str | NewTopic] | Mapping[str, int], **kwargs: Any) -> None:
        """:meth:`kafkawire.client.Client.create_topics`."""
        self.client.create_topics(topics, **kwargs)

    def delete_topics(self, names: Iterable[str], **kwargs: Any) -> None:
        """:meth:`kafkawire.client.Client.delete_topics`."""
        self.client.delete_topics(names, **kwargs)

    def describe_topics(
        self, names: Iterable[str] | None = None, *, timeout_ms: float | None = None, deadline: Deadline | None = None
    ) -> dict[str, TopicDescription]:
        """``{name: TopicDescription}``: topic id, partitions with leader, leader epoch, replicas, ISR and
        offline replicas. ``names`` None: every topic but the internal ones. A topic that does not exist
        raises ``UnknownTopicOrPartitionError``."""
        return self._run(timeout_ms, deadline, _topics.describe_topics, names)

    def create_partitions(
        self,
        counts: Mapping[str, int],
        *,
        validate_only: bool = False,
        wait: bool = True,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        """Grow topics to ``{topic: total partition count}`` (a count not above the current one raises
        ``InvalidPartitionsError``). With ``wait``, returns once the new partitions have leaders."""
        self._run(timeout_ms, deadline, _topics.create_partitions, counts, validate_only=validate_only, wait=wait)

    def delete_records(
        self,
        before: Mapping[tuple[str, int], int],
        *,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[tuple[str, int], int]:
        """Delete the records before ``{(topic, partition): offset}`` (-1: the high watermark, i.e. every
        record); returns each partition's new low watermark (its first kept offset)."""
        return self._run(timeout_ms, deadline, _topics.delete_records, before)

    # ------------------------------------------------------------------------------------- configs
    def describe_configs(
        self,
        resources: Iterable[ConfigResource | str],
        *,
        names: Iterable[str] | None = None,
        synonyms: bool = False,
        documentation: bool = False,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[ConfigResource, dict[str, ConfigEntry]]:
        """Configs of topics (plain names) or :class:`ConfigResource` s (``ConfigResource.broker(1)``, ...):
        every config, or only ``names``; each with its value, source and flags (and ``synonyms``, the
        values it would take from lower-precedence sources, when asked)."""
        return self._run(
            timeout_ms,
            deadline,
            _topics.describe_configs,
            resources,
            names=names,
            synonyms=synonyms,
            documentation=documentation,
        )

    def alter_configs(
        self,
        changes: Mapping[ConfigResource | str, Iterable[AlterConfigOp]],
        *,
        validate_only: bool = False,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        """Change configs incrementally (KIP-339): ``{resource: [AlterConfigOp(name, op, value), ...]}``
        with ``op`` ``"set"``, ``"delete"`` (back to the default), ``"append"`` or ``"subtract"`` (list
        configs). Configs not named keep their values."""
        self._run(timeout_ms, deadline, _topics.alter_configs, changes, validate_only=validate_only)

    # ---------------------------------------------------------------- partitions and their leaders
    def describe_topic_partitions(
        self,
        topics: Iterable[str],
        *,
        page_size: int = 2000,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[str, TopicPartitionsDescription]:
        """``{topic: TopicPartitionsDescription}`` from DescribeTopicPartitions (KIP-966): leader and epoch,
        replicas, ISR, eligible leader replicas (ELR) and last known ELR per partition, read in pages of
        ``page_size`` partitions. A topic that does not exist raises ``UnknownTopicOrPartitionError``."""
        return self._run(timeout_ms, deadline, _partitions.describe_topic_partitions, topics, page_size=page_size)

    def elect_leaders(
        self,
        partitions: Iterable[tuple[str, int]] | None = None,
        *,
        election: str = "preferred",
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[tuple[str, int], BrokerError | None]:
        """Elect leaders (KIP-460): ``"preferred"`` (the first replica, when in sync) or ``"unclean"`` (any
        live replica, possibly losing records) for ``partitions`` (None: every partition that needs one).
        Returns each partition's outcome: None (elected) or its error (``ElectionNotNeededError``: the
        leader is already the one the election would pick)."""
        return self._run(timeout_ms, deadline, _partitions.elect_leaders, partitions, election)

    def list_partition_reassignments(
        self,
        partitions: Iterable[tuple[str, int]] | None = None,
        *,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[tuple[str, int], Reassignment]:
        """The ongoing replica reassignments (KIP-455), of ``partitions`` or all."""
        return self._run(timeout_ms, deadline, _partitions.list_partition_reassignments, partitions)

    def alter_partition_reassignments(
        self,
        targets: Mapping[tuple[str, int], Sequence[int] | None],
        *,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[tuple[str, int], BrokerError | None]:
        """Start reassigning ``{(topic, partition): [broker ids]}`` (the first is the preferred leader), or
        cancel the ongoing reassignment of a partition mapped to None. Returns each partition's outcome:
        None (accepted) or its error (``NoReassignmentInProgressError``, ``InvalidReplicaAssignmentError``)."""
        return self._run(timeout_ms, deadline, _partitions.alter_partition_reassignments, targets)

    # ------------------------------------------------------------------------------------ log dirs
    def describe_log_dirs(
        self,
        brokers: Iterable[int] | None = None,
        *,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[int, dict[str, LogDirDescription]]:
        """``{broker id: {path: LogDirDescription}}`` for ``brokers`` (None: every broker): each log
        directory's health, capacity and replicas with their size and lag."""
        return self._run(timeout_ms, deadline, _log_dirs.describe_log_dirs, brokers)

    # ------------------------------------------------------------------------------------ features
    def describe_features(
        self, *, timeout_ms: float | None = None, deadline: Deadline | None = None
    ) -> FeatureMetadata:
        """The finalized feature levels (``metadata.version``, ``transaction.version``, ...), their epoch,
        and the level ranges the answering broker supports (KIP-584)."""
        return self._run(timeout_ms, deadline, _features.describe_features)

    def update_features(
        self,
        levels: Mapping[str, int],
        *,
        upgrade_type: str = "upgrade",
        validate_only: bool = False,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        """Finalize ``{feature: level}`` (0 disables a feature). ``upgrade_type``: ``"upgrade"``,
        ``"safe_downgrade"`` or ``"unsafe_downgrade"`` (KIP-778); ``validate_only``: let the controller
        check, change nothing."""
        self._run(
            timeout_ms,
            deadline,
            _features.update_features,
            levels,
            upgrade_type=upgrade_type,
            validate_only=validate_only,
        )
