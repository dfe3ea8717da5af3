"""The classic consumer group protocol's embedded payloads and the range and round-robin assignors.

A consumer joins a group with ``protocol_type="consumer"``; the per-member ``metadata`` (a
*ConsumerProtocolSubscription*) and the per-member ``assignment`` (a *ConsumerProtocolAssignment*) are
opaque bytes to the broker. Their wire format is a schema like every request's
(:mod:`kafkawire.protocol.consumer_protocol`, from Kafka's ``ConsumerProtocolSubscription.json`` and
``ConsumerProtocolAssignment.json``); this module turns them into the assignors' terms. The version
written depends on the assignor (v0 for range and round-robin, which every consumer understands; v3 for
the sticky ones, as Java writes); any version is read: later versions only append fields.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...protocol.consumer_protocol import ConsumerProtocolAssignment, ConsumerProtocolSubscription

__all__ = [
    "by_topic",
    "encode_subscription",
    "decode_subscription",
    "decode_subscription_full",
    "Subscription",
    "encode_assignment",
    "decode_assignment",
    "range_assign",
    "roundrobin_assign",
]

_SUBSCRIPTION = ConsumerProtocolSubscription
_ASSIGNMENT = ConsumerProtocolAssignment


def by_topic(partitions: Iterable[tuple[str, int]]) -> list[Any]:
    """``(topic, partition)`` pairs as the payloads' sorted ``TopicPartition`` structs (one per topic)."""
    grouped: dict[str, list[int]] = defaultdict(list)
    for t, p in sorted(partitions):
        grouped[t].append(p)
    return [_SUBSCRIPTION.TopicPartition(topic=t, partitions=ps) for t, ps in grouped.items()]


def encode_subscription(
    topics: Iterable[str],
    user_data: bytes | None = None,
    *,
    owned: Iterable[tuple[str, int]] | None = None,
    generation: int = -1,
    version: int = 0,
    rack: str | None = None,
) -> bytes:
    """ConsumerProtocolSubscription: the topics this member wants (v0); from v1 the partitions it owns
    (KIP-429), from v2 its generation (KIP-792), from v3 its rack (KIP-881). The Java client writes v3."""
    sub = _SUBSCRIPTION(
        topics=sorted(set(topics)),
        user_data=user_data,
        owned_partitions=by_topic(owned or ()),
        generation_id=generation,
        rack_id=rack,
    )
    return bytes(sub.encode_versioned(version))


@dataclass
class Subscription:
    """A decoded ConsumerProtocolSubscription (fields of later versions take their defaults)."""

    topics: list[str]
    user_data: bytes | None = None
    owned: list[tuple[str, int]] = field(default_factory=list)
    generation: int = -1
    rack_id: str | None = None
    version: int = 0


def decode_subscription_full(data: bytes | bytearray | memoryview) -> Subscription:
    """Every field of a ConsumerProtocolSubscription v0-v3 (later versions: the fields known here)."""
    version, sub = _SUBSCRIPTION.decode_versioned(data)
    return Subscription(
        list(sub.topics),
        None if sub.user_data is None else bytes(sub.user_data),
        [(tp.topic, p) for tp in sub.owned_partitions for p in tp.partitions],
        sub.generation_id,
        sub.rack_id,
        version,
    )


def decode_subscription(data: bytes | bytearray | memoryview) -> list[str]:
    """Topics of a ConsumerProtocolSubscription of any version."""
    return decode_subscription_full(data).topics


def encode_assignment(
    partitions: Mapping[str, Iterable[int]], user_data: bytes | None = None, *, version: int = 0
) -> bytes:
    """ConsumerProtocolAssignment: the partitions given to one member (v1-v3 carry the same fields; the
    Java client writes v3)."""
    assigned = [_ASSIGNMENT.TopicPartition(topic=t, partitions=sorted(ps)) for t, ps in sorted(partitions.items())]
    return bytes(_ASSIGNMENT(assigned_partitions=assigned, user_data=user_data).encode_versioned(version))


def decode_assignment(data: bytes | bytearray | memoryview | None) -> dict[str, list[int]]:
    """Partitions of a ConsumerProtocolAssignment of any version (empty bytes: nothing assigned)."""
    if not data:
        return {}
    _version, asg = _ASSIGNMENT.decode_versioned(data)
    return {tp.topic: list(tp.partitions) for tp in asg.assigned_partitions}


def range_assign(
    subscriptions: Mapping[str, Iterable[str]], partitions_per_topic: Mapping[str, int]
) -> dict[str, dict[str, list[int]]]:
    """Kafka's RangeAssignor: per topic, its partitions split into contiguous ranges over the members
    subscribed to it, sorted by member id; the first ``partitions % members`` members get one extra.

    ``subscriptions`` maps member id to topics; ``partitions_per_topic`` gives each topic's partition
    count (topics missing from it are skipped). Returns member id -> topic -> partitions; every member
    appears, possibly with nothing.
    """
    members_of: dict[str, list[str]] = defaultdict(list)
    for member, topics in subscriptions.items():
        for t in set(topics):
            members_of[t].append(member)
    out: dict[str, dict[str, list[int]]] = {m: {} for m in subscriptions}
    for topic, members in members_of.items():
        n = partitions_per_topic.get(topic)
        if not n:
            continue
        members.sort()
        share, extra = divmod(n, len(members))
        start = 0
        for i, m in enumerate(members):
            k = share + (1 if i < extra else 0)
            if k:
                out[m][topic] = list(range(start, start + k))
            start += k
    return out


def roundrobin_assign(
    subscriptions: Mapping[str, Iterable[str]], partitions_per_topic: Mapping[str, int]
) -> dict[str, dict[str, list[int]]]:
    """Kafka's RoundRobinAssignor: every subscribed topic-partition, sorted by topic then partition, is
    dealt in turn to the members sorted by member id; a member not subscribed to a partition's topic is
    passed over (the turn moves on to the next member that is).

    With identical subscriptions the members' counts differ by at most one; with different ones the
    result can be lopsided, exactly as in Java (the dealer does not rebalance). Arguments and result as
    :func:`range_assign`. Members are ordered by member id only: kafkawire joins without a
    ``group.instance.id`` (KIP-345), so the static-members-first ordering of Java's assignor never applies.
    """
    topics_of = {m: set(ts) for m, ts in subscriptions.items()}
    members = sorted(topics_of)
    out: dict[str, dict[str, list[int]]] = {m: {} for m in members}
    if not members:
        return out
    topics = sorted({t for ts in topics_of.values() for t in ts if partitions_per_topic.get(t)})
    turn = 0  # index into ``members`` of the member whose turn it is
    for topic in topics:
        for partition in range(partitions_per_topic[topic]):
            # Someone subscribes to ``topic`` (it came from the subscriptions), so this ends within a lap.
            while topic not in topics_of[members[turn]]:
                turn = (turn + 1) % len(members)
            out[members[turn]].setdefault(topic, []).append(partition)
            turn = (turn + 1) % len(members)
    return out


#: Partition assignors by the name a member announces in JoinGroup (the names Java uses).

