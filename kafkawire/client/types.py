"""Plain result types returned by :class:`kafkawire.Client`."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..columns import RecordColumns

__all__ = [
    "BrokerMetadata",
    "PartitionMetadata",
    "TopicMetadata",
    "ClusterMetadata",
    "ProduceResult",
    "FetchResult",
    "ListedOffset",
    "CommittedOffset",
    "NewTopic",
    "UnacknowledgedRecords",
]


@dataclass(frozen=True)
class BrokerMetadata:
    """One broker of the cluster as Metadata describes it."""

    node_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass(frozen=True)
class PartitionMetadata:
    """One partition: its leader (-1 when it has none right now) and replicas; ``error`` a broker
    error instance or None."""

    partition: int
    leader: int
    leader_epoch: int = -1
    replicas: tuple[int, ...] = ()
    isr: tuple[int, ...] = ()
    offline_replicas: tuple[int, ...] = ()
    error: Exception | None = None


@dataclass(frozen=True)
class TopicMetadata:
    """One topic: ``topic_id`` None when the broker does not report one (or reports the zero UUID)."""

    name: str
    partitions: dict[int, PartitionMetadata]
    topic_id: uuid.UUID | None = None
    is_internal: bool = False
    error: Exception | None = None

    @property
    def num_partitions(self) -> int:
        return len(self.partitions)


@dataclass(frozen=True)
class ClusterMetadata:
    """The answer to a Metadata request."""

    brokers: dict[int, BrokerMetadata]
    topics: dict[str, TopicMetadata]
    cluster_id: str | None = None
    controller_id: int = -1


@dataclass
class ProduceResult:
    """Where each produced record went: ``partition`` (int32) and ``offset`` (int64, -1 when the broker
    did not say: acks=0, or a duplicate the broker recognised without reporting its offset), one element
    per record in input order; ``log_append_time`` per record (-1 unless the topic uses LogAppendTime).
    """

    topic: str
    partition: np.ndarray
    offset: np.ndarray
    log_append_time: np.ndarray

    def __len__(self) -> int:
        return len(self.offset)

    @property
    def acknowledged(self) -> np.ndarray:
        """Boolean mask of the records the broker acknowledged with an offset."""
        return self.offset >= 0


@dataclass
class UnacknowledgedRecords:
    """Records of one partition that a produce call could not get acknowledged, handed back so the
    application can send them again (or log them): ``rows`` are their positions in the call's input,
    ``values`` / ``keys`` (None when the call had no keys) / ``headers`` (None when it had none) /
    ``timestamps`` the records themselves, ``error`` the last error seen for the partition.

    Whether the broker wrote them is unknown when the error is a timeout or a broken connection (the
    request may have been applied): resending may duplicate, never lose.
    """

    topic: str
    partition: int
    rows: np.ndarray
    values: list[bytes | None]
    keys: list[bytes | None] | None
    headers: list[Any] | None
    timestamps: list[int]
    error: BaseException | None = None

    def __len__(self) -> int:
        return len(self.rows)


@dataclass
class FetchResult:
    """One partition's share of a Fetch: decoded ``records`` (:class:`kafkawire.RecordColumns`) and the
    partition's offsets as the leader reported them. ``next_offset`` is where to fetch next."""

    topic: str
    partition: int
    fetch_offset: int
    records: RecordColumns
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    error: Exception | None = None

    def __post_init__(self) -> None:
        # The records know where they came from, so that their per-record views carry topic and partition.
        if self.records is not None:
            self.records._locate(self.topic, self.partition)

    @property
    def next_offset(self) -> int:
        nxt = int(self.records.next_offset) if self.records is not None else -1
        return nxt if nxt >= 0 else self.fetch_offset


@dataclass(frozen=True)
class ListedOffset:
    """ListOffsets answer for one partition: ``offset`` -1 when no record matches a timestamp query."""

    offset: int
    timestamp: int = -1
    leader_epoch: int = -1


@dataclass(frozen=True)
class CommittedOffset:
    """A consumer group's committed position: ``offset`` -1 when nothing is committed."""

    offset: int
    metadata: str | None = None
    leader_epoch: int = -1


@dataclass(frozen=True)
class NewTopic:
    """A topic to create (``replication_factor`` -1 / ``num_partitions`` -1: the broker's defaults)."""

    name: str
    num_partitions: int = 1
    replication_factor: int = 1
    configs: dict[str, str] = field(default_factory=dict)
