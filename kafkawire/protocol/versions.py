"""Where the client stops below the newest version of an API it could speak, and why: every version pin, as data.

:meth:`~kafkawire.client.net.connection.BrokerConnection.version_for` picks the highest version both sides
speak. The client caps that in the places below, each for a reason that is a fact of the protocol (not of a
broker: workarounds for brokers that depart from Kafka are in :mod:`kafkawire.client.cluster.quirks`). A new
version of one of these APIs stays unused until it is looked at here, so a cap is also where to start when
adopting one.
"""

from __future__ import annotations

from . import (
    AddPartitionsToTxnRequest,
    EndTxnRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    ProduceRequest,
    TxnOffsetCommitRequest,
)

__all__ = ["BY_NAME", "TRANSACTION_V1", "TRANSACTION_V2", "highest_by_name"]

#: The last version that names topics: the next one names them by topic id only (OffsetCommit/OffsetFetch
#: v10, KIP-848), while the client's callers give names.
BY_NAME: dict[type, int] = {
    OffsetCommitRequest: 9,
    OffsetFetchRequest: 9,
}

#: Highest versions a client of transaction version 1 (KIP-98) sends: a higher version of these tells the
#: coordinator that the client speaks transaction version 2. AddPartitionsToTxn v4+ is the batched
#: broker-to-coordinator form (KIP-890 part 1).
TRANSACTION_V1: dict[type, int] = {
    AddPartitionsToTxnRequest: 3,
    TxnOffsetCommitRequest: 4,
    EndTxnRequest: 4,
    ProduceRequest: 11,
}

#: The exact versions of transaction version 2 (KIP-890 part 2): Produce v12 adds the partition to the
#: transaction, TxnOffsetCommit v5 the group, EndTxn v5 bumps the epoch. TxnOffsetCommit v6 and Produce v13
#: name topics by id only (KIP-516), while these requests carry names: v5 and v12 are the last that do.
TRANSACTION_V2: dict[type, int] = {
    TxnOffsetCommitRequest: 5,
    EndTxnRequest: 5,
    ProduceRequest: 12,
}


def highest_by_name(request: type, version: int) -> int:
    """``version`` capped at the last version of ``request`` that names topics (see :data:`BY_NAME`)."""
    return min(version, BY_NAME.get(request, version))
