"""The consumer's side of group membership: what a rebalance does to its partitions (the role of the Java
client's ``ConsumerCoordinator`` on the classic protocol and of its ``ConsumerMembershipManager`` on
KIP-848's).

:class:`Reconciler` runs from each ``poll()`` round (:meth:`Reconciler.upkeep`) and applies what the group
member (:mod:`kafkawire.client.group.classic`, :mod:`kafkawire.client.group.kip848`) learnt to the consumer's
:class:`~kafkawire.client.consumer.subscription.SubscriptionState`:

* eager assignors (range, roundrobin, sticky): before rejoining every partition is given up (listener, then
  the auto-commit of the positions reached); the new generation's partitions all restart from the committed
  offset (:meth:`Reconciler.assigned`);
* cooperative-sticky (KIP-429): only the partitions that move are revoked and the member rejoins at once;
  kept ones go on from their positions (:meth:`Reconciler.assigned_incrementally`);
* the consumer protocol (KIP-848): the coordinator's target assignment is reconciled partition by
  partition and acknowledged by the next heartbeat (:meth:`Reconciler.reconcile`);

and a lost membership (fenced, or the poll timer of KIP-62) gives everything up as lost, without a commit.
Listener callbacks run here, in the polling thread, in the order the Java consumer calls them; what one
raises is logged and raised from the ``poll()`` (or ``unsubscribe()``) under way once the state is in place.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from ..group.classic import GroupMember
from ..group.heartbeat import HeartbeatThread
from ..group.kip848 import ConsumerGroupMember
from ..net.deadline import Deadline
from .listeners import call_listener
from .subscription import SubscriptionState, TopicPartition, names

if TYPE_CHECKING:
    from .commits import Commits
    from .consumer import Consumer

__all__ = ["REBALANCE_NEXT", "Reconciler", "join_group"]

log = logging.getLogger("kafkawire.consumer")

#: What :meth:`Reconciler.upkeep` returns to end a ``poll()`` early: a rebalance is for the start of the next one.
REBALANCE_NEXT: dict[Any, Any] = {}


def join_group(consumer: Consumer, group_id: str) -> tuple[GroupMember | ConsumerGroupMember, HeartbeatThread]:
    """``consumer``'s membership of ``group_id`` (KIP-848's ``consumer`` protocol or the classic one, from its
    settings) and the member's heartbeat thread (KIP-62), not started yet."""
    member: GroupMember | ConsumerGroupMember
    # What both protocols take: the rebalance timeout (KIP-62) and the static member id (KIP-345).
    both: dict[str, Any] = {
        "rebalance_timeout_ms": consumer.rebalance_timeout_ms,
        "group_instance_id": consumer.group_instance_id,
    }
    if consumer.group_protocol == "consumer":
        # KIP-848 carries client.rack for rack-aware assignors.
        rack = consumer.client.client_rack
        member = ConsumerGroupMember(
            consumer.client, group_id, server_assignor=consumer.group_remote_assignor, rack_id=rack, **both
        )
    else:
        member = GroupMember(
            consumer.client,
            group_id,
            assignors=consumer.partition_assignment_strategy,
            session_timeout_ms=consumer.session_timeout_ms,
            heartbeat_interval_ms=consumer.heartbeat_interval_ms,
            **both,
        )
    upkeep = HeartbeatThread(
        member,
        max_poll_interval_ms=consumer.max_poll_interval_ms,
        request_timeout_ms=consumer.client.request_timeout_ms,
        heartbeat_timeout_ms=consumer.session_timeout_ms if consumer.group_protocol == "classic" else None,
    )
    return member, upkeep


class Reconciler:
    """Applies one group member's rebalances to a consumer's :class:`SubscriptionState`.

    ``consumer`` gives the settings read when they are used (``group_id``, ``listener``, which
    ``subscribe()`` may replace, ``metadata_max_age_ms``, ``exclude_internal_topics``, ``client``);
    ``commits`` sends the auto-commits before partitions go; its ``counters`` (the consumer's counter dict)
    count ``rebalances``, ``partitions_revoked`` and ``partitions_lost`` too.
    """

    def __init__(
        self,
        consumer: Consumer,
        member: GroupMember | ConsumerGroupMember,
        upkeep: HeartbeatThread,
        state: SubscriptionState,
        commits: Commits,
    ) -> None:
        self.consumer = consumer
        self.member, self.upkeep = member, upkeep
        self.state = state
        self.commits = commits
        self.counters = commits.counters  # the consumer's counter dict, shared
        self.listener_error: BaseException | None = None
        self.given_up: set[TopicPartition] = set()  # what the last rebalance took away (for the log)
        self.first_reconciliation = True

    # ------------------------------------------------------------------------------------ poll round
    def upkeep_round(self, deadline: Deadline, first: bool) -> dict[Any, Any] | None:
        """The group's part of one ``poll()`` round: act on what the heartbeat thread learnt, follow the
        pattern, reconcile or rejoin. None when the round goes on to fetch; else what the round returns
        (:data:`REBALANCE_NEXT` ends the ``poll()``, an empty dict lets it try again)."""
        member, upkeep = self.member, self.upkeep
        if not first and (upkeep.expired or member.revocation_pending()):
            # The heartbeat thread learnt of a rebalance during this poll: give partitions up (listener,
            # commit) at the start of the next poll, with its whole timeout for the commit, rather than
            # with what is left of this one.
            return REBALANCE_NEXT
        if upkeep.polled():
            # KIP-62: the heartbeat thread left the group (max_poll_interval_ms); give up and rejoin.
            log.info("group %s: rejoining after the poll timeout", self.consumer.group_id)
            if isinstance(member, ConsumerGroupMember):
                self.lose_all()
            member.allow_rejoin()
        if upkeep.fatal is not None:
            raise upkeep.fatal
        if self.state.pattern is not None:
            self.refresh_pattern(deadline)
        if isinstance(member, ConsumerGroupMember):
            self.reconcile(member, deadline)
            self.raise_listener_error()
        elif member.needs_rejoin:
            return self.rejoin(member, deadline)
        return None

    def rejoin(self, member: GroupMember, deadline: Deadline) -> dict[Any, Any] | None:
        """Classic protocol: join the group again (resumed by the next round while the join is under way)."""
        if not member.cooperative or member.generation < 0:
            # Eager, or the membership was lost: once per rebalance, after this the assignment is empty
            # until the join completes.
            self.give_up(deadline)
            self.raise_listener_error()
        assigned = member.join(deadline)
        if assigned is None and not member.cooperative:
            return {}  # the rebalance is still under way; the next round resumes it
        if assigned is not None:
            if member.cooperative:
                self.assigned_incrementally(member, assigned, deadline)
            else:
                self.assigned(member, assigned)
            self.raise_listener_error()
        # (Cooperative: a member keeps reading what it owns while the rebalance goes on.)
        return None

    def refresh_pattern(self, deadline: Deadline) -> None:
        """Match the pattern against the cluster's topics when the metadata is older than
        ``metadata_max_age_ms``; rejoin when the set of matching topics changed."""
        state, settings = self.state, self.consumer
        pattern = state.pattern
        assert pattern is not None
        now = time.monotonic()
        if (now - state.pattern_checked) * 1000 < settings.metadata_max_age_ms:
            return
        meta = settings.client.metadata(None, deadline=deadline)
        state.pattern_checked = now
        matched = sorted(
            name
            for name, tm in meta.topics.items()
            if tm.error is None
            and not (settings.exclude_internal_topics and (tm.is_internal or name.startswith("__")))
            and pattern.fullmatch(name)
        )
        if matched != state.topics:
            log.info("group %s: pattern %r now matches %s", settings.group_id, pattern.pattern, matched)
            state.topics = matched
            self.member.set_subscription(matched)

    # ------------------------------------------------------------------------------- classic protocol
    def assigned(self, member: GroupMember, assigned: list[TopicPartition]) -> None:
        """A new generation's assignment arrived.

        Eager rebalancing (the Java consumer's range and round-robin assignors): every partition, kept or
        gained, restarts from the group's committed offset. Keeping the position ``poll`` had reached
        would skip the records read but not committed: the member may have lost its membership while
        they were being processed (their commit then fails with :class:`CommitFailedError`), and another
        member may even have read and committed the partition meanwhile.
        """
        before = self.given_up
        after = set(assigned)
        self.counters["rebalances"] += 1
        log.info(
            "group %s: generation %d: assigned %s (kept %d, gained %s, revoked %s)",
            self.consumer.group_id,
            member.generation,
            names(after),
            len(before & after),
            names(after - before),
            names(before - after),
        )
        self.state.replace(after)
        member.owned = set(after)  # what a sticky assignor's user data reports at the next join
        self.given_up = set()
        # After the state is in place, so that the listener may seek() or pause() the new partitions.
        self.fire("assigned", self.state.assignment)

    def assigned_incrementally(self, member: GroupMember, assigned: list[TopicPartition], deadline: Deadline) -> None:
        """Cooperative rebalancing (KIP-429, Java's ``cooperative-sticky``): only what moves is revoked.

        Partitions missing from the new assignment are revoked (listener, then the auto-commit of their
        positions) and the member rejoins at once, so that the next rebalance can hand them to their new
        owner; partitions new in it are added (from the committed offset) and ``on_partitions_assigned``
        gets just those; kept partitions keep their positions. The order of the callbacks is Java's.
        """
        current, new = set(self.state.assignment), set(assigned)
        revoked, added = current - new, new - current
        self.counters["rebalances"] += 1
        log.info(
            "group %s: generation %d: assigned %s (added %s, revoked %s)",
            self.consumer.group_id,
            member.generation,
            names(new),
            names(added),
            names(revoked),
        )
        if revoked:
            self.revoke(revoked, deadline)
            member.needs_rejoin = True  # the second rebalance of KIP-429
        self.state.add(added)
        member.owned = set(new)
        self.fire("assigned", sorted(added))

    def give_up(self, deadline: Deadline) -> None:
        """Before rejoining (eager protocol), leaving or unsubscribing: hand every partition back.

        Still a member of the generation: ``on_partitions_revoked``, then the auto-commit of the
        positions reached (after the callback, so what it processed is committed). No longer a member
        (the generation was fenced or the session expired): ``on_partitions_lost`` and no commit, the
        partitions may already be someone else's. Nothing held: no callback (as in Java).
        """
        held = list(self.state.assignment)
        if held:
            if self.member.generation >= 0:
                self.counters["partitions_revoked"] += len(held)
                self.fire("revoked", held)
                try:
                    self.commits.maybe_commit(self.state.positions, deadline, self.member, force=True)
                except Exception as e:
                    log.warning(
                        "group %s: commit before giving up %s failed: %s", self.consumer.group_id, names(held), e
                    )
            else:
                self.counters["partitions_lost"] += len(held)
                self.fire("lost", held)
            self.given_up = set(held)  # (a poll that finds nothing held, mid-rebalance, keeps the record)
        self.state.clear()

    # ------------------------------------------------------------------------------ KIP-848 protocol
    def reconcile(self, member: ConsumerGroupMember, deadline: Deadline) -> None:
        """Consumer protocol (KIP-848): apply what the coordinator answered to the heartbeats.

        Partitions missing from the new target are revoked (listener, then the auto-commit of their
        positions with the current member epoch) and dropped; partitions new in it are added (they start
        from the committed offset) and ``on_partitions_assigned`` gets just those, as in Java's consumer
        on this protocol. Kept partitions keep their positions: nothing stopped for them. The next
        heartbeat acknowledges the new set, which lets the coordinator give the revoked ones away.
        """
        result = member.take_reconciliation()
        if result is None:
            return
        if result.lost is not None:
            self.lose_all()
            member.released()  # now the heartbeat thread rejoins
            return
        target = result.assigned
        assert target is not None
        state = self.state
        current = set(state.assignment)
        revoked, added = current - target, target - current
        if revoked:
            self.revoke(revoked, deadline)
        if added:
            state.add(added)
        if added or revoked or self.first_reconciliation:
            self.first_reconciliation = False
            self.counters["rebalances"] += 1
            log.info(
                "group %s: epoch %d: assigned %s (added %s, revoked %s)",
                self.consumer.group_id,
                member.epoch,
                names(state.assignment),
                names(added),
                names(revoked),
            )
            self.fire("assigned", sorted(added))
        member.acknowledge(set(state.assignment))

    # ------------------------------------------------------------------------------------- shared
    def revoke(self, revoked: set[TopicPartition], deadline: Deadline) -> None:
        """Some partitions go (cooperative, KIP-848): ``on_partitions_revoked``, the auto-commit of their
        positions, then they are dropped."""
        self.counters["partitions_revoked"] += len(revoked)
        self.fire("revoked", sorted(revoked))
        self.commits.commit_revoked(self.state.positions, revoked, deadline, self.member)
        self.state.drop(revoked)

    def lose_all(self) -> None:
        """The membership was lost (KIP-848 fencing, or the poll timer): every partition held goes, with
        ``on_partitions_lost`` and no commit (they may be someone else's already)."""
        held = list(self.state.assignment)
        if held:
            self.counters["partitions_lost"] += len(held)
            self.fire("lost", held)
        self.state.drop(held)
        self.first_reconciliation = True

    def fire(self, event: str, partitions: list[TopicPartition]) -> None:
        """Call the listener's ``on_partitions_<event>``; what it raises is kept for :meth:`raise_listener_error`."""
        err = call_listener(self.consumer.listener, event, partitions)
        if err is not None:
            log.error("group %s: on_partitions_%s raised %r", self.consumer.group_id, event, err)
            if self.listener_error is None:
                self.listener_error = err

    def raise_listener_error(self) -> None:
        err, self.listener_error = self.listener_error, None
        if err is not None:
            raise err

    # -------------------------------------------------------------------------------- leaving
    def unsubscribe(self, deadline: Deadline) -> None:
        """``unsubscribe()``: revoke (listener, then auto-commit) and leave the group (a static member too);
        the member may subscribe again afterwards."""
        try:
            self.give_up(deadline)
            self.member.unsubscribed()
            self.member.leave(deadline, static_too=True)
        finally:
            self.state.unsubscribe()
            self.member.allow_rejoin()  # may subscribe again
        self.raise_listener_error()

    def close(self, deadline: Deadline) -> None:
        """``close()``: the listener, then the final auto-commit (only while a member of a generation; never
        raises), stop the heartbeat thread and leave the group (a static member stays, KIP-345)."""
        self.give_up(deadline)
        self.listener_error = None  # already logged; close() never raises
        # Leave even in the middle of a rebalance (as the Java consumer does once it has a member id): the
        # coordinator then completes it without waiting for us.
        self.member.unsubscribed()
        self.upkeep.close(deadline.remaining())
        self.member.leave(deadline)
