"""Membership of a classic consumer group: JoinGroup, SyncGroup, Heartbeat, LeaveGroup and group commits.

:class:`GroupMember` holds this member's id and generation and speaks to the group coordinator through
the public pieces of :class:`~kafkawire.client.Client` (``coordinator()``, ``forget_coordinator()``,
``lock``, ``metadata()``, ``commit_offsets()``, ``cluster.new_connection()``). Every method takes the
caller's :class:`~kafkawire.client.net.deadline.Deadline` (``Consumer.poll``'s, or ``close``'s) and returns or
raises when it passes, so a poll returns on time however the coordinator behaves.

A JoinGroup (or a follower's SyncGroup) is answered only once every member has rejoined, which can take
up to the rebalance timeout. It is therefore sent and awaited by a waiter thread on a connection of its
own, bounded by the rebalance timeout plus the request timeout; :meth:`GroupMember.join` waits for it
only until the caller's deadline and returns None while it is pending, and the next call goes on waiting
for the same request. (Abandoning it and sending a new one each poll never completed on Tansu, whose
first join of a new group waits half the session timeout: a consumer polling every 500 ms never joined.)

Heartbeats are sent by the member's background thread (:mod:`kafkawire.client.group.heartbeat`, KIP-62),
on a connection of its own, while the member holds a generation; ``lock`` guards the state that thread
shares with the polling thread (see that module for the rules).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...protocol import HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest, SyncGroupRequest
from ...protocol.errors import (
    FencedInstanceIdError,
    IllegalGenerationError,
    MemberIdRequiredError,
    RebalanceInProgressError,
    UnknownMemberIdError,
    broker_error,
)
from ..cluster.retry import is_retriable
from ..consumer.offsets import OffsetSpec, commit_as_member
from ..errors import CommitFailedError, KafkaClientError, KafkaTimeoutError
from ..net.deadline import Deadline
from .leave import say_goodbye
from .payloads import decode_assignment
from .rebalance import join_protocols, leader_assignments
from .registry import COOPERATIVE

if TYPE_CHECKING:
    from ..client import Client
    from .heartbeat import CoordinatorLink

__all__ = ["CommitFailedError", "GroupMember", "TopicPartition"]

log = logging.getLogger("kafkawire.consumer")

TopicPartition = tuple[str, int]

# Errors that mean "this member is no longer part of the current generation": rejoin.
_MEMBERSHIP_LOST = (UnknownMemberIdError, IllegalGenerationError, FencedInstanceIdError)


class GroupMember:
    """This process's membership of consumer group ``group_id`` (see the module docstring).

    ``assignors`` are partition assignor names (:data:`~kafkawire.client.group.registry.ASSIGNORS`), most preferred
    first. ``needs_rejoin`` is True until :meth:`join` succeeds, and again after the coordinator
    announces a rebalance or refuses this member.
    """

    def __init__(
        self,
        client: Client,
        group_id: str,
        *,
        assignors: Sequence[str],
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
        heartbeat_interval_ms: float,
        group_instance_id: str | None = None,
    ) -> None:
        self.client, self.group_id, self.group_instance_id = client, group_id, group_instance_id
        self.assignors = tuple(assignors)
        self.session_timeout_ms, self.rebalance_timeout_ms = session_timeout_ms, rebalance_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.member_id, self.generation, self.needs_rejoin = "", -1, True
        self.topics: list[str] = []
        #: The partitions this member holds when it joins (cooperative) or held before it gave them up
        #: (eager): reported in the subscription so sticky assignors can keep them where they are.
        self.owned: set[TopicPartition] = set()
        #: KIP-429: incremental rebalancing only when every assignor offered supports it (Java's rule).
        self.cooperative = all(a in COOPERATIVE for a in self.assignors)
        #: Partitions the leader (this member) withheld in its last assignment because they change owner.
        self.withheld = 0
        self._refresh_coordinator = False
        self._last_heartbeat_at = 0.0  # time.monotonic() of the last answered heartbeat (or join)
        self._pending: _PendingJoin | None = None  # a JoinGroup + SyncGroup awaited by the waiter thread
        self._join_conn: Any = None  # the waiter's own connection to the coordinator
        self._left = False
        #: Guards the state the heartbeat thread shares with the polling thread (never held during I/O);
        #: ``changed`` wakes the heartbeat thread (:mod:`kafkawire.client.group.heartbeat`).
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        #: True between ``subscribe()`` and ``unsubscribe()``: only then does the member heartbeat.
        self.subscribed = False

    # ----------------------------------------------------------------------------------- membership
    @property
    def active(self) -> bool:
        """True while this member holds an assignment of a generation the coordinator has not revoked."""
        return self.generation >= 0 and not self.needs_rejoin

    def reset(self, err: BaseException) -> None:
        """Forget the generation after ``err`` (and the member id too, unless it was ILLEGAL_GENERATION).

        ILLEGAL_GENERATION means the group moved on without us but still knows our member id. Rejoining
        under a fresh id would leave the old id in the group, and the coordinator would wait for it to
        rejoin until the rebalance timeout. The Java consumer keeps the member id in this case
        (``AbstractCoordinator.resetStateAndGeneration(reason, shouldResetMemberId=false)``).
        """
        with self.lock:
            if not isinstance(err, IllegalGenerationError):
                self.member_id = ""
            self.generation = -1
            self.needs_rejoin = True

    def set_subscription(self, topics: list[str]) -> None:
        """Subscribe to ``topics`` (rejoining on the next poll)."""
        with self.lock:
            self.topics = list(topics)
            self.subscribed = True
            self.needs_rejoin = True
            self.changed.notify_all()

    def unsubscribed(self) -> None:
        """No subscription any more: no heartbeats until the next :meth:`set_subscription`."""
        with self.lock:
            self.subscribed = False

    def _conn(self, deadline: Deadline) -> Any:
        refresh, self._refresh_coordinator = self._refresh_coordinator, False
        return self.client.coordinator(self.group_id, refresh=refresh, deadline=deadline)

    def _connection_failed(self) -> None:
        """Look the coordinator up again next time (it may have moved, or its connection broke)."""
        self._refresh_coordinator = True
        self.client.forget_coordinator(self.group_id)

    def join(self, deadline: Deadline) -> list[TopicPartition] | None:
        """JoinGroup + SyncGroup: the partitions assigned to this member in a new generation.

        Returns None when ``deadline`` passed while the coordinator was still holding the request (the
        wait for other members): call again and the same request goes on being awaited. Retriable errors
        (finding or reaching the coordinator) are retried until the deadline; the last one is then raised
        as the cause of a :class:`KafkaTimeoutError`. Errors that waiting cannot cure are raised at once.
        """
        last: BaseException | None = None
        attempt = 0
        while True:
            if self._pending is None:
                if deadline.expired():
                    break
                attempt += 1
                try:
                    self._start_join(deadline)
                except Exception as e:
                    last = self._join_failed(e, attempt, deadline)
                    continue
            pending = self._pending
            assert pending is not None
            if not pending.done.wait(deadline.remaining()):
                log.debug("group %s: rebalance still under way", self.group_id)
                return None  # the coordinator still holds our request: not an error, just not done yet
            self._pending = None
            if pending.error is not None:
                attempt += 1
                last = self._join_failed(pending.error, attempt, deadline)
                continue
            with self.lock:
                if pending.assigned is not None:
                    # Applied here, in the caller's thread, so that ``generation`` never runs ahead of the
                    # assignment the consumer has taken on. (The heartbeat thread voids it when the
                    # coordinator refused that generation meanwhile.)
                    self.generation, assigned = pending.assigned
                    self.needs_rejoin = False
                    self._last_heartbeat_at = time.monotonic()
                    self.changed.notify_all()
                    return assigned
        if last is not None:
            err = KafkaTimeoutError(
                f"could not join group {self.group_id!r} within {deadline.timeout or 0:.1f} s: {last}"
            )
            err.last_error = last
            raise err from last
        return None

    def _join_failed(self, e: BaseException, attempt: int, deadline: Deadline) -> BaseException:
        """Join attempt ``attempt`` failed with ``e``: raise it when retrying cannot cure it, else look the
        coordinator up again after a backoff and return it (the last error, should time run out)."""
        if not is_retriable(e):
            raise e
        log.debug("group %s: join attempt %d failed: %s", self.group_id, attempt, e)
        self._connection_failed()
        deadline.sleep(self.client.retry_policy.backoff(attempt))
        return e

    def _start_join(self, deadline: Deadline) -> None:
        """Find and connect to the coordinator within ``deadline`` (so that an unreachable one is
        reported by the caller's ``poll``), then send JoinGroup + SyncGroup from a waiter thread.

        The waiter has a connection of its own: the coordinator holds a JoinGroup until every member
        has rejoined (up to the rebalance timeout), and a connection waiting for it can carry nothing
        else. The Java consumer's network thread plays this part.
        """
        with self.client.cluster.held(deadline, f"join group {self.group_id!r}"):
            conn = self._conn(deadline)
            where = (conn.host, conn.port, conn.node_id)
        join_conn = self._join_conn
        if join_conn is None or (join_conn.host, join_conn.port) != where[:2]:
            if join_conn is not None:
                join_conn.close()
            join_conn = self._join_conn = self.client.cluster.new_connection(*where)
        join_conn.connect(deadline=deadline)
        pending = _PendingJoin()
        self._pending = pending

        def run() -> None:
            try:
                pending.assigned = self._join_once(join_conn)
            except BaseException as e:  # handed to join() in the polling thread
                pending.error = e
            finally:
                pending.done.set()
                if self._left:
                    join_conn.close()

        threading.Thread(target=run, name=f"kafkawire-join-{self.group_id}", daemon=True).start()

    def _join_once(self, conn: Any) -> tuple[int, list[TopicPartition]] | None:
        """One JoinGroup (+ SyncGroup) on ``conn``: the generation and this member's partitions; None
        when the coordinator asks to try again at once."""
        join = JoinGroupRequest(
            group_id=self.group_id,
            session_timeout_ms=self.session_timeout_ms,
            rebalance_timeout_ms=self.rebalance_timeout_ms,
            member_id=self.member_id,
            group_instance_id=self.group_instance_id,
            protocol_type="consumer",
            protocols=join_protocols(self.assignors, self.topics, self.owned, self.generation),
        )
        # The coordinator may hold it up to the rebalance timeout, and then the answer must still arrive.
        wait_ms = self.rebalance_timeout_ms + conn.request_timeout_ms
        version = conn.version_for(JoinGroupRequest)
        if self.group_instance_id is not None and version < 5:
            # KIP-345 needs JoinGroup v5; joining as a dynamic member instead would silently lose the
            # "restart without a rebalance" the caller asked for.
            raise KafkaClientError(
                f"group {self.group_id!r}: the coordinator does not support static membership "
                f"(group_instance_id needs JoinGroup v5+, it offers v{version})"
            )
        resp = conn.request(join, version, timeout_ms=wait_ms)
        if self._left:
            return None
        err = broker_error(resp.error_code, None, f"join group {self.group_id!r}")
        if isinstance(err, MemberIdRequiredError):
            # KIP-394: the first join only obtains a member id. (Tansu asks for it on v0-v3 too, which
            # predate KIP-394: the same answer works.)
            self.member_id = resp.member_id
            return None
        if self._join_again(err):
            return None
        self.member_id = resp.member_id
        generation = resp.generation_id
        # protocol_name is nullable only from v7 on (KIP-559); a coordinator that leaves it out can only
        # have chosen among what we offered, so fall back to our first choice.
        protocol = resp.protocol_name or self.assignors[0]
        assignments: list[Any] = []
        if resp.leader == resp.member_id and not resp.skip_assignment:  # False below v9
            # KIP-814: a static leader that rejoined without a rebalance is told to skip the assignment;
            # SyncGroup with no assignments then hands back the current one.
            assignments, self.withheld = leader_assignments(
                self.client, self.group_id, protocol, resp.members, Deadline.from_ms(conn.request_timeout_ms)
            )
        sync = SyncGroupRequest(
            group_id=self.group_id,
            generation_id=generation,
            member_id=self.member_id,
            group_instance_id=self.group_instance_id,
            protocol_type="consumer",
            protocol_name=protocol,
            assignments=assignments,
        )
        sresp = conn.request(sync, conn.version_for(SyncGroupRequest), timeout_ms=wait_ms)
        if self._left:
            return None
        if self._join_again(broker_error(sresp.error_code, None, f"sync group {self.group_id!r}")):
            return None
        assigned = decode_assignment(sresp.assignment)
        return generation, sorted((t, p) for t, ps in assigned.items() for p in ps)

    def _join_again(self, err: BaseException | None) -> bool:
        """A JoinGroup's or SyncGroup's error: False for none, True to join again (membership lost, or a
        rebalance began); raised when rejoining cannot cure it (FENCED_INSTANCE_ID included)."""
        _raise_if_fenced(err)
        if isinstance(err, _MEMBERSHIP_LOST):
            self.reset(err)
            return True
        if isinstance(err, RebalanceInProgressError):
            return True
        if err is not None:
            raise err
        return False

    # ------------------------------------------------------------------------------------ heartbeat
    def _heartbeat_generation(self) -> int | None:
        """The generation to heartbeat with (under ``lock``): the current one, or the one a finished join
        brought and the next poll has yet to apply; None while a JoinGroup is in flight (it keeps the
        member alive itself) or when there is none."""
        pending = self._pending
        if pending is not None:
            if not pending.done.is_set():
                return None
            return pending.assigned[0] if pending.assigned is not None else None
        return self.generation if self.generation >= 0 else None

    def heartbeat_due_in(self, now: float) -> float | None:
        """For the heartbeat thread (under ``lock``): seconds until a heartbeat is due, None for none.

        As in the Java consumer the member heartbeats while it holds a generation, also after the
        coordinator announced a rebalance (REBALANCE_IN_PROGRESS keeps its session alive until the next
        poll rejoins)."""
        if self._left or not self.subscribed or self._heartbeat_generation() is None:
            return None
        return self._last_heartbeat_at + self.heartbeat_interval_ms / 1000 - now

    def revocation_pending(self) -> bool:
        """A rejoin is due and not begun yet: the next poll gives the partitions up first."""
        with self.lock:
            return self.needs_rejoin and self._pending is None

    def in_group(self) -> bool:
        """A member of a generation (what ``max_poll_interval_ms`` takes away); under ``lock``."""
        return self.generation >= 0 and not self._left

    def beat(self, link: CoordinatorLink, deadline: Deadline) -> None:
        """One Heartbeat on the heartbeat thread's connection, and what its answer means: REBALANCE_IN_PROGRESS
        sets ``needs_rejoin`` (the next poll revokes, commits and rejoins; still a member meanwhile); a
        membership error forgets the generation; FENCED_INSTANCE_ID and errors no wait cures are raised;
        retriable ones are raised for the thread to retry after a backoff."""
        with self.lock:
            generation, member_id = self._heartbeat_generation(), self.member_id
        if generation is None:
            return
        sent_at = time.monotonic()
        conn = link.get(deadline)
        resp = conn.request(
            HeartbeatRequest(
                group_id=self.group_id,
                generation_id=generation,
                member_id=member_id,
                group_instance_id=self.group_instance_id,
            ),
            deadline=deadline,
        )
        err = broker_error(resp.error_code, None, f"heartbeat of group {self.group_id!r}")
        with self.lock:
            self._last_heartbeat_at = sent_at
            if err is None or self._heartbeat_generation() != generation or self._left:
                return  # fine, or an answer about a generation that is no longer ours
            if isinstance(err, RebalanceInProgressError):
                if not self.needs_rejoin:
                    log.info("group %s: rebalance announced; the next poll revokes, commits and rejoins", self.group_id)
                self.needs_rejoin = True
                return
            _raise_if_fenced(err)
            if isinstance(err, _MEMBERSHIP_LOST):
                log.warning("group %s: membership lost (%s); the next poll gives its partitions up and rejoins",
                            self.group_id, err)  # fmt: skip
                pending = self._pending
                if pending is not None and pending.done.is_set():
                    pending.assigned = None  # the finished join's generation was refused: join again
                self.reset(err)
                return
        raise err

    # ---------------------------------------------------------------------------------------- commit
    def commit(self, offsets: Mapping[TopicPartition, OffsetSpec], deadline: Deadline, conn: Any = None) -> None:
        """Commit ``offsets`` as this member of the current generation (on ``conn``, a connection to the
        coordinator, when given: the heartbeat thread's background auto-commit).

        Raises :class:`CommitFailedError` (and marks the member for rejoining) when the coordinator
        refuses because the group rebalanced or no longer knows this member.
        """
        with self.lock:
            generation, member_id = self.generation, self.member_id
        try:
            commit_as_member(self.client, self.group_id, offsets, deadline, conn, generation_id=generation,
                             member_id=member_id)  # fmt: skip
        except (RebalanceInProgressError, *_MEMBERSHIP_LOST) as e:
            _raise_if_fenced(e)
            if isinstance(e, RebalanceInProgressError):
                self.needs_rejoin = True
            elif generation == self.generation:  # (not if a newer generation arrived meanwhile)
                self.reset(e)
            raise CommitFailedError(f"group {self.group_id!r}: commit refused, the group rebalanced: {e}") from e

    # ----------------------------------------------------------------------------------------- leave
    def allow_rejoin(self) -> None:
        """After :meth:`leave` (``unsubscribe()``, or the poll timer), let the member join again."""
        with self.lock:
            self._left = False

    def leave(self, deadline: Deadline, *, static_too: bool = False) -> None:
        """LeaveGroup, so the others take over at once instead of after the session timeout. Never
        raises: leaving is a courtesy (the session expires anyway), and a coordinator's bad answer to a
        goodbye is no reason to fail a clean shutdown.

        A static member (``group_instance_id``, KIP-345) does not send LeaveGroup unless ``static_too``:
        like the Java consumer's ``close()``, it keeps its place so that a restart within the session
        timeout gets its assignment back without a rebalance."""
        with self.lock:
            self._left = True
            member_id = self.member_id
        self._drop_join_conn()
        if self.group_instance_id is not None and not static_too:
            with self.lock:
                self.generation, self.needs_rejoin = -1, True
            return
        if member_id:

            def leave_request(conn: Any) -> tuple[Any, int]:
                version = conn.version_for(LeaveGroupRequest)
                return _leave_request(version, self.group_id, member_id, self.group_instance_id), version

            refresh, self._refresh_coordinator = self._refresh_coordinator, False
            say_goodbye(
                self.client, self.group_id, leave_request, deadline,
                what=f"leave group {self.group_id!r}", log=log, refresh=refresh,
            )
        with self.lock:
            self.member_id, self.generation, self.needs_rejoin = "", -1, True

    def _drop_join_conn(self) -> None:
        pending = self._pending
        if self._join_conn is not None and (pending is None or pending.done.is_set()):
            self._join_conn.close()
        # A JoinGroup still awaited is abandoned: its thread closes its connection when the answer comes
        # (it sets ``done`` before looking at ``_left``, so one of the two always closes it).


def _raise_if_fenced(err: BaseException | None) -> None:
    """FENCED_INSTANCE_ID: another process joined with this ``group_instance_id``. Fatal, as in the Java
    consumer: rejoining would fence that process in turn, and the two would take turns forever."""
    if isinstance(err, FencedInstanceIdError):
        raise err



def _leave_request(version: int, group_id: str, member_id: str, group_instance_id: str | None) -> Any:
    """LeaveGroup for this member: v3+ names members (and their instance ids, KIP-345), v0-v2 one member id."""
    if version < 3:
        return LeaveGroupRequest(group_id=group_id, member_id=member_id)
    return LeaveGroupRequest(
        group_id=group_id,
        members=[LeaveGroupRequest.MemberIdentity(member_id=member_id, group_instance_id=group_instance_id)],
    )

class _PendingJoin:
    """A JoinGroup + SyncGroup under way on the waiter thread."""

    __slots__ = ("done", "assigned", "error")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.assigned: tuple[int, list[TopicPartition]] | None = None
        self.error: BaseException | None = None
