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
from .assignors import COOPERATIVE, STICKY_ASSIGNORS, cooperative_user_data, encode_sticky_user_data, withhold_transfers
from .payloads import ASSIGNORS, decode_subscription_full, encode_assignment, encode_subscription

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["join_protocols", "leader_assignments", "subscription_for"]

TopicPartition = tuple[str, int]


def subscription_for(
    assignor: str, topics: Sequence[str], owned: Collection[TopicPartition], generation: int
) -> bytes:
    """The subscription bytes offered with ``assignor``: the Java client's for the same assignor, for a
    member subscribed to ``topics`` that holds ``owned`` (cooperative) or held it before giving it up
    (eager) in ``generation`` (-1: none).

    Sticky assignors get ConsumerProtocolSubscription v3 (owned partitions, generation) with their
    user data (cooperative: the generation; eager sticky: StickyAssignorUserData v1); range and
    round-robin keep v0, which carries all they need.
    """
    if assignor == "cooperative-sticky":
        return encode_subscription(
            topics,
            cooperative_user_data(generation),
            owned=sorted(owned) if generation >= 0 else [],
            generation=generation,
            version=3,
        )
    if assignor == "sticky":
        # Eager: everything was given up before rejoining, so nothing is "owned" now; the previous
        # assignment travels in the user data (Java's StickyAssignor reads it first).
        user = encode_sticky_user_data(owned, generation) if owned else None
        return encode_subscription(topics, user, owned=[], generation=generation, version=3)
    return encode_subscription(topics)


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
    simple = ASSIGNORS.get(protocol)
    sticky = STICKY_ASSIGNORS.get(protocol)
    if simple is None and sticky is None:
        # The coordinator must choose among the protocols every member offered, ours included.
        raise KafkaClientError(f"group {group_id!r}: coordinator chose unknown protocol {protocol!r}")
    subscriptions = {m.member_id: decode_subscription_full(m.metadata) for m in members}
    topics = sorted({t for sub in subscriptions.values() for t in sub.topics})
    counts: dict[str, int] = {}
    if topics:
        meta = client.metadata(topics, deadline=deadline)
        counts = {t: tm.num_partitions for t, tm in meta.topics.items() if tm.error is None}
    if sticky is not None:
        plan = sticky(subscriptions, counts)
    else:
        assert simple is not None
        plan = simple({m: sub.topics for m, sub in subscriptions.items()}, counts)
    withheld = 0
    if protocol in COOPERATIVE:
        plan, withheld = withhold_transfers(plan, subscriptions)
    version = 3 if sticky is not None else 0
    assignments = [
        SyncGroupRequest.SyncGroupRequestAssignment(member_id=m, assignment=encode_assignment(parts, version=version))
        for m, parts in sorted(plan.items())
    ]
    return assignments, withheld
