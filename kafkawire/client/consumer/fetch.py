"""Fetch on top of :class:`~kafkawire.client.cluster.cluster.Cluster`: several partitions at once, one request
per leader, all leaders in flight together, partitions that failed retried until the deadline. With
``sessions`` each broker's request goes through its incremental fetch session (KIP-227,
:mod:`kafkawire.client.consumer.fetch_session`): only what changed is sent."""

from __future__ import annotations

import functools
import logging
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from ...columns import RecordColumns
from ...protocol import FetchRequest
from ...protocol.errors import ReplicaNotAvailableError, broker_error
from ..cluster import quirks
from ..cluster.cluster import ZERO_UUID, Cluster
from ..cluster.retry import is_retriable
from ..net.deadline import Deadline
from ..types import FetchResult
from .fetch_session import FetchSessionHandler, FetchSessions, SessionRequest
from .prefetch import Ahead, Prefetcher, next_offsets_of

__all__ = ["fetch_many"]

TP = tuple[str, int]

log = logging.getLogger("kafkawire.client.fetch")


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
    results: dict[TP, FetchResult] = {}
    remaining = dict(offsets)
    topics = sorted({t for t, _ in remaining})
    key = (max_bytes, partition_max_bytes, min_bytes, level, isolation, check_crcs)
    if prefetch is not None:
        prefetch.bind(cluster.lock)
    retrying: list[bool] = []  # non-empty after the first round

    def send(leader: int, tps: list[TP], at: Mapping[TP, int], wait_ms: int, d: Deadline) -> tuple[Any, Any, Any]:
        """Build and send the Fetch for ``tps`` at offsets ``at`` to ``leader``: (pending, handler, sreq)."""
        handler = sessions.handler(leader) if sessions is not None else None
        try:
            conn = cluster.connection(leader, d)
            use_ids = all(cluster.topics[t].topic_id is not None for t, _ in tps)
            version = quirks.fetch_version(
                conn.version_for(FetchRequest, quirks.LOWEST_VERSION[FetchRequest]), use_ids
            )
            sreq = None
            if handler is not None:
                sreq = handler.build({tp: (int(at[tp]), partition_max_bytes) for tp in tps}, version, use_ids)
            req = _fetch_request(cluster, tps, at, level, wait_ms, min_bytes, max_bytes, partition_max_bytes, sreq)
            return conn.send(req, version, deadline=d), handler, sreq
        except Exception:
            if handler is not None:
                handler.handle_error()
            raise

    def attempt(d: Deadline) -> None:
        # One round: every partition still without a result; raises the first retriable error of the
        # round (after keeping what did arrive) so that cluster.call retries only what is left.
        round_errors: dict[TP, BaseException] = {}
        # by node: the partition's leader, or its preferred read replica (KIP-392, cluster/read_replicas.py)
        by_leader: dict[int, list[TP]] = defaultdict(list)
        leaders: dict[TP, int] = {}
        replicas = cluster.read_replicas
        for tp in remaining:
            try:
                leaders[tp] = cluster.leader(*tp, d)
            except Exception as e:
                if not is_retriable(e):
                    raise
                round_errors[tp] = e
                continue
            by_leader[replicas.node_for(tp, leaders[tp], cluster.brokers)].append(tp)
        wait_ms = d.wait_ms(max_wait_ms)
        sent: list[tuple[Any, list[TP], FetchSessionHandler | None, SessionRequest | None, int, float]] = []
        if prefetch is not None and not retrying:
            # Fetches ahead to brokers this call does not ask (a later round's retries keep this round's).
            prefetch.drain_except(set(by_leader), d)
        retrying.append(True)
        for leader, tps in by_leader.items():
            at = {tp: remaining[tp] for tp in tps}
            ahead = prefetch.take(leader, key, at, d) if prefetch is not None else None
            if ahead is not None:
                sent.append((ahead.pending, tps, ahead.handler, ahead.sreq, leader, ahead.timeout_ms))
                continue
            try:
                pr, handler, sreq = send(leader, tps, at, wait_ms, d)
                sent.append((pr, tps, handler, sreq, leader, cluster.request_timeout_ms + wait_ms))
            except Exception as e:
                if not is_retriable(e):
                    raise
                for tp in tps:
                    round_errors[tp] = e
                    if leaders[tp] != leader:
                        replicas.forget(tp, e)  # the preferred replica is unreachable: the leader next
        for pr, tps, handler, sreq, leader, timeout_ms in sent:
            try:
                resp = pr.result(timeout_ms, deadline=d)
            except Exception as e:
                if handler is not None:
                    handler.handle_error()
                if not is_retriable(e):
                    raise
                for tp in tps:
                    round_errors[tp] = e
                    if leaders[tp] != leader:
                        replicas.forget(tp, e)
                continue
            code = getattr(resp, "error_code", 0) or 0
            if handler is not None and sreq is not None:
                # A refused session (broker restarted, stale epoch) is retried as a full fetch.
                handler.handle_response(sreq, code, getattr(resp, "session_id", 0) or 0)
            top_err = broker_error(code, None, "fetch")
            if top_err is not None:
                if not top_err.retriable:
                    raise top_err
                for tp in tps:
                    round_errors[tp] = top_err
                continue
            names_by_id = {tm.topic_id: name for name, tm in cluster.topics.items() if tm.topic_id}
            seen = set()
            redirected = False  # a broker named a preferred read replica: nothing to send ahead here
            todo: list[tuple[TP, Any, Any]] = []  # (tp, partition answer, its error): decoded below
            for t in resp.responses:
                topic_id = getattr(t, "topic_id", None)
                name = t.topic if getattr(t, "topic", None) else names_by_id.get(topic_id) if topic_id else None
                if name is None:
                    continue  # a topic id this client does not know (re-created under it): nothing it asked for
                for p in t.partitions:
                    tp = (name, p.partition_index)
                    if tp not in remaining or tp in seen:
                        continue
                    seen.add(tp)
                    if handler is not None:
                        handler.observe(
                            tp,
                            p.high_watermark,
                            getattr(p, "last_stable_offset", -1),
                            getattr(p, "log_start_offset", -1),
                        )
                    err = broker_error(p.error_code, None, f"fetch {name}/{p.partition_index}")
                    if leaders[tp] != leader and err is not None:
                        # A follower's error (even OFFSET_OUT_OF_RANGE: it may only lag) sends the partition
                        # back to its leader, as Java's consumer does (KIP-392).
                        replicas.forget(tp, err)
                        round_errors[tp] = ReplicaNotAvailableError(
                            f"fetch {name}/{p.partition_index} from replica {leader}: {err}; retrying on the leader"
                        )
                        continue
                    if err is not None and err.retriable:
                        round_errors[tp] = err
                        continue
                    preferred = getattr(p, "preferred_read_replica", -1)
                    if preferred is not None and preferred >= 0 and preferred != leader:
                        # The broker names another replica for our rack (KIP-392) and sends no records: the
                        # next fetch of this partition goes there.
                        replicas.prefer(tp, preferred, leaders[tp])
                        redirected = True
                    todo.append((tp, p, err))
            if prefetch is not None and not redirected:
                _send_ahead(prefetch, leader, key, tps, remaining, todo, round_errors, level,
                            functools.partial(send, leader, tps, wait_ms=wait_ms, d=d),
                            cluster.request_timeout_ms + wait_ms)
            fetched_bytes = fetched_records = 0
            for tp, p, err in todo:
                off = remaining[tp]
                cols = None
                if err is None:
                    cols = p.records_columns(fetch_offset=off, isolation=isolation, verify_crc=check_crcs)
                    fetched_bytes += len(p.records or b"")
                    fetched_records += len(cols)
                elif raise_errors:
                    raise err
                results[tp] = FetchResult(
                    topic=tp[0],
                    partition=p.partition_index,
                    fetch_offset=off,
                    records=cols if cols is not None else RecordColumns.empty(off),
                    high_watermark=p.high_watermark,
                    last_stable_offset=getattr(p, "last_stable_offset", -1),
                    log_start_offset=getattr(p, "log_start_offset", -1),
                    error=err,
                )
            for tp in tps:
                if tp in seen or tp in round_errors:
                    continue
                off = remaining[tp]
                st = handler.unchanged(tp) if handler is not None else None
                if st is not None:
                    # Left out of an incremental answer: nothing new since the last one (KIP-227).
                    results[tp] = FetchResult(
                        tp[0],
                        tp[1],
                        off,
                        RecordColumns.empty(off),
                        high_watermark=st.high_watermark,
                        last_stable_offset=st.last_stable_offset,
                        log_start_offset=st.log_start_offset,
                    )
                elif quirks.omitted_fetch_partition_is_empty():
                    results[tp] = FetchResult(tp[0], tp[1], off, RecordColumns.empty(off))
            cluster.metrics.record_fetch_from(leader, fetched_bytes, fetched_records)
        for tp in results:
            remaining.pop(tp, None)
        if remaining:
            first = next((round_errors[tp] for tp in remaining if tp in round_errors), None)
            if first is None:
                from ...protocol.errors import LeaderNotAvailableError

                first = LeaderNotAvailableError(f"fetch: no answer for {sorted(remaining)}")
            raise first

    what = "fetch of " + ", ".join(f"{t}/{p}" for t, p in list(offsets)[:4]) + (" ..." if len(offsets) > 4 else "")
    cluster.call(deadline, attempt, what=what, topics=topics)
    return {tp: results[tp] for tp in offsets}


def _send_ahead(
    prefetch: Prefetcher,
    leader: int,
    key: tuple[Any, ...],
    tps: list[TP],
    offsets: Mapping[TP, int],
    todo: list[tuple[TP, Any, Any]],
    round_errors: Mapping[TP, BaseException],
    level: int,
    send: Any,
    timeout_ms: float,
) -> None:
    """Send ``leader``'s next Fetch now, before this answer is decoded, when every partition answered
    without error and one of them has records waiting past its next offset (nothing is sent ahead that the
    broker would hold for ``max_wait_ms``). A failure to send only means nothing is ahead."""
    if any(tp in round_errors for tp in tps) or any(err is not None for _, _, err in todo):
        return
    at = dict((tp, offsets[tp]) for tp in tps)  # partitions left out of an incremental answer: unchanged
    waiting = False
    for tp, p, _ in todo:
        nxt = next_offsets_of(p.records, offsets[tp])
        at[tp] = max(nxt, offsets[tp])
        lso = getattr(p, "last_stable_offset", -1)
        end = lso if level == 1 and lso is not None and lso >= 0 else p.high_watermark
        waiting = waiting or at[tp] < end
    if not waiting:
        return
    try:
        pending, handler, sreq = send(at=at)
    except Exception as e:  # the next fetch sends afresh and meets the error itself
        log.debug("prefetch to node %d not sent: %s", leader, e)
        return
    prefetch.put(Ahead(leader, key, at, pending, handler, sreq, timeout_ms))


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
                        partition=p, fetch_offset=int(offsets[(t, p)]), partition_max_bytes=part_max
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
