"""Membership of a share group (KIP-932): ShareGroupHeartbeat.

The member generates its own id and joins with epoch 0 and its subscription; the coordinator answers
with a member epoch, the heartbeat interval and, whenever it changes, the partitions assigned. Unlike a
consumer group (KIP-848) a share group's partitions are not exclusive: several members may fetch one
partition, the broker hands each record to one of them, so there is nothing to revoke and no
handshake: the member fetches what it was last given. FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID mean the
coordinator removed the member (a session timeout): it joins again with epoch 0 under the same id. It
leaves with epoch -1.
"""

from __future__ import annotations

import base64
import logging
import time
import uuid
from typing import TYPE_CHECKING, Any

from ...protocol import ShareGroupHeartbeatRequest
from ...protocol.errors import FencedMemberEpochError, UnknownMemberIdError, broker_error
from ..cluster.retry import is_retriable
from ..errors import GroupProtocolUnsupportedError
from ..group.leave import say_goodbye
from ..net.deadline import Deadline
from .versions import share_version

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["ShareGroupMember"]

log = logging.getLogger("kafkawire.share")

TopicPartition = tuple[str, int]
JOIN_EPOCH, LEAVE_EPOCH = 0, -1
_UNASSIGNED_INTERVAL_MS = 200.0


def _member_id() -> str:
    """A member id of our own, in Kafka's Uuid text form (the share group protocol has the client make it)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


class ShareGroupMember:
    """This process's membership of share group ``group_id``; ``assignment`` is what it fetches."""

    def __init__(self, client: Client, group_id: str, *, rack_id: str | None = None) -> None:
        self.client = client
        self.group_id = group_id
        self.rack_id = rack_id
        self.member_id = _member_id()
        self.epoch = JOIN_EPOCH
        self.topics: list[str] = []
        self.assignment: list[TopicPartition] = []
        self.heartbeat_interval_ms = 5_000.0
        self.assignment_changes = 0
        self._send_subscription = True
        self._due = True
        self._last_sent = float("-inf")
        self._refresh_coordinator = False

    def subscribe(self, topics: list[str]) -> None:
        """Change the subscription; the next heartbeat (sent on the next call) carries it."""
        self.topics = sorted(set(topics))
        self._send_subscription = self._due = True

    @property
    def active(self) -> bool:
        return self.epoch > 0

    def heartbeat(self, deadline: Deadline) -> bool:
        """Send ShareGroupHeartbeat when due; True when the assignment changed.

        Connection problems and retriable errors are left for the next call (the coordinator is looked up
        again); errors waiting cannot cure are raised, naming the group."""
        now = time.monotonic()
        interval = self.heartbeat_interval_ms
        if not self.assignment and self.topics:
            # Joined, nothing assigned yet: the coordinator computes assignments in the background and
            # hands them out only in a heartbeat answer, so waiting the whole interval (5 s by default)
            # would idle a new member that long. Ask again sooner until it has partitions.
            interval = min(interval, _UNASSIGNED_INTERVAL_MS)
        if not self._due and (now - self._last_sent) * 1000 < interval:
            return False
        req = ShareGroupHeartbeatRequest(
            group_id=self.group_id,
            member_id=self.member_id,
            member_epoch=self.epoch,
            rack_id=self.rack_id if self.epoch == JOIN_EPOCH else None,
            # null: unchanged since the last heartbeat; a join always names the subscription
            subscribed_topic_names=list(self.topics) if self._send_subscription or self.epoch == JOIN_EPOCH else None,
        )
        try:
            with self.client.cluster.held(deadline, f"share group heartbeat of {self.group_id!r}"):
                refresh, self._refresh_coordinator = self._refresh_coordinator, False
                conn = self.client.coordinator(self.group_id, refresh=refresh, deadline=deadline)
                resp = conn.request(req, self._version(conn), deadline=deadline)
        except GroupProtocolUnsupportedError:
            raise
        except Exception as e:
            if not is_retriable(e):
                raise
            log.debug("share group %s: heartbeat failed: %s", self.group_id, e)
            self._coordinator_lost()
            return False
        self._last_sent = now
        err = broker_error(resp.error_code, resp.error_message, f"share group heartbeat of {self.group_id!r}")
        if err is None:
            self._due = self._send_subscription = False
            self.epoch = resp.member_epoch
            if resp.heartbeat_interval_ms > 0:
                self.heartbeat_interval_ms = resp.heartbeat_interval_ms
            if resp.assignment is None:
                return False
            return self._assigned(resp.assignment.topic_partitions, deadline)
        if isinstance(err, (FencedMemberEpochError, UnknownMemberIdError)):
            log.warning("share group %s: %s; joining again", self.group_id, err)
            self.epoch, self._due = JOIN_EPOCH, True
            changed = bool(self.assignment)
            self.assignment = []
            return changed
        if err.retriable:
            self._coordinator_lost()
            log.debug("share group %s: %s; retrying", self.group_id, err)
            return False
        raise err

    def _coordinator_lost(self) -> None:
        self._refresh_coordinator = self._due = True
        self.client.forget_coordinator(self.group_id)

    def _version(self, conn: Any) -> int:
        needs = "v1 (KIP-932 share groups, Apache Kafka 4.1+, share.version feature enabled)"
        prefix = f"share group {self.group_id!r}: "
        return share_version(conn, ShareGroupHeartbeatRequest, GroupProtocolUnsupportedError, prefix, needs)

    def _assigned(self, parts: list[Any], deadline: Deadline) -> bool:
        names = {tm.topic_id: n for n, tm in self.client.cluster.topics.items() if tm.topic_id is not None}
        if any(tp.topic_id not in names for tp in parts):
            try:
                meta = self.client.metadata(self.topics, deadline=deadline)
                names.update({tm.topic_id: n for n, tm in meta.topics.items() if tm.topic_id is not None})
            except Exception as e:
                if not is_retriable(e):
                    raise
        new: list[TopicPartition] = []
        for tp in parts:
            name = names.get(tp.topic_id)
            if name is None:
                log.info("share group %s: assigned topic id %s not in metadata yet", self.group_id, tp.topic_id)
                self._due = self._send_subscription = True  # ask again soon: the coordinator re-sends it
                continue
            new.extend((name, p) for p in tp.partitions)
        new.sort()
        if new == self.assignment:
            return False
        log.info("share group %s: assigned %s", self.group_id, ",".join(f"{t}/{p}" for t, p in new) or "-")
        self.assignment = new
        self.assignment_changes += 1
        return True

    def leave(self, deadline: Deadline) -> None:
        """Heartbeat with epoch -1: the coordinator hands the member's partitions to the others. Never raises."""
        if self.epoch <= 0:
            self.epoch, self.assignment = JOIN_EPOCH, []
            return
        leave = ShareGroupHeartbeatRequest(group_id=self.group_id, member_id=self.member_id, member_epoch=LEAVE_EPOCH)
        say_goodbye(
            self.client, self.group_id, lambda conn: (leave, self._version(conn)), deadline,
            what=f"leave share group {self.group_id!r}", log=log,
        )
        self.epoch, self.assignment = JOIN_EPOCH, []
