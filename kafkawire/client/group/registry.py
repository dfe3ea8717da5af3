"""Every partition assignor of the classic group protocol in one table, by the Java client's names: what
the leader runs, whether it is cooperative (KIP-429), and what a member's subscription carries for it.

``partition_assignment_strategy`` names entries of :data:`ASSIGNORS`; JoinGroup offers one protocol per
name (each with its own subscription bytes) and the leader runs the one the coordinator chose.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from .assignors import cooperative_sticky_assign, cooperative_user_data, encode_sticky_user_data, sticky_assign
from .payloads import Subscription, encode_subscription, range_assign, roundrobin_assign

__all__ = ["Assignor", "ASSIGNORS", "COOPERATIVE"]

TopicPartition = tuple[str, int]
Plan = dict[str, dict[str, list[int]]]


@dataclass(frozen=True)
class Assignor:
    """One assignor: ``assign(subscriptions, partitions per topic)`` gives each member its partitions;
    ``subscription(topics, owned, generation)`` is the member's JoinGroup metadata for it (the Java
    client's bytes for the same assignor); ``assignment_version`` is the ConsumerProtocolAssignment
    version the leader writes."""

    name: str
    assign: Callable[[Mapping[str, Subscription], Mapping[str, int]], Plan]
    subscription: Callable[[Sequence[str], Collection[TopicPartition], int], bytes]
    cooperative: bool = False
    assignment_version: int = 0


def _topics_only(assign: Callable[[Mapping[str, list[str]], Mapping[str, int]], Plan]) -> Callable[
    [Mapping[str, Subscription], Mapping[str, int]], Plan
]:
    """Range and round-robin look at nothing but each member's topics."""
    return lambda subs, counts: assign({m: s.topics for m, s in subs.items()}, counts)


def _plain_subscription(topics: Sequence[str], owned: Collection[TopicPartition], generation: int) -> bytes:
    # v0 carries all that range and round-robin need.
    return encode_subscription(topics)


def _cooperative_subscription(topics: Sequence[str], owned: Collection[TopicPartition], generation: int) -> bytes:
    # v3: the partitions still owned (KIP-429) and the generation (KIP-792); the user data is the
    # generation too, for leaders older than v2.
    return encode_subscription(
        topics,
        cooperative_user_data(generation),
        owned=sorted(owned) if generation >= 0 else [],
        generation=generation,
        version=3,
    )


def _sticky_subscription(topics: Sequence[str], owned: Collection[TopicPartition], generation: int) -> bytes:
    # Eager: everything was given up before rejoining, so nothing is "owned" now; the previous
    # assignment travels in the user data (Java's StickyAssignor reads it first).
    user = encode_sticky_user_data(owned, generation) if owned else None
    return encode_subscription(topics, user, owned=[], generation=generation, version=3)


#: The assignors kafkawire runs as a group's leader, by the Java client's names.
ASSIGNORS: dict[str, Assignor] = {
    a.name: a
    for a in (
        Assignor("range", _topics_only(range_assign), _plain_subscription),
        Assignor("roundrobin", _topics_only(roundrobin_assign), _plain_subscription),
        Assignor("sticky", sticky_assign, _sticky_subscription, assignment_version=3),
        Assignor(
            "cooperative-sticky",
            cooperative_sticky_assign,
            _cooperative_subscription,
            cooperative=True,
            assignment_version=3,
        ),
    )
}

#: Names of the assignors that support the cooperative (incremental) rebalance protocol (KIP-429).
COOPERATIVE = frozenset(name for name, a in ASSIGNORS.items() if a.cooperative)
