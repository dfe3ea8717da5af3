"""Consumed offsets in a transaction (KIP-98, KIP-447): what :meth:`Producer.send_offsets_to_transaction` sends.

AddOffsetsToTxn to the transaction's coordinator, once per group and transaction (transaction version 2 lets
TxnOffsetCommit v5 add the group itself, KIP-890 part 2), then TxnOffsetCommit to the group's coordinator with
the member's generation (KIP-447). The offsets become visible to the group when the transaction commits. The
state machine these requests run under is :class:`~.transaction.TransactionManager`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...protocol import AddOffsetsToTxnRequest, TxnOffsetCommitRequest
from ...protocol.errors import broker_error
from ..cluster.cluster import Cluster, coordinator_moved
from ..consumer.offsets import OffsetSpec, offset_parts
from ..net.deadline import Deadline
from .transaction import (
    GroupMetadata,
    TransactionManager,
    TransactionState,
    request_version,
)

__all__ = ["send_offsets_to_transaction"]


def send_offsets_to_transaction(
    txn: TransactionManager,
    cluster: Cluster,
    offsets: Mapping[tuple[str, int], OffsetSpec],
    group: GroupMetadata,
    deadline: Deadline,
) -> None:
    """AddOffsetsToTxn (once per group and transaction), then TxnOffsetCommit to the group's
    coordinator: the offsets become visible to the group when the transaction commits."""
    txn.require(TransactionState.IN_TRANSACTION, what="send_offsets_to_transaction")
    v2 = txn.transaction_v2
    if v2:
        # KIP-890 part 2: TxnOffsetCommit v5 adds the group to the transaction (no AddOffsetsToTxn).
        txn.groups.add(group.group_id)
    elif group.group_id not in txn.groups:

        def add(d: Deadline) -> None:
            conn = txn.coordinator_connection(cluster, d)
            req = AddOffsetsToTxnRequest(**txn.identity(), group_id=group.group_id)
            resp = conn.request(req, conn.version_for(AddOffsetsToTxnRequest), deadline=d)
            txn.check_error(resp.error_code, f"AddOffsetsToTxn of group {group.group_id!r}")

        txn.call(cluster, deadline, add, f"add group {group.group_id!r} to the transaction")
        txn.groups.add(group.group_id)

    by_topic: dict[str, list[Any]] = {}
    for (topic, partition), value in sorted(offsets.items()):
        offset, metadata, epoch = offset_parts(value)
        by_topic.setdefault(topic, []).append(
            TxnOffsetCommitRequest.TxnOffsetCommitRequestPartition(
                partition_index=int(partition), committed_offset=offset, committed_leader_epoch=epoch,
                committed_metadata=metadata,
            )
        )

    def commit(d: Deadline) -> None:
        try:
            _commit_offsets_once(txn, cluster, d, group, by_topic, v2)
        except Exception as e:
            if coordinator_moved(e):  # the group's coordinator (the transaction's is forgotten by txn.call)
                cluster.forget_coordinator(group.group_id)
            raise

    txn.call(cluster, deadline, commit, f"commit offsets of group {group.group_id!r} in the transaction")

def _commit_offsets_once(
    txn: TransactionManager, cluster: Cluster, d: Deadline, group: GroupMetadata, by_topic: dict[str, list[Any]],
    v2: bool,
) -> None:
    conn = cluster.coordinator(group.group_id, d)
    version = request_version(conn, TxnOffsetCommitRequest, v2)
    req = TxnOffsetCommitRequest(
        **txn.identity(),
        group_id=group.group_id,
        topics=[
            TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic(name=t, partitions=ps)
            for t, ps in by_topic.items()
        ],
    )
    if version >= 3:  # KIP-447: the coordinator checks the member still belongs to the generation
        req.generation_id_or_member_epoch = group.generation_id
        req.member_id = group.member_id
        req.group_instance_id = group.group_instance_id
    resp = conn.request(req, version, deadline=d)
    codes = {p.error_code for t in resp.topics for p in t.partitions if p.error_code}
    for code in sorted(codes, key=lambda c: broker_error(c).retriable):  # type: ignore[union-attr]
        txn.check_error(code, f"TxnOffsetCommit of group {group.group_id!r}")
