"""Membership of a group on the *consumer* rebalance protocol (KIP-848): ConsumerGroupHeartbeat.

Where the classic protocol has every member rejoin (JoinGroup/SyncGroup barrier) and the leader compute
the assignment, here the coordinator computes it with a server-side assignor (``group_remote_assignor``:
``"uniform"`` or ``"range"``, Kafka's ``group.consumer.assignors``) and hands each member its target
through the heartbeat it sends every ``heartbeat_interval_ms`` (the interval is the coordinator's). A
member that must give partitions up finds them missing from the assignment in a heartbeat answer: it
revokes them (listener, commit) and acknowledges by reporting the smaller set it owns in its next
heartbeat; only then does the coordinator hand them to their new owner. Partitions nobody else holds
come at once. Nobody else stops fetching: there is no stop-the-world barrier.

Member epochs replace generations: every assignment change bumps the member's epoch, and commits carry
it (OffsetCommit v9's ``generation_id_or_member_epoch``). FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID mean
the member was removed: its partitions are lost and it rejoins with epoch 0 under the same member id.

Every request sends the member's full state (subscription, owned partitions, rebalance timeout,
assignor), which the coordinator accepts at any time; that keeps a lost answer harmless.

The heartbeats are sent by the member's background thread (:mod:`kafkawire.client.group.heartbeat`) on a
connection of its own; it leaves the answer (a new target, or the membership lost) in
:meth:`ConsumerGroupMember.take_reconciliation` for the next ``poll()``, which runs the listener and
acknowledges. After a loss the member rejoins only once the poll has given its partitions up
(:meth:`ConsumerGroupMember.released`), as Java's consumer does.
"""

from __future__ import annotations

import base64
import logging
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...protocol import ConsumerGroupHeartbeatRequest
from ...protocol.errors import (
    FencedMemberEpochError,
    StaleMemberEpochError,
    UnknownMemberIdError,
    UnreleasedInstanceIdError,
    UnsupportedVersionError,
    broker_error,
)
from ..cluster.retry import is_retriable
from ..consumer.offsets import OffsetSpec, commit_as_member
from ..errors import GroupProtocolUnsupportedError
from ..net.deadline import Deadline
from .leave import say_goodbye

if TYPE_CHECKING:
    from ..client import Client
    from .heartbeat import CoordinatorLink

__all__ = ["ConsumerGroupMember", "GroupProtocolUnsupportedError", "Reconciliation"]

log = logging.getLogger("kafkawire.consumer")

TopicPartition = tuple[str, int]

#: Epoch sent to join (0), to leave (-1) and, for a static member, to leave meaning to come back (-2).
JOIN_EPOCH, LEAVE_EPOCH, STATIC_LEAVE_EPOCH = 0, -1, -2


@dataclass
class Reconciliation:
    """What a heartbeat answer asks of the consumer: the new target (``assigned``, None when unchanged)
    or, with ``lost``, that every partition held is gone (the member was fenced)."""

    assigned: set[TopicPartition] | None = None
    lost: BaseException | None = None


def _member_id() -> str:
    """A member id of our own (KIP-1082: v1 has the client generate it), in Kafka's Uuid text form."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


class ConsumerGroupMember:
    """This process's membership of consumer-protocol group ``group_id`` (see the module docstring).

    ``generation`` is the member epoch while the member is in the group (-1 otherwise), so the
    consumer's commit and transaction paths use it as they use a classic generation.
    """

    def __init__(
        self,
        client: Client,
        group_id: str,
        *,
        server_assignor: str | None,
        rebalance_timeout_ms: int,
        group_instance_id: str | None = None,
        rack_id: str | None = None,
    ) -> None:
        self.client, self.group_id, self.group_instance_id = client, group_id, group_instance_id
        self.server_assignor, self.rebalance_timeout_ms, self.rack_id = server_assignor, rebalance_timeout_ms, rack_id
        self.member_id, self.epoch = _member_id(), JOIN_EPOCH
        self.topics: list[str] = []
        self.owned: set[TopicPartition] = set()
        #: Send a heartbeat on the next call regardless of the interval (join, subscription change,
        #: acknowledging a reconciliation).
        self.needs_rejoin = True
        self.heartbeat_interval_ms = 3_000.0
        self._last_sent = float("-inf")
        self._ids: dict[str, uuid.UUID] = {}
        self._names: dict[uuid.UUID, str] = {}
        self._left = False
        #: Guards the state shared with the heartbeat thread (never held during I/O); ``changed`` wakes it.
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.subscribed = False
        self._changes = 0  # bumped by every change a heartbeat must report (subscription, acknowledgement)
        self._not_before = 0.0  # time.monotonic() before which a join is not sent again
        self._reconciliation: Reconciliation | None = None  # the last answer, for the next poll
        self._unreleased_loss = False  # lost: no rejoin before the poll gave the partitions up

    # ----------------------------------------------------------------------------------- state
    @property
    def generation(self) -> int:
        return self.epoch if self.epoch > 0 else -1

    @property
    def active(self) -> bool:
        return self.epoch > 0

    def set_subscription(self, topics: list[str]) -> None:
        """Subscribe to ``topics``: the heartbeat thread sends them at once."""
        with self.lock:
            self.topics = list(topics)
            self.subscribed = True
            self._request_heartbeat()

    def unsubscribed(self) -> None:
        """No subscription any more: no heartbeats until the next :meth:`set_subscription`."""
        with self.lock:
            self.subscribed = False

    def _request_heartbeat(self) -> None:
        with self.lock:
            self.needs_rejoin = True
            self._changes += 1
            self.changed.notify_all()

    def _topic_ids(self, names: set[str], deadline: Deadline) -> None:
        """Learn the ids of ``names`` (and of the subscription) from metadata."""
        wanted = sorted(set(self.topics) | names)
        if not wanted:
            return
        meta = self.client.metadata(wanted, deadline=deadline)
        for name, tm in meta.topics.items():
            if tm.error is None and tm.topic_id is not None:
                self._ids[name] = tm.topic_id
                self._names[tm.topic_id] = name

    # ------------------------------------------------------------------------------- heartbeat
    def heartbeat_due_in(self, now: float) -> float | None:
        """For the heartbeat thread (under ``lock``): seconds until a heartbeat is due (at once after a
        change), None while not subscribed, left, or waiting for the poll to give lost partitions up."""
        if self._left or not self.subscribed or self._unreleased_loss:
            return None
        if self.needs_rejoin:
            return self._not_before - now
        return self._last_sent + self.heartbeat_interval_ms / 1000 - now

    def in_group(self) -> bool:
        """Holds a member epoch (what ``max_poll_interval_ms`` takes away); under ``lock``."""
        return self.epoch > 0 and not self._left

    def revocation_pending(self) -> bool:
        """An answer waits for the poll (a new target or a loss)."""
        with self.lock:
            return self._reconciliation is not None

    def take_reconciliation(self) -> Reconciliation | None:
        """What the coordinator asked since the last call (the newest target, or the loss), for ``poll()``."""
        with self.lock:
            out, self._reconciliation = self._reconciliation, None
            return out

    def released(self) -> None:
        """The poll gave the lost partitions up (``on_partitions_lost`` ran): rejoin now."""
        with self.lock:
            self._unreleased_loss = False
            self._request_heartbeat()

    def beat(self, link: CoordinatorLink, deadline: Deadline) -> None:
        """Send ConsumerGroupHeartbeat on the heartbeat thread's connection and keep the coordinator's
        answer for the next poll (:meth:`take_reconciliation`).

        Retriable errors are raised for the thread to retry after a backoff (the coordinator is looked up
        again); errors that waiting cannot cure are raised too. UNSUPPORTED_VERSION and a broker without
        API 68 raise :class:`GroupProtocolUnsupportedError`.
        """
        with self.lock:
            topics, owned, changes = list(self.topics), set(self.owned), self._changes
        unknown = {t for t, _ in owned if t not in self._ids}
        if unknown or any(t not in self._ids for t in topics):
            self._topic_ids(unknown, deadline)
        by_topic: dict[str, list[int]] = {}
        for t, p in sorted(owned):
            by_topic.setdefault(t, []).append(p)
        now = time.monotonic()
        conn = link.get(deadline)
        version = self._version(conn)
        with self.lock:
            member_id, epoch = self.member_id, self.epoch
        req = ConsumerGroupHeartbeatRequest(
            group_id=self.group_id,
            member_id=member_id,
            member_epoch=epoch,
            instance_id=self.group_instance_id,
            rack_id=self.rack_id,
            rebalance_timeout_ms=self.rebalance_timeout_ms,
            subscribed_topic_names=topics,
            server_assignor=self.server_assignor,
            topic_partitions=[
                ConsumerGroupHeartbeatRequest.TopicPartitions(topic_id=self._ids[t], partitions=ps)
                for t, ps in by_topic.items()
                if t in self._ids
            ],
        )
        resp = conn.request(req, version, deadline=deadline)
        err = broker_error(resp.error_code, resp.error_message, f"consumer group heartbeat of {self.group_id!r}")
        if err is None:
            assigned = None
            if resp.assignment is not None:
                assigned = self._resolve(resp.assignment.topic_partitions, deadline)
            with self.lock:
                self._last_sent = now
                if self._left or self._unreleased_loss:
                    return  # left (or lost) while the answer was on its way: it no longer applies
                if self._changes == changes:
                    self.needs_rejoin = False  # else a newer state waits to be sent
                if resp.member_id:
                    self.member_id = resp.member_id
                self.epoch = resp.member_epoch
                if resp.heartbeat_interval_ms > 0:
                    self.heartbeat_interval_ms = resp.heartbeat_interval_ms
                if assigned is not None:
                    self._reconciliation = Reconciliation(assigned=assigned)  # the newest target wins
                    self.changed.notify_all()
            return
        with self.lock:
            self._last_sent = now
            if isinstance(err, (FencedMemberEpochError, UnknownMemberIdError)):
                # Removed from the group: whatever we held is someone else's now. Rejoin under the same id
                # once the poll has given the partitions up.
                log.warning("group %s: %s; partitions lost, the next poll rejoins", self.group_id, err)
                self.epoch, self.owned, self.needs_rejoin = JOIN_EPOCH, set(), True
                self._unreleased_loss = True
                self._reconciliation = Reconciliation(lost=err)
                self.changed.notify_all()
                return
            if isinstance(err, UnreleasedInstanceIdError):
                # The previous holder of our instance id has not left yet: ask again a little later.
                log.debug("group %s: %s; retrying", self.group_id, err)
                self._not_before = now + self.client.retry_policy.backoff(1)
                return
        if isinstance(err, UnsupportedVersionError):
            raise GroupProtocolUnsupportedError(
                f"group {self.group_id!r}: the cluster refused the consumer group protocol ({err}); "
                "use group_protocol='classic'"
            ) from err
        raise err  # retriable ones (the coordinator moved or loads) are retried by the thread

    def _version(self, conn: Any) -> int:
        versions = getattr(conn, "versions", None)
        broker = getattr(versions, "broker", None)
        if broker is not None and ConsumerGroupHeartbeatRequest.API_KEY not in broker:
            raise GroupProtocolUnsupportedError(
                f"group {self.group_id!r}: {conn.host}:{conn.port} does not offer ConsumerGroupHeartbeat "
                "(API 68, KIP-848; Apache Kafka 4.0+): use group_protocol='classic'"
            )
        try:
            version = conn.version_for(ConsumerGroupHeartbeatRequest)
        except UnsupportedVersionError as e:
            raise GroupProtocolUnsupportedError(f"group {self.group_id!r}: {e}; use group_protocol='classic'") from e
        # v0 has the coordinator generate the member id: start without one there.
        if version == 0 and self.epoch == JOIN_EPOCH and not self.owned:
            self.member_id = ""
        return int(version)

    def _resolve(self, parts: list[Any], deadline: Deadline) -> set[TopicPartition]:
        """Topic ids of an assignment -> names; ids not known yet are looked up (a topic created since
        the last metadata). Partitions of a topic still unknown are left for a later heartbeat."""
        missing = {tp.topic_id for tp in parts if tp.topic_id not in self._names}
        if missing:
            try:
                self._topic_ids(set(), deadline)
            except Exception as e:
                if not is_retriable(e):
                    raise
        out: set[TopicPartition] = set()
        for tp in parts:
            name = self._names.get(tp.topic_id)
            if name is None:
                log.info("group %s: assigned topic id %s not in metadata yet", self.group_id, tp.topic_id)
                self._request_heartbeat()  # heartbeat again soon; the coordinator re-sends the assignment
                continue
            out.update((name, p) for p in tp.partitions)
        return out

    def acknowledge(self, owned: set[TopicPartition]) -> None:
        """The consumer now holds ``owned``: the heartbeat thread reports it at once."""
        with self.lock:
            self.owned = set(owned)
            self._request_heartbeat()

    # ------------------------------------------------------------------------------------ commit
    def commit(self, offsets: Mapping[TopicPartition, OffsetSpec], deadline: Deadline, conn: Any = None) -> None:
        """Commit ``offsets`` with this member's id and epoch (OffsetCommit v9, KIP-848); on ``conn`` (a
        connection to the coordinator) when given.

        Raises :class:`~kafkawire.client.group.classic.CommitFailedError` when the coordinator refuses the
        epoch (STALE_MEMBER_EPOCH: a newer epoch is on its way in a heartbeat) or the member.
        """
        from .classic import CommitFailedError

        with self.lock:
            epoch, member_id = self.epoch, self.member_id
        try:
            commit_as_member(self.client, self.group_id, offsets, deadline, conn, generation_id=epoch,
                             member_id=member_id)  # fmt: skip
        except (StaleMemberEpochError, FencedMemberEpochError, UnknownMemberIdError) as e:
            self._request_heartbeat()  # heartbeat now to learn the current epoch (or that we were removed)
            raise CommitFailedError(f"group {self.group_id!r}: commit refused: {e}") from e

    # ------------------------------------------------------------------------------------- leave
    def allow_rejoin(self) -> None:
        """After :meth:`leave` (``unsubscribe()``, or the poll timer), let the member join again."""
        with self.lock:
            self._left = False
            self._unreleased_loss = False
            self._reconciliation = None
            self._request_heartbeat()

    def leave(self, deadline: Deadline, *, static_too: bool = False) -> None:
        """Heartbeat with epoch -1 (leave) or, for a static member, -2 (leaving to come back: the
        coordinator keeps its assignment for the session timeout). Never raises."""
        with self.lock:
            self._left = True
            if self.epoch <= 0:
                self.epoch, self.owned = JOIN_EPOCH, set()
                return
            member_id = self.member_id
        epoch = STATIC_LEAVE_EPOCH if self.group_instance_id is not None and not static_too else LEAVE_EPOCH
        leave = ConsumerGroupHeartbeatRequest(
            group_id=self.group_id, member_id=member_id, member_epoch=epoch, instance_id=self.group_instance_id
        )
        say_goodbye(
            self.client, self.group_id, lambda conn: (leave, self._version(conn)), deadline,
            what=f"leave group {self.group_id!r}", log=log,
        )
        with self.lock:
            self.epoch, self.owned, self.needs_rejoin = JOIN_EPOCH, set(), True
