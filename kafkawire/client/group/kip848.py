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
"""

from __future__ import annotations

import base64
import logging
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
from ..errors import GroupProtocolUnsupportedError
from ..net.deadline import Deadline

if TYPE_CHECKING:
    from ..client import Client

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
        self.client = client
        self.group_id = group_id
        self.server_assignor = server_assignor
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.group_instance_id = group_instance_id
        self.rack_id = rack_id
        self.member_id = _member_id()
        self.epoch = JOIN_EPOCH
        self.topics: list[str] = []
        self.owned: set[TopicPartition] = set()
        #: Send a heartbeat on the next call regardless of the interval (join, subscription change,
        #: acknowledging a reconciliation).
        self.needs_rejoin = True
        self.heartbeat_interval_ms = 3_000.0
        self._last_sent = float("-inf")
        self._ids: dict[str, uuid.UUID] = {}
        self._names: dict[uuid.UUID, str] = {}
        self._refresh_coordinator = False
        self._left = False

    # ----------------------------------------------------------------------------------- state
    @property
    def generation(self) -> int:
        return self.epoch if self.epoch > 0 else -1

    @property
    def active(self) -> bool:
        return self.epoch > 0

    def _connection_failed(self) -> None:
        self._refresh_coordinator = True
        self.client.forget_coordinator(self.group_id)

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
    def heartbeat(self, deadline: Deadline) -> Reconciliation | None:
        """Send ConsumerGroupHeartbeat when due (or at once after a change); the coordinator's answer as a
        :class:`Reconciliation`, None when nothing was sent or nothing changed.

        Connection problems and retriable errors are left for the next call (the coordinator is looked
        up again); errors that waiting cannot cure are raised. UNSUPPORTED_VERSION and a broker without
        API 68 raise :class:`GroupProtocolUnsupportedError`.
        """
        now = time.monotonic()
        if not self.needs_rejoin and (now - self._last_sent) * 1000 < self.heartbeat_interval_ms:
            return None
        unknown = {t for t, _ in self.owned if t not in self._ids}
        if unknown or any(t not in self._ids for t in self.topics):
            try:
                self._topic_ids(unknown, deadline)
            except Exception as e:
                if not is_retriable(e):
                    raise
                return None
        by_topic: dict[str, list[int]] = {}
        for t, p in sorted(self.owned):
            by_topic.setdefault(t, []).append(p)
        req = ConsumerGroupHeartbeatRequest(
            group_id=self.group_id,
            member_id=self.member_id,
            member_epoch=self.epoch,
            instance_id=self.group_instance_id,
            rack_id=self.rack_id,
            rebalance_timeout_ms=self.rebalance_timeout_ms,
            subscribed_topic_names=list(self.topics),
            server_assignor=self.server_assignor,
            topic_partitions=[
                ConsumerGroupHeartbeatRequest.TopicPartitions(topic_id=self._ids[t], partitions=ps)
                for t, ps in by_topic.items()
                if t in self._ids
            ],
        )
        try:
            with self.client.lock:
                refresh, self._refresh_coordinator = self._refresh_coordinator, False
                conn = self.client.coordinator(self.group_id, refresh=refresh, deadline=deadline)
                version = self._version(conn)
                resp = conn.request(req, version, deadline=deadline)
        except GroupProtocolUnsupportedError:
            raise
        except Exception as e:
            if not is_retriable(e):
                raise
            log.debug("group %s: consumer group heartbeat failed: %s", self.group_id, e)
            self._connection_failed()
            return None
        self._last_sent = now
        err = broker_error(resp.error_code, resp.error_message, f"consumer group heartbeat of {self.group_id!r}")
        if err is None:
            self.needs_rejoin = False
            if resp.member_id:
                self.member_id = resp.member_id
            self.epoch = resp.member_epoch
            if resp.heartbeat_interval_ms > 0:
                self.heartbeat_interval_ms = resp.heartbeat_interval_ms
            if resp.assignment is None:
                return None
            return Reconciliation(assigned=self._resolve(resp.assignment.topic_partitions, deadline))
        if isinstance(err, (FencedMemberEpochError, UnknownMemberIdError)):
            # Removed from the group: whatever we held is someone else's now. Rejoin under the same id.
            log.warning("group %s: %s; partitions lost, rejoining", self.group_id, err)
            self.epoch, self.owned, self.needs_rejoin = JOIN_EPOCH, set(), True
            return Reconciliation(lost=err)
        if isinstance(err, UnsupportedVersionError):
            raise GroupProtocolUnsupportedError(
                f"group {self.group_id!r}: the cluster refused the consumer group protocol ({err}); "
                "use group_protocol='classic'"
            ) from err
        if isinstance(err, UnreleasedInstanceIdError) or err.retriable:
            # The previous holder of our instance id has not left yet, or the coordinator moved / loads.
            if err.retriable:
                self._connection_failed()
            log.debug("group %s: %s; retrying", self.group_id, err)
            return None
        raise err

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
                self.needs_rejoin = True  # heartbeat again soon; the coordinator re-sends the assignment
                continue
            out.update((name, p) for p in tp.partitions)
        return out

    def acknowledge(self, owned: set[TopicPartition]) -> None:
        """The consumer now holds ``owned``: report it in a heartbeat sent on the next call."""
        self.owned = set(owned)
        self.needs_rejoin = True

    # ------------------------------------------------------------------------------------ commit
    def commit(self, offsets: Mapping[TopicPartition, int], deadline: Deadline) -> None:
        """Commit ``offsets`` with this member's id and epoch (OffsetCommit v9, KIP-848).

        Raises :class:`~kafkawire.client.group.classic.CommitFailedError` when the coordinator refuses the
        epoch (STALE_MEMBER_EPOCH: a newer epoch is on its way in a heartbeat) or the member.
        """
        from .classic import CommitFailedError

        try:
            self.client.commit_offsets(
                self.group_id, dict(offsets), generation_id=self.epoch, member_id=self.member_id, deadline=deadline
            )
        except (StaleMemberEpochError, FencedMemberEpochError, UnknownMemberIdError) as e:
            self.needs_rejoin = True  # heartbeat now to learn the current epoch (or that we were removed)
            raise CommitFailedError(f"group {self.group_id!r}: commit refused: {e}") from e

    # ------------------------------------------------------------------------------------- leave
    def allow_rejoin(self) -> None:
        """After :meth:`leave` (``unsubscribe()``), let a later ``subscribe()`` join again."""
        self._left = False

    def leave(self, deadline: Deadline, *, static_too: bool = False) -> None:
        """Heartbeat with epoch -1 (leave) or, for a static member, -2 (leaving to come back: the
        coordinator keeps its assignment for the session timeout). Never raises."""
        self._left = True
        if self.epoch <= 0:
            self.epoch, self.owned = JOIN_EPOCH, set()
            return
        epoch = STATIC_LEAVE_EPOCH if self.group_instance_id is not None and not static_too else LEAVE_EPOCH
        try:
            with self.client.lock:
                conn = self.client.coordinator(self.group_id, deadline=deadline)
                req = ConsumerGroupHeartbeatRequest(
                    group_id=self.group_id,
                    member_id=self.member_id,
                    member_epoch=epoch,
                    instance_id=self.group_instance_id,
                )
                resp = conn.request(req, self._version(conn), deadline=deadline)
            err = broker_error(resp.error_code, resp.error_message, f"leave group {self.group_id!r}")
            if err is not None:
                log.info("group %s: coordinator answered the leave heartbeat with %s", self.group_id, err)
        except Exception as e:
            log.warning("group %s: leaving the group failed (the session will expire): %s", self.group_id, e)
        self.epoch, self.owned, self.needs_rejoin = JOIN_EPOCH, set(), True
