"""One round of share fetching: a ShareFetch per broker leading an assigned partition, all in flight
together, acknowledgements riding on them; and ShareAcknowledge for what cannot ride (commit, close,
partitions no longer fetched). Results of acknowledgements are collected per partition in
``ack_results`` for the consumer to report."""

from __future__ import annotations

import logging
import uuid
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from ...protocol import ShareAcknowledgeRequest, ShareFetchRequest
from ...protocol.errors import (
    BrokerError,
    InvalidShareSessionEpochError,
    LeaderNotAvailableError,
    ShareSessionNotFoundError,
    broker_error,
)
from ...records import decode_records
from ..cluster.retry import is_retriable
from ..errors import KafkaClientError, ShareSessionLostError
from ..net.deadline import Deadline
from .acknowledgements import AckBatch, Acknowledgements
from .records import ShareRecordColumns, acquired_columns
from .session import OPEN_EPOCH, ShareSession
from .versions import share_version

if TYPE_CHECKING:
    from ..client import Client
    from ..net.connection import BrokerConnection

__all__ = ["ShareFetcher"]

log = logging.getLogger("kafkawire.share")

TopicPartition = tuple[str, int]
AckResults = dict[TopicPartition, BaseException | None]
Acks = dict[TopicPartition, list[AckBatch]]
#: Requests in flight in a round: (kind, node, pending response, partitions fetched, acknowledgements carried).
RoundSent = list[tuple[str, int, Any, "set[TopicPartition] | None", Acks]]
#: ShareAcknowledge requests in flight: (node, pending response, acknowledgements carried).
AckSent = list[tuple[int, Any, Acks]]


class ShareFetcher:
    """Share sessions with every broker, and the fetch and acknowledge requests that go through them."""

    def __init__(
        self,
        client: Client,
        group_id: str,
        acks: Acknowledgements,
        *,
        max_wait_ms: int,
        max_bytes: int,
        max_records: int,
        batch_size: int,
        check_crcs: bool,
    ) -> None:
        self.client = client
        self.group_id = group_id
        self.acks = acks
        self.max_wait_ms = max_wait_ms
        self.max_bytes = max_bytes
        self.max_records = max_records
        self.batch_size = batch_size
        self.check_crcs = check_crcs
        self.sessions: dict[int, ShareSession] = {}
        self.ack_results: AckResults = {}
        self.acquisition_lock_timeout_ms = -1
        self.session_resets = 0
        self._stale = False  # a partition's leader moved: refresh the metadata after this round
        #: Requests whose answer a round's deadline did not see arrive: still in flight on their open
        #: connections, read by a later round (or :meth:`settle`). Closing the connection instead would leave
        #: what a ShareFetch acquired locked until the acquisition lock expires, its delivery count raised
        #: (archived once it reaches ``group.share.delivery.count.limit``: lost; issue 34).
        self.outstanding: RoundSent = []
        #: Connections of the fetcher's own, one per broker: a request of another part of the client timing
        #: out on a shared connection (the member's heartbeat to a hung coordinator) closes it, and with it
        #: every answer still to come on it.
        self._conns: dict[int, BrokerConnection] = {}

    # ------------------------------------------------------------------------------------- helpers
    def _connection(self, node: int, deadline: Deadline) -> BrokerConnection:
        """The fetcher's own connection to ``node`` (connected), made anew when the broker's address changed."""
        cluster = self.client.cluster
        broker = cluster.brokers.get(node)
        if broker is None:
            raise LeaderNotAvailableError(f"broker {node} is not in the metadata")
        conn = self._conns.get(node)
        if conn is None or (conn.host, conn.port) != (broker.host, broker.port):
            if conn is not None:
                conn.close()
            conn = self._conns[node] = cluster.new_connection(broker.host, broker.port, node)
        return conn.connect(deadline=deadline)

    def close(self) -> None:
        """Close the fetcher's connections."""
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()

    def _ids(self, topics: set[str], deadline: Deadline) -> dict[str, uuid.UUID]:
        cluster = self.client.cluster
        out = {}
        for t in topics:
            tm = cluster.topic(t, deadline)
            if tm.topic_id is None:
                raise KafkaClientError(
                    f"share fetch: the cluster gave no topic id for {t!r} (share groups need Kafka 4.1+)"
                )
            out[t] = tm.topic_id
        return out

    def _version(self, conn: Any, cls: Any) -> int:
        return share_version(conn, cls, KafkaClientError, "", "v1+ (KIP-932 share groups, Apache Kafka 4.1+)")

    def _acks_lost(self, node: int, acks: Acks, e: Exception) -> None:
        """Sending or awaiting ``node``'s acknowledgements failed with ``e``: raised unless retriable, else
        ``acks`` fail with :class:`ShareSessionLostError`."""
        if not is_retriable(e):
            raise e
        self._fail(acks, ShareSessionLostError(f"broker {node}: {e}"))
        self._lost(node, str(e))

    def _fail(self, acks: Acks, err: BaseException) -> None:
        for tp in acks:
            self.ack_results[tp] = err

    def _lost(self, node: int, why: str) -> None:
        session = self.sessions.get(node)
        if session is not None and session.epoch != OPEN_EPOCH:
            self.session_resets += 1
        if session is not None:
            session.reset()
        lost = self.acks.forget_node(node)
        if lost:
            err = ShareSessionLostError(
                f"share session with broker {node} ended ({why}): acknowledgements not delivered"
            )
            for tp in lost:
                self.ack_results[tp] = err

    def _ack_outcome(self, tp: TopicPartition, code: int, message: str | None) -> None:
        self.ack_results[tp] = broker_error(code, message, f"acknowledge {tp[0]}/{tp[1]}")

    # ----------------------------------------------------------------------------------- one round
    def round(
        self, member_id: str, assigned: list[TopicPartition], deadline: Deadline
    ) -> dict[TopicPartition, ShareRecordColumns]:
        """Fetch once from every leader of ``assigned`` (and send what acknowledgements are due).

        A round that brought no records and met a retriable error (no leader, a broker gone) raises the
        first such error, so that the caller backs off instead of asking again at once."""
        cluster = self.client.cluster
        by_node: dict[int, set[TopicPartition]] = defaultdict(set)
        failed: list[BaseException] = []
        for tp in assigned:
            try:
                by_node[cluster.leader(tp[0], tp[1], deadline)].add(tp)
            except Exception as e:
                if not is_retriable(e):
                    raise
                failed.append(e)
                log.debug("share fetch: no leader for %s/%d yet: %s", tp[0], tp[1], e)
        out, failed_before = self._collect_outstanding(deadline)
        if out:  # records an earlier poll's fetch acquired: hand them over before asking for more
            return out
        failed.extend(failed_before)
        if deadline.expired():  # the wait for them took the time: sending now would only be cut short
            if failed:
                raise failed[0]
            return out
        busy = self.busy_nodes()  # a session's next request waits for its earlier answer
        nodes = set(by_node) | {n for n, s in self.sessions.items() if s.partitions} | set(self.acks.pending)
        wait = deadline.wait_ms(self.max_wait_ms)
        inflight: RoundSent = []
        for node in sorted(nodes - busy):
            try:
                inflight.extend(self._send_node(node, member_id, by_node.get(node, set()), wait, deadline))
            except Exception as e:
                if not is_retriable(e):
                    raise
                failed.append(e)
                self._lost(node, str(e))
        for entry in inflight:
            if self._answer_here(entry, deadline):
                self._take_answer(entry, deadline, out, failed)
            else:
                self.outstanding.append(entry)
        if self._stale:
            self._stale = False
            try:
                cluster.fetch_metadata(sorted({t for t, _ in assigned}), deadline)
            except Exception as e:
                if not is_retriable(e):
                    raise
        if not out and failed:
            raise failed[0]
        return out

    # ------------------------------------------------------------------------ answers read later
    def busy_nodes(self) -> set[int]:
        """Brokers with a request still awaiting its answer (nothing else goes to their sessions meanwhile)."""
        return {node for _, node, _, _, _ in self.outstanding}

    def settle(self, deadline: Deadline) -> dict[TopicPartition, ShareRecordColumns]:
        """Read the answers still outstanding, until ``deadline``; the records they acquired (the caller hands
        them to the application or releases them)."""
        out, failed = self._collect_outstanding(deadline)
        for e in failed:
            log.debug("share fetch: an answer read late failed: %s", e)
        return out

    def _collect_outstanding(
        self, deadline: Deadline
    ) -> tuple[dict[TopicPartition, ShareRecordColumns], list[BaseException]]:
        out: dict[TopicPartition, ShareRecordColumns] = {}
        failed: list[BaseException] = []
        waiting, self.outstanding = self.outstanding, []
        for entry in waiting:
            if self._answer_here(entry, deadline):
                self._take_answer(entry, deadline, out, failed)
            else:
                self.outstanding.append(entry)
        return out, failed

    @staticmethod
    def _answer_here(entry: tuple[str, int, Any, Any, Acks], deadline: Deadline) -> bool:
        """Wait for ``entry``'s answer until ``deadline`` without giving its connection up: True once it was
        read (or its connection failed: the result raises that), False while it is still to come."""
        pr = entry[2]
        conn = pr.connection
        if conn.read_ahead(pr.correlation_id, deadline):
            return True
        return not conn.awaiting(pr.correlation_id)

    def _take_answer(
        self,
        entry: tuple[str, int, Any, Any, Acks],
        deadline: Deadline,
        out: dict[TopicPartition, ShareRecordColumns],
        failed: list[BaseException],
    ) -> None:
        kind, node, pr, wanted, acks = entry
        session = self.sessions[node]
        try:
            resp = pr.result(self.client.cluster.request_timeout_ms, deadline=deadline)
        except Exception as e:
            if not is_retriable(e):
                raise
            failed.append(e)
            self._fail(acks, ShareSessionLostError(f"broker {node}: {e}"))
            self._lost(node, str(e))
            return
        if kind == "ack" or wanted is None:
            self._acknowledged(node, session, resp, acks)
        else:
            out.update(self._fetched(node, session, resp, wanted, acks))

    def _send_node(
        self, node: int, member_id: str, wanted: set[TopicPartition], wait: int, deadline: Deadline
    ) -> RoundSent:
        session = self.sessions.setdefault(node, ShareSession(node))
        conn = self._connection(node, deadline)
        pending = self.acks.take(node).get(node, {})
        if pending and session.epoch == OPEN_EPOCH:
            self._fail(
                pending, ShareSessionLostError(f"no share session with broker {node}: acknowledgements not delivered")
            )
            pending = {}
        ride = {tp: b for tp, b in pending.items() if tp in wanted}
        alone = {tp: b for tp, b in pending.items() if tp not in wanted}
        ids = self._ids({t for t, _ in wanted | set(pending) | session.partitions}, deadline)
        sent: RoundSent = []
        if alone:
            req = session.acknowledge_request(self.group_id, member_id, alone, ids)
            sent.append(
                (
                    "ack",
                    node,
                    conn.send(req, self._version(conn, ShareAcknowledgeRequest), deadline=deadline),
                    None,
                    alone,
                )
            )
            session.answered()  # pipelined: the fetch below carries the epoch after this one
        if wanted or session.partitions:
            req = session.fetch_request(
                self.group_id,
                member_id,
                wanted,
                ride,
                ids,
                max_wait_ms=wait if wanted else 0,
                max_bytes=self.max_bytes,
                max_records=self.max_records,
                batch_size=self.batch_size,
            )
            sent.append(
                ("fetch", node, conn.send(req, self._version(conn, ShareFetchRequest), deadline=deadline), wanted, ride)
            )
        return sent

    def _session_error(self, node: int, err: BrokerError | None, acks: Acks) -> bool:
        if err is None:
            return False
        self._fail(acks, err)
        if isinstance(err, (ShareSessionNotFoundError, InvalidShareSessionEpochError)) or err.retriable:
            self._lost(node, str(err))
            return True
        raise err

    def _acknowledged(self, node: int, session: ShareSession, resp: Any, acks: Acks) -> None:
        if self._session_error(
            node, broker_error(resp.error_code, resp.error_message, f"share acknowledge at broker {node}"), acks
        ):
            return
        names = self._names()
        for t in resp.responses:
            for p in t.partitions:
                self._ack_outcome(
                    (names.get(t.topic_id, str(t.topic_id)), p.partition_index), p.error_code, p.error_message
                )

    def _names(self) -> dict[uuid.UUID, str]:
        return {tm.topic_id: name for name, tm in self.client.cluster.topics.items() if tm.topic_id is not None}

    def _fetched(
        self, node: int, session: ShareSession, resp: Any, wanted: set[TopicPartition], acks: Acks
    ) -> dict[TopicPartition, ShareRecordColumns]:
        if self._session_error(
            node, broker_error(resp.error_code, resp.error_message, f"share fetch at broker {node}"), acks
        ):
            return {}
        session.answered(wanted)
        if resp.acquisition_lock_timeout_ms > 0:
            self.acquisition_lock_timeout_ms = resp.acquisition_lock_timeout_ms
        names = self._names()
        out: dict[TopicPartition, ShareRecordColumns] = {}
        stale = False
        for t in resp.responses:
            name = names.get(t.topic_id)
            for p in t.partitions:
                tp = (name or str(t.topic_id), p.partition_index)
                if tp in acks:
                    self._ack_outcome(tp, p.acknowledge_error_code, p.acknowledge_error_message)
                err = broker_error(p.error_code, p.error_message, f"share fetch {tp[0]}/{tp[1]}")
                if err is not None:
                    if not err.retriable:
                        raise err
                    stale = True  # leader moved or not ready: look again at the metadata
                    continue
                if name is None or tp not in wanted or not p.acquired_records:
                    continue
                data = p.records
                cols = decode_records(b"" if data is None else data, verify_crc=self.check_crcs)
                delivered, gaps = acquired_columns(cols, p.acquired_records)
                self.acks.delivered(tp, node, delivered.offset, gaps)
                if len(delivered):
                    delivered._locate(*tp)  # its per-record views carry topic and partition (issue 32)
                    out[tp] = delivered
        self._stale |= stale
        return out

    # -------------------------------------------------------------------------------- acknowledge
    def send_acknowledgements(self, member_id: str, deadline: Deadline, *, close: bool = False) -> AckSent:
        """ShareAcknowledge every pending acknowledgement to its broker (``close``: and end every session);
        the requests in flight, for :meth:`collect`."""
        busy = self.busy_nodes()  # their acknowledgements stay pending: the session awaits an earlier answer
        pending: dict[int, Acks] = {}
        for n in [n for n in self.acks.pending if n not in busy]:
            pending.update(self.acks.take(n))
        nodes = (set(pending) | (set(self.sessions) if close else set())) - busy
        sent: AckSent = []
        for node in sorted(nodes):
            acks = pending.get(node, {})
            session = self.sessions.setdefault(node, ShareSession(node))
            if session.epoch == OPEN_EPOCH:
                self._fail(
                    acks, ShareSessionLostError(f"no share session with broker {node}: acknowledgements not delivered")
                )
                continue
            try:
                conn = self._connection(node, deadline)
                ids = self._ids({t for t, _ in acks}, deadline)
                req = session.acknowledge_request(self.group_id, member_id, acks, ids, close=close)
                sent.append(
                    (node, conn.send(req, self._version(conn, ShareAcknowledgeRequest), deadline=deadline), acks)
                )
            except Exception as e:
                self._acks_lost(node, acks, e)
                continue
            if close:
                session.reset()
            else:
                session.answered()
        return sent

    def collect(self, sent: AckSent, deadline: Deadline) -> None:
        """Wait for the acknowledgements :meth:`send_acknowledgements` sent; outcomes go to ``ack_results``."""
        for node, pr, acks in sent:
            try:
                resp = pr.result(self.client.cluster.request_timeout_ms, deadline=deadline)
            except Exception as e:
                self._acks_lost(node, acks, e)
                continue
            self._acknowledged(node, self.sessions[node], resp, acks)

    def drain(self) -> AckResults:
        """The acknowledgement outcomes collected since the last call, per partition (None: accepted)."""
        out, self.ack_results = self.ack_results, {}
        return out
