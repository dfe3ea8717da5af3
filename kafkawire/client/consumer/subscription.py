"""What one :class:`~kafkawire.client.Consumer` reads and where it stands in it: the one home of the consumer's
state (the role of the Java client's ``SubscriptionState``).

The subscribed topics (or pattern), the partitions assigned, the position of each (with the KIP-320 leader
epochs it is validated against), what is known to be committed, which partitions are paused and the high
watermark of each partition's last fetch. Everything that changes the assignment changes all of it here,
in one place: a manual :meth:`~SubscriptionState.assign`, an eager rebalance's new generation
(:meth:`~SubscriptionState.replace`), giving every partition up before a rejoin, ``unsubscribe()`` or
``close()`` (:meth:`~SubscriptionState.clear`), and a cooperative or KIP-848 revocation
(:meth:`~SubscriptionState.drop`). The state is the polling thread's own: no lock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["SubscriptionState", "TopicPartition", "names"]

TopicPartition = tuple[str, int]


class SubscriptionState:
    """A consumer's subscription, assignment and per-partition state.

    ``committed`` is shared with the consumer's :class:`~kafkawire.client.consumer.commits.Commits` (what is
    known to be committed, so that an unchanged position is not committed again): it is only ever changed in
    place, never rebound.
    """

    def __init__(self) -> None:
        self.topics: list[str] | None = None  # None: not subscribed; for a pattern, the topics it matched
        self.pattern: re.Pattern[str] | None = None
        self.pattern_checked = float("-inf")  # time.monotonic() of the last metadata check of the pattern
        self.assignment: list[TopicPartition] = []
        self.positions: dict[TopicPartition, int] = {}
        # KIP-320: the leader epoch of the last record read before each position (absent: unknown, as after
        # seek()), and the partition leader's epoch that position was last checked against.
        self.epochs: dict[TopicPartition, int] = {}
        self.leader_epochs: dict[TopicPartition, int] = {}
        self.out_of_range_checked: set[TopicPartition] = set()  # validated once after OFFSET_OUT_OF_RANGE
        self.committed: dict[TopicPartition, int] = {}
        self.paused: set[TopicPartition] = set()
        self.high_watermarks: dict[TopicPartition, int] = {}

    # ---------------------------------------------------------------------------------- subscription
    @property
    def subscribed(self) -> bool:
        """True while subscribed to topics or a pattern (a group member), False unsubscribed or assigned."""
        return self.topics is not None

    def subscribe(self, topics: Iterable[str] | None, pattern: re.Pattern[str] | None) -> list[str]:
        """Subscribe to ``topics`` or ``pattern`` (matched later: no topic yet); the topics subscribed to."""
        self.pattern = pattern
        if pattern is not None:
            self.pattern_checked = float("-inf")
            self.topics = []
        else:
            assert topics is not None
            self.topics = sorted(set(topics))
        return self.topics

    def unsubscribe(self) -> None:
        self.topics, self.pattern = None, None

    # ------------------------------------------------------------------------------------ assignment
    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """A manual assignment: exactly ``partitions``; the positions and pauses of the others go."""
        self.assignment = sorted(set(partitions))
        kept = set(self.assignment)
        self.positions = {tp: p for tp, p in self.positions.items() if tp in kept}
        self.paused &= kept

    def replace(self, assigned: Iterable[TopicPartition]) -> None:
        """An eager rebalance's new assignment: every partition restarts from its committed offset, so no
        position, commit or pause is kept (watermarks are, for the partitions still held)."""
        after = set(assigned)
        self.assignment = sorted(after)
        self._forget_positions()
        self.high_watermarks = {tp: hw for tp, hw in self.high_watermarks.items() if tp in after}

    def clear(self) -> None:
        """Every partition given up (before an eager rejoin, ``unsubscribe()``, ``close()``)."""
        self.assignment = []
        self._forget_positions()

    def add(self, partitions: Iterable[TopicPartition]) -> None:
        """Partitions gained in a cooperative or KIP-848 rebalance (they start from the committed offset)."""
        self.assignment = sorted(set(self.assignment).union(partitions))

    def drop(self, partitions: Iterable[TopicPartition]) -> None:
        """Partitions revoked or lost one by one (cooperative, KIP-848): everything known of them goes."""
        gone = set(partitions)
        self.assignment = [tp for tp in self.assignment if tp not in gone]
        for tp in gone:
            self.positions.pop(tp, None)
            self.high_watermarks.pop(tp, None)
            self.committed.pop(tp, None)
        self.paused -= gone

    def _forget_positions(self) -> None:
        self.positions.clear()
        self.committed.clear()
        self.paused.clear()

    # ----------------------------------------------------------------------------------------- pause
    def epoch_at(self, tp: TopicPartition, offset: int) -> int:
        """The leader epoch of the record before ``offset`` in ``tp`` when ``offset`` is the position and
        that epoch is known (what a commit of the position carries, KIP-320), else -1."""
        if self.positions.get(tp) != offset:
            return -1
        return self.epochs.get(tp, -1)

    def pause(self, partitions: Iterable[TopicPartition]) -> None:
        """Pause assigned ``partitions``; ValueError naming those not assigned."""
        tps = set(partitions)
        unassigned = tps - set(self.assignment)
        if unassigned:
            raise ValueError(f"pause: not assigned to this consumer: {names(unassigned)}")
        self.paused |= tps

    def fetchable(self) -> list[TopicPartition]:
        """The assigned partitions not paused, in assignment order."""
        paused = self.paused
        return [tp for tp in self.assignment if tp not in paused]

    # --------------------------------------------------------------------------------------- metrics
    def partition_metrics(self) -> dict[TopicPartition, dict[str, int | None]]:
        """``{tp: {"position", "high_watermark", "lag"}}`` for each assigned partition (lag: None until both
        are known)."""
        out: dict[TopicPartition, dict[str, int | None]] = {}
        for tp in self.assignment:
            pos = self.positions.get(tp)
            hw = self.high_watermarks.get(tp)
            lag = None if pos is None or hw is None else max(0, hw - pos)
            out[tp] = {"position": pos, "high_watermark": hw, "lag": lag}
        return out


def names(tps: Iterable[TopicPartition]) -> str:
    """``t/0,t/1`` for a log line ("-" when empty)."""
    return ",".join(f"{t}/{p}" for t, p in sorted(tps)) or "-"
