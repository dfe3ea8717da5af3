"""Producers and transactions (KIP-664): the active producers of partitions, the transactions
coordinators know (listed and described), and aborting a hanging transaction, as Java's ``Admin`` and
``kafka-transactions.sh`` do.

A *hanging* transaction is one a partition still holds open (it pins the last stable offset, so
``read_committed`` consumers stop there) while its coordinator no longer completes it, e.g. after a
coordinator bug or a producer whose markers were lost. ``abort_transaction`` ends it the way
``kafka-transactions.sh abort`` does: find the producer whose open transaction starts at the given offset
(DescribeProducers), then have the partition leader write an ABORT marker for it (WriteTxnMarkers).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..client.cluster.cluster import TRANSACTION, Cluster
from ..client.net.deadline import Deadline
from ..protocol import (
    DescribeProducersRequest,
    DescribeTransactionsRequest,
    ListTransactionsRequest,
    WriteTxnMarkersRequest,
)
from ..protocol.errors import raise_broker_error

__all__ = [
    "ProducerState",
    "TransactionListing",
    "TransactionDescription",
    "describe_producers",
    "list_transactions",
    "describe_transactions",
    "abort_transaction",
]


@dataclass(frozen=True)
class ProducerState:
    """A producer the partition leader tracks: its id and epoch, last sequence and write time, and the
    first offset of its open transaction (-1: none) with the coordinator epoch that began it."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int
    current_transaction_start_offset: int


@dataclass(frozen=True)
class TransactionListing:
    """A transaction a coordinator knows: its id, the coordinator's node id, producer id and state
    (``"Ongoing"``, ``"Empty"``, ``"CompleteCommit"``, ...)."""

    transactional_id: str
    coordinator_id: int
    producer_id: int
    state: str


@dataclass(frozen=True)
class TransactionDescription:
    """A transaction as its coordinator describes it; ``start_time_ms`` -1 when none is open."""

    transactional_id: str
    coordinator_id: int
    state: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    start_time_ms: int
    partitions: frozenset[tuple[str, int]]


def _partitions(items: Iterable[tuple[str, int]], what: str) -> list[tuple[str, int]]:
    out = []
    for tp in items:
        if not (isinstance(tp, tuple) and len(tp) == 2 and isinstance(tp[0], str) and isinstance(tp[1], int)):
            raise TypeError(f"{what} takes (topic, partition) pairs, not {tp!r}")
        out.append(tp)
    return out


def describe_producers(
    cluster: Cluster, deadline: Deadline, partitions: Iterable[tuple[str, int]]
) -> dict[tuple[str, int], list[ProducerState]]:
    """See :meth:`kafkawire.admin.Admin.describe_producers`: asked of each partition's leader."""
    wanted = _partitions(partitions, "describe_producers")
    topics = sorted({t for t, _ in wanted})

    def attempt(d: Deadline) -> dict[tuple[str, int], list[ProducerState]]:
        by_leader: dict[int, dict[str, list[int]]] = {}
        for t, p in wanted:
            by_leader.setdefault(cluster.leader(t, p, d), {}).setdefault(t, []).append(p)
        out: dict[tuple[str, int], list[ProducerState]] = {}
        for node, asked in by_leader.items():
            conn = cluster.connection(node, d)
            req = DescribeProducersRequest(
                topics=[DescribeProducersRequest.TopicRequest(name=t, partition_indexes=ps) for t, ps in asked.items()]
            )
            resp = conn.request(req, conn.version_for(DescribeProducersRequest), deadline=d)
            for t in resp.topics:
                for p in t.partitions:
                    where = f"describe producers of {t.name}/{p.partition_index}"
                    raise_broker_error(p.error_code, p.error_message, where)
                    out[(t.name, p.partition_index)] = [
                        ProducerState(
                            s.producer_id,
                            s.producer_epoch,
                            s.last_sequence,
                            s.last_timestamp,
                            s.coordinator_epoch,
                            s.current_txn_start_offset,
                        )
                        for s in p.active_producers
                    ]
        return {tp: out[tp] for tp in wanted}

    return cluster.call(deadline, attempt, what="describe producers", topics=topics)


def list_transactions(
    cluster: Cluster,
    deadline: Deadline,
    *,
    states: Iterable[str] | None = None,
    producer_ids: Iterable[int] | None = None,
    duration_ms: int | None = None,
) -> list[TransactionListing]:
    """See :meth:`kafkawire.admin.Admin.list_transactions`: every broker is asked (each coordinates the
    transactional ids of its partitions of ``__transaction_state``)."""
    state_filters = sorted(states or ())
    pid_filters = sorted(producer_ids or ())
    if not all(isinstance(s, str) for s in state_filters) or not all(isinstance(p, int) for p in pid_filters):
        raise TypeError("states are str and producer_ids int")

    def attempt(d: Deadline) -> list[TransactionListing]:
        cluster.fetch_metadata([], d)  # the current list of brokers
        found: dict[str, TransactionListing] = {}
        for node in sorted(cluster.brokers):
            conn = cluster.connection(node, d)
            version = conn.version_for(ListTransactionsRequest, 1 if duration_ms is not None else 0)
            req = ListTransactionsRequest(
                state_filters=state_filters,
                producer_id_filters=pid_filters,
                duration_filter=-1 if duration_ms is None else duration_ms,
            )
            resp = conn.request(req, version, deadline=d)
            raise_broker_error(resp.error_code, None, f"list transactions on broker {node}")
            if resp.unknown_state_filters:
                raise ValueError(f"unknown transaction states {resp.unknown_state_filters}")
            for s in resp.transaction_states:
                found[s.transactional_id] = TransactionListing(
                    s.transactional_id, node, s.producer_id, s.transaction_state
                )
        return sorted(found.values(), key=lambda t: t.transactional_id)

    return cluster.call(deadline, attempt, what="list transactions", topics=[])


def describe_transactions(
    cluster: Cluster, deadline: Deadline, transactional_ids: Iterable[str]
) -> dict[str, TransactionDescription]:
    """See :meth:`kafkawire.admin.Admin.describe_transactions`: asked of each id's coordinator."""
    ids = list(transactional_ids)
    if not all(isinstance(i, str) for i in ids):
        raise TypeError("transactional ids are str")

    def attempt(d: Deadline) -> dict[str, TransactionDescription]:
        by_node: dict[int, list[str]] = {}
        for tid in ids:
            by_node.setdefault(cluster.find_coordinator(tid, TRANSACTION, d), []).append(tid)
        out = {}
        for node, asked in by_node.items():
            conn = cluster.connection(node, d)
            resp = conn.request(
                DescribeTransactionsRequest(transactional_ids=asked),
                conn.version_for(DescribeTransactionsRequest),
                deadline=d,
            )
            for s in resp.transaction_states:
                raise_broker_error(s.error_code, None, f"describe transaction {s.transactional_id!r}")
                out[s.transactional_id] = TransactionDescription(
                    s.transactional_id,
                    node,
                    s.transaction_state,
                    s.producer_id,
                    s.producer_epoch,
                    s.transaction_timeout_ms,
                    s.transaction_start_time_ms,
                    frozenset((t.topic, p) for t in s.topics for p in t.partitions),
                )
        return {tid: out[tid] for tid in ids}

    return cluster.call(deadline, attempt, what="describe transactions", topics=[])


def abort_transaction(
    cluster: Cluster, deadline: Deadline, topic: str, partition: int, start_offset: int
) -> ProducerState:
    """See :meth:`kafkawire.admin.Admin.abort_transaction`. Returns the producer whose transaction was
    aborted."""
    if not isinstance(topic, str) or not isinstance(partition, int) or not isinstance(start_offset, int):
        raise TypeError("abort_transaction takes a topic (str), a partition (int) and a start offset (int)")
    states = describe_producers(cluster, deadline, [(topic, partition)])[(topic, partition)]
    match = [s for s in states if s.current_transaction_start_offset == start_offset]
    if not match:
        open_at = sorted(s.current_transaction_start_offset for s in states if s.current_transaction_start_offset >= 0)
        raise ValueError(
            f"no open transaction starts at offset {start_offset} of {topic}/{partition} (open ones: {open_at})"
        )
    state = match[0]

    def attempt(d: Deadline) -> None:
        conn = cluster.connection(cluster.leader(topic, partition, d), d)
        marker = WriteTxnMarkersRequest.WritableTxnMarker(
            producer_id=state.producer_id,
            producer_epoch=state.producer_epoch,
            transaction_result=False,  # ABORT
            topics=[WriteTxnMarkersRequest.WritableTxnMarkerTopic(name=topic, partition_indexes=[partition])],
            coordinator_epoch=state.coordinator_epoch,
        )
        resp = conn.request(
            WriteTxnMarkersRequest(markers=[marker]), conn.version_for(WriteTxnMarkersRequest), deadline=d
        )
        for m in resp.markers:
            for t in m.topics:
                for p in t.partitions:
                    raise_broker_error(p.error_code, None, f"abort the transaction of producer {m.producer_id}")

    cluster.call(deadline, attempt, what=f"abort transaction at {topic}/{partition}@{start_offset}", topics=[topic])
    return state
