"""Consumer group administration on top of :class:`~kafkawire.client.cluster.cluster.Cluster`: list, describe and
delete groups, read a group's committed offsets with the log end and lag, and set or reset them.

What Kafka's ``kafka-consumer-groups.sh`` does, request for request: ListGroups goes to every broker
(each lists the groups it coordinates), DescribeGroups / DeleteGroups / OffsetFetch / OffsetCommit to the
group's coordinator (found again before each retry: NOT_COORDINATOR, a coordinator still loading). Resets
follow the tool's rules: only a group with no active member (``Empty``, or one that does not exist yet) can
be reset, an offset outside the log is moved to its nearer end, and a time no record reaches gives the end
of the log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..client.cluster.cluster import Cluster, coordinator_moved
from ..client.cluster.retry import is_retriable
from ..client.consumer import offsets as _offsets
from ..client.errors import GroupNotInactiveError
from ..client.group.payloads import decode_assignment
from ..client.net.deadline import Deadline
from ..errors import ProtocolError
from ..protocol import (
    ConsumerGroupDescribeRequest,
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    ListGroupsRequest,
    OffsetDeleteRequest,
    OffsetFetchRequest,
)
from ..protocol.errors import (
    GroupIdNotFoundError,
    UnknownTopicOrPartitionError,
    broker_error,
    raise_broker_error,
)
from ..protocol.versions import highest_by_name
from .types import GroupDescription, GroupListing, GroupOffset, MemberDescription

__all__ = [
    "list_groups",
    "describe_groups",
    "delete_groups",
    "list_group_offsets",
    "alter_group_offsets",
    "reset_group_offsets",
    "GroupNotInactiveError",
]

def list_groups(
    cluster: Cluster,
    deadline: Deadline,
    *,
    states: Iterable[str] | None = None,
    types: Iterable[str] | None = None,
) -> list[GroupListing]:
    """See :meth:`kafkawire.admin.Admin.list_groups`."""
    state_filter = [s for s in states or ()]
    type_filter = [t for t in types or ()]

    def attempt(d: Deadline) -> list[GroupListing]:
        cluster.fetch_metadata([], d)
        found: dict[str, GroupListing] = {}
        for node in sorted(cluster.brokers):
            conn = cluster.connection(node, d)
            version = conn.version_for(ListGroupsRequest)
            req = ListGroupsRequest(
                states_filter=state_filter if version >= 4 else [],
                types_filter=type_filter if version >= 5 else [],
            )
            resp = conn.request(req, version, deadline=d)
            raise_broker_error(resp.error_code, None, f"list groups on broker {node}")
            for g in resp.groups:
                found[g.group_id] = GroupListing(
                    g.group_id, g.protocol_type, getattr(g, "group_state", "") or "", getattr(g, "group_type", "") or ""
                )
        out = list(found.values())
        # Brokers too old to filter: filter here on what they said.
        if state_filter:
            wanted = {s.lower() for s in state_filter}
            out = [g for g in out if not g.state or g.state.lower() in wanted]
        if type_filter:
            wanted = {t.lower() for t in type_filter}
            out = [g for g in out if not g.type or g.type.lower() in wanted]
        return sorted(out, key=lambda g: g.group_id)

    return cluster.call(deadline, attempt, what="list groups", topics=[])


def describe_groups(cluster: Cluster, deadline: Deadline, groups: Iterable[str]) -> dict[str, GroupDescription]:
    """See :meth:`kafkawire.admin.Admin.describe_groups`.

    One DescribeGroups per coordinator for all of its groups (Java's ``Admin.describeConsumerGroups`` batches
    the same way), then one ConsumerGroupDescribe per coordinator for the groups DescribeGroups calls "not a
    classic group" (KIP-848 groups: Kafka 4 answers GROUP_ID_NOT_FOUND for them)."""
    wanted = list(dict.fromkeys(groups))
    classic = per_coordinator(cluster, deadline, wanted, _describe_classic, "describe groups")
    out: dict[str, GroupDescription] = {}
    not_classic: dict[str, BaseException] = {}
    for group in wanted:
        got = classic[group]
        if isinstance(got, GroupIdNotFoundError):
            not_classic[group] = got
        elif isinstance(got, BaseException):
            raise got
        else:
            out[group] = got
    if not_classic:
        modern = per_coordinator(cluster, deadline, list(not_classic), _describe_modern, "describe consumer groups")
        for group, classic_error in not_classic.items():
            got = modern[group]
            if got is None or isinstance(got, BaseException):
                # Neither protocol knows it (ConsumerGroupDescribe's own GROUP_ID_NOT_FOUND, or a coordinator
                # without the API): DescribeGroups' error says so.
                if got is not None and not isinstance(got, GroupIdNotFoundError):
                    raise got
                raise classic_error
            out[group] = got
    return {g: out[g] for g in wanted}


def per_coordinator(cluster: Cluster, deadline: Deadline, groups: list[str], ask: Any, what: str) -> dict[str, Any]:
    """``ask(conn, names, deadline) -> {group: result or broker error}`` once per coordinator for its groups,
    until every group has a result or a non-retriable error: groups answered NOT_COORDINATOR (or whose
    connection broke) are looked up again and asked again, COORDINATOR_LOAD_IN_PROGRESS asked again, until
    the deadline."""
    out: dict[str, Any] = {}
    stale: set[str] = set()
    if not groups:
        return out

    def attempt(d: Deadline) -> None:
        by_node: dict[int, tuple[Any, list[str]]] = {}
        for group in groups:
            if group not in out:
                conn = cluster.coordinator(group, d, refresh=group in stale)
                by_node.setdefault(conn.node_id, (conn, []))[1].append(group)
        stale.clear()
        retry: BaseException | None = None
        for conn, names in by_node.values():
            try:
                answers = ask(conn, names, d)
            except Exception as e:
                if not is_retriable(e):
                    raise
                stale.update(names)
                retry = retry or e
                continue
            for group, got in answers.items():
                if isinstance(got, BaseException) and is_retriable(got):
                    if coordinator_moved(got):
                        stale.add(group)
                    retry = retry or got
                else:
                    out[group] = got
        if retry is not None:
            for group in stale:
                cluster.forget_coordinator(group)
            raise retry

    more = f" and {len(groups) - 1} more" if len(groups) > 1 else ""
    cluster.call(deadline, attempt, what=f"{what} {groups[0]!r}{more}")
    return out


def _describe_classic(conn: Any, names: list[str], d: Deadline) -> dict[str, Any]:
    version = conn.version_for(DescribeGroupsRequest)
    resp = conn.request(DescribeGroupsRequest(groups=names), version, deadline=d)
    out: dict[str, Any] = {}
    for g in resp.groups:
        err = broker_error(g.error_code, getattr(g, "error_message", None), f"describe group {g.group_id!r}")
        if err is not None:
            out[g.group_id] = err
            continue
        members = []
        for m in g.members:
            assignment: dict[str, list[int]] = {}
            if g.protocol_type == "consumer" and m.member_assignment:
                try:
                    assignment = decode_assignment(m.member_assignment)
                except ProtocolError:
                    assignment = {}  # a member that is not a Kafka consumer after all: keep the raw bytes
            members.append(
                MemberDescription(
                    m.member_id,
                    getattr(m, "group_instance_id", None),
                    m.client_id,
                    m.client_host,
                    assignment,
                    bytes(m.member_assignment or b""),
                )
            )
        out[g.group_id] = GroupDescription(
            g.group_id, g.group_state, g.protocol_type, g.protocol_data, members, conn.node_id
        )
    return out


def _describe_modern(conn: Any, names: list[str], d: Deadline) -> dict[str, Any]:
    """KIP-848 groups through ConsumerGroupDescribe (None each when the coordinator does not speak it)."""
    version = conn.versions.get(ConsumerGroupDescribeRequest) if conn.versions is not None else None
    if version is None:
        return dict.fromkeys(names)
    resp = conn.request(ConsumerGroupDescribeRequest(group_ids=names), version, deadline=d)

    def member(m: Any) -> MemberDescription:
        assignment = {tp.topic_name: sorted(tp.partitions) for tp in (m.assignment.topic_partitions or ())}
        return MemberDescription(m.member_id, m.instance_id, m.client_id, m.client_host, assignment)

    def build(g: Any) -> GroupDescription:
        members = [member(m) for m in g.members]
        return GroupDescription(
            g.group_id, g.group_state, "consumer", g.assignor_name, members, conn.node_id, type="consumer"
        )

    return described(resp.groups, "consumer group", build)


def described(groups: Iterable[Any], what: str, build: Callable[[Any], Any]) -> dict[str, Any]:
    """A describe answer's ``groups`` as ``{group id: build(group)}``, or the group's error where it has one."""
    out: dict[str, Any] = {}
    for g in groups:
        err = broker_error(g.error_code, getattr(g, "error_message", None), f"describe {what} {g.group_id!r}")
        out[g.group_id] = err if err is not None else build(g)
    return out


def delete_groups(cluster: Cluster, deadline: Deadline, groups: Iterable[str], *, missing_ok: bool = False) -> None:
    """See :meth:`kafkawire.admin.Admin.delete_groups`."""
    for group in groups:
        attempts = [0]

        def attempt(d: Deadline, conn: Any, group: str = group, attempts: list[int] = attempts) -> None:
            attempts[0] += 1
            resp = conn.request(DeleteGroupsRequest(groups_names=[group]), deadline=d)
            for r in resp.results:
                err = broker_error(r.error_code, getattr(r, "error_message", None), f"delete group {r.group_id!r}")
                if err is None or (missing_ok and isinstance(err, GroupIdNotFoundError)):
                    continue
                if isinstance(err, GroupIdNotFoundError) and attempts[0] > 1:
                    # A retry after an attempt whose answer was lost: that attempt may have deleted it.
                    continue
                raise err

        cluster.coordinator_call(deadline, group, attempt, what=f"delete group {group!r}")


def _fetch_committed(
    cluster: Cluster, deadline: Deadline, group: str
) -> dict[tuple[str, int], tuple[int, str | None, int]]:
    """Every committed offset of ``group``: OffsetFetch with a null topic list (all topics, v2+)."""

    def attempt(d: Deadline, conn: Any) -> dict[tuple[str, int], tuple[int, str | None, int]]:
        version = highest_by_name(OffsetFetchRequest, conn.version_for(OffsetFetchRequest, 2))
        if version >= 8:
            req = OffsetFetchRequest(groups=[OffsetFetchRequest.OffsetFetchRequestGroup(group_id=group, topics=None)])
        else:
            req = OffsetFetchRequest(group_id=group, topics=None)
        resp = conn.request(req, version, deadline=d)
        if version >= 8:
            g = resp.groups[0]
            code, topics = g.error_code, g.topics
        else:
            code, topics = getattr(resp, "error_code", 0) or 0, resp.topics
        raise_broker_error(code, None, f"committed offsets of group {group!r}")
        out = {}
        for t in topics or ():
            for p in t.partitions:
                perr = broker_error(p.error_code, None, f"committed offset of {group}:{t.name}/{p.partition_index}")
                if perr is not None and not isinstance(perr, UnknownTopicOrPartitionError):
                    raise perr
                if p.committed_offset >= 0:
                    out[(t.name, p.partition_index)] = (
                        p.committed_offset,
                        p.metadata,
                        getattr(p, "committed_leader_epoch", -1),
                    )
        return out

    return cluster.coordinator_call(deadline, group, attempt, what=f"committed offsets of group {group!r}")


def _existing_topics(cluster: Cluster, deadline: Deadline, topics: Iterable[str]) -> set[str]:
    """Which of ``topics`` exist: one Metadata request decides (a group's offsets may outlive its topics,
    and ListOffsets would retry UNKNOWN_TOPIC_OR_PARTITION until the deadline)."""
    names = sorted(set(topics))
    if not names:
        return set()
    meta = cluster.call(
        deadline, lambda d: cluster.fetch_metadata(names, d), what="metadata", before_retry=lambda d, e: None
    )
    return {
        t for t in names
        if t in meta.topics and not isinstance(meta.topics[t].error, UnknownTopicOrPartitionError)
    }


def log_offsets(cluster: Cluster, deadline: Deadline, topics: Iterable[str], ts: int) -> dict[tuple[str, int], int]:
    """Each partition of ``topics`` at timestamp ``ts`` (-2 earliest, -1 latest): ``{(topic, partition): offset}``
    (for resets of consumer and share group offsets)."""
    out = {}
    for t in sorted(set(topics)):
        for p, lo in _offsets.list_offsets(cluster, deadline, t, None, ts, 0).items():
            out[(t, p)] = lo.offset
    return out


def list_group_offsets(
    cluster: Cluster,
    deadline: Deadline,
    group: str,
    partitions: Iterable[tuple[str, int]] | None = None,
) -> dict[tuple[str, int], GroupOffset]:
    """See :meth:`kafkawire.admin.Admin.list_consumer_group_offsets`."""
    committed = _fetch_committed(cluster, deadline, group)
    wanted = sorted(committed) if partitions is None else sorted(set(partitions))
    # Offsets of deleted topics are reported with end offset -1 (Kafka's tool prints "-").
    ends = log_offsets(cluster, deadline, _existing_topics(cluster, deadline, {t for t, _ in wanted}), _offsets.LATEST)
    out = {}
    for tp in wanted:
        off, meta, epoch = committed.get(tp, (-1, None, -1))
        out[tp] = GroupOffset(off, ends.get(tp, -1), meta, epoch)
    return out


def alter_group_offsets(
    cluster: Cluster, deadline: Deadline, group: str, offsets: Mapping[tuple[str, int], int]
) -> None:
    """See :meth:`kafkawire.admin.Admin.alter_consumer_group_offsets`."""
    _offsets.commit_offsets(cluster, deadline, group, {tp: int(o) for tp, o in offsets.items()})


def reset_group_offsets(
    cluster: Cluster,
    deadline: Deadline,
    group: str,
    topics: Iterable[str | tuple[str, int]] | None,
    *,
    to: str | int | None = None,
    to_timestamp: int | None = None,
    shift_by: int | None = None,
    dry_run: bool = False,
) -> dict[tuple[str, int], int]:
    """See :meth:`kafkawire.admin.Admin.reset_consumer_group_offsets`."""
    chosen = [x is not None for x in (to, to_timestamp, shift_by)]
    if sum(chosen) != 1:
        raise ValueError("give exactly one of to= ('earliest', 'latest' or an offset), to_timestamp= or shift_by=")
    if isinstance(to, str) and to not in ("earliest", "latest"):
        raise ValueError(f"to must be 'earliest', 'latest' or an offset, not {to!r}")
    try:
        state = describe_groups(cluster, deadline, [group])[group]
    except GroupIdNotFoundError:
        state = None  # nobody ever used it: offsets can be set (the group is created empty)
    if state is not None and state.state not in ("Empty", "Dead"):
        raise GroupNotInactiveError(
            f"assignments can only be reset if the group {group!r} is inactive, but the current state is {state.state}"
        )
    committed = _fetch_committed(cluster, deadline, group) if topics is None or shift_by is not None else {}
    # Which partitions: the named ones, every partition of a named topic, or all the group has committed.
    named_topics = sorted({x for x in topics or () if isinstance(x, str)})
    parts: set[tuple[str, int]] = (
        set(committed) if topics is None else {(x[0], int(x[1])) for x in topics if not isinstance(x, str)}
    )
    wanted_topics = set(named_topics) | {t for t, _ in parts}
    gone = sorted(wanted_topics - _existing_topics(cluster, deadline, wanted_topics))
    if gone and topics is not None:
        raise UnknownTopicOrPartitionError(f"reset offsets of group {group!r}: no topic(s) {gone}")
    parts = {tp for tp in parts if tp[0] not in gone}  # --all-topics: offsets of deleted topics stay as they are
    earliest = log_offsets(cluster, deadline, named_topics + sorted({t for t, _ in parts}), _offsets.EARLIEST)
    latest = log_offsets(cluster, deadline, named_topics + sorted({t for t, _ in parts}), _offsets.LATEST)
    parts |= {tp for tp in earliest if tp[0] in named_topics}
    missing = sorted(tp for tp in parts if tp not in latest)
    if missing:
        raise UnknownTopicOrPartitionError(f"no such partition(s): {missing}")
    at_time: dict[tuple[str, int], int] = {}
    if to_timestamp is not None:
        at_time = log_offsets(cluster, deadline, {t for t, _ in parts}, int(to_timestamp))
    out: dict[tuple[str, int], int] = {}
    for tp in sorted(parts):
        lo, hi = earliest[tp], latest[tp]
        if to == "earliest":
            target = lo
        elif to == "latest":
            target = hi
        elif to is not None:
            target = int(to)
        elif to_timestamp is not None:
            # No record at or after the time: the end of the log (Kafka's tool does the same).
            target = at_time[tp] if at_time.get(tp, -1) >= 0 else hi
        else:
            base = committed.get(tp, (-1, None, -1))[0]
            if base < 0:
                raise ValueError(f"shift_by: group {group!r} has no committed offset for {tp[0]}/{tp[1]}")
            target = base + int(shift_by or 0)
        out[tp] = min(max(target, lo), hi)  # outside the log: its nearer end, as the tool warns and does
    if not dry_run and out:
        alter_group_offsets(cluster, deadline, group, out)
    return out


def delete_group_offsets(
    cluster: Cluster, deadline: Deadline, group: str, partitions: Iterable[tuple[str, int]]
) -> None:
    """See :meth:`kafkawire.admin.Admin.delete_consumer_group_offsets` (OffsetDelete, KIP-496)."""
    wanted = list(partitions)
    if not isinstance(group, str) or not all(
        isinstance(tp, tuple) and len(tp) == 2 and isinstance(tp[0], str) and isinstance(tp[1], int) for tp in wanted
    ):
        raise TypeError("delete_consumer_group_offsets takes a group (str) and (topic, partition) pairs")
    by_topic: dict[str, list[int]] = {}
    for t, p in wanted:
        by_topic.setdefault(t, []).append(p)
    req = OffsetDeleteRequest(
        group_id=group,
        topics=[
            OffsetDeleteRequest.OffsetDeleteRequestTopic(
                name=t, partitions=[OffsetDeleteRequest.OffsetDeleteRequestPartition(partition_index=p) for p in ps]
            )
            for t, ps in by_topic.items()
        ],
    )

    def attempt(d: Deadline, conn: Any) -> None:
        resp = conn.request(req, deadline=d)
        raise_broker_error(resp.error_code, None, f"delete offsets of group {group!r}")
        for t in resp.topics:
            for p in t.partitions:
                # GROUP_SUBSCRIBED_TO_TOPIC: an active member still consumes it (Kafka refuses, as its tool says)
                where = f"delete the offset of group {group!r} on {t.name}/{p.partition_index}"
                raise_broker_error(p.error_code, None, where)

    if wanted:
        cluster.coordinator_call(deadline, group, attempt, what=f"delete offsets of group {group!r}")
