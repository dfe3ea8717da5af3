"""Partition placement and leadership: describe partitions with their eligible leader replicas
(DescribeTopicPartitions, KIP-966), preferred and unclean leader election (ElectLeaders, KIP-460),
and replica reassignments (List/AlterPartitionReassignments, KIP-455), as Java's ``Admin`` and
``kafka-topics.sh``, ``kafka-leader-election.sh`` and ``kafka-reassign-partitions.sh`` do."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..client.cluster.cluster import Cluster
from ..client.cluster.retry import Final
from ..client.net.deadline import Deadline
from ..protocol import (
    AlterPartitionReassignmentsRequest,
    DescribeTopicPartitionsRequest,
    ElectLeadersRequest,
    ListPartitionReassignmentsRequest,
)
from ..protocol.errors import (
    BrokerError,
    ElectionNotNeededError,
    UnknownTopicOrPartitionError,
    broker_error,
    raise_broker_error,
)

__all__ = [
    "PartitionInfo",
    "TopicPartitionsDescription",
    "Reassignment",
    "describe_topic_partitions",
    "elect_leaders",
    "list_partition_reassignments",
    "alter_partition_reassignments",
]

#: ElectLeaders' election types.
ELECTION_TYPES = {"preferred": 0, "unclean": 1}


@dataclass(frozen=True)
class PartitionInfo:
    """A partition: leader (-1 none) and its epoch, replicas, in-sync replicas, and the eligible leader
    replicas (ELR) and last known ELR of KIP-966 (None where the broker reports none)."""

    partition: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    eligible_leader_replicas: tuple[int, ...] | None
    last_known_elr: tuple[int, ...] | None
    offline_replicas: tuple[int, ...]


@dataclass(frozen=True)
class TopicPartitionsDescription:
    """A topic as DescribeTopicPartitions reports it, partitions sorted by index."""

    name: str
    topic_id: uuid.UUID
    is_internal: bool
    partitions: list[PartitionInfo]


@dataclass(frozen=True)
class Reassignment:
    """An ongoing reassignment: the full target replica list, and those being added and removed."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]


def _tuple(v: Sequence[int] | None) -> tuple[int, ...] | None:
    return None if v is None else tuple(v)


def describe_topic_partitions(
    cluster: Cluster, deadline: Deadline, topics: Iterable[str], *, page_size: int = 2000
) -> dict[str, TopicPartitionsDescription]:
    """See :meth:`kafkawire.admin.Admin.describe_topic_partitions`: pages of ``page_size`` partitions
    until the broker's cursor runs out."""
    names = list(topics)
    if not all(isinstance(n, str) for n in names):
        raise TypeError("topic names are str")
    if not isinstance(page_size, int) or page_size < 1:
        raise ValueError("page_size must be a positive int")

    def attempt(d: Deadline) -> dict[str, TopicPartitionsDescription]:
        conn = cluster.any_connection(d)
        version = conn.version_for(DescribeTopicPartitionsRequest)
        found: dict[str, tuple[uuid.UUID, bool, list[PartitionInfo]]] = {}
        cursor = None
        while True:
            req = DescribeTopicPartitionsRequest(
                topics=[DescribeTopicPartitionsRequest.TopicRequest(name=n) for n in names],
                response_partition_limit=page_size,
                cursor=cursor,
            )
            resp = conn.request(req, version, deadline=d)
            for t in resp.topics:
                err = broker_error(t.error_code, None, f"describe partitions of topic {t.name!r}")
                if err is not None:
                    # a topic that does not exist is the answer (the caller named it), not worth a retry
                    raise Final(err) if isinstance(err, UnknownTopicOrPartitionError) or not err.retriable else err
                entry = found.setdefault(t.name, (t.topic_id, t.is_internal, []))
                entry[2].extend(
                    PartitionInfo(
                        p.partition_index,
                        p.leader_id,
                        p.leader_epoch,
                        tuple(p.replica_nodes),
                        tuple(p.isr_nodes),
                        _tuple(p.eligible_leader_replicas),
                        _tuple(p.last_known_elr),
                        tuple(p.offline_replicas),
                    )
                    for p in t.partitions
                )
            if resp.next_cursor is None:
                break
            cursor = DescribeTopicPartitionsRequest.Cursor(
                topic_name=resp.next_cursor.topic_name, partition_index=resp.next_cursor.partition_index
            )
        return {
            n: TopicPartitionsDescription(n, found[n][0], found[n][1], sorted(found[n][2], key=lambda p: p.partition))
            for n in names
            if n in found
        }

    try:
        return cluster.call(deadline, attempt, what="describe topic partitions", topics=names)
    except Final as e:
        raise e.error from None


def elect_leaders(
    cluster: Cluster,
    deadline: Deadline,
    partitions: Iterable[tuple[str, int]] | None,
    election: str = "preferred",
) -> dict[tuple[str, int], BrokerError | None]:
    """See :meth:`kafkawire.admin.Admin.elect_leaders`."""
    if election not in ELECTION_TYPES:
        raise ValueError(f"election must be 'preferred' or 'unclean', not {election!r}")
    wanted = None if partitions is None else list(partitions)
    if wanted is not None and not all(
        isinstance(tp, tuple) and len(tp) == 2 and isinstance(tp[0], str) and isinstance(tp[1], int) for tp in wanted
    ):
        raise TypeError("elect_leaders takes (topic, partition) pairs")

    def attempt(d: Deadline) -> dict[tuple[str, int], BrokerError | None]:
        conn = cluster.controller_connection(d)
        version = conn.version_for(ElectLeadersRequest, 1 if election == "unclean" else 0)
        by_topic: dict[str, list[int]] = {}
        for t, p in wanted or ():
            by_topic.setdefault(t, []).append(p)
        req = ElectLeadersRequest(
            election_type=ELECTION_TYPES[election],
            topic_partitions=None
            if wanted is None
            else [ElectLeadersRequest.TopicPartitions(topic=t, partitions=ps) for t, ps in by_topic.items()],
            timeout_ms=d.request_timeout_ms(cluster.request_timeout_ms),
        )
        resp = conn.request(req, version, deadline=d)
        if version >= 1:
            raise_broker_error(resp.error_code, None, f"{election} leader election")
        out: dict[tuple[str, int], BrokerError | None] = {}
        for r in resp.replica_election_results:
            for p in r.partition_result:
                err = broker_error(p.error_code, p.error_message, f"elect a leader of {r.topic}/{p.partition_id}")
                if err is not None and err.retriable and not isinstance(err, ElectionNotNeededError):
                    raise err
                out[(r.topic, p.partition_id)] = err
        return out

    return cluster.call(deadline, attempt, what=f"{election} leader election", topics=None)


def _controller_call(cluster: Cluster, d: Deadline, request: Any, fields: dict[str, Any], what: str) -> Any:
    """A ``request`` class with ``fields`` (and the time left as its timeout) answered by the controller; the
    answer's top-level error raised."""
    conn = cluster.controller_connection(d)
    req = request(timeout_ms=d.request_timeout_ms(cluster.request_timeout_ms), **fields)
    resp = conn.request(req, conn.version_for(request), deadline=d)
    raise_broker_error(resp.error_code, resp.error_message, what)
    return resp


def list_partition_reassignments(
    cluster: Cluster, deadline: Deadline, partitions: Iterable[tuple[str, int]] | None = None
) -> dict[tuple[str, int], Reassignment]:
    """See :meth:`kafkawire.admin.Admin.list_partition_reassignments`."""
    wanted = None if partitions is None else list(partitions)

    def attempt(d: Deadline) -> dict[tuple[str, int], Reassignment]:
        by_topic: dict[str, list[int]] = {}
        for t, p in wanted or ():
            by_topic.setdefault(t, []).append(p)
        topics = [
            ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics(name=t, partition_indexes=ps)
            for t, ps in by_topic.items()
        ]
        fields = {"topics": None if wanted is None else topics}
        resp = _controller_call(cluster, d, ListPartitionReassignmentsRequest, fields, "list partition reassignments")
        return {
            (t.name, p.partition_index): Reassignment(
                tuple(p.replicas), tuple(p.adding_replicas), tuple(p.removing_replicas)
            )
            for t in resp.topics
            for p in t.partitions
        }

    return cluster.call(deadline, attempt, what="list partition reassignments", topics=[])


def alter_partition_reassignments(
    cluster: Cluster,
    deadline: Deadline,
    targets: Mapping[tuple[str, int], Sequence[int] | None],
) -> dict[tuple[str, int], BrokerError | None]:
    """See :meth:`kafkawire.admin.Admin.alter_partition_reassignments`."""
    items = list(targets.items())
    for (t, p), replicas in items:
        if not isinstance(t, str) or not isinstance(p, int):
            raise TypeError("alter_partition_reassignments takes {(topic, partition): replicas or None}")
        if replicas is not None and not all(isinstance(r, int) for r in replicas):
            raise TypeError("replicas are broker ids (int)")

    def attempt(d: Deadline) -> dict[tuple[str, int], BrokerError | None]:
        by_topic: dict[str, list[Any]] = {}
        for (t, p), replicas in items:
            by_topic.setdefault(t, []).append(
                AlterPartitionReassignmentsRequest.ReassignablePartition(
                    partition_index=p, replicas=None if replicas is None else list(replicas)
                )
            )
        topic = AlterPartitionReassignmentsRequest.ReassignableTopic
        fields = {"topics": [topic(name=t, partitions=ps) for t, ps in by_topic.items()]}
        resp = _controller_call(cluster, d, AlterPartitionReassignmentsRequest, fields, "alter partition reassignments")
        return {
            (t.name, p.partition_index): broker_error(
                p.error_code, p.error_message, f"reassign {t.name}/{p.partition_index}"
            )
            for t in resp.responses
            for p in t.partitions
        }

    return cluster.call(deadline, attempt, what="alter partition reassignments", topics=[]) if items else {}
