"""A blocking consumer: manual assignment, or a consumer group on the classic protocol (range, round-robin,
sticky and cooperative-sticky assignors, static membership) or on the consumer protocol of KIP-848
(``group_protocol="consumer"``: :mod:`kafkawire.client.group.kip848`), with rebalance listeners (:mod:`.listeners`),
pause/resume and pattern subscription.

``poll()`` returns records as :class:`kafkawire.RecordColumns` per partition. Group membership runs
from ``poll()`` (:mod:`kafkawire.client.group.classic`): it joins (JoinGroup offering one protocol per assignor in
``partition_assignment_strategy``, then SyncGroup; the leader computes the assignment with the assignor the
coordinator chose), rejoins when the coordinator announces a rebalance, and runs the rebalance listener.
Heartbeats and the periodic auto-commit are sent by a background thread per member
(:mod:`kafkawire.client.group.heartbeat`, KIP-62), so processing may take longer than ``session_timeout_ms``
between polls; ``max_poll_interval_ms`` bounds it, as in the Java consumer.

:class:`Consumer` keeps the public API; the work is in one module per job: the consumer's state (subscription,
assignment, positions, committed offsets, pauses, high watermarks) is one
:class:`~kafkawire.client.consumer.subscription.SubscriptionState`; :mod:`.reconcile` applies rebalances to it
(eager, cooperative, KIP-848) and calls the listener; :mod:`.positions` sets, validates (KIP-320) and advances
the positions; :mod:`.commits` commits them; :mod:`.poll_retry` is the rule for retrying and giving up a poll.

Each ``poll()`` makes one :class:`~kafkawire.client.net.deadline.Deadline` from its timeout and hands what is
left of it to every request it makes (join, heartbeat, commit, offset lookups, fetch), so no layer below
can make it overrun. The consumer uses only the public :class:`~kafkawire.client.Client` API.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ... import _impl
from ...columns import RecordColumns
from ..client import EARLIEST, LATEST, Client, resolve_client
from ..errors import KafkaClientError, WakeupError
from ..group.classic import CommitFailedError, GroupMember, TopicPartition
from ..group.heartbeat import MAX_POLL_INTERVAL_MS, HeartbeatThread
from ..group.kip848 import ConsumerGroupMember, GroupProtocolUnsupportedError
from ..group.registry import ASSIGNORS
from ..net.deadline import Deadline
from ..producer.transaction import GroupMetadata
from .commits import Commits
from .missing_topics import MissingTopics
from .poll_retry import PollRetry
from .positions import Positions
from .prefetch import Prefetcher
from .reconcile import REBALANCE_NEXT, Reconciler, join_group
from .subscription import SubscriptionState

if TYPE_CHECKING:
    from ..._pure.recview import RecordCursor

__all__ = ["Consumer", "CommitFailedError", "GroupProtocolUnsupportedError"]

log = logging.getLogger("kafkawire.consumer")

#: Default bound of :meth:`Consumer.close` (the Java consumer's ``close()`` waits up to 30 s too).
CLOSE_TIMEOUT_MS = 30_000


#: The consumer's own counters in :meth:`Consumer.metrics`, beside the client's traffic counters.
_COUNTERS = (
    "records_consumed",
    "bytes_consumed",
    "rebalances",
    "commit_failures",
    "partitions_revoked",
    "partitions_lost",
    "polls_unanswered",
)


def _assignors(partition_assignment_strategy: str | Sequence[str]) -> list[str]:
    """The assignor names asked for, repeats dropped, order kept; ValueError for an unknown or no name."""
    if isinstance(partition_assignment_strategy, str):
        partition_assignment_strategy = (partition_assignment_strategy,)
    strategies = list(dict.fromkeys(partition_assignment_strategy))
    unknown = [s for s in strategies if s not in ASSIGNORS]
    if unknown or not strategies:
        raise ValueError(
            f"partition_assignment_strategy must name one or more of {sorted(ASSIGNORS)}, "
            f"not {list(partition_assignment_strategy)!r}"
        )
    return strategies


def _check_settings(group_protocol: str, auto_offset_reset: str, max_poll_interval_ms: int) -> None:
    """ValueError naming a setting out of its range (before a client is made for the consumer)."""
    if group_protocol not in ("classic", "consumer"):
        raise ValueError(f"group_protocol must be 'classic' or 'consumer', not {group_protocol!r}")
    if auto_offset_reset not in ("earliest", "latest", "none"):
        raise ValueError(f"auto_offset_reset must be 'earliest', 'latest' or 'none', not {auto_offset_reset!r}")
    if max_poll_interval_ms <= 0:
        raise ValueError(f"max_poll_interval_ms must be positive, not {max_poll_interval_ms!r}")


class Consumer:
    """Read records from assigned partitions or, with ``group_id`` and :meth:`subscribe`, as a member
    of a consumer group.

    ``auto_offset_reset``: where to start when a partition has no committed offset (or the offset is out
    of range): ``"earliest"``, ``"latest"``, or ``"none"`` (raise ``NoOffsetForPartitionError``).
    Positions carry the leader epoch of the last record read (KIP-320): after a leader change the new
    leader is asked where that epoch ends (OffsetForLeaderEpoch), and a log truncated below the position
    (an unclean election) sends the partition back to the first offset known to diverge, or raises
    ``LogTruncationError`` with ``"none"``, as Java's consumer does. ``enable_auto_commit``: commit positions every
    ``auto_commit_interval_ms`` from ``poll()``, before a rebalance and on :meth:`close`.
    ``session_timeout_ms`` / ``rebalance_timeout_ms`` / ``heartbeat_interval_ms``: group timing.
    ``max_bytes`` / ``max_wait_ms`` / ``isolation``: fetch settings. Pass ``client`` to share a
    :class:`Client`, or ``bootstrap_servers`` and any :class:`Client` options.

    ``partition_assignment_strategy``: the assignors this member supports, most preferred first, by
    Java's names (``"range"``, ``"roundrobin"``). The coordinator chooses one that every member offers
    (each member votes for its most preferred such protocol), so members with different lists can share a
    group as long as the lists overlap.

    ``listener``: rebalance callbacks (:mod:`kafkawire.client.consumer.listeners`), called from ``poll()`` /
    ``close()`` where the Java consumer calls them. ``group_instance_id``: static membership (KIP-345):
    ``close()`` does not leave the group, and a process restarted with the same id within
    ``session_timeout_ms`` gets its assignment back without a rebalance; a second live process with the
    same id is fenced (FencedInstanceIdError, fatal as in Java). ``metadata_max_age_ms``: how often a
    pattern subscription is matched against the cluster's topics again. :meth:`pause` / :meth:`resume`
    stop and restart fetching of single partitions without leaving the group.

    ``prefetch`` (default on): before :meth:`poll` decodes a broker's answer it sends that broker the next
    Fetch, used by the next ``poll`` when it asks the same partitions at the same offsets (dropped after a
    ``seek``, an assignment change, a rebalance or a pause), its answer read meanwhile by a thread: one
    Fetch per broker ahead, so at most ``max_bytes`` (``fetch.max.bytes``) per broker of extra memory.

    Deadlines: :meth:`poll` returns (possibly empty) or raises within its ``timeout_ms`` plus a few
    milliseconds, whatever the brokers do; when no broker answered during its whole timeout (connection
    refused, a broker that accepts and never answers, a hung one) it returns what arrived, nothing, as
    Java's ``poll(Duration)`` does, says why in a WARNING on ``kafkawire.consumer`` and counts it in
    :meth:`metrics` (``polls_unanswered``); the next ``poll`` carries on from where this one stopped.
    Errors another attempt cannot cure (authorization, fencing, an invalid offset with no reset policy)
    are raised. :meth:`close` never raises for a broker's answer.

    Rebalances with eager assignors (range, roundrobin, sticky) follow the Java consumer: after every
    rebalance each partition this member holds, whether it kept or gained it, restarts from the group's
    committed offset (or ``auto_offset_reset`` when there is none). Records read but not committed before
    a rebalance are therefore delivered again (at least once), never skipped. With ``cooperative-sticky``
    (KIP-429) and ``group_protocol="consumer"`` (KIP-848) only partitions that move are revoked; kept
    ones go on from their positions, gained ones start from the committed offset.

    ``group_protocol``: ``"classic"`` (JoinGroup/SyncGroup, the default, as in Java) or ``"consumer"``
    (KIP-848, Apache Kafka 4.0+: the broker assigns with ``group_remote_assignor``, ``"uniform"`` or
    ``"range"``, default the broker's; session and heartbeat interval are the broker's). On a cluster
    without it ``poll()`` raises :class:`GroupProtocolUnsupportedError`.

    Heartbeats (KIP-62): a subscribed member heartbeats from a background thread of its own, so the time
    spent processing between two :meth:`poll` calls may exceed ``session_timeout_ms``. It is bounded by
    ``max_poll_interval_ms`` (Java's ``max.poll.interval.ms``, default 300 000): when no ``poll`` comes within
    it, the member leaves the group (LeaveGroup, or a heartbeat with epoch -1 on KIP-848; a static member
    keeps its place until its session times out, as in Java) with a WARNING naming the setting, its
    partitions go to the other members, and the next ``poll`` gives them up as lost and rejoins; a
    :meth:`commit` in between raises :class:`CommitFailedError` saying so. The rebalance timeout sent to the
    coordinator is ``max_poll_interval_ms`` unless ``rebalance_timeout_ms`` is given (what Java sends).
    The periodic auto-commit goes out on that thread too, with the request timeout as its own deadline.

    Threading, as in the Java consumer: one thread uses a consumer (``poll``, ``commit``, ``seek``,
    ``close``, ...; listener callbacks run in it); the one call another thread may make is :meth:`wakeup`,
    which makes the ``poll`` under way (or the next) raise :class:`WakeupError`. ``close()`` stops the
    heartbeat thread.

    Logging goes to the ``kafkawire.consumer`` logger: rebalances (partitions assigned and revoked) at
    INFO, failed commits with their cause and a poll timeout at WARNING. :meth:`metrics` gives lag per
    partition, records and bytes consumed, rebalances and commit failures.

    Per record: ``for record in consumer:`` (or :meth:`records`, which can end after an idle time) yields
    one :class:`~kafkawire.RecordView` per record (``record.value``, ``.key``, ``.offset``, ``.headers``,
    ``.topic``, ``.partition``, ...), compiled and read from the columns ``poll()`` decoded, as
    kafka-python's ``for msg in consumer`` and aiokafka's ``async for`` do. Commits from it are
    at least once: the auto-commit, a rebalance and :meth:`close` commit only records the loop has moved
    past (the record in hand is delivered again after a crash or a ``break``); a :meth:`commit` without
    offsets in the loop's body also covers the record in hand (call it after processing that record).
    Records still buffered when the application calls :meth:`poll` itself are fetched again, and a
    :meth:`seek` drops those of its partition.
    """

    def __init__(
        self,
        bootstrap_servers: str | list[str] | None = None,
        *,
        group_id: str | None = None,
        client: Client | None = None,
        auto_offset_reset: str = "latest",
        enable_auto_commit: bool = True,
        auto_commit_interval_ms: float = 5_000,
        session_timeout_ms: int = 10_000,
        rebalance_timeout_ms: int | None = None,
        max_poll_interval_ms: int = MAX_POLL_INTERVAL_MS,
        heartbeat_interval_ms: float = 3_000,
        max_bytes: int = 50 << 20,
        partition_max_bytes: int = 1 << 20,
        max_wait_ms: int = 500,
        isolation: str = "read_uncommitted",
        partition_assignment_strategy: Sequence[str] = ("range", "roundrobin"),
        listener: Any = None,
        group_instance_id: str | None = None,
        metadata_max_age_ms: float = 300_000,
        exclude_internal_topics: bool = True,
        group_protocol: str = "classic",
        group_remote_assignor: str | None = None,
        prefetch: bool = True,
        **client_options: Any,
    ) -> None:
        strategies = _assignors(partition_assignment_strategy)
        _check_settings(group_protocol, auto_offset_reset, max_poll_interval_ms)
        client, self._own_client = resolve_client(bootstrap_servers, client, client_options)
        self.client = client
        self.group_id = group_id
        self.auto_offset_reset = auto_offset_reset
        self.enable_auto_commit = enable_auto_commit and group_id is not None
        self.auto_commit_interval_ms = auto_commit_interval_ms
        self.session_timeout_ms = session_timeout_ms
        self.max_poll_interval_ms = max_poll_interval_ms
        # KIP-62: the Java consumer sends max.poll.interval.ms as the rebalance timeout.
        self.rebalance_timeout_ms = max_poll_interval_ms if rebalance_timeout_ms is None else rebalance_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.max_bytes = max_bytes
        self.partition_max_bytes = partition_max_bytes
        self.max_wait_ms = max_wait_ms
        self.isolation = isolation
        self.partition_assignment_strategy = tuple(strategies)
        self.listener = listener
        self.group_instance_id = group_instance_id
        self.metadata_max_age_ms = metadata_max_age_ms
        self.exclude_internal_topics = exclude_internal_topics
        self.group_protocol = group_protocol
        self.group_remote_assignor = group_remote_assignor
        self._prefetch = Prefetcher() if prefetch else None

        self._state = SubscriptionState()  # subscription, assignment, positions, commits known, pauses
        self._counters = dict.fromkeys(_COUNTERS, 0)
        self._positions = Positions(self, self._state, self._counters)
        self._join_machinery(group_id)
        self._closed = False
        self._cursor: RecordCursor | None = None  # the per-record loop's buffer (records())
        self._woken = threading.Event()  # wakeup() from another thread
        self._retry = PollRetry(client, "poll", log, self._counters)
        self._missing = MissingTopics(client, log, self._counters)  # topics that do not exist: said (issue 34)

    def _join_machinery(self, group_id: str | None) -> None:
        """The group member (none without a group id), its heartbeat thread (KIP-62), the commits and the
        reconciler that applies rebalances (:mod:`.reconcile`)."""
        self._member: GroupMember | ConsumerGroupMember | None = None
        self._upkeep: HeartbeatThread | None = None
        if group_id is not None:
            self._member, self._upkeep = join_group(self, group_id)
        self._commits = Commits(
            self.client,
            group_id,
            auto=self.enable_auto_commit,
            interval_ms=self.auto_commit_interval_ms,
            counters=self._counters,
            upkeep=self._upkeep,
            committed=self._state.committed,
            epoch_of=self._state.epoch_at,
        )
        self._group: Reconciler | None = None
        if self._member is not None and self._upkeep is not None:
            self._group = Reconciler(self, self._member, self._upkeep, self._state, self._commits)

    # ---------------------------------------------------------------------------------- assignment
    def subscribe(
        self,
        topics: Iterable[str] | None = None,
        *,
        pattern: str | re.Pattern[str] | None = None,
        listener: Any = None,
    ) -> None:
        """Join ``group_id`` for ``topics``, or for every topic whose whole name matches ``pattern``;
        partitions are assigned on the next :meth:`poll`.

        A pattern is matched against the cluster's topics (internal ones left out unless
        ``exclude_internal_topics=False``) now and again on every metadata refresh, every
        ``metadata_max_age_ms``; when the matching set changes the member rejoins with it (Java's
        ``subscribe(Pattern)``). ``listener`` (see :mod:`kafkawire.client.consumer.listeners`) replaces the one
        given to the constructor.
        """
        if self._group is None:
            raise ValueError("subscribe() needs a group_id")
        if (topics is None) == (pattern is None):
            raise ValueError("subscribe() takes topics or pattern=, not both")
        if listener is not None:
            self.listener = listener
        if isinstance(topics, str):
            topics = [topics]
        compiled = re.compile(pattern) if isinstance(pattern, str) else pattern
        self._group.member.set_subscription(self._state.subscribe(topics, compiled))
        self._group.upkeep.start()

    def unsubscribe(self, *, timeout_ms: float | None = None) -> None:
        """Give up the subscription: revoke (listener, then auto-commit) and leave the group."""
        if self._group is not None and self._state.subscribed:
            self._settle_records()
            self._group.unsubscribe(self.client.deadline(timeout_ms))

    def subscription(self) -> list[str]:
        """The topics subscribed to (for a pattern: those it matched at the last metadata refresh)."""
        return list(self._state.topics or [])

    def pause(self, partitions: Iterable[TopicPartition]) -> None:
        """Stop returning records of ``partitions`` (assigned ones) until :meth:`resume`; the group
        membership goes on. As in Java, a rebalance forgets which partitions were paused (and records of
        them buffered by :meth:`records` are fetched again after the resume)."""
        partitions = list(partitions)
        self._state.pause(partitions)
        cursor = self._cursor
        if cursor is not None:
            pending = cursor.pending(True)
            for tp in partitions:
                if tp in pending and tp in self._state.positions:
                    self._positions.set(tp, *pending[tp])
                    cursor.discard(tp, keep_held=True)

    def resume(self, partitions: Iterable[TopicPartition]) -> None:
        """Return records of ``partitions`` again (partitions not paused are ignored)."""
        self._state.paused -= set(partitions)

    def paused(self) -> list[TopicPartition]:
        """The partitions paused now."""
        return sorted(self._state.paused)

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read exactly these ``(topic, partition)`` pairs, outside any group rebalancing."""
        if self._state.subscribed:
            raise ValueError("cannot assign() while subscribed")
        self._settle_records()
        self._state.assign(partitions)

    def assignment(self) -> list[TopicPartition]:
        """The partitions this consumer reads now."""
        return list(self._state.assignment)

    @property
    def member_id(self) -> str:
        """This member's id in the group ("" before the first join)."""
        return self._member.member_id if self._member is not None else ""

    @property
    def generation(self) -> int:
        """The group generation this member belongs to (-1 before the first join and after losing it)."""
        return self._member.generation if self._member is not None else -1

    def group_metadata(self) -> GroupMetadata:
        """This member's group id, generation and member id, for
        :meth:`Producer.send_offsets_to_transaction` (KIP-447: offsets of a stale member are refused)."""
        if self.group_id is None:
            raise ValueError("group_metadata: the consumer has no group_id")
        return GroupMetadata(self.group_id, self.generation, self.member_id, self.group_instance_id)

    def seek(self, partition: TopicPartition, offset: int) -> None:
        """Read ``partition`` from ``offset`` on (records of it buffered by :meth:`records` are dropped)."""
        self._positions.set(partition, int(offset), -1)
        if self._cursor is not None:
            self._cursor.discard(partition)

    def seek_to_beginning(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        self._positions.reset(list(partitions or self._state.assignment), EARLIEST, self.client.deadline())

    def seek_to_end(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        self._positions.reset(list(partitions or self._state.assignment), LATEST, self.client.deadline())

    def position(self, partition: TopicPartition, *, timeout_ms: float | None = None) -> int:
        """The offset of the next record :meth:`poll` returns for ``partition``."""
        if partition not in self._state.positions:
            self._positions.init([partition], self.client.deadline(timeout_ms))
        return self._state.positions[partition]

    # -------------------------------------------------------------------------------------- commits
    def commit(self, offsets: Mapping[TopicPartition, int] | None = None, *, timeout_ms: float | None = None) -> None:
        """Commit ``offsets`` (default: the current positions; in a :meth:`records` loop, up to and
        including the record in hand, not the records buffered behind it) for ``group_id``.

        Raises :class:`CommitFailedError` when the group has rebalanced since this member joined (the
        next :meth:`poll` rejoins, and every partition restarts from its committed offset).
        """
        if self.group_id is None:
            raise ValueError("commit() needs a group_id")
        todo = dict(self._state.positions if offsets is None else offsets)
        if offsets is None and self._cursor is not None:
            # In a records() loop: up to and including the record in hand, not the records buffered behind it.
            todo.update({tp: off for tp, (off, _) in self._cursor.pending(True).items() if tp in todo})
        if todo:
            member = self._member if self._state.subscribed else None
            self._commits.commit(todo, self.client.deadline(timeout_ms), member)

    def committed(
        self, partitions: Iterable[TopicPartition], *, timeout_ms: float | None = None
    ) -> dict[TopicPartition, int]:
        """The group's committed offsets (-1 where none)."""
        if self.group_id is None:
            raise ValueError("committed() needs a group_id")
        found = self.client.committed(self.group_id, list(partitions), deadline=self.client.deadline(timeout_ms))
        return {tp: c.offset for tp, c in found.items()}

    # ----------------------------------------------------------------------------------------- poll
    @classmethod
    def from_properties(cls, properties: Mapping[str, Any] | str | os.PathLike[str], **overrides: Any) -> Consumer:
        """A consumer configured with the Java consumer's property names, from a mapping or a ``.properties``
        file: ``bootstrap.servers``, ``group.id``, ``group.protocol``, ``group.instance.id``,
        ``partition.assignment.strategy`` (Java class names or short names), ``session.timeout.ms``,
        ``heartbeat.interval.ms``, ``max.poll.interval.ms``, ``enable.auto.commit``, ``auto.offset.reset``,
        ``isolation.level``, ``fetch.max.wait.ms``, ``client.id``, ... and the connection and security
        properties of :meth:`Client.from_properties`; see
        :func:`kafkawire.client.config.consumer_kwargs_from_properties`. ``overrides`` are keyword arguments
        that win."""
        from ..config import consumer_kwargs_from_properties

        return cls(**{**consumer_kwargs_from_properties(properties), **overrides})

    def poll(self, timeout_ms: float = 1_000) -> dict[TopicPartition, RecordColumns]:
        """Records that arrived, per partition, waiting up to ``timeout_ms`` for some.

        Returns an empty dict when nothing arrived in time. Positions advance past what is returned.
        Returns or raises within ``timeout_ms`` (plus scheduling noise). When no broker answered anything
        during the whole timeout (connection refused, a broker that accepts and never answers, a hung
        one), returns an empty dict too, logs the error at WARNING (once per such streak) and counts it
        in ``metrics()["polls_unanswered"]``; calling ``poll`` again carries on from where this one
        stopped. Errors a busy broker answers with are retried quietly (logged at DEBUG on
        ``kafkawire.consumer``); errors no retry can cure (authorization, fencing, an invalid offset
        with ``auto_offset_reset="none"``) are raised.
        """
        if self._closed:
            raise KafkaClientError("consumer is closed")
        self._settle_records()
        deadline = Deadline.from_ms(timeout_ms)
        retry = self._retry
        retry.begin()
        first = True
        while True:
            if self._woken.is_set():
                self._woken.clear()
                raise WakeupError("poll() interrupted by wakeup()")
            try:
                out = self._poll_once(deadline, first)
                first = False
            except Exception as e:
                if retry.failed(e, deadline, timeout_ms, grace_ms=self.max_wait_ms):
                    continue
                return {}
            if out or deadline.expired() or out is REBALANCE_NEXT:
                retry.answered()
                return {} if out is REBALANCE_NEXT else out

    # ----------------------------------------------------------------------------------- per record
    def __iter__(self) -> RecordCursor:
        """``for record in consumer:``: :meth:`records` without an end."""
        return self.records()

    def records(self, idle_timeout_ms: float | None = None, *, poll_timeout_ms: float = 1_000) -> RecordCursor:
        """An iterator of one :class:`~kafkawire.RecordView` per record, across the assigned partitions, in
        offset order within each; it polls (``poll(poll_timeout_ms)``) whenever the records it holds are
        spent, and ends when ``idle_timeout_ms`` pass without a record (None: never; kafka-python's
        ``consumer_timeout_ms``). What ``poll`` raises comes out of the loop.

        At least once: commits made while it runs (the auto-commit from its polls, a rebalance,
        :meth:`close`) cover only the records the loop has moved past, i.e. asked the next record after;
        :meth:`commit` in the loop's body covers the record in hand too. Stopping the loop (``break``, an
        exception) keeps the buffered records: the next ``records()`` goes on with them.
        """
        cursor = self._cursor
        if cursor is None:
            cursor = self._cursor = _impl.views.RecordCursor(None)
        cursor.refill = self._refiller(idle_timeout_ms, poll_timeout_ms)
        return cursor

    def _refiller(self, idle_timeout_ms: float | None, poll_timeout_ms: float) -> Any:
        """The cursor's refill: the next non-empty poll, or None once ``idle_timeout_ms`` passed without one."""

        def refill() -> dict[TopicPartition, RecordColumns] | None:
            idle = None if idle_timeout_ms is None else Deadline.from_ms(idle_timeout_ms)
            while True:
                wait = poll_timeout_ms if idle is None else min(poll_timeout_ms, idle.remaining_ms())
                got = self.poll(wait)
                if got:
                    return got
                if idle is not None and idle.expired():
                    return None

        return refill

    def _settle_records(self) -> None:
        """Records buffered by :meth:`records` and not moved past go back: their partitions' positions
        return to the first of them (fetched again; the record in hand counts as not processed)."""
        cursor = self._cursor
        if cursor is None:
            return
        for tp, (offset, epoch) in cursor.pending(False).items():
            if tp in self._state.positions:
                self._positions.set(tp, offset, epoch)
        cursor.discard()

    def wakeup(self) -> None:
        """Make the ``poll()`` under way (within about ``max_wait_ms``) or the next one raise
        :class:`WakeupError`: the one method another thread may call (Java's ``wakeup()``)."""
        self._woken.set()

    def _poll_once(self, deadline: Deadline, first: bool = True) -> dict[TopicPartition, RecordColumns]:
        """One round: group upkeep, auto-commit, one fetch. Empty when there was nothing (yet)."""
        subscribed = self._state.subscribed
        if self._group is not None and subscribed:
            ended = self._group.upkeep_round(deadline, first)
            if ended is not None:
                return ended
        self._commits.maybe_commit(self._state.positions, deadline, self._member if subscribed else None)
        self._missing.check(self._state.topics or (), self._state.assignment, self._state.positions, deadline)
        fetchable = self._positions.ready(deadline)
        if not fetchable:
            return {}
        return self._fetch(fetchable, deadline)

    def _fetch(self, fetchable: list[TopicPartition], deadline: Deadline) -> dict[TopicPartition, RecordColumns]:
        """One Fetch per leader for ``fetchable``; the records read, positions advanced past them."""
        positions = self._state.positions
        results = self.client.fetch_many(
            {tp: positions[tp] for tp in fetchable},
            max_bytes=self.max_bytes,
            partition_max_bytes=self.partition_max_bytes,
            max_wait_ms=deadline.wait_ms(self.max_wait_ms),
            isolation=self.isolation,
            raise_errors=False,
            deadline=deadline,
            prefetch=self._prefetch,
        )
        return self._positions.take(results, deadline)

    # -------------------------------------------------------------------------------------- metrics
    def metrics(self) -> dict[str, Any]:
        """Counters since the consumer was created and the state of each assigned partition.

        ``records_consumed`` / ``bytes_consumed`` (key and value bytes returned by :meth:`poll`),
        ``rebalances`` (generations joined, or assignment changes on the consumer protocol),
        ``commit_failures``, ``polls_unanswered`` (polls during which no broker answered),
        ``partitions_revoked`` / ``partitions_lost`` (summed over rebalances: with
        eager assignors every rebalance revokes everything held, with cooperative ones only what moves),
        ``generation`` (the member epoch on the consumer protocol), and ``partitions``:
        ``{(topic, partition): {"position", "high_watermark", "lag"}}`` where ``lag`` is the high
        watermark of the last fetch minus the position (None until both are known). ``client`` holds
        the client's own traffic counters. ``missing_topics`` (``{topic: None, or the partitions missing}``)
        and ``missing_topic_warnings``: subscribed or assigned topics that do not exist (:mod:`.missing_topics`).
        """
        return {
            **self._counters,
            **self._missing.metrics(),
            "generation": self.generation,
            "partitions": self._state.partition_metrics(),
            "client": self.client.metrics(),
        }

    # ---------------------------------------------------------------------------------------- close
    def close(self, timeout_ms: float | None = None) -> None:
        """Commit (when auto-commit is on), leave the group, and close the client if this consumer
        created it; within ``timeout_ms`` (default 30 s).

        Never raises because of a broker: a commit that fails here is logged (its records are read again
        by whoever takes the partitions over) and a bad or missing answer to LeaveGroup is logged too
        (the session expires anyway).
        """
        if self._closed:
            return
        self._settle_records()  # a records() loop stopped midway: commit only what it moved past
        self._closed = True
        deadline = Deadline.from_ms(CLOSE_TIMEOUT_MS if timeout_ms is None else timeout_ms)
        try:
            if self._group is not None and self._state.subscribed:
                self._group.close(deadline)
        finally:
            if self._upkeep is not None:
                self._upkeep.close(0)
            if self._own_client:
                self.client.close()  # closes the connections: nothing ahead is left to drain
                if self._prefetch is not None:
                    self._prefetch.close(0)
            elif self._prefetch is not None:  # a shared client: read what is still ahead off its connections
                self._prefetch.close(min(5_000.0, deadline.remaining_ms()))

    def __enter__(self) -> Consumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
