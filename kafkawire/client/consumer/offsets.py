"""Offsets on top of :class:`~kafkawire.client.cluster.cluster.Cluster`: list a log's offsets, commit and read
a group's committed offsets."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from ...protocol import ListOffsetsRequest, OffsetCommitRequest, OffsetFetchRequest
from ...protocol.errors import (
    LeaderNotAvailableError,
    UnknownTopicOrPartitionError,
    broker_error,
)
from ...protocol.versions import highest_by_name
from ..cluster.cluster import Cluster
from ..cluster.quirks import LOWEST_VERSION
from ..net.deadline import Deadline
from ..types import CommittedOffset, ListedOffset

__all__ = [
    "OffsetSpec",
    "offset_of",
    "offset_parts",
    "EARLIEST",
    "LATEST",
    "list_offsets",
    "commit_offsets",
    "commit_request",
    "send_commit",
    "commit_as_member",
    "committed",
    "timestamp_spec",
]

#: What a commit takes per partition: the offset, ``(offset, metadata)`` or ``(offset, metadata, leader_epoch)``
#: (the Java client's ``OffsetAndMetadata``): the leader epoch of the record before the offset, which a
#: consumer restarting from the commit validates its position with (KIP-320); -1 or absent: unknown.
OffsetSpec = int | tuple[int, str | None] | tuple[int, str | None, int]


def offset_of(spec: OffsetSpec) -> int:
    """The offset of ``spec``."""
    return offset_parts(spec)[0]


def offset_parts(spec: OffsetSpec) -> tuple[int, str | None, int]:
    """``spec`` as (offset, metadata, leader epoch): metadata "" and epoch -1 when not given."""
    if not isinstance(spec, tuple):
        return int(spec), "", -1
    if len(spec) == 2:
        return int(spec[0]), spec[1], -1
    if len(spec) == 3:
        return int(spec[0]), spec[1], int(spec[2])
    raise TypeError(
        f"an offset to commit is an int, (offset, metadata) or (offset, metadata, leader_epoch), not {spec!r}"
    )


#: ListOffsets timestamps with special meaning.
LATEST = -1
EARLIEST = -2


def timestamp_spec(timestamp: int | str) -> int:
    """``"latest"`` / ``"earliest"`` / ms since the epoch -> the ListOffsets timestamp."""
    if isinstance(timestamp, str):
        ts = {"latest": LATEST, "earliest": EARLIEST}.get(timestamp.lower())
        if ts is None:
            raise ValueError(f"timestamp must be 'latest', 'earliest' or ms since the epoch, not {timestamp!r}")
        return ts
    return int(timestamp)


def list_offsets(
    cluster: Cluster,
    deadline: Deadline,
    topic: str,
    partitions: Iterable[int] | None,
    ts: int,
    level: int,
) -> dict[int, ListedOffset]:
    """See :meth:`kafkawire.client.Client.list_offsets`."""
    wanted = None if partitions is None else [int(p) for p in partitions]

    def attempt(d: Deadline) -> dict[int, ListedOffset]:
        tm = cluster.topic(topic, d)
        parts = list(tm.partitions) if wanted is None else wanted
        by_leader: dict[int, list[int]] = defaultdict(list)
        for p in parts:
            by_leader[cluster.leader(topic, p, d)].append(p)
        out: dict[int, ListedOffset] = {}
        sent = []
        for leader, ps in by_leader.items():
            conn = cluster.connection(leader, d)
            req = ListOffsetsRequest(
                replica_id=-1,
                isolation_level=level,
                topics=[
                    ListOffsetsRequest.ListOffsetsTopic(
                        name=topic,
                        partitions=[
                            ListOffsetsRequest.ListOffsetsPartition(partition_index=p, timestamp=ts) for p in ps
                        ],
                    )
                ],
                timeout_ms=d.request_timeout_ms(cluster.request_timeout_ms),
            )
            sent.append(
                conn.send(req, conn.version_for(ListOffsetsRequest, LOWEST_VERSION[ListOffsetsRequest]), deadline=d)
            )
        for pr in sent:
            resp = pr.result(deadline=d)
            for t in resp.topics:
                for p in t.partitions:
                    err = broker_error(p.error_code, None, f"list_offsets {topic}/{p.partition_index}")
                    if err is not None:
                        raise err
                    out[p.partition_index] = ListedOffset(p.offset, p.timestamp, p.leader_epoch)
        missing = set(parts) - set(out)
        if missing:
            raise LeaderNotAvailableError(f"list_offsets: no answer for partitions {sorted(missing)}")
        return dict(sorted(out.items()))

    return cluster.call(deadline, attempt, what=f"list_offsets of {topic!r}", topics=[topic])


def commit_offsets(
    cluster: Cluster,
    deadline: Deadline,
    group: str,
    offsets: Mapping[tuple[str, int], OffsetSpec],
    *,
    generation_id: int = -1,
    member_id: str = "",
) -> None:
    """See :meth:`kafkawire.client.Client.commit_offsets`."""
    req = commit_request(group, offsets, generation_id=generation_id, member_id=member_id)
    cluster.coordinator_call(
        deadline, group, lambda d, conn: send_commit(conn, d, req), what=f"commit of group {group!r}"
    )


def commit_request(
    group: str,
    offsets: Mapping[tuple[str, int], OffsetSpec],
    *,
    generation_id: int = -1,
    member_id: str = "",
) -> Any:
    """The OffsetCommitRequest committing ``offsets`` for ``group`` as ``member_id`` of ``generation_id``
    (the member epoch on the consumer protocol, KIP-848; -1 and "" outside any membership). A leader
    epoch (:data:`OffsetSpec`) goes in ``committed_leader_epoch`` (v6+; older versions drop it)."""
    by_topic: dict[str, list[Any]] = defaultdict(list)
    for (t, p), spec in offsets.items():
        off, meta, epoch = offset_parts(spec)
        by_topic[t].append(
            OffsetCommitRequest.OffsetCommitRequestPartition(
                partition_index=p,
                committed_offset=off,
                committed_leader_epoch=epoch,
                committed_metadata=meta,
            )
        )
    return OffsetCommitRequest(
        group_id=group,
        generation_id_or_member_epoch=generation_id,
        member_id=member_id,
        topics=[OffsetCommitRequest.OffsetCommitRequestTopic(name=t, partitions=ps) for t, ps in by_topic.items()],
    )


def send_commit(conn: Any, deadline: Deadline, req: Any) -> None:
    """One attempt of ``req`` (from :func:`commit_request`) on ``conn``, a connection to the group's
    coordinator; raises the first partition's error. The consumer's background auto-commit sends it on
    the heartbeat thread's own connection (:mod:`kafkawire.client.group.heartbeat`)."""
    # This request carries names: stay below the version that names topics by id only, as the Java client
    # does when it does not know every topic id (kafkawire.protocol.versions.BY_NAME).
    lowest = LOWEST_VERSION[OffsetCommitRequest]
    version = highest_by_name(OffsetCommitRequest, conn.version_for(OffsetCommitRequest, lowest))
    resp = conn.request(req, version, deadline=deadline)
    for t in resp.topics:
        for p in t.partitions:
            err = broker_error(p.error_code, None, f"commit {req.group_id}:{t.name}/{p.partition_index}")
            if err is not None:
                raise err



def commit_as_member(
    client: Any,
    group_id: str,
    offsets: Mapping[tuple[str, int], OffsetSpec],
    deadline: Deadline,
    conn: Any,
    *,
    generation_id: int,
    member_id: str,
) -> None:
    """Commit ``offsets`` as a member of ``group_id`` (its generation, or its member epoch on KIP-848):
    one attempt on ``conn`` (a connection to the coordinator: the heartbeat thread's background
    auto-commit) when given, else ``client.commit_offsets`` with its retries."""
    if conn is not None:
        send_commit(conn, deadline, commit_request(group_id, offsets, generation_id=generation_id, member_id=member_id))
    else:
        client.commit_offsets(group_id, dict(offsets), generation_id=generation_id, member_id=member_id,
                              deadline=deadline)  # fmt: skip

def committed(
    cluster: Cluster, deadline: Deadline, group: str, tps: list[tuple[str, int]]
) -> dict[tuple[str, int], CommittedOffset]:
    """See :meth:`kafkawire.client.Client.committed`."""
    by_topic: dict[str, list[int]] = defaultdict(list)
    for t, p in tps:
        by_topic[t].append(p)

    def attempt(d: Deadline, conn: Any) -> dict[tuple[str, int], CommittedOffset]:
        version = highest_by_name(OffsetFetchRequest, conn.version_for(OffsetFetchRequest, 1))
        if version >= 8:
            req = OffsetFetchRequest(
                groups=[
                    OffsetFetchRequest.OffsetFetchRequestGroup(
                        group_id=group,
                        topics=[
                            OffsetFetchRequest.OffsetFetchRequestTopics(name=t, partition_indexes=ps)
                            for t, ps in by_topic.items()
                        ],
                    )
                ]
            )
        else:
            req = OffsetFetchRequest(
                group_id=group,
                topics=[
                    OffsetFetchRequest.OffsetFetchRequestTopic(name=t, partition_indexes=ps)
                    for t, ps in by_topic.items()
                ],
            )
        if version >= 7:
            # KIP-447: wait for (UNSTABLE_OFFSET_COMMIT, retried) rather than skip offsets a transaction is still
            # committing; a consume-transform-produce member starting right after a commit would read the
            # offset before it and process those records twice.
            req.require_stable = True
        resp = conn.request(req, version, deadline=d)
        if version >= 8:
            g = resp.groups[0]
            err = broker_error(g.error_code, None, f"offset fetch of group {group!r}")
            topics = g.topics
        else:
            err = broker_error(resp.error_code, None, f"offset fetch of group {group!r}")  # 0 below v2
            topics = resp.topics
        if err is not None:
            raise err
        out: dict[tuple[str, int], CommittedOffset] = {}
        for t in topics or ():
            for p in t.partitions:
                perr = broker_error(p.error_code, None, f"offset fetch {group}:{t.name}/{p.partition_index}")
                if perr is not None and not isinstance(perr, UnknownTopicOrPartitionError):
                    raise perr
                out[(t.name, p.partition_index)] = CommittedOffset(
                    p.committed_offset, p.metadata, p.committed_leader_epoch  # -1 below v5
                )
        return {tp: out.get(tp, CommittedOffset(-1)) for tp in tps}

    return cluster.coordinator_call(deadline, group, attempt, what=f"committed offsets of group {group!r}")
