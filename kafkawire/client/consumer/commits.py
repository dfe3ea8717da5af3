"""The consumer's offset commits: :meth:`Consumer.commit`, the periodic auto-commit, and the commits before a
rebalance, a revocation or ``close()``.

The periodic auto-commit is handed to the group member's heartbeat thread
(:meth:`kafkawire.client.group.heartbeat.HeartbeatThread.commit_async`) and sent with a deadline of its own,
the request timeout, as the Java consumer commits asynchronously from ``poll()``: a commit squeezed into
what is left of a short ``poll(timeout_ms=200)`` used to fail ("did not complete after 0.2 s"). Its result
is collected by a later ``poll()`` (a failure is logged and counted; the positions stay uncommitted and the
next interval tries again, which at worst re-delivers records). The commits that must be done before
something else happens (before a rebalance gives partitions up, before ``close()`` leaves) stay
synchronous, after waiting for a background commit still under way so that an older commit never lands
after a newer one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..cluster.retry import is_retriable
from ..errors import CommitFailedError
from ..net.deadline import Deadline
from .offsets import OffsetSpec, offset_of

if TYPE_CHECKING:
    from ..client import Client
    from ..group.heartbeat import HeartbeatThread

__all__ = ["Commits"]

log = logging.getLogger("kafkawire.consumer")

TopicPartition = tuple[str, int]


class Commits:
    """Commits of one consumer's positions for ``group_id``.

    ``committed`` holds what is known to be committed per partition (so that an unchanged position is not
    committed again): the consumer's :class:`~kafkawire.client.consumer.subscription.SubscriptionState` owns it
    and forgets it on a rebalance; ``counters`` is the consumer's counter dict (``commit_failures``).
    ``epoch_of(tp, offset)``: the leader epoch of the record before ``offset`` when the consumer knows it
    (-1 otherwise); it is committed with the offset (``committed_leader_epoch``, KIP-320), as the Java
    consumer does, so a consumer starting from the commit can validate its position against truncation.
    """

    def __init__(
        self,
        client: Client,
        group_id: str | None,
        *,
        auto: bool,
        interval_ms: float,
        counters: dict[str, int],
        upkeep: HeartbeatThread | None = None,
        committed: dict[TopicPartition, int] | None = None,
        epoch_of: Callable[[TopicPartition, int], int] | None = None,
    ) -> None:
        self.client = client
        self.group_id = group_id
        self.auto = auto
        self.interval_ms = interval_ms
        self.counters = counters
        self.upkeep = upkeep
        self.committed: dict[TopicPartition, int] = {} if committed is None else committed
        self.epoch_of = epoch_of
        self.last = time.monotonic()

    def _with_epochs(self, todo: Mapping[TopicPartition, int]) -> dict[TopicPartition, OffsetSpec]:
        """``todo`` as the commit sends it: each offset with its leader epoch when known."""
        if self.epoch_of is None:
            return dict(todo)
        out: dict[TopicPartition, OffsetSpec] = {}
        for tp, offset in todo.items():
            epoch = self.epoch_of(tp, offset)
            out[tp] = (offset, "", epoch) if epoch >= 0 else offset
        return out

    def commit(self, todo: Mapping[TopicPartition, int], deadline: Deadline, member: Any) -> None:
        """Commit ``todo`` now: as ``member`` of its generation (a subscribed consumer), or outside any
        membership when ``member`` is None. Raises what the commit raised (logged and counted)."""
        assert self.group_id is not None
        todo = dict(todo)
        try:
            if self.upkeep is not None:
                self.upkeep.wait_commits(deadline)
                self.collect()
            if member is not None:
                if member.generation < 0:
                    why = (
                        "it left the group because poll() was not called within max_poll_interval_ms"
                        if self.upkeep is not None and self.upkeep.expired
                        else "not a member of the current generation"
                    )
                    raise CommitFailedError(
                        f"group {self.group_id!r}: {why} (it rejoins on the next poll), so the commit was refused"
                    )
                member.commit(self._with_epochs(todo), deadline)
            else:
                self.client.commit_offsets(self.group_id, self._with_epochs(todo), deadline=deadline)
        except Exception as e:
            self.counters["commit_failures"] += 1
            log.warning("group %s: commit of %s failed: %s", self.group_id, _offsets(todo), e)
            raise
        self.committed.update(todo)
        self.last = time.monotonic()

    def collect(self) -> None:
        """Take in the results of background auto-commits (failures logged and counted)."""
        if self.upkeep is None:
            return
        for offsets, error in self.upkeep.commit_results():
            if error is None:
                self.committed.update({tp: offset_of(spec) for tp, spec in offsets.items()})
            else:
                self.counters["commit_failures"] += 1
                log.warning("group %s: auto-commit of %s failed: %s", self.group_id, _offsets(offsets), error)

    def maybe_commit(
        self, positions: Mapping[TopicPartition, int], deadline: Deadline, member: Any, *, force: bool = False
    ) -> None:
        """Auto-commit ``positions`` when due (or ``force``: synchronously, within ``deadline``). A due
        commit goes to the heartbeat thread when there is one; a failure is logged and left for the next
        interval: the positions stay uncommitted, which at worst re-delivers records."""
        if not self.auto:
            return
        self.collect()
        if member is not None and member.generation < 0:
            return
        due = (time.monotonic() - self.last) * 1000 >= self.interval_ms
        if not (force or due):
            return
        changed = {tp: o for tp, o in positions.items() if self.committed.get(tp) != o}
        if not changed:
            self.last = time.monotonic()
            return
        if not force and self.upkeep is not None and member is not None:
            # A subscribed member: its heartbeat thread sends it. (Manual assignment with a group id commits
            # outside any membership, here, within the poll's deadline.)
            if self.upkeep.commit_async(self._with_epochs(changed)):
                self.last = time.monotonic()
            return
        if deadline.expired():
            return  # (a poll whose time is spent commits on the next one: a commit cut short proves nothing)
        try:
            self.commit(changed, deadline, member)
        except Exception as e:
            if not (isinstance(e, CommitFailedError) or is_retriable(e)):
                raise
            self.last = time.monotonic()

    def commit_revoked(
        self, positions: Mapping[TopicPartition, int], revoked: set[TopicPartition], deadline: Deadline, member: Any
    ) -> None:
        """Auto-commit the positions of ``revoked`` partitions (after the listener ran); a failure is
        logged and left: their records are read again by the next owner (at least once)."""
        if not self.auto:
            return
        todo = {tp: o for tp, o in positions.items() if tp in revoked and self.committed.get(tp) != o}
        if not todo:
            return
        try:
            self.commit(todo, deadline, member)
        except Exception as e:
            if not (isinstance(e, CommitFailedError) or is_retriable(e)):
                raise


def _offsets(todo: Mapping[TopicPartition, OffsetSpec]) -> str:
    return ",".join(f"{t}/{p}@{offset_of(o)}" for (t, p), o in sorted(todo.items()))
