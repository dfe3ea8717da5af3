"""Background heartbeats of one group member (KIP-62), the poll timer and the background auto-commit.

Before KIP-62 a Java consumer heartbeated from ``poll()``, so processing one batch for longer than the
session timeout got the member thrown out. Since KIP-62 (and in confluent-kafka, kafka-python, aiokafka)
a background thread heartbeats, and processing time is bounded separately by ``max.poll.interval.ms``:
a member that does not call ``poll()`` within it leaves the group, and the next ``poll()`` rejoins.
:class:`HeartbeatThread` does that for a :class:`~kafkawire.client.group.classic.GroupMember` (Heartbeat,
LeaveGroup) and for a :class:`~kafkawire.client.group.kip848.ConsumerGroupMember` (ConsumerGroupHeartbeat,
and a heartbeat with epoch -1 to leave, KIP-848), one thread per member.

It also sends the consumer's periodic auto-commit (:meth:`HeartbeatThread.commit_async`), with a
deadline of its own (the request timeout) rather than what is left of a ``poll()``: the Java consumer
commits asynchronously too, so a short poll never makes an auto-commit fail.

Locking (the rules both threads follow):

* ``member.lock`` (an RLock) guards the member's state: member id, generation or epoch, ``needs_rejoin``,
  the owned partitions, the reconciliation waiting for the consumer (KIP-848). It is held only to read
  or change that state, **never during I/O**. ``member.changed`` is a condition on it: whoever changes
  something the thread must act on at once (a join to send, an assignment to acknowledge, a commit to
  send, close) notifies it.
* The thread's requests (heartbeats, auto-commits) go over a connection of its own to the coordinator
  (:class:`CoordinatorLink`), so a ``poll()`` holding the client's lock through a fetch (up to
  ``max_wait_ms``) never delays a heartbeat. The client's lock (``Client.lock``) is taken only briefly and
  never across a network wait: to read the cached coordinator (FindCoordinator, when needed, goes over a
  short-lived connection of the thread's own, :meth:`Cluster.coordinator_address`; a hung broker held
  the lock 10 s there, issue 34) and, on KIP-848, for topic ids from metadata; a :class:`BrokerConnection`
  serialises its own use.
* Listener callbacks, positions and the assignment belong to the thread that polls: the heartbeat thread
  only records what the coordinator said (``needs_rejoin``, a lost membership, a new target assignment)
  and the next ``poll()`` acts on it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..cluster.retry import is_retriable
from ..net.deadline import Deadline

if TYPE_CHECKING:
    from ..client import Client
    from ..consumer.offsets import OffsetSpec
    from ..net.connection import BrokerConnection

__all__ = ["CoordinatorLink", "HeartbeatThread", "MAX_POLL_INTERVAL_MS"]

log = logging.getLogger("kafkawire.consumer")

TopicPartition = tuple[str, int]

#: The Java consumer's ``max.poll.interval.ms`` default (KIP-62).
MAX_POLL_INTERVAL_MS = 300_000


class CoordinatorLink:
    """A connection of its own to the coordinator of ``group_id``, for the heartbeat thread.

    The coordinator's address is looked up through the client (under its lock, briefly); the connection
    itself is never shared, so its requests never wait behind the polling thread's.
    """

    def __init__(self, client: Client, group_id: str) -> None:
        self.client = client
        self.group_id = group_id
        self._conn: BrokerConnection | None = None
        self._refresh = False

    def get(self, deadline: Deadline) -> BrokerConnection:
        """The connected connection to the coordinator (found again after :meth:`failed`)."""
        conn = self._conn
        if conn is not None and conn.connected and not self._refresh:
            return conn
        refresh, self._refresh = self._refresh, False
        # The address only: the shared connection is neither connected nor used here, so no network wait
        # happens under the client's lock, which the polling thread's deadline depends on (issue 34).
        where = self.client.cluster.coordinator_address(self.group_id, deadline, refresh=refresh)
        if conn is not None:
            conn.close()
        self._conn = conn = self.client.cluster.new_connection(where.host, where.port, where.node_id)
        return conn.connect(deadline=deadline)

    def failed(self) -> None:
        """The coordinator moved or its connection broke: look it up again next time (the next lookup asks
        afresh, so the shared cache is not touched here: that would wait for the client's lock)."""
        self._refresh = True
        if self._conn is not None:
            self._conn.close()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class Member(Protocol):
    """What :class:`HeartbeatThread` needs of a group member (classic or KIP-848)."""

    group_id: str
    client: Client
    lock: threading.RLock
    changed: threading.Condition

    def heartbeat_due_in(self, now: float) -> float | None:
        """Seconds until the next heartbeat is due (<= 0: now); None when none is wanted. Under ``lock``."""

    def in_group(self) -> bool:
        """True while the member holds a place in the group (what the poll timer takes away). Under ``lock``."""

    def beat(self, link: CoordinatorLink, deadline: Deadline) -> None:
        """Send one heartbeat on ``link`` and apply the answer; raises retriable errors for a retry."""

    def commit(self, offsets: Mapping[TopicPartition, OffsetSpec], deadline: Deadline, conn: Any = None) -> None: ...

    def leave(self, deadline: Deadline, *, static_too: bool = False) -> None: ...


class HeartbeatThread:
    """The background thread of one group member: heartbeats, the poll timer, auto-commits.

    ``polled()`` is called by every ``poll()`` (it restarts the poll timer); when ``max_poll_interval_ms``
    passes without one, the thread logs a warning (Java's words) and leaves the group
    (:meth:`Member.leave`: LeaveGroup, or a heartbeat with epoch -1 on KIP-848; a static member, KIP-345,
    keeps its place until its session times out, as in Java), and the next ``poll()`` learns it from
    ``polled()`` and rejoins. An error no retry can cure (a fenced static member, a cluster without the
    consumer protocol) stops the heartbeats and is raised by the next ``poll()`` (:attr:`fatal`).
    """

    def __init__(
        self,
        member: Member,
        *,
        max_poll_interval_ms: float = MAX_POLL_INTERVAL_MS,
        request_timeout_ms: float = 30_000,
        heartbeat_timeout_ms: float | None = None,
    ) -> None:
        self.member = member
        self.max_poll_interval_ms = max_poll_interval_ms
        self.request_timeout_ms = request_timeout_ms
        #: Bound of one heartbeat (the classic member's session timeout: an answer later than that is moot).
        self.heartbeat_timeout_ms = min(request_timeout_ms, heartbeat_timeout_ms or request_timeout_ms)
        self.link = CoordinatorLink(member.client, member.group_id)
        #: An error no retry cures, raised by the next ``poll()``.
        self.fatal: BaseException | None = None
        self._last_poll = time.monotonic()
        self._expired = False  # left the group for want of a poll; the next poll rejoins
        self._failures = 0
        self._retry_at = 0.0
        self._closing = False
        self._commit_todo: dict[TopicPartition, OffsetSpec] | None = None
        self._commit_busy = False
        self._commit_results: list[tuple[dict[TopicPartition, OffsetSpec], BaseException | None]] = []
        self._thread = threading.Thread(target=self._run, name=f"kafkawire-heartbeat-{member.group_id}", daemon=True)
        self._started = False

    # --------------------------------------------------------------------- the polling thread's side
    def start(self) -> None:
        if not self._started:
            self._started = True
            self._last_poll = time.monotonic()
            self._thread.start()

    def polled(self) -> bool:
        """A ``poll()`` is under way: restart the poll timer. True once after the member left the group
        because ``max_poll_interval_ms`` passed (the caller then gives its partitions up as lost and
        lets the member rejoin)."""
        with self.member.lock:
            self._last_poll = time.monotonic()
            expired, self._expired = self._expired, False
            if expired:
                self.member.changed.notify_all()
            return expired

    @property
    def expired(self) -> bool:
        """True from the moment the member left for want of a poll until the next ``poll()``."""
        return self._expired

    def wake(self) -> None:
        """Look at the member's state now (a join or an acknowledgement to send)."""
        with self.member.lock:
            self.member.changed.notify_all()

    def commit_async(self, offsets: Mapping[TopicPartition, OffsetSpec]) -> bool:
        """Hand ``offsets`` to the thread to commit with a deadline of its own (the request timeout);
        False when a commit is still under way (the caller tries again at its next interval). The result
        comes back from :meth:`commit_results`."""
        with self.member.lock:
            if self._commit_busy or self._commit_todo is not None or self.fatal is not None or self._closing:
                return False
            self._commit_todo = dict(offsets)
            self.member.changed.notify_all()
            return True

    def commit_results(self) -> list[tuple[dict[TopicPartition, OffsetSpec], BaseException | None]]:
        """The background commits finished since the last call: (offsets, None) or (offsets, error)."""
        with self.member.lock:
            out, self._commit_results = self._commit_results, []
            return out

    def wait_commits(self, deadline: Deadline) -> bool:
        """Wait (up to ``deadline``) until no background commit is pending, so that a synchronous commit
        that follows cannot be overtaken by an older one. True when none is pending."""
        with self.member.lock:
            while self._commit_busy or self._commit_todo is not None:
                if self.fatal is not None or not self._thread.is_alive():
                    return False
                left = deadline.remaining()
                if left <= 0:
                    return False
                self.member.changed.wait(min(left, 0.1))
            return True

    def close(self, timeout: float = 5.0) -> None:
        """Stop the thread (after the commit it is sending, if any) and close its connection."""
        with self.member.lock:
            self._closing = True
            self.member.changed.notify_all()
        if self._started and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        self.link.close()

    # ------------------------------------------------------------------------------ the thread itself
    def _run(self) -> None:
        member = self.member
        try:
            while True:
                with member.lock:
                    while True:
                        if self._closing:
                            return
                        wait = self._next_wake(time.monotonic())
                        if wait <= 0:
                            break
                        member.changed.wait(wait)
                self._step()
        except BaseException as e:  # never die silently: the next poll raises it
            log.error("group %s: heartbeat thread stopped: %r", member.group_id, e)
            with member.lock:
                self.fatal = self.fatal or e
                member.changed.notify_all()

    def _next_wake(self, now: float) -> float:
        """Seconds until the thread has something to do (under the member's lock)."""
        member = self.member
        if self.fatal is not None:
            return 3600.0
        if self._commit_todo is not None:
            return 0.0
        if self._expired:
            return 3600.0  # out of the group until the next poll
        waits = [3600.0]
        if member.in_group():
            waits.append(self._last_poll + self.max_poll_interval_ms / 1000 - now)
        due = member.heartbeat_due_in(now)
        if due is not None:
            waits.append(max(due, self._retry_at - now))
        return max(0.0, min(waits))

    def _step(self) -> None:
        member = self.member
        now = time.monotonic()
        with member.lock:
            todo, self._commit_todo = self._commit_todo, None
            if todo is not None:
                self._commit_busy = True
            poll_late = (
                not self._expired
                and member.in_group()
                and (now - self._last_poll) * 1000 > self.max_poll_interval_ms
            )
            due = member.heartbeat_due_in(now)
            beat = due is not None and due <= 0 and now >= self._retry_at and not self._expired
        if todo is not None:
            self._commit(todo)
        if poll_late:
            self._leave_for_poll_timeout(now)
            return
        if beat:
            self._beat()

    def _beat(self) -> None:
        member = self.member
        try:
            member.beat(self.link, Deadline.from_ms(self.heartbeat_timeout_ms))
        except Exception as e:
            if not is_retriable(e):
                log.error("group %s: heartbeat failed: %s", member.group_id, e)
                with member.lock:
                    self.fatal = e
                    member.changed.notify_all()
                return
            self._failures += 1
            log.debug("group %s: heartbeat failed (%s); retrying", member.group_id, e)
            self.link.failed()
            with member.lock:
                self._retry_at = time.monotonic() + member.client.retry_policy.backoff(self._failures)
            return
        self._failures = 0

    def _leave_for_poll_timeout(self, now: float) -> None:
        member = self.member
        # The Java consumer's words (AbstractCoordinator.HeartbeatThread), so that operators recognise it.
        log.warning(
            "group %s: consumer poll timeout has expired: %.1f s since the last poll(), longer than "
            "max_poll_interval_ms (%d). This typically means the poll loop spends too much time processing "
            "records; increase max_poll_interval_ms or return fewer records per poll. Leaving the group; "
            "the next poll() rejoins.",
            member.group_id,
            now - self._last_poll,
            self.max_poll_interval_ms,
        )
        with member.lock:
            self._expired = True
        member.leave(Deadline.from_ms(self.request_timeout_ms))

    def _commit(self, todo: dict[TopicPartition, OffsetSpec]) -> None:
        member = self.member
        error: BaseException | None = None
        try:
            deadline = Deadline.from_ms(self.request_timeout_ms)
            member.commit(todo, deadline, conn=self.link.get(deadline))
        except Exception as e:
            error = e
            if is_retriable(e):
                self.link.failed()
        with member.lock:
            self._commit_busy = False
            self._commit_results.append((todo, error))
            member.changed.notify_all()
