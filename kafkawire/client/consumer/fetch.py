"""Fetch on top of :class:`~kafkawire.client.cluster.cluster.Cluster`: several partitions at once, one request
per leader, all leaders in flight together, partitions that failed retried until the deadline. With
``sessions`` each broker's request goes through its incremental fetch session (KIP-227,
:mod:`kafkawire.client.consumer.fetch_session`): only what changed is sent.

One call is a :class:`_FetchCall`, whose :meth:`~_FetchCall.attempt` is one round under
:meth:`Cluster.call <kafkawire.client.cluster.cluster.Cluster.call>`: route every partition still without a
result to its node, send one Fetch per node (or take the one sent ahead), then read each answer: session
bookkeeping, partition errors and replica moves, the next Fetch sent ahead, the records decoded."""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Mapping
from typing import Any, NamedTuple

from ...columns import RecordColumns
from ...protocol import FetchRequest, FetchResponse
from ...protocol.errors import (
    BrokerError,
    LeaderNotAvailableError,
    ReplicaNotAvailableError,
    UnknownTopicOrPartitionError,
    broker_error,
)
from ..cluster import quirks
from ..cluster.cluster import ZERO_UUID, Cluster
from ..cluster.retry import is_retriable
from ..net.deadline import Deadline
from ..types import FetchResult
from .fetch_session import FetchSessionHandler, FetchSessions, SessionRequest
from .prefetch import Ahead, Prefetcher, next_offsets_of
from .validation import leader_epoch_of

__all__ = ["fetch_many"]

TP = tuple[str, int]
#: A partition's answer to decode: the partition, its part of the Fetch response, and its error if any.
_Answer = tuple[TP, FetchResponse.PartitionData, BrokerError | None]

log = logging.getLogger("kafkawire.client.fetch")

#: How long a fetch retries a topic the metadata says does not exist before raising: a topic just created
#: reaches every broker's metadata within a few hundred ms (KRaft); a misspelt one never does.
MISSING_TOPIC_GRACE_S = 2.0

#: Room for a Fetch answer's own fields (topics, partition headers, aborted transactions) past max_bytes.
_FRAMING_BYTES = 1 << 16


def fetch_many(
    cluster: Cluster,
    deadline: Deadline,
    offsets: Mapping[TP, int],
    *,
    max_bytes: int,
    partition_max_bytes: int,
    max_wait_ms: int,
    min_bytes: int,
    level: int,
    isolation: str,
    raise_errors: bool,
    check_crcs: bool,
    sessions: FetchSessions | None = None,
    prefetch: Prefetcher | None = None,
) -> dict[TP, FetchResult]:
    """See :meth:`kafkawire.client.Client.fetch_many`. With ``prefetch`` the next Fetch of each broker is
    sent before this one's answer is decoded, and a Fetch sent ahead by the previous call is used when it
    matches (:mod:`kafkawire.client.consumer.prefetch`)."""
    call = _FetchCall(
        cluster,
        offsets,
        _Limits(max_bytes, partition_max_bytes, max_wait_ms, min_bytes, level, isolation, raise_errors, check_crcs),
        sessions,
        prefetch,
    )
    what = "fetch of " + ", ".join(f"{t}/{p}" for t, p in list(offsets)[:4]) + (" ..." if len(offsets) > 4 else "")
    cluster.call(deadline, call.attempt, what=what, topics=sorted({t for t, _ in offsets}))
    return {tp: call.results[tp] for tp in offsets}


class _Limits(NamedTuple):
    """What every Fetch of one call asks for (``fetch_many``'s keyword arguments)."""

    max_bytes: int
    partition_max_bytes: int
    max_wait_ms: int
    min_bytes: int
    level: int  # isolation level on the wire: 0 read_uncommitted, 1 read_committed
    isolation: str
    raise_errors: bool
    check_crcs: bool


class _Sent(NamedTuple):
    """A Fetch on its way to ``node`` for ``tps`` (sent this round, or ahead by the previous call)."""

    pending: Any  # PendingResponse
    tps: list[TP]
    handler: FetchSessionHandler | None
    sreq: SessionRequest | None
    node: int
    timeout_ms: float


class _FetchCall:
    """One ``fetch_many`` call: the results so far, the partitions still without one, and the round
    (:meth:`attempt`) that ``cluster.call`` retries until none is left or the deadline passes."""

    def __init__(
        self,
        cluster: Cluster,
        offsets: Mapping[TP, int],
        limits: _Limits,
        sessions: FetchSessions | None,
        prefetch: Prefetcher | None,
    ) -> None:
        self.cluster = cluster
        self.limits = limits
        self.sessions = sessions
        self.prefetch = prefetch
        if prefetch is not None:
            prefetch.bind(cluster.lock)
        #: What a Fetch sent ahead must have been sent with to answer this call.
        self.key = (limits.max_bytes, limits.partition_max_bytes, limits.min_bytes, limits.level,
                    limits.isolation, limits.check_crcs)  # fmt: skip
        self.results: dict[TP, FetchResult] = {}
        self.remaining = dict(offsets)
        self.first_round = True
        # The current round's state (reset by attempt()).
        self.errors: dict[TP, BaseException] = {}  # retriable errors of partitions left for the next round
        self.leaders: dict[TP, int] = {}
        # When the metadata first said a partition's topic (or the partition) does not exist.
        self.missing_since: dict[TP, float] = {}

    # ---------------------------------------------------------------------------------------- round
    def attempt(self, d: Deadline) -> None:
        """One round: every partition still without a result; raises the first retriable error of the
        round (after keeping what did arrive) so that ``cluster.call`` retries only what is left."""
        self.errors = {}
        self.leaders = {}
        by_node = self._route(d)
        wait_ms = d.wait_ms(self.limits.max_wait_ms)
        if self.prefetch is not None and self.first_round:
            # Fetches ahead to brokers this call does not ask (a later round's retries keep this round's).
            self.prefetch.drain_except(set(by_node), d)
        self.first_round = False
        sent: list[_Sent] = []
        for node, tps in by_node.items():
            s = self._dispatch(node, tps, wait_ms, d)
            if s is not None:
                sent.append(s)
        for s in sent:
            self._receive(s, wait_ms, d)
        remaining = self.remaining
        for tp in self.results:
            remaining.pop(tp, None)
        if remaining:
            first = next((self.errors[tp] for tp in remaining if tp in self.errors), None)
            raise first if first is not None else LeaderNotAvailableError(f"fetch: no answer for {sorted(remaining)}")

    def _route(self, d: Deadline) -> dict[int, list[TP]]:
        """The partitions left, by the node to fetch them from: the leader, or its preferred read replica
        (KIP-392, :mod:`kafkawire.client.cluster.read_replicas`)."""
        cluster, leaders = self.cluster, self.leaders
        by_node: dict[int, list[TP]] = defaultdict(list)
        replicas = cluster.read_replicas
        for tp in self.remaining:
            try:
                leaders[tp] = cluster.leader(*tp, d)
            except UnknownTopicOrPartitionError as e:
                self.errors[tp] = self._missing(tp, e)
                continue
            except Exception as e:
                if not is_retriable(e):
                    raise
                self.errors[tp] = e
                continue
            by_node[replicas.node_for(tp, leaders[tp], cluster.brokers)].append(tp)
        return by_node

    def _missing(self, tp: TP, error: UnknownTopicOrPartitionError) -> UnknownTopicOrPartitionError:
        """The metadata says ``tp`` does not exist. A topic just created may not have reached every broker's
        metadata yet (Java's consumer retries within its timeout), so the error stays retriable for
        :data:`MISSING_TOPIC_GRACE_S`, then is raised naming the topic (issue 34: ``Client.fetch`` waited out
        its whole deadline, 30.5 s). A consumer (``raise_errors=False``) keeps retrying: its poll says so."""
        since = self.missing_since.setdefault(tp, time.monotonic())
        if not self.limits.raise_errors or time.monotonic() - since < MISSING_TOPIC_GRACE_S:
            return error
        what = f"partition {tp[1]} of topic {tp[0]!r}" if "no partition" in str(error) else f"topic {tp[0]!r}"
        final = UnknownTopicOrPartitionError(f"{what} does not exist (the cluster's metadata said so for "
                                             f"{MISSING_TOPIC_GRACE_S:g} s): create it, or check the name")
        final.retriable = False  # type: ignore[misc]
        raise final

    def _failed(self, node: int, tps: list[TP], e: BaseException) -> None:
        """``node`` could not be asked for ``tps`` (retriable ``e``): retry them next round, a preferred
        replica's on the leader."""
        if not is_retriable(e):
            raise e
        for tp in tps:
            self.errors[tp] = e
            if self.leaders[tp] != node:
                self.cluster.read_replicas.forget(tp, e)  # the preferred replica is unreachable: the leader next

    # ----------------------------------------------------------------------------------------- send
    def _dispatch(self, node: int, tps: list[TP], wait_ms: int, d: Deadline) -> _Sent | None:
        """The Fetch for ``tps`` from ``node``: the one sent ahead when it matches, else a new one; None
        when it could not be sent (the partitions wait for the next round)."""
        at = {tp: self.remaining[tp] for tp in tps}
        if self.prefetch is not None:
            ahead = self.prefetch.take(node, self.key, at, d)
            if ahead is not None:
                return _Sent(ahead.pending, tps, ahead.handler, ahead.sreq, node, ahead.timeout_ms)
        try:
            pending, handler, sreq = self._send(node, tps, at, wait_ms, d)
        except Exception as e:
            self._failed(node, tps, e)
            return None
        return _Sent(pending, tps, handler, sreq, node, self.cluster.request_timeout_ms + wait_ms)

    def _send(
        self, node: int, tps: list[TP], at: Mapping[TP, int], wait_ms: int, d: Deadline
    ) -> tuple[Any, FetchSessionHandler | None, SessionRequest | None]:
        """Build and send the Fetch for ``tps`` at offsets ``at`` to ``node``: (pending, handler, sreq)."""
        cluster, limits = self.cluster, self.limits
        handler = self.sessions.handler(node) if self.sessions is not None else None
        try:
            conn = cluster.connection(node, d)
            use_ids = all(cluster.topics[t].topic_id is not None for t, _ in tps)
            version = quirks.fetch_version(
                conn.version_for(FetchRequest, quirks.LOWEST_VERSION[FetchRequest]), use_ids
            )
            # KIP-320: each partition's leader epoch as we know it, so that a leader or replica whose epoch
            # is older (UNKNOWN_LEADER_EPOCH) or newer (FENCED_LEADER_EPOCH: our metadata is stale, refreshed
            # before the retry) than ours refuses instead of answering from a log we may not be reading.
            epochs = {tp: leader_epoch_of(cluster, tp) for tp in tps}
            sreq = None
            if handler is not None:
                wanted = {tp: (int(at[tp]), limits.partition_max_bytes) for tp in tps}
                sreq = handler.build(wanted, version, use_ids, epochs)
            req = _fetch_request(cluster, tps, at, limits.level, wait_ms, limits.min_bytes, limits.max_bytes,
                                 limits.partition_max_bytes, sreq, epochs)  # fmt: skip
            # The answer is at most max_bytes plus its framing (KIP-74: or one batch past it, read as any
            # answer): memory this fetch already agreed to, read into one buffer (connection.py).
            pending = conn.send(req, version, deadline=d, expect_bytes=limits.max_bytes + _FRAMING_BYTES)
            return pending, handler, sreq
        except Exception:
            if handler is not None:
                handler.handle_error()
            raise

    # -------------------------------------------------------------------------------------- receive
    def _receive(self, s: _Sent, wait_ms: int, d: Deadline) -> None:
        """Read ``s``'s answer into :attr:`results` (or this round's errors)."""
        handler = s.handler
        try:
            resp = s.pending.result(s.timeout_ms, deadline=d)
        except Exception as e:
            if handler is not None:
                handler.handle_error()
            self._failed(s.node, s.tps, e)
            return
        code = resp.error_code  # 0 below v7, where only partitions have errors
        if handler is not None and s.sreq is not None:
            # A refused session (broker restarted, stale epoch) is retried as a full fetch.
            handler.handle_response(s.sreq, code, resp.session_id)
        top_err = broker_error(code, None, "fetch")
        if top_err is not None:
            if not top_err.retriable:
                raise top_err
            for tp in s.tps:
                self.errors[tp] = top_err
            return
        todo, seen, redirected = self._partitions(resp, s.node, handler)
        if self.prefetch is not None and not redirected:
            self._send_ahead(self.prefetch, s, todo, wait_ms, d)
        fetched_bytes, fetched_records = self._decode(todo)
        self._unanswered(s.tps, seen, handler)
        self.cluster.metrics.record_fetch_from(s.node, fetched_bytes, fetched_records)

    def _send_ahead(
        self, prefetch: Prefetcher, s: _Sent, todo: list[_Answer], wait_ms: int, d: Deadline
    ) -> None:
        """Send ``s.node``'s next Fetch now, before this answer is decoded, when every partition answered
        without error and one of them has records waiting past its next offset (nothing is sent ahead that the
        broker would hold for ``max_wait_ms``). A failure to send only means nothing is ahead."""
        tps, offsets, level = s.tps, self.remaining, self.limits.level
        if any(tp in self.errors for tp in tps) or any(err is not None for _, _, err in todo):
            return
        at = dict((tp, offsets[tp]) for tp in tps)  # partitions left out of an incremental answer: unchanged
        waiting = False
        for tp, p, _ in todo:
            nxt = next_offsets_of(p.records, offsets[tp])
            at[tp] = max(nxt, offsets[tp])
            lso = p.last_stable_offset  # -1 below v4
            end = lso if level == 1 and lso >= 0 else p.high_watermark
            waiting = waiting or at[tp] < end
        if not waiting:
            return
        try:
            pending, handler, sreq = self._send(s.node, tps, at, wait_ms, d)
        except Exception as e:  # the next fetch sends afresh and meets the error itself
            log.debug("prefetch to node %d not sent: %s", s.node, e)
            return
        prefetch.put(Ahead(s.node, self.key, at, pending, handler, sreq, self.cluster.request_timeout_ms + wait_ms))

    def _partitions(
        self, resp: FetchResponse, node: int, handler: FetchSessionHandler | None
    ) -> tuple[list[_Answer], set[TP], bool]:
        """The partition answers of ``resp`` this call waits for: (tp, answer, its error) to decode, the
        partitions seen, and whether the broker named a preferred read replica (then nothing is sent
        ahead). Retriable errors, and any error from a follower, go to this round's errors instead."""
        cluster, remaining, leaders, errors = self.cluster, self.remaining, self.leaders, self.errors
        replicas = cluster.read_replicas
        names_by_id = {tm.topic_id: name for name, tm in cluster.topics.items() if tm.topic_id}
        seen: set[TP] = set()
        redirected = False
        todo: list[_Answer] = []
        for t in resp.responses:
            # Topics are named up to v12 and identified from v13 (KIP-516): the other field is "" / the zero UUID.
            name = t.topic or names_by_id.get(t.topic_id)
            if name is None:
                continue  # a topic id this client does not know (re-created under it): nothing it asked for
            for p in t.partitions:
                tp = (name, p.partition_index)
                if tp not in remaining or tp in seen:
                    continue
                seen.add(tp)
                if handler is not None:
                    handler.observe(tp, p.high_watermark, p.last_stable_offset, p.log_start_offset)
                err = broker_error(p.error_code, None, f"fetch {name}/{p.partition_index}")
                if leaders[tp] != node and err is not None:
                    # A follower's error (even OFFSET_OUT_OF_RANGE: it may only lag) sends the partition
                    # back to its leader, as Java's consumer does (KIP-392).
                    replicas.forget(tp, err)
                    errors[tp] = ReplicaNotAvailableError(
                        f"fetch {name}/{p.partition_index} from replica {node}: {err}; retrying on the leader"
                    )
                    continue
                if err is not None and err.retriable:
                    errors[tp] = err
                    continue
                preferred = p.preferred_read_replica  # -1 below v11
                if preferred >= 0 and preferred != node:
                    # The broker names another replica for our rack (KIP-392) and sends no records: the
                    # next fetch of this partition goes there.
                    replicas.prefer(tp, preferred, leaders[tp])
                    redirected = True
                todo.append((tp, p, err))
        return todo, seen, redirected

    def _decode(self, todo: list[_Answer]) -> tuple[int, int]:
        """Decode the partition answers of ``todo`` into :attr:`results`: (bytes, records) fetched."""
        limits, remaining, results = self.limits, self.remaining, self.results
        fetched_bytes = fetched_records = 0
        for tp, p, err in todo:
            off = remaining[tp]
            cols = None
            if err is None:
                cols = p.records_columns(fetch_offset=off, isolation=limits.isolation, verify_crc=limits.check_crcs)
                fetched_bytes += len(p.records or b"")
                fetched_records += len(cols)
            elif limits.raise_errors:
                raise err
            results[tp] = FetchResult(
                topic=tp[0],
                partition=p.partition_index,
                fetch_offset=off,
                records=cols if cols is not None else RecordColumns.empty(off),
                high_watermark=p.high_watermark,
                last_stable_offset=p.last_stable_offset,  # -1 below v4
                log_start_offset=p.log_start_offset,  # -1 below v5
                error=err,
            )
        return fetched_bytes, fetched_records

    def _unanswered(self, tps: list[TP], seen: set[TP], handler: FetchSessionHandler | None) -> None:
        """Results for the partitions of ``tps`` the answer left out without an error: unchanged in the
        fetch session, or empty where the broker omits empty partitions."""
        for tp in tps:
            if tp in seen or tp in self.errors:
                continue
            off = self.remaining[tp]
            st = handler.unchanged(tp) if handler is not None else None
            if st is not None:
                # Left out of an incremental answer: nothing new since the last one (KIP-227).
                self.results[tp] = FetchResult(
                    tp[0],
                    tp[1],
                    off,
                    RecordColumns.empty(off),
                    high_watermark=st.high_watermark,
                    last_stable_offset=st.last_stable_offset,
                    log_start_offset=st.log_start_offset,
                )
            elif quirks.omitted_fetch_partition_is_empty():
                self.results[tp] = FetchResult(tp[0], tp[1], off, RecordColumns.empty(off))


def _fetch_request(
    cluster: Cluster,
    tps: list[TP],
    offsets: Mapping[TP, int],
    level: int,
    max_wait_ms: int,
    min_bytes: int,
    max_bytes: int,
    part_max: int,
    sreq: SessionRequest | None = None,
    epochs: Mapping[TP, int] | None = None,
) -> Any:
    by_topic: dict[str, list[int]] = defaultdict(list)
    for t, p in tps if sreq is None else sreq.send:
        by_topic[t].append(p)
    forgotten: dict[str, list[int]] = defaultdict(list)
    for t, p in () if sreq is None else sreq.forget:
        forgotten[t].append(p)
    return FetchRequest(
        replica_id=-1,
        rack_id=cluster.client_rack,  # KIP-392 (v11+): the broker may name a replica in this rack
        max_wait_ms=quirks.fetch_max_wait_ms(max_wait_ms),
        min_bytes=min_bytes,
        max_bytes=max_bytes,
        isolation_level=level,
        session_id=0 if sreq is None else sreq.session_id,
        session_epoch=-1 if sreq is None else sreq.epoch,  # -1: outside any fetch session (KIP-227)
        topics=[
            FetchRequest.FetchTopic(
                topic=t,
                topic_id=cluster.topics[t].topic_id or ZERO_UUID,
                partitions=[
                    FetchRequest.FetchPartition(
                        partition=p,
                        current_leader_epoch=-1 if epochs is None else epochs.get((t, p), -1),
                        fetch_offset=int(offsets[(t, p)]),
                        partition_max_bytes=part_max,
                    )
                    for p in ps
                ],
            )
            for t, ps in by_topic.items()
        ],
        forgotten_topics_data=[
            FetchRequest.ForgottenTopic(
                topic=t,
                topic_id=(cluster.topics[t].topic_id if t in cluster.topics else None) or ZERO_UUID,
                partitions=ps,
            )
            for t, ps in forgotten.items()
        ],
    )
