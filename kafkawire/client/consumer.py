"""A blocking consumer: manual assignment, or a consumer group (classic protocol; range and round-robin
assignors).

``poll()`` returns records as :class:`kafkawire.RecordColumns` per partition. Group membership runs
inside ``poll()``: it joins (JoinGroup offering one protocol per assignor in ``partition_assignment_strategy``,
then SyncGroup; the leader computes the assignment with the assignor the coordinator chose), sends
heartbeats when they are due, rejoins when the coordinator announces a rebalance, and commits positions
automatically when ``enable_auto_commit`` is on. There is no background thread, so ``poll()`` must be
called more often than ``session_timeout_ms`` (the Java consumer's ``max.poll.interval.ms`` rule, made
stricter because heartbeats ride on ``poll()`` too).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..columns import RecordColumns
from ..protocol import HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest, SyncGroupRequest
from ..protocol.errors import (
    BrokerError,
    FencedInstanceIdError,
    IllegalGenerationError,
    MemberIdRequiredError,
    OffsetOutOfRangeError,
    RebalanceInProgressError,
    UnknownMemberIdError,
)
from .client import EARLIEST, LATEST, Client, _error
from .errors import KafkaClientError, KafkaTimeoutError
from .group import ASSIGNORS, decode_assignment, decode_subscription, encode_assignment, encode_subscription
from .retry import is_retriable

__all__ = ["Consumer", "CommitFailedError"]

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]


class CommitFailedError(KafkaClientError):
    """A group commit was refused because the group rebalanced: the partitions may belong to another
    member now, whose reads will start from the last successful commit."""


class Consumer:
    """Read records from assigned partitions or, with ``group_id`` and :meth:`subscribe`, as a member
    of a consumer group.

    ``auto_offset_reset``: where to start when a partition has no committed offset (or the offset is out
    of range): ``"earliest"`` or ``"latest"``. ``enable_auto_commit``: commit positions every
    ``auto_commit_interval_ms`` from ``poll()``, before a rebalance and on :meth:`close`.
    ``session_timeout_ms`` / ``rebalance_timeout_ms`` / ``heartbeat_interval_ms``: group timing.
    ``max_bytes`` / ``max_wait_ms`` / ``isolation``: fetch settings. Pass ``client`` to share a
    :class:`Client`, or ``bootstrap_servers`` and any :class:`Client` options.

    ``partition_assignment_strategy``: the assignors this member supports, most preferred first, by
    Java's names (``"range"``, ``"roundrobin"``). The coordinator chooses one that every member offers
    (each member votes for its most preferred such protocol), so members with different lists can share a
    group as long as the lists overlap.
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
        rebalance_timeout_ms: int = 30_000,
        heartbeat_interval_ms: float = 3_000,
        max_bytes: int = 50 << 20,
        partition_max_bytes: int = 1 << 20,
        max_wait_ms: int = 500,
        isolation: str = "read_uncommitted",
        partition_assignment_strategy: Sequence[str] = ("range", "roundrobin"),
        **client_options: Any,
    ) -> None:
        if isinstance(partition_assignment_strategy, str):
            partition_assignment_strategy = (partition_assignment_strategy,)
        strategies = list(dict.fromkeys(partition_assignment_strategy))  # drop repeats, keep the order
        unknown = [s for s in strategies if s not in ASSIGNORS]
        if unknown or not strategies:
            raise ValueError(
                f"partition_assignment_strategy must name one or more of {sorted(ASSIGNORS)}, "
                f"not {list(partition_assignment_strategy)!r}"
            )
        if client is None:
            if bootstrap_servers is None:
                raise ValueError("give bootstrap_servers or client")
            client = Client(bootstrap_servers, **client_options)
            self._own_client = True
        else:
            if client_options:
                raise ValueError("client options given together with a client")
            self._own_client = False
        if auto_offset_reset not in ("earliest", "latest"):
            raise ValueError(f"auto_offset_reset must be 'earliest' or 'latest', not {auto_offset_reset!r}")
        self.client = client
        self.group_id = group_id
        self.auto_offset_reset = auto_offset_reset
        self.enable_auto_commit = enable_auto_commit and group_id is not None
        self.auto_commit_interval_ms = auto_commit_interval_ms
        self.session_timeout_ms = session_timeout_ms
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.max_bytes = max_bytes
        self.partition_max_bytes = partition_max_bytes
        self.max_wait_ms = max_wait_ms
        self.isolation = isolation
        self.partition_assignment_strategy = tuple(strategies)

        self._subscription: list[str] | None = None
        self._assignment: list[TopicPartition] = []
        self._positions: dict[TopicPartition, int] = {}
        self._member_id = ""
        self._generation = -1
        self._rejoin = False
        self._last_heartbeat = 0.0
        self._last_commit = time.monotonic()
        self._committed_positions: dict[TopicPartition, int] = {}
        self._closed = False

    # ---------------------------------------------------------------------------------- assignment
    def subscribe(self, topics: Iterable[str]) -> None:
        """Join ``group_id`` for ``topics``; partitions are assigned on the next :meth:`poll`."""
        if self.group_id is None:
            raise ValueError("subscribe() needs a group_id")
        self._subscription = sorted(set(topics))
        self._rejoin = True

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read exactly these ``(topic, partition)`` pairs, outside any group rebalancing."""
        if self._subscription is not None:
            raise ValueError("cannot assign() while subscribed")
        self._assignment = sorted(set(partitions))
        self._positions = {tp: p for tp, p in self._positions.items() if tp in self._assignment}

    def assignment(self) -> list[TopicPartition]:
        """The partitions this consumer reads now."""
        return list(self._assignment)

    @property
    def member_id(self) -> str:
        """This member's id in the group ("" before the first join)."""
        return self._member_id

    @property
    def generation(self) -> int:
        """The group generation this member belongs to (-1 before the first join)."""
        return self._generation

    def seek(self, partition: TopicPartition, offset: int) -> None:
        """Read ``partition`` from ``offset`` on."""
        self._positions[partition] = int(offset)

    def seek_to_beginning(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        self._reset(list(partitions or self._assignment), EARLIEST)

    def seek_to_end(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        self._reset(list(partitions or self._assignment), LATEST)

    def position(self, partition: TopicPartition) -> int:
        """The offset of the next record :meth:`poll` returns for ``partition``."""
        if partition not in self._positions:
            self._init_positions([partition])
        return self._positions[partition]

    def _reset(self, tps: list[TopicPartition], which: int) -> None:
        by_topic: dict[str, list[int]] = {}
        for t, p in tps:
            by_topic.setdefault(t, []).append(p)
        for t, ps in by_topic.items():
            for p, listed in self.client.list_offsets(t, ps, timestamp=which).items():
                self._positions[(t, p)] = listed.offset

    def _init_positions(self, tps: list[TopicPartition]) -> None:
        missing = [tp for tp in tps if tp not in self._positions]
        if not missing:
            return
        if self.group_id is not None:
            for tp, c in self.client.committed(self.group_id, missing).items():
                if c.offset >= 0:
                    self._positions[tp] = c.offset
                    self._committed_positions[tp] = c.offset
        missing = [tp for tp in missing if tp not in self._positions]
        if missing:
            self._reset(missing, EARLIEST if self.auto_offset_reset == "earliest" else LATEST)

    # ---------------------------------------------------------------------------------------- group
    def _join(self) -> None:
        """JoinGroup + SyncGroup until this member holds an assignment of the current generation."""
        assert self.group_id is not None and self._subscription is not None
        client = self.client
        subscription = encode_subscription(self._subscription)
        deadline = time.monotonic() + (self.rebalance_timeout_ms + client.request_timeout_ms) / 1000
        refresh = False
        backoff = client.retry_policy.backoff_ms / 1000
        while True:
            if time.monotonic() > deadline:
                raise KafkaTimeoutError(f"could not join group {self.group_id!r} in time")
            try:
                with client._lock:
                    conn = client._coordinator(self.group_id, refresh=refresh)
                    refresh = False
                    join = JoinGroupRequest(
                        group_id=self.group_id,
                        session_timeout_ms=self.session_timeout_ms,
                        rebalance_timeout_ms=self.rebalance_timeout_ms,
                        member_id=self._member_id,
                        protocol_type="consumer",
                        # One protocol per assignor, most preferred first; the subscription is the same
                        # for each (v0 of ConsumerProtocolSubscription carries no assignor state).
                        protocols=[
                            JoinGroupRequest.JoinGroupRequestProtocol(name=name, metadata=subscription)
                            for name in self.partition_assignment_strategy
                        ],
                    )
                    # JoinGroup is answered only when every member has (re)joined: wait for a rebalance.
                    resp = conn.request(
                        join, conn.version_for(JoinGroupRequest), timeout_ms=self.rebalance_timeout_ms + 5_000
                    )
                    err = _error(resp.error_code, None, f"join group {self.group_id!r}")
                    if isinstance(err, MemberIdRequiredError):
                        # KIP-394: the first join only obtains a member id. (Tansu asks for it on v0-v3
                        # too, which predate KIP-394: the same answer works.)
                        self._member_id = resp.member_id
                        continue
                    if isinstance(err, (UnknownMemberIdError, IllegalGenerationError, FencedInstanceIdError)):
                        self._reset_membership(err)
                        continue
                    if isinstance(err, RebalanceInProgressError):
                        continue
                    if err is not None:
                        raise err
                    self._member_id = resp.member_id
                    self._generation = resp.generation_id
                    # protocol_name is nullable only from v7 on (KIP-559); a coordinator that leaves it out
                    # can only have chosen among what we offered, so fall back to our first choice.
                    protocol = resp.protocol_name or self.partition_assignment_strategy[0]
                    assignments = []
                    if resp.leader == resp.member_id:
                        assignments = self._assign_as_leader(protocol, resp.members)
                    sync = SyncGroupRequest(
                        group_id=self.group_id,
                        generation_id=self._generation,
                        member_id=self._member_id,
                        protocol_type="consumer",
                        protocol_name=protocol,
                        assignments=assignments,
                    )
                    sresp = conn.request(
                        sync, conn.version_for(SyncGroupRequest), timeout_ms=self.rebalance_timeout_ms + 5_000
                    )
                    serr = _error(sresp.error_code, None, f"sync group {self.group_id!r}")
                    if isinstance(serr, (UnknownMemberIdError, IllegalGenerationError)):
                        self._reset_membership(serr)
                        continue
                    if isinstance(serr, RebalanceInProgressError):
                        continue
                    if serr is not None:
                        raise serr
            except Exception as e:
                if not is_retriable(e):
                    raise
                log.debug("group %s: retrying join after %s", self.group_id, e)
                refresh = True
                time.sleep(backoff)
                continue
            assigned = decode_assignment(sresp.assignment)
            self._assignment = sorted((t, p) for t, ps in assigned.items() for p in ps)
            self._positions = {tp: off for tp, off in self._positions.items() if tp in self._assignment}
            self._rejoin = False
            self._last_heartbeat = time.monotonic()
            self._init_positions(self._assignment)
            return

    def _assign_as_leader(self, protocol: str, members: list[Any]) -> list[Any]:
        """The leader's SyncGroup assignments: ``protocol`` (the coordinator's choice) names the assignor."""
        assignor = ASSIGNORS.get(protocol)
        if assignor is None:
            # The coordinator must choose among the protocols every member offered, ours included.
            raise KafkaClientError(f"group {self.group_id!r}: coordinator chose unknown protocol {protocol!r}")
        subscriptions = {m.member_id: decode_subscription(m.metadata) for m in members}
        topics = sorted({t for ts in subscriptions.values() for t in ts})
        meta = self.client._fetch_metadata(topics) if topics else None
        counts = {}
        if meta is not None:
            counts = {t: tm.num_partitions for t, tm in meta.topics.items() if tm.error is None}
        plan = assignor(subscriptions, counts)
        return [
            SyncGroupRequest.SyncGroupRequestAssignment(member_id=m, assignment=encode_assignment(parts))
            for m, parts in sorted(plan.items())
        ]

    def _reset_membership(self, err: BaseException) -> None:
        """Forget the generation after ``err``; forget the member id too unless the error was only
        ILLEGAL_GENERATION.

        ILLEGAL_GENERATION means the group moved on without us but still knows our member id (e.g. a
        commit raced a rebalance another member's LeaveGroup started). Rejoining under a fresh id would
        leave the old id in the group, and the coordinator would wait for it to rejoin until the rebalance
        timeout. The Java consumer keeps the member id in this case for that reason
        (``AbstractCoordinator.resetStateAndGeneration(reason, shouldResetMemberId=false)``).
        """
        if not isinstance(err, IllegalGenerationError):
            self._member_id = ""
        self._generation = -1

    def _heartbeat(self) -> None:
        if self.group_id is None or self._generation < 0 or self._rejoin:
            return
        now = time.monotonic()
        if (now - self._last_heartbeat) * 1000 < self.heartbeat_interval_ms:
            return
        client = self.client
        try:
            with client._lock:
                conn = client._coordinator(self.group_id)
                resp = conn.request(
                    HeartbeatRequest(group_id=self.group_id, generation_id=self._generation, member_id=self._member_id),
                )
        except Exception as e:
            if not is_retriable(e):
                raise
            client._coordinators.pop(self.group_id, None)  # find the coordinator again next time
            return
        self._last_heartbeat = now
        err = _error(resp.error_code, None, "heartbeat")
        if err is None:
            return
        if isinstance(err, RebalanceInProgressError):
            # Commit what was read while the partitions are still ours, then rejoin.
            self._maybe_commit(force=True)
            self._rejoin = True
        elif isinstance(err, (UnknownMemberIdError, IllegalGenerationError, FencedInstanceIdError)):
            self._reset_membership(err)
            self._rejoin = True
        elif err.retriable:
            client._coordinators.pop(self.group_id, None)
        else:
            raise err

    # -------------------------------------------------------------------------------------- commits
    def commit(self, offsets: Mapping[TopicPartition, int] | None = None) -> None:
        """Commit ``offsets`` (default: the current positions) for ``group_id``.

        Raises :class:`CommitFailedError` when the group has rebalanced since this member joined.
        """
        if self.group_id is None:
            raise ValueError("commit() needs a group_id")
        todo = dict(self._positions if offsets is None else offsets)
        if not todo:
            return
        try:
            self.client.commit_offsets(
                self.group_id,
                todo,
                generation_id=self._generation if self._subscription is not None else -1,
                member_id=self._member_id if self._subscription is not None else "",
            )
        except (RebalanceInProgressError, IllegalGenerationError, UnknownMemberIdError) as e:
            self._rejoin = True
            if isinstance(e, (IllegalGenerationError, UnknownMemberIdError)):
                self._reset_membership(e)
            raise CommitFailedError(f"commit refused, the group rebalanced: {e}") from e
        self._committed_positions.update(todo)
        self._last_commit = time.monotonic()

    def _maybe_commit(self, force: bool = False) -> None:
        if not self.enable_auto_commit:
            return
        due = (time.monotonic() - self._last_commit) * 1000 >= self.auto_commit_interval_ms
        if not (force or due):
            return
        changed = {tp: o for tp, o in self._positions.items() if self._committed_positions.get(tp) != o}
        if not changed:
            self._last_commit = time.monotonic()
            return
        try:
            self.commit(changed)
        except CommitFailedError as e:
            log.warning("group %s: auto-commit failed: %s", self.group_id, e)

    def committed(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The group's committed offsets (-1 where none)."""
        if self.group_id is None:
            raise ValueError("committed() needs a group_id")
        return {tp: c.offset for tp, c in self.client.committed(self.group_id, list(partitions)).items()}

    # ----------------------------------------------------------------------------------------- poll
    def poll(self, timeout_ms: float = 1_000) -> dict[TopicPartition, RecordColumns]:
        """Records that arrived, per partition, waiting up to ``timeout_ms`` for some.

        Returns an empty dict when nothing arrived. Positions advance past what is returned.
        """
        if self._closed:
            raise KafkaClientError("consumer is closed")
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            if self._subscription is not None:
                self._heartbeat()
                if self._rejoin:
                    self._join()
            self._maybe_commit()
            remaining = deadline - time.monotonic()
            if self._assignment:
                self._init_positions(self._assignment)
                wait = int(max(0, min(self.max_wait_ms, remaining * 1000)))
                results = self.client.fetch_many(
                    {tp: self._positions[tp] for tp in self._assignment},
                    max_bytes=self.max_bytes,
                    partition_max_bytes=self.partition_max_bytes,
                    max_wait_ms=wait,
                    isolation=self.isolation,
                    raise_errors=False,
                )
                out: dict[TopicPartition, RecordColumns] = {}
                for tp, r in results.items():
                    if r.error is not None:
                        if isinstance(r.error, OffsetOutOfRangeError):
                            log.info(
                                "%s/%d: offset %d out of range, resetting to %s",
                                tp[0],
                                tp[1],
                                r.fetch_offset,
                                self.auto_offset_reset,
                            )
                            self._reset([tp], EARLIEST if self.auto_offset_reset == "earliest" else LATEST)
                            continue
                        raise r.error
                    if tp in self._positions and r.next_offset > self._positions[tp]:
                        self._positions[tp] = r.next_offset
                    if len(r.records):
                        out[tp] = r.records
                if out:
                    return out
            elif remaining > 0:
                time.sleep(min(remaining, 0.05))
            if time.monotonic() >= deadline:
                return {}

    # ---------------------------------------------------------------------------------------- close
    def close(self) -> None:
        """Commit (when auto-commit is on), leave the group, and close the client if this consumer
        created it."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._subscription is not None and self._generation >= 0:
                self._maybe_commit(force=True)
                self._leave()
        finally:
            if self._own_client:
                self.client.close()

    def _leave(self) -> None:
        assert self.group_id is not None
        try:
            with self.client._lock:
                conn = self.client._coordinator(self.group_id)
                version = conn.version_for(LeaveGroupRequest)
                if version >= 3:
                    req = LeaveGroupRequest(
                        group_id=self.group_id,
                        members=[LeaveGroupRequest.MemberIdentity(member_id=self._member_id)],
                    )
                else:
                    req = LeaveGroupRequest(group_id=self.group_id, member_id=self._member_id)
                conn.request(req, version)
        except (BrokerError, KafkaClientError) as e:  # leaving is a courtesy: the session expires anyway
            log.debug("group %s: leave failed: %s", self.group_id, e)
        self._member_id, self._generation = "", -1

    def __enter__(self) -> Consumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
