"""Idempotent producers and transactions as their partition leaders and coordinators see them (KIP-664). Part of
:class:`kafkawire.admin.Admin`."""

from __future__ import annotations

from collections.abc import Iterable

from ..client.net.deadline import Deadline
from . import transactions as _transactions
from .base import AdminBase
from .transactions import ProducerState, TransactionDescription, TransactionListing

__all__ = ["TransactionsApi"]


class TransactionsApi(AdminBase):
    """Idempotent producers and transactions as their partition leaders and coordinators see them (KIP-664)."""

    # --------------------------------------------------------------------- producers and transactions
    def describe_producers(
        self,
        partitions: Iterable[tuple[str, int]],
        *,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[tuple[str, int], list[ProducerState]]:
        """``{(topic, partition): [ProducerState]}``: the idempotent and transactional producers each
        partition's leader tracks, with the start offset of their open transaction (KIP-664)."""
        return self._run(timeout_ms, deadline, _transactions.describe_producers, partitions)

    def list_transactions(
        self,
        *,
        states: Iterable[str] | None = None,
        producer_ids: Iterable[int] | None = None,
        duration_ms: int | None = None,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> list[TransactionListing]:
        """Every transactional id the coordinators know, optionally only in ``states`` (``"Ongoing"``, ...),
        of ``producer_ids``, or open longer than ``duration_ms`` (KIP-994, brokers with ListTransactions
        v1). An unknown state raises ``ValueError``."""
        return self._run(
            timeout_ms,
            deadline,
            _transactions.list_transactions,
            states=states,
            producer_ids=producer_ids,
            duration_ms=duration_ms,
        )

    def describe_transactions(
        self, transactional_ids: Iterable[str], *, timeout_ms: float | None = None, deadline: Deadline | None = None
    ) -> dict[str, TransactionDescription]:
        """``{transactional_id: TransactionDescription}`` from each id's coordinator (an unknown id raises
        ``TransactionalIdNotFoundError``)."""
        return self._run(timeout_ms, deadline, _transactions.describe_transactions, transactional_ids)

    def abort_transaction(
        self,
        topic: str,
        partition: int,
        start_offset: int,
        *,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> ProducerState:
        """Abort the open transaction that starts at ``start_offset`` of ``topic``/``partition`` (a hanging
        one: see :mod:`kafkawire.admin.transactions`), as ``kafka-transactions.sh abort`` does; returns the
        producer whose transaction it was. ``ValueError`` when no open transaction starts there."""
        return self._run(timeout_ms, deadline, _transactions.abort_transaction, topic, partition, start_offset)
