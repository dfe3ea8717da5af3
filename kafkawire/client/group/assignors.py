"""The sticky assignors of the classic protocol: ``sticky`` (KIP-54, eager) and ``cooperative-sticky``
(KIP-429, incremental), compatible with the Java client's ``StickyAssignor`` and ``CooperativeStickyAssignor``.

Both aim for a balanced assignment (members' counts differ by at most one when subscriptions are equal)
that moves as few partitions as possible from their previous owners. What a member owned reaches the
leader in its subscription, in the same bytes the Java client writes, so a Java leader can read a
kafkawire member's state and the other way round:

* ``cooperative-sticky``: ConsumerProtocolSubscription v1+ ``owned_partitions`` and v2+ ``generation_id``;
  the user data is the generation as one int32 (what Java's ``CooperativeStickyAssignor`` sends for
  leaders older than v2).
* ``sticky``: the user data is ``StickyAssignorUserData`` v1 (the previous assignment as an array of
  ``(topic string, partitions []int32)`` and the generation int32; v0 lacks the generation). With eager
  rebalancing the member has given everything up before it rejoins, so ``owned_partitions`` is empty and
  the user data is what counts (Java reads it first too).

When two members claim a partition (a member that missed a rebalance), the claim with the higher
generation wins, as in Java's ``AbstractStickyAssignor``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping

from ...errors import ProtocolError
from ...protocol.consumer_protocol import StickyAssignorUserData
from .payloads import Subscription
from .payloads import by_topic as topic_partitions

__all__ = [
    "cooperative_sticky_assign",
    "cooperative_user_data",
    "decode_sticky_user_data",
    "encode_sticky_user_data",
    "owned_by",
    "sticky_assign",
    "withhold_transfers",
]

TopicPartition = tuple[str, int]
Plan = dict[str, dict[str, list[int]]]

_I32 = struct.Struct(">i")



def cooperative_user_data(generation: int) -> bytes:
    """``CooperativeStickyAssignor`` user data: the generation (int32)."""
    return _I32.pack(generation)


def encode_sticky_user_data(previous: Iterable[TopicPartition], generation: int) -> bytes:
    """``StickyAssignorUserData`` v1: the previous assignment and its generation."""
    data = StickyAssignorUserData(previous_assignment=topic_partitions(previous), generation=generation)
    return bytes(data.encode_body(1))


def decode_sticky_user_data(data: bytes | None) -> tuple[list[TopicPartition], int]:
    """``StickyAssignorUserData`` v0 or v1: (previous partitions, generation or -1). It carries no version:
    v1 is the one with the generation after the partitions (Java's ``StickyAssignor`` tells them apart the
    same way)."""
    if not data:
        return [], -1
    try:
        decoded = StickyAssignorUserData.decode(data, 1)
    except ProtocolError:
        decoded = StickyAssignorUserData.decode(data, 0)
    parts = [(tp.topic, p) for tp in decoded.previous_assignment for p in tp.partitions]
    return parts, decoded.generation


def owned_by(subscriptions: Mapping[str, Subscription], *, from_user_data: bool) -> dict[TopicPartition, str]:
    """Each partition's previous owner: the claim of the highest generation wins (ties: lowest member id)."""
    claims: list[tuple[int, str, list[TopicPartition]]] = []
    for m, sub in subscriptions.items():
        if from_user_data:
            parts, gen = decode_sticky_user_data(sub.user_data)
            if not parts:
                parts, gen = sub.owned, sub.generation
        else:
            parts, gen = sub.owned, sub.generation
            if gen < 0 and sub.user_data and len(sub.user_data) == 4:
                gen = _I32.unpack(sub.user_data)[0]
        claims.append((gen, m, parts))
    owner: dict[TopicPartition, str] = {}
    for _gen, m, parts in sorted(claims, key=lambda c: (-c[0], c[1])):
        for tp in parts:
            owner.setdefault(tp, m)
    return owner


def _sticky(
    subscriptions: Mapping[str, Subscription], counts: Mapping[str, int], owner: dict[TopicPartition, str]
) -> Plan:
    members = sorted(subscriptions)
    if not members:
        return {}
    topics_of = {m: set(subscriptions[m].topics) for m in members}
    partitions = [(t, p) for t in sorted({t for ts in topics_of.values() for t in ts}) for p in range(counts.get(t, 0))]
    eligible = {tp: [m for m in members if tp[0] in topics_of[m]] for tp in partitions}
    n, k = len(partitions), len(members)
    min_q, extra = divmod(n, k)
    max_q = min_q + (1 if extra else 0)
    held: dict[str, list[TopicPartition]] = {m: [] for m in members}
    # 1. Keep what each member owned (and may still have), within the quota: at most ``extra`` members
    #    keep ``max_q``, the others ``min_q`` (Java's constrained assignment).
    for m in members:
        mine = sorted(tp for tp in partitions if owner.get(tp) == m and m in eligible[tp])
        quota = max_q if extra and len(mine) >= max_q else min_q
        if quota == max_q and extra:
            extra -= 1
        held[m] = mine[: max(quota, 0)] if len(mine) > quota else mine
    taken = {tp for ps in held.values() for tp in ps}
    # 2. Everything else to the eligible member holding the fewest (ties: lowest member id).
    for tp in partitions:
        if tp in taken or not eligible[tp]:
            continue
        m = min(eligible[tp], key=lambda x: (len(held[x]), x))
        held[m].append(tp)
    # 3. Different subscriptions can leave it lopsided: move from the fullest to an eligible emptier member
    #    until no move narrows the gap (with equal subscriptions this does nothing).
    moved = True
    while moved:
        moved = False
        for donor in sorted(members, key=lambda x: (-len(held[x]), x)):
            for tp in sorted(held[donor], key=lambda tp: (owner.get(tp) == donor, tp)):
                target = min(eligible[tp], key=lambda x: (len(held[x]), x))
                if len(held[target]) + 1 < len(held[donor]):
                    held[donor].remove(tp)
                    held[target].append(tp)
                    moved = True
                    break
            if moved:
                break
    out: Plan = {m: {} for m in members}
    for m, ps in held.items():
        for t, p in sorted(ps):
            out[m].setdefault(t, []).append(p)
    return out


def sticky_assign(subscriptions: Mapping[str, Subscription], counts: Mapping[str, int]) -> Plan:
    """Java's ``StickyAssignor`` (eager): previous owners from the ``StickyAssignorUserData``."""
    return _sticky(subscriptions, counts, owned_by(subscriptions, from_user_data=True))


def cooperative_sticky_assign(subscriptions: Mapping[str, Subscription], counts: Mapping[str, int]) -> Plan:
    """Java's ``CooperativeStickyAssignor``: previous owners from ``owned_partitions`` (see also
    :func:`withhold_transfers`, applied by the leader for every cooperative assignor)."""
    return _sticky(subscriptions, counts, owned_by(subscriptions, from_user_data=False))


def withhold_transfers(plan: Plan, subscriptions: Mapping[str, Subscription]) -> tuple[Plan, int]:
    """KIP-429: a partition moving from its owner to another member is left out of this generation's
    assignment (the owner finds it missing, revokes it and rejoins; the next rebalance hands it on).
    Java's ``ConsumerCoordinator.adjustAssignment``. Returns the plan and how many were withheld."""
    owner = owned_by(subscriptions, from_user_data=False)
    withheld = 0
    out: Plan = {}
    for m, by_topic in plan.items():
        out[m] = {}
        for t, ps in by_topic.items():
            keep = [p for p in ps if owner.get((t, p), m) == m]
            withheld += len(ps) - len(keep)
            if keep:
                out[m][t] = keep
    return out, withheld

