"""How a consumer's ``poll()`` retries and when it gives up: one rule for
:class:`~kafkawire.client.Consumer` and :class:`~kafkawire.client.ShareConsumer`.

A round of a poll that fails with an error another attempt may cure (a broker busy electing a leader or
creating the offsets topic, a connection refused, a broker that stopped answering) is retried after the
client's backoff, within the poll's deadline. When the time runs out the poll returns what arrived, nothing,
as Java's ``poll(Duration)`` does, whether the cluster is busy or silent: the next poll carries on. A poll
during which no broker answered at all says why: a WARNING naming the error (once per such streak, then
DEBUG, and an INFO when the cluster answers again) and the ``polls_unanswered`` counter of the consumer's
metrics. Errors another attempt cannot cure (authorization, fencing, an invalid offset with no reset
policy) are raised (issue 34).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from ..cluster.retry import is_retriable
from ..net.deadline import Deadline

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["PollRetry"]


class PollRetry:
    """The retries of one consumer's polls. ``what`` names the call in messages (``"poll"``); ``log`` is the
    consumer's logger; ``counters`` (the consumer's metrics) gets ``polls_unanswered``. Call :meth:`begin` at
    the start of each poll, :meth:`answered` after each round that did not fail, and :meth:`failed` with the
    error of one that did."""

    def __init__(
        self, client: Client, what: str, log: logging.Logger, counters: dict[str, int] | None = None
    ) -> None:
        self.client = client
        self.what = what
        self.log = log
        self.counters = counters if counters is not None else {}
        self.counters.setdefault("polls_unanswered", 0)
        self.last_heard = float("-inf")  # time.monotonic() when a poll last saw bytes from the cluster
        self.heard = 0  # the client's bytes received when this poll began
        self.failures = 0
        self.silent = 0  # polls in a row during which no broker answered

    def begin(self) -> None:
        self.heard = self._bytes_received()
        self.failures = 0

    def answered(self) -> None:
        """Note whether the cluster sent anything since this poll began."""
        if self._bytes_received() > self.heard:
            self.last_heard = time.monotonic()
            if self.silent:
                self.log.info("%s: the cluster answers again (after %d poll(s) without an answer)",
                              self.what, self.silent)  # fmt: skip
                self.silent = 0

    def failed(self, error: Exception, deadline: Deadline, timeout_ms: float, grace_ms: float = 0.0) -> bool:
        """A round failed with ``error``: True to try again (after the backoff, slept here), False when the
        time ran out (the poll returns what arrived: nothing). Raises ``error`` when another attempt cannot
        cure it. When no broker answered during the whole timeout (nor within ``grace_ms`` before it), logs
        why and counts it (module docstring)."""
        if not is_retriable(error):
            raise error
        self.failures += 1
        self.log.debug("%s: %s; retrying", self.what, error)
        deadline.sleep(self.client.retry_policy.backoff(self.failures))
        if not deadline.expired():
            return True
        self.answered()
        if (time.monotonic() - self.last_heard) * 1000 < timeout_ms + grace_ms:
            # The cluster answered during this poll, or shortly before it and this poll was too short for
            # the fetch it holds for up to ``max_wait_ms`` (a 200 ms poll on a loaded machine), or it
            # answered (e.g. COORDINATOR_NOT_AVAILABLE while Kafka creates its offsets topic, or a request
            # cut short by our own deadline): it is busy, not gone.
            self.log.debug("%s: time ran out while retrying (%s)", self.what, error)
            return False
        # Not one answer from any broker in the whole timeout (down, unreachable, or hung: a SIGSTOPped
        # broker keeps its connections open and never answers). Java's poll(Duration) returns nothing
        # then too; say why, loudly once per streak.
        self._unanswered(timeout_ms, str(error))
        return False

    def ended_empty(self, timeout_ms: float, grace_ms: float = 0.0) -> None:
        """A poll ran out of time with nothing to return and no error (its requests are still awaited, as a
        share fetch cut by the deadline is): counted and logged as :meth:`failed` does when no broker
        answered during it (nor within ``grace_ms`` before)."""
        self.answered()
        if (time.monotonic() - self.last_heard) * 1000 >= timeout_ms + grace_ms:
            self._unanswered(timeout_ms, "requests still awaiting their answers")

    def _unanswered(self, timeout_ms: float, why: str) -> None:
        self.silent += 1
        self.counters["polls_unanswered"] = self.counters.get("polls_unanswered", 0) + 1
        level = logging.WARNING if self.silent == 1 else logging.DEBUG
        self.log.log(level, "%s: no broker answered within %.0f ms, returning nothing: %s", self.what, timeout_ms, why)

    def _bytes_received(self) -> int:
        return int(self.client.metrics().get("bytes_received", 0))
