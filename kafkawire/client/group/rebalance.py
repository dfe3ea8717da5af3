"""What a classic group member puts into one rebalance: the subscription it offers with each assignor
(JoinGroup) and, when the coordinator makes it the leader, the assignments it computes (SyncGroup).

Used by :class:`~kafkawire.client.group.classic.GroupMember`; the payload codec is
:mod:`~kafkawire.client.group.payloads`, the sticky assignors :mod:`~kafkawire.client.group.assignors`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from ...protocol import JoinGroupRequest, SyncGroupRequest
from ..errors import KafkaClientError
from ..net.deadline import Deadline
from .assignors import withhold_transfers
from .payloads import decode_subscription_full, encode_assignment
from .registry import ASSIGNORS

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["join_protocols", "leader_assignments", "subscription_for"]

TopicPartition = tuple[str, int]


def subscription_for(
    assignor: str, topics: Sequence[str], owned: Collection[TopicPartition], generation: int
) -> bytes:
    """The subscription bytes offered with ``assignor``: the Java client's for the same assignor, for a
    member subscribed to ``topics`` that holds ``owned`` (cooperative) or held it before giving it up
    (eager) in ``generation`` (-1: none). See :mod:`.registry`."""
    return ASSIGNORS[assignor].subscription(topics, owned, generation)


def join_protocols(
    assignors: Sequence[str], topics: Sequence[str], owned: Collection[TopicPartition], generation: int
) -> list[Any]:
    """JoinGroup's protocols: one per assignor, most preferred first, each with its own subscription bytes."""
    return [
        JoinGroupRequest.JoinGroupRequestProtocol(name=name, metadata=subscription_for(name, topics, owned, generation))
        for name in assignors
    ]


def leader_assignments(
    client: Client, group_id: str, protocol: str, members: list[Any], deadline: Deadline
) -> tuple[list[Any], int]:
    """The leader's SyncGroup assignments for JoinGroup's ``members``, ``protocol`` (the coordinator's
    choice) naming the assignor, and how many partitions were withheld.

    For a cooperative assignor the partitions that change owner are withheld this generation
    (KIP-429): their owner revokes them and rejoins, and the next rebalance hands them on.
    """
    assignor = ASSIGNORS.get(protocol)
    if assignor is None:
        # The coordinator must choose among the protocols every member offered, ours included.
        raise KafkaClientError(f"group {group_id!r}: coordinator chose unknown protocol {protocol!r}")
    subscriptions = {m.member_id: decode_subscription_full(m.metadata) for m in members}
    topics = sorted({t for sub in subscriptions.values() for t in sub.topics})
    counts: dict[str, int] = {}
    if topics:
        meta = client.metadata(topics, deadline=deadline)
        counts = {t: tm.num_partitions for t, tm in meta.topics.items() if tm.error is None}
    plan = assignor.assign(subscriptions, counts)
    withheld = 0
    if assignor.cooperative:
        plan, withheld = withhold_transfers(plan, subscriptions)
    version = assignor.assignment_version
    assignments = [
        SyncGroupRequest.SyncGroupRequestAssignment(member_id=m, assignment=encode_assignment(parts, version=version))
        for m, parts in sorted(plan.items())
    ]
    return assignments, withheld
