"""Transactions (KIP-98): the transactional producer's state machine and its requests to the coordinator.

A :class:`TransactionManager` is the :class:`~kafkawire.client.producer.produce.ProducerState` of a producer with a
``transactional.id``: besides the producer id, epoch and sequence numbers it holds the transaction's
state and the partitions and consumer groups already added to it. The produce path calls
:meth:`TransactionManager.prepare` before the first batch to a partition (AddPartitionsToTxn), sends the
``transactional_id`` in every ProduceRequest and sets the transactional bit of every batch.

Two protocols, chosen per transaction in this module only (:meth:`TransactionManager._update_protocol`), as
the Java client chooses them (``TransactionManager.isTransactionV2Enabled``):

* **transaction version 1** (KIP-98): AddPartitionsToTxn <= v3 before the first batch to a partition
  (v4+ is broker-to-coordinator), AddOffsetsToTxn before TxnOffsetCommit <= v4, Produce <= v11, EndTxn
  <= v4. Higher versions of those tell the coordinator that the client speaks version 2.
* **transaction version 2** (KIP-890 part 2), when the broker's ApiVersions finalizes the feature
  ``transaction.version`` >= 2 (Apache Kafka 4.0+ clusters formatted at 4.x do): no AddPartitionsToTxn
  (Produce v12 makes the partition leader add the partition to the transaction), no AddOffsetsToTxn
  (TxnOffsetCommit v5 adds the group), and EndTxn v5, with which the coordinator bumps the epoch at
  every commit or abort and answers the producer id and epoch to use next (a new producer id when the
  epoch is exhausted). Sequence numbers start afresh with each transaction, and a producer whose
  sequences were in doubt needs no InitProducerId of its own after the abort (the bump covers it).
  A producer that sees the feature appear between transactions bumps its epoch with InitProducerId
  before the first transaction of version 2, so no partition of an earlier transaction counts as added.

Apache Kafka 4.x serves both; its partition leaders verify every transactional write with the
coordinator either way (KIP-890 part 1), so a late or zombie write fails with an error (e.g.
``TRANSACTION_ABORTABLE`` or ``INVALID_TXN_STATE``) instead of landing in another transaction.

Errors follow the Java client's ``TransactionManager``:

* retried until the call's deadline: ``NOT_COORDINATOR`` and ``COORDINATOR_NOT_AVAILABLE`` (the coordinator
  is looked up again), ``COORDINATOR_LOAD_IN_PROGRESS``, ``CONCURRENT_TRANSACTIONS`` (the previous
  transaction of this id is still being completed), and every other error the broker marks retriable;
* *fatal* (the producer can only be closed): ``PRODUCER_FENCED`` and ``INVALID_PRODUCER_EPOCH`` (raised as
  :class:`~kafkawire.protocol.errors.ProducerFencedError`: a newer instance with the same transactional
  id called ``init_transactions``), ``TRANSACTIONAL_ID_AUTHORIZATION_FAILED``, ``INVALID_TXN_STATE``,
  ``UNSUPPORTED_VERSION``, ``TRANSACTION_COORDINATOR_FENCED``, ``INVALID_PRODUCER_ID_MAPPING`` (the
  coordinator holds another producer id for the transactional id);
* *abortable* (the application must call ``abort_transaction()``, then may begin a new one): everything
  else, e.g. ``TRANSACTION_ABORTABLE``, topic or group authorization failures, a record batch the broker
  refused, the consumer group's ``ILLEGAL_GENERATION`` / ``UNKNOWN_MEMBER_ID`` (KIP-447: a zombie member
  must not commit). ``UNKNOWN_PRODUCER_ID`` and ``OUT_OF_ORDER_SEQUENCE_NUMBER`` are abortable too: after
  the abort the producer bumps its epoch (KIP-360: InitProducerId v3+ under version 1, EndTxn v5 itself
  under version 2) so its sequence numbers start afresh.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ...protocol import (
    AddPartitionsToTxnRequest,
    EndTxnRequest,
    InitProducerIdRequest,
    ProduceRequest,
    TxnOffsetCommitRequest,
)
from ...protocol.errors import (
    BrokerError,
    ConcurrentTransactionsError,
    InvalidProducerEpochError,
    InvalidProducerIdMappingError,
    InvalidTxnStateError,
    OutOfOrderSequenceNumberError,
    ProducerFencedError,
    TransactionalIdAuthorizationFailedError,
    TransactionCoordinatorFencedError,
    UnknownProducerIdError,
    UnsupportedVersionError,
    broker_error,
)
from ...protocol.versions import TRANSACTION_V1, TRANSACTION_V2
from ..cluster.cluster import TRANSACTION, Cluster, coordinator_moved
from ..errors import TransactionError
from ..net.connection import BrokerConnection
from ..net.deadline import Deadline
from .produce import ProducerState

__all__ = [
    "FATAL_ERRORS",
    "GroupMetadata",
    "TransactionError",
    "TransactionHandle",
    "TransactionManager",
    "TransactionState",
    "end_transaction",
]

log = logging.getLogger("kafkawire.client.transaction")

#: Broker errors after which a transactional producer can only be closed (Java: fatal errors).
FATAL_ERRORS: tuple[type[BrokerError], ...] = (
    ProducerFencedError,
    InvalidProducerEpochError,
    TransactionalIdAuthorizationFailedError,
    InvalidTxnStateError,
    UnsupportedVersionError,
    TransactionCoordinatorFencedError,
    InvalidProducerIdMappingError,
)
#: Errors meaning this producer's epoch is stale: a newer instance with the same id took over.
_FENCED = (ProducerFencedError, InvalidProducerEpochError)
#: Errors after which the producer's sequence numbers are unusable: bump the epoch after the abort (KIP-360).
_NEEDS_BUMP = (UnknownProducerIdError, OutOfOrderSequenceNumberError)

#: The finalized feature (ApiVersions v3+, KIP-584) whose level 2 turns transaction version 2 on.
TRANSACTION_VERSION_FEATURE = "transaction.version"


class TransactionState(enum.Enum):
    """The states of the Java client's ``TransactionManager`` that the application can observe."""

    UNINITIALIZED = "uninitialized"
    READY = "ready"
    IN_TRANSACTION = "in transaction"
    COMMITTING = "committing"
    ABORTING = "aborting"
    ABORTABLE_ERROR = "abortable error"
    FATAL_ERROR = "fatal error"


@dataclass(frozen=True)
class GroupMetadata:
    """What a consumer-group member hands to :meth:`Producer.send_offsets_to_transaction` (KIP-447): the
    coordinator refuses the offsets of a member that is no longer part of ``generation_id``."""

    group_id: str
    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None


@dataclass(frozen=True)
class TransactionHandle:
    """What another process needs to finish an open transaction (commit or abort it with EndTxn): the
    transactional id with the producer id and epoch that wrote it. Made by
    :meth:`Producer.hand_over_transaction`; used by :func:`end_transaction`. This is how Flink's Kafka sink
    resumes a transaction after a checkpoint, and what a Spark driver needs to commit its tasks' writes.

    The coordinator aborts a transaction left open longer than its producer's ``transaction_timeout_ms``
    (its epoch is then bumped and EndTxn with the handle fails as fenced), so finish it before that."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    #: The transaction protocol the transaction was written with: True for version 2 (KIP-890), False for
    #: version 1, None when the handle does not say (a handle kept as three fields): then the broker's
    #: finalized ``transaction.version`` at the time of :func:`end_transaction` decides. EndTxn must speak
    #: the writer's protocol (FLINK-40689: only EndTxn v5 recognises a retried commit after the coordinator
    #: bumped the epoch, or moved to a new producer id when the epoch ran out).
    transaction_v2: bool | None = None


def _speaks(conn: BrokerConnection, api: type, version: int) -> bool:
    """Whether ``conn`` may send ``api`` at ``version`` or above (the broker's range and the client's caps)."""
    try:
        conn.version_for(api, version)
    except UnsupportedVersionError:
        return False
    return True


def request_version(conn: BrokerConnection, request: type, v2: bool) -> int:
    """The version of a transaction request: exactly its transaction-version-2 version under KIP-890 part 2
    (the broker must speak it), else the highest both sides speak up to its transaction-version-1 cap
    (:mod:`kafkawire.protocol.versions`)."""
    if v2:
        version = TRANSACTION_V2[request]
        return min(conn.version_for(request, version), version)
    return min(conn.version_for(request), TRANSACTION_V1[request])


class TransactionManager(ProducerState):
    """Producer id, epoch, sequence numbers and transaction state of one ``transactional_id``.

    Every method that talks to a broker takes the :class:`Cluster` and the call's :class:`Deadline`;
    the caller holds ``cluster.lock``. Not thread-safe on its own (the producer serialises calls).
    """

    def __init__(
        self, transactional_id: str, transaction_timeout_ms: int = 60_000, *, resumed: TransactionHandle | None = None
    ) -> None:
        super().__init__()
        if not transactional_id:
            raise ValueError("transactional_id must be a non-empty string")
        self.transactional_id: str | None = transactional_id
        self.transaction_timeout_ms = int(transaction_timeout_ms)
        self.state = TransactionState.UNINITIALIZED
        self.partitions: set[tuple[str, int]] = set()
        self.groups: set[str] = set()
        self.last_error: BaseException | None = None
        self._bump_epoch = False
        self._resumed = False  # finishing another process's transaction: it holds partitions we do not know
        #: True while this producer speaks transaction version 2 (KIP-890 part 2; see the module docstring).
        self.transaction_v2 = False
        self._resumed_v2: bool | None = None  # a resumed handle's protocol (None: ask the broker)
        self._features_epoch = -1  # finalized-features epoch that transaction_v2 was last decided from
        if resumed is not None:  # resume(): the transaction another process handed over
            self.producer_id, self.producer_epoch = resumed.producer_id, resumed.producer_epoch
            self.state = TransactionState.IN_TRANSACTION
            self._resumed = True
            self._resumed_v2 = resumed.transaction_v2

    @property
    def max_produce_version(self) -> int:  # type: ignore[override]
        """Produce v12 only under transaction version 2: the partition leader adds the partition to the
        transaction; v11 under version 1, where AddPartitionsToTxn must come first."""
        return (TRANSACTION_V2 if self.transaction_v2 else TRANSACTION_V1)[ProduceRequest]

    def _update_protocol(self, cluster: Cluster, conn: BrokerConnection, initializing: bool) -> None:
        """Decide the transaction protocol from the newest finalized features any open connection has seen
        (the Java client's ``maybeUpdateTransactionV2Enabled``). Called at init and after each EndTxn, so
        one transaction never changes protocol half-way. Switching to version 2 after init asks for an
        epoch bump before the next transaction (Java's ``clientSideEpochBumpRequired``)."""
        best = conn
        for other in list(cluster.conns.values()):
            v = getattr(other, "versions", None)
            if v is not None and v.finalized_features_epoch > best.versions.finalized_features_epoch:
                best = other
        versions = best.versions
        if versions.finalized_features_epoch <= self._features_epoch and not initializing:
            return
        self._features_epoch = versions.finalized_features_epoch
        was = self.transaction_v2
        self.transaction_v2 = (
            versions.finalized_features.get(TRANSACTION_VERSION_FEATURE, 0) >= 2
            # A client capped below these versions (api_version_caps) cannot speak version 2.
            and _speaks(conn, EndTxnRequest, TRANSACTION_V2[EndTxnRequest])
            and _speaks(conn, TxnOffsetCommitRequest, TRANSACTION_V2[TxnOffsetCommitRequest])
        )
        if was != self.transaction_v2:
            log.info(
                "transactional id %r: transaction protocol version %d (finalized features epoch %d)",
                self.transactional_id,
                2 if self.transaction_v2 else 1,
                self._features_epoch,
            )
            if self.transaction_v2 and not initializing:
                self._bump_epoch = True

    # ------------------------------------------------------------------------------- state checks
    def _raise_if_failed(self) -> None:
        if self.state is TransactionState.FATAL_ERROR:
            assert self.last_error is not None
            raise self.last_error
        if self.state is TransactionState.ABORTABLE_ERROR:
            err = TransactionError(
                f"transaction of {self.transactional_id!r} failed and must be aborted: {self.last_error}",
                abortable=True,
            )
            raise err from self.last_error

    def require(self, *states: TransactionState, what: str) -> None:
        """Raise unless in one of ``states`` (the fatal or abortable error when that is the state)."""
        if self.state in states:
            return
        self._raise_if_failed()
        if self.state is TransactionState.UNINITIALIZED:
            raise TransactionError(f"{what}: call init_transactions() first")
        raise TransactionError(f"{what}: not allowed while the producer is {self.state.value}")

    @property
    def in_transaction(self) -> bool:
        """True between ``begin_transaction()`` and the end of its commit or abort."""
        return self.state in (
            TransactionState.IN_TRANSACTION,
            TransactionState.COMMITTING,
            TransactionState.ABORTING,
            TransactionState.ABORTABLE_ERROR,
        )

    def fail(self, error: BaseException) -> BaseException:
        """Record ``error`` (fatal or abortable, per the module docstring) and return what to raise."""
        if self.state is TransactionState.FATAL_ERROR:
            return self.last_error or error
        if isinstance(error, _FENCED):
            if not isinstance(error, ProducerFencedError):
                fenced = ProducerFencedError(
                    f"producer {self.producer_id} epoch {self.producer_epoch} of {self.transactional_id!r} was "
                    f"fenced by a newer instance ({error})"
                )
                fenced.__cause__ = error
                error = fenced
            self.state = TransactionState.FATAL_ERROR
        elif isinstance(error, FATAL_ERRORS):
            self.state = TransactionState.FATAL_ERROR
        else:
            if isinstance(error, _NEEDS_BUMP):
                self._bump_epoch = True  # dropped after an EndTxn v5, which bumped the epoch itself
            if self.state is not TransactionState.UNINITIALIZED:
                self.state = TransactionState.ABORTABLE_ERROR
        self.last_error = error
        log.warning("transactional id %r: %s (%s)", self.transactional_id, self.state.value, error)
        return error

    def fail_produce(self, error: BaseException) -> BaseException:
        """A produce call of the transaction failed: the broker's own error per partition decides (a fenced
        epoch is fatal), anything else makes the transaction abortable. Returns what to raise."""
        causes = list(getattr(error, "errors", {}).values())
        for cause in causes:
            if isinstance(cause, FATAL_ERRORS):
                out = self.fail(cause)
                out.__context__ = error
                return out
        for cause in causes:
            if isinstance(cause, _NEEDS_BUMP):
                self._bump_epoch = True
        self.fail(error)
        return error

    # ------------------------------------------------------------------- ProducerState interface
    def ensure(self, cluster: Cluster, deadline: Deadline, refresh: bool = False) -> None:
        """The produce path's hook: a transactional producer gets its id from :meth:`init` only."""
        if refresh or self.producer_id < 0:
            self.require(TransactionState.IN_TRANSACTION, what="send")

    def reset(self) -> None:
        """A produce call failed with records in doubt: their sequence numbers may be out of step, so
        the epoch is bumped after the abort (KIP-360) instead of forgetting the producer id."""
        self._bump_epoch = True

    def prepare(self, cluster: Cluster, topic: str, partitions: Iterable[int], deadline: Deadline) -> None:
        """Add ``topic``'s ``partitions`` to the transaction before the first batch goes to them."""
        self.require(TransactionState.IN_TRANSACTION, what="send")
        new = sorted({int(p) for p in partitions} - {p for t, p in self.partitions if t == topic})
        if not new:
            return
        if self.transaction_v2:
            # KIP-890 part 2: the Produce v12 itself adds the partition (its leader asks the coordinator).
            # Tracked here so that EndTxn is sent: the Java client's transactionStarted.
            self.partitions.update((topic, p) for p in new)
            return
        self._add_partitions(cluster, topic, new, deadline)

    # ------------------------------------------------------------------------------ coordinator
    def coordinator_connection(self, cluster: Cluster, deadline: Deadline) -> BrokerConnection:
        """The transaction coordinator of this id (FindCoordinator with key_type 1, KIP-98)."""
        assert self.transactional_id is not None
        return cluster.coordinator(self.transactional_id, deadline, key_type=TRANSACTION)

    def identity(self, prefix: str = "") -> dict[str, Any]:
        """The fields that name this producer in a transaction request: transactional id, producer id and
        epoch (``prefix``: AddPartitionsToTxn's ``v3_and_below_`` names)."""
        return {
            f"{prefix}transactional_id": self.transactional_id,
            f"{prefix}producer_id": self.producer_id,
            f"{prefix}producer_epoch": self.producer_epoch,
        }

    def check_error(self, code: int, what: str, message: str | None = None) -> None:
        """Raise the broker's error for ``code``: retriable ones as they are (the retry loop tries again,
        after a new coordinator lookup for NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE); others after
        moving to the fatal or abortable state."""
        err = broker_error(code, message, f"{what} of {self.transactional_id!r}")
        if err is None:
            return
        if err.retriable:
            raise err
        raise self.fail(err)

    def call(self, cluster: Cluster, deadline: Deadline, attempt: Any, what: str) -> Any:
        """``cluster.call`` for a request of this transaction: CONCURRENT_TRANSACTIONS retried quickly, the
        transaction coordinator forgotten when it moved."""
        def before_retry(d: Deadline, e: BaseException) -> None:
            if coordinator_moved(e):
                assert self.transactional_id is not None
                cluster.forget_coordinator(self.transactional_id, TRANSACTION)

        def backoff(n: int, e: BaseException) -> float | None:
            # CONCURRENT_TRANSACTIONS right after a commit only means the coordinator is still writing the
            # previous transaction's markers (milliseconds): retry after 20 ms, as the Java client does for
            # AddPartitionsToTxn, instead of the general backoff that starts at 100 ms (KAFKA-5477).
            return 0.02 if isinstance(e, ConcurrentTransactionsError) else None

        return cluster.call(
            deadline, attempt, what=f"{what} of {self.transactional_id!r}", before_retry=before_retry, backoff=backoff
        )

    def _end_with_v2(self, cluster: Cluster, conn: BrokerConnection) -> bool:
        """Whether EndTxn speaks transaction version 2: the protocol the transaction was written with
        (a resumed handle's, when it says; else the broker's finalized ``transaction.version`` now)."""
        if not self._resumed:
            return self.transaction_v2
        if self._resumed_v2 is None:
            self._update_protocol(cluster, conn, initializing=True)
            self._resumed_v2 = self.transaction_v2
        return self._resumed_v2

    # ----------------------------------------------------------------------------- the requests
    def init(self, cluster: Cluster, deadline: Deadline) -> None:
        """InitProducerId with the transactional id: fences older instances, completes (aborts) their
        open transaction, and gives this producer its id and epoch."""
        if self.state is TransactionState.FATAL_ERROR:
            self._raise_if_failed()
        if self.state not in (TransactionState.UNINITIALIZED, TransactionState.READY):
            raise TransactionError(f"init_transactions: not allowed while the producer is {self.state.value}")
        self._init_producer_id(cluster, deadline, bump=False)
        self.state = TransactionState.READY
        self._update_protocol(cluster, self.coordinator_connection(cluster, deadline), initializing=True)

    def _init_producer_id(self, cluster: Cluster, deadline: Deadline, bump: bool) -> None:
        def attempt(d: Deadline) -> None:
            conn = self.coordinator_connection(cluster, d)
            version = conn.version_for(InitProducerIdRequest)
            req = InitProducerIdRequest(
                transactional_id=self.transactional_id, transaction_timeout_ms=self.transaction_timeout_ms
            )
            if bump and version >= 3 and self.producer_id >= 0:
                # KIP-360: the current id and epoch let the coordinator bump the epoch instead of fencing us.
                req.producer_id, req.producer_epoch = self.producer_id, self.producer_epoch
            resp = conn.request(req, version, deadline=d)
            self.check_error(resp.error_code, "InitProducerId")
            self.producer_id, self.producer_epoch = resp.producer_id, resp.producer_epoch
            self.sequences.clear()
            log.info(
                "transactional id %r: producer id %d epoch %d",
                self.transactional_id,
                self.producer_id,
                self.producer_epoch,
            )

        self.call(cluster, deadline, attempt, "InitProducerId")
        self._bump_epoch = False

    def handle(self) -> TransactionHandle:
        """The open transaction's :class:`TransactionHandle` (for :func:`end_transaction` elsewhere)."""
        self.require(TransactionState.IN_TRANSACTION, what="hand_over_transaction")
        assert self.transactional_id is not None
        return TransactionHandle(self.transactional_id, self.producer_id, self.producer_epoch, self.transaction_v2)

    @classmethod
    def resume(cls, handle: TransactionHandle) -> TransactionManager:
        """A manager in the transaction of ``handle``, ready for :meth:`end` (Flink's resumeTransaction)."""
        return cls(handle.transactional_id, resumed=handle)

    def begin(self) -> None:
        """Start a transaction (no request: the coordinator learns of it with the first partition)."""
        self.require(TransactionState.READY, what="begin_transaction")
        self.partitions.clear()
        self.groups.clear()
        self.state = TransactionState.IN_TRANSACTION

    def _add_partitions(self, cluster: Cluster, topic: str, partitions: list[int], deadline: Deadline) -> None:
        def attempt(d: Deadline) -> None:
            conn = self.coordinator_connection(cluster, d)
            version = min(conn.version_for(AddPartitionsToTxnRequest), TRANSACTION_V1[AddPartitionsToTxnRequest])
            topics = [AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(name=topic, partitions=partitions)]
            req = AddPartitionsToTxnRequest(**self.identity("v3_and_below_"), v3_and_below_topics=topics)
            resp = conn.request(req, version, deadline=d)
            codes = [
                r.partition_error_code
                for t in resp.results_by_topic_v3_and_below
                for r in t.results_by_partition
                if r.partition_error_code not in (0, 55)  # 55 OPERATION_NOT_ATTEMPTED: another partition failed
            ]
            for code in sorted(set(codes), key=lambda c: broker_error(c).retriable):  # type: ignore[union-attr]
                # Non-retriable first: a fenced epoch must not hide behind a retriable error of another partition.
                self.check_error(code, f"AddPartitionsToTxn {topic}{partitions}")

        self.call(cluster, deadline, attempt, f"add {topic}{partitions} to the transaction")
        self.partitions.update((topic, p) for p in partitions)

    def end(self, cluster: Cluster, commit: bool, deadline: Deadline) -> None:
        """EndTxn: commit or abort. A call that ran out of time leaves the state COMMITTING / ABORTING and
        may be repeated (the Java client's retry of ``commitTransaction``)."""
        what = "commit_transaction" if commit else "abort_transaction"
        if commit:
            self.require(TransactionState.IN_TRANSACTION, TransactionState.COMMITTING, what=what)
            self.state = TransactionState.COMMITTING
        else:
            if self.state is TransactionState.FATAL_ERROR:
                self._raise_if_failed()
            self.require(
                TransactionState.IN_TRANSACTION,
                TransactionState.ABORTING,
                TransactionState.ABORTABLE_ERROR,
                what=what,
            )
            self.state = TransactionState.ABORTING
        if self.partitions or self.groups or self._resumed:
            # Nothing was added: the coordinator knows no transaction, and EndTxn would be INVALID_TXN_STATE.

            def attempt(d: Deadline) -> None:
                conn = self.coordinator_connection(cluster, d)
                v2 = self._end_with_v2(cluster, conn)
                version = request_version(conn, EndTxnRequest, v2)
                req = EndTxnRequest(**self.identity(), committed=commit)
                resp = conn.request(req, version, deadline=d)
                self.check_error(resp.error_code, "EndTxn (commit)" if commit else "EndTxn (abort)")
                if version >= TRANSACTION_V2[EndTxnRequest] and resp.producer_id >= 0:
                    # KIP-890 part 2: the coordinator bumped the epoch (or, with the epoch exhausted, gave
                    # a new producer id); the next transaction uses it and its sequences start at 0.
                    self.producer_id, self.producer_epoch = resp.producer_id, resp.producer_epoch
                    self.sequences.clear()
                    self._bump_epoch = False

            self.call(cluster, deadline, attempt, "commit" if commit else "abort")
        self.partitions.clear()
        self.groups.clear()
        self.state = TransactionState.READY
        if self._resumed:
            return  # the handle's producer is not ours to go on with
        self._update_protocol(cluster, self.coordinator_connection(cluster, deadline), initializing=False)
        if self._bump_epoch:
            # KIP-360: sequence numbers of the aborted transaction are in doubt; a bumped epoch restarts them.
            self._init_producer_id(cluster, deadline, bump=True)
        log.debug("transactional id %r: %s", self.transactional_id, "committed" if commit else "aborted")


def end_transaction(
    client: Any, handle: TransactionHandle, commit: bool = True, timeout_ms: float | None = None
) -> None:
    """Commit (or abort) the transaction of ``handle`` from any process, with a
    :class:`~kafkawire.client.Client` (EndTxn with the handle's producer id and epoch).

    Repeating a commit that succeeded succeeds again (the coordinator answers a retried EndTxn for a
    transaction it completed the same way), so a driver that does not know whether its commit went
    through may send it again (under transaction protocol v2 too: Kafka takes an EndTxn whose epoch is one
    below its own, after the bump of the first one, for a retry). Raises :class:`ProducerFencedError` when a
    newer producer with the same transactional id, or the coordinator's timeout, ended the transaction
    first, and :class:`~kafkawire.protocol.errors.InvalidTxnStateError` when it was ended the other way
    (an abort after a commit). EndTxn speaks the protocol in ``handle.transaction_v2`` (the broker's
    finalized ``transaction.version`` when None); Kafka 4 ends the transaction of either protocol either
    way, but only EndTxn v5 recognises a retry after the epoch ran out and the producer id changed."""
    manager = TransactionManager.resume(handle)
    cluster = client.cluster
    with cluster.lock:
        manager.end(cluster, commit, client.deadline(timeout_ms))
