"""Share group administration (KIP-932) on top of :class:`~kafkawire.client.cluster.cluster.Cluster`: list
and describe share groups, read, set, reset and delete their share-partition start offsets.

What Kafka's ``kafka-share-groups.sh`` does, request for request: ListGroups on every broker filtered to
type ``share``; ShareGroupDescribe, DescribeShareGroupOffsets, AlterShareGroupOffsets and
DeleteShareGroupOffsets to the group's coordinator (found again when it moved). A share group's *start
offset* per partition is where its delivery state begins: every record below it is done with. Only a
group without members can have its offsets altered or deleted (the coordinator answers NON_EMPTY_GROUP
otherwise). Deleting a share group itself is DeleteGroups, as for any group (``Admin.delete_groups``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..client.cluster.cluster import Cluster
from ..client.net.deadline import Deadline
from ..protocol import (
    AlterShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsRequest,
    ShareGroupDescribeRequest,
)
from ..protocol.errors import raise_broker_error
from . import groups as _groups
from .types import GroupListing

__all__ = [
    "ShareMemberDescription",
    "ShareGroupDescription",
    "ShareGroupOffset",
    "list_share_groups",
    "describe_share_groups",
    "list_share_group_offsets",
    "alter_share_group_offsets",
    "reset_share_group_offsets",
    "delete_share_group_offsets",
]

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class ShareMemberDescription:
    """A member of a share group: ids, host, rack, epoch, subscription and the partitions assigned to it
    (shared with other members: a share group's assignment is not exclusive)."""

    member_id: str
    client_id: str
    client_host: str
    rack_id: str | None
    member_epoch: int
    subscribed_topics: list[str]
    assignment: dict[str, list[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class ShareGroupDescription:
    """A share group as ShareGroupDescribe reports it: ``state`` (``Empty``, ``Stable``, ``Dead``), epochs,
    the assignor (``simple``), its members and ``coordinator`` (node id)."""

    group_id: str
    state: str
    group_epoch: int
    assignment_epoch: int
    assignor: str
    members: list[ShareMemberDescription]
    coordinator: int = -1


@dataclass(frozen=True)
class ShareGroupOffset:
    """A share group's start offset in one partition (-1: no state yet), the leader epoch it was written
    at and the lag (records from the start offset not yet done with; -1 when the broker does not say)."""

    start_offset: int
    leader_epoch: int = -1
    lag: int = -1


def list_share_groups(
    cluster: Cluster, deadline: Deadline, *, states: Iterable[str] | None = None
) -> list[GroupListing]:
    """See :meth:`kafkawire.admin.Admin.list_share_groups`."""
    return [
        g for g in _groups.list_groups(cluster, deadline, states=states, types=["share"]) if g.type in ("share", "")
    ]


def _describe(conn: Any, names: list[str], d: Deadline) -> dict[str, Any]:
    resp = conn.request(
        ShareGroupDescribeRequest(group_ids=names), conn.version_for(ShareGroupDescribeRequest), deadline=d
    )

    def member(m: Any) -> ShareMemberDescription:
        parts = m.assignment.topic_partitions if m.assignment else ()
        assignment = {tp.topic_name: sorted(tp.partitions) for tp in parts}
        subscribed = list(m.subscribed_topic_names)
        return ShareMemberDescription(
            m.member_id, m.client_id, m.client_host, m.rack_id, m.member_epoch, subscribed, assignment
        )

    def build(g: Any) -> ShareGroupDescription:
        members = [member(m) for m in g.members]
        return ShareGroupDescription(
            g.group_id, g.group_state, g.group_epoch, g.assignment_epoch, g.assignor_name, members, conn.node_id
        )

    return _groups.described(resp.groups, "share group", build)


def describe_share_groups(
    cluster: Cluster, deadline: Deadline, groups: Iterable[str]
) -> dict[str, ShareGroupDescription]:
    """See :meth:`kafkawire.admin.Admin.describe_share_groups`."""
    wanted = list(dict.fromkeys(groups))
    got = _groups.per_coordinator(cluster, deadline, wanted, _describe, "describe share groups")
    out = {}
    for group in wanted:
        if isinstance(got[group], BaseException):
            raise got[group]
        out[group] = got[group]
    return out


def list_share_group_offsets(
    cluster: Cluster, deadline: Deadline, group: str, topics: Iterable[str] | None = None
) -> dict[TopicPartition, ShareGroupOffset]:
    """See :meth:`kafkawire.admin.Admin.list_share_group_offsets`."""
    names = None if topics is None else sorted(set(topics))
    req_topics = None
    if names is not None:
        req_topics = [
            DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestTopic(
                topic_name=t, partitions=sorted(cluster.topic(t, deadline).partitions)
            )
            for t in names
        ]
    req = DescribeShareGroupOffsetsRequest(
        groups=[
            DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup(group_id=group, topics=req_topics)
        ]
    )

    def attempt(d: Deadline, conn: Any) -> dict[TopicPartition, ShareGroupOffset]:
        resp = conn.request(req, conn.version_for(DescribeShareGroupOffsetsRequest), deadline=d)
        out: dict[TopicPartition, ShareGroupOffset] = {}
        for g in resp.groups:
            raise_broker_error(g.error_code, g.error_message, f"share group offsets of {group!r}")
            for t in g.topics:
                for p in t.partitions:
                    raise_broker_error(
                        p.error_code, p.error_message, f"share offset of {group}:{t.topic_name}/{p.partition_index}"
                    )
                    out[(t.topic_name, p.partition_index)] = ShareGroupOffset(p.start_offset, p.leader_epoch, p.lag)
        return dict(sorted(out.items()))

    return cluster.coordinator_call(deadline, group, attempt, what=f"share group offsets of {group!r}")


def alter_share_group_offsets(
    cluster: Cluster, deadline: Deadline, group: str, offsets: Mapping[TopicPartition, int]
) -> None:
    """See :meth:`kafkawire.admin.Admin.alter_share_group_offsets`."""
    by_topic: dict[str, list[Any]] = {}
    for (t, p), o in sorted(offsets.items()):
        if (
            not isinstance(t, str)
            or isinstance(p, bool)
            or not isinstance(p, int)
            or isinstance(o, bool)
            or not isinstance(o, int)
        ):
            raise TypeError(
                f"share group offsets are {{(topic: str, partition: int): offset: int}}, not {(t, p)!r}: {o!r}"
            )
        by_topic.setdefault(t, []).append(
            AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestPartition(partition_index=p, start_offset=o)
        )
    req = AlterShareGroupOffsetsRequest(
        group_id=group,
        topics=[
            AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestTopic(topic_name=t, partitions=ps)
            for t, ps in by_topic.items()
        ],
    )

    def attempt(d: Deadline, conn: Any) -> None:
        resp = conn.request(req, conn.version_for(AlterShareGroupOffsetsRequest), deadline=d)
        raise_broker_error(resp.error_code, resp.error_message, f"alter share group offsets of {group!r}")
        for t in resp.responses:
            for p in t.partitions:
                raise_broker_error(
                    p.error_code, p.error_message, f"alter share offset of {group}:{t.topic_name}/{p.partition_index}"
                )

    if by_topic:
        cluster.coordinator_call(deadline, group, attempt, what=f"alter share group offsets of {group!r}")


def reset_share_group_offsets(
    cluster: Cluster,
    deadline: Deadline,
    group: str,
    topics: Iterable[str],
    *,
    to: str | int = "earliest",
    to_timestamp: int | None = None,
    dry_run: bool = False,
) -> dict[TopicPartition, int]:
    """See :meth:`kafkawire.admin.Admin.reset_share_group_offsets`."""
    names = sorted(set(topics))
    if to_timestamp is not None:
        plan = _groups.log_offsets(cluster, deadline, names, to_timestamp)
    elif to in ("earliest", "latest"):
        plan = _groups.log_offsets(cluster, deadline, names, -2 if to == "earliest" else -1)
    elif isinstance(to, int) and not isinstance(to, bool):
        start = _groups.log_offsets(cluster, deadline, names, -2)
        end = _groups.log_offsets(cluster, deadline, names, -1)
        plan = {tp: min(max(to, start[tp]), end[tp]) for tp in start}  # outside the log: its nearer end
    else:
        raise ValueError(f"to must be 'earliest', 'latest' or an offset, not {to!r}")
    if not dry_run and plan:
        alter_share_group_offsets(cluster, deadline, group, plan)
    return dict(sorted(plan.items()))


def delete_share_group_offsets(cluster: Cluster, deadline: Deadline, group: str, topics: Iterable[str]) -> None:
    """See :meth:`kafkawire.admin.Admin.delete_share_group_offsets`."""
    names = sorted(set(topics))
    req = DeleteShareGroupOffsetsRequest(
        group_id=group,
        topics=[DeleteShareGroupOffsetsRequest.DeleteShareGroupOffsetsRequestTopic(topic_name=t) for t in names],
    )

    def attempt(d: Deadline, conn: Any) -> None:
        resp = conn.request(req, conn.version_for(DeleteShareGroupOffsetsRequest), deadline=d)
        raise_broker_error(resp.error_code, resp.error_message, f"delete share group offsets of {group!r}")
        for t in resp.responses:
            raise_broker_error(t.error_code, t.error_message, f"delete share offsets of {group}:{t.topic_name}")

    if names:
        cluster.coordinator_call(deadline, group, attempt, what=f"delete share group offsets of {group!r}")
