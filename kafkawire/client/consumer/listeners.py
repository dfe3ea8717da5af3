"""Rebalance listeners: the application's hooks into a consumer group's rebalances.

The calls mirror the Java consumer's ``ConsumerRebalanceListener`` and happen at the same points, always
inside :meth:`Consumer.poll` (or :meth:`Consumer.close` / :meth:`Consumer.unsubscribe`), in the caller's
thread:

* ``on_partitions_revoked(partitions)``: the member is about to give ``partitions`` up while it is still
  a member of the generation that owns them (before a rejoin, on ``close()`` and ``unsubscribe()``).
  Work kept for them can be finished and committed here; with auto-commit on, the positions of these
  partitions are committed right *after* the callback returns, so what it processed counts.
* ``on_partitions_assigned(partitions)``: a new generation's assignment arrived (with the eager
  protocol, every partition the member now holds; always called, possibly with an empty list).
* ``on_partitions_lost(partitions)``: the member was removed from the group (session timeout, fenced
  generation) so ``partitions`` may already belong to someone else; nothing can be committed for them.
  By default it calls ``on_partitions_revoked``, as Java's default method does.

An exception raised by a callback is re-raised from the ``poll()`` that called it, once the rebalance
step it belongs to has completed (Java does the same), so the consumer's state stays consistent.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ConsumerRebalanceListener", "call_listener"]

TopicPartition = tuple[str, int]


class ConsumerRebalanceListener:
    """Base class with do-nothing callbacks; override the ones you need (any object with some of these
    methods works too)."""

    def on_partitions_revoked(self, partitions: list[TopicPartition]) -> None:
        """``partitions`` are about to be given up; their offsets can still be committed."""

    def on_partitions_assigned(self, partitions: list[TopicPartition]) -> None:
        """``partitions`` were assigned to this member."""

    def on_partitions_lost(self, partitions: list[TopicPartition]) -> None:
        """``partitions`` were lost without a chance to commit (by default: ``on_partitions_revoked``)."""
        self.on_partitions_revoked(partitions)


def call_listener(listener: Any, event: str, partitions: list[TopicPartition]) -> BaseException | None:
    """Call ``listener.on_partitions_<event>(partitions)`` if it has that method; return what it raised.

    A listener without ``on_partitions_lost`` gets ``on_partitions_revoked`` instead (Java's default).
    """
    if listener is None:
        return None
    method = getattr(listener, f"on_partitions_{event}", None)
    if method is None and event == "lost":
        method = getattr(listener, "on_partitions_revoked", None)
    if method is None:
        return None
    try:
        method(sorted(partitions))
    except Exception as e:  # noqa: BLE001 - handed back to poll(), which raises it
        return e
    return None
