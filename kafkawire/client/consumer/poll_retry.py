"""How a consumer's ``poll()`` retries and when it gives up: one rule for
:class:`~kafkawire.client.Consumer` and :class:`~kafkawire.client.ShareConsumer`.

A round of a poll that fails with an error another attempt may cure (a broker busy electing a leader or
creating the offsets topic, a connection refused) is retried after the client's backoff, within the poll's
deadline. When the time runs out the poll returns nothing if the cluster answered during it or shortly
before (it is busy, not gone: the next poll carries on, as the Java consumer does), and raises
:class:`~kafkawire.client.errors.KafkaTimeoutError` naming the error when no broker answered at all.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from ..cluster.retry import is_retriable
from ..errors import KafkaTimeoutError
from ..net.deadline import Deadline

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["PollRetry"]


class PollRetry:
    """The retries of one consumer's polls. ``what`` names the call in messages (``"poll"``); ``log`` is the
    consumer's logger. Call :meth:`begin` at the start of each poll, :meth:`answered` after each round that
    did not fail, and :meth:`failed` with the error of one that did."""

    def __init__(self, client: Client, what: str, log: logging.Logger) -> None:
        self.client = client
        self.what = what
        self.log = log
        self.last_heard = float("-inf")  # time.monotonic() when a poll last saw bytes from the cluster
        self.heard = 0  # the client's bytes received when this poll began
        self.failures = 0

    def begin(self) -> None:
        self.heard = self._bytes_received()
        self.failures = 0

    def answered(self) -> None:
        """Note whether the cluster sent anything since this poll began."""
        if self._bytes_received() > self.heard:
            self.last_heard = time.monotonic()

    def failed(self, error: Exception, deadline: Deadline, timeout_ms: float, grace_ms: float = 0.0) -> bool:
        """A round failed with ``error``: True to try again (after the backoff, slept here), False when the
        time ran out but the cluster answered within the last ``timeout_ms + grace_ms`` (the poll returns
        nothing). Raises ``error`` when another attempt cannot cure it, and :class:`KafkaTimeoutError`
        naming it when no broker answered during the whole timeout."""
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
            # cut short by our own deadline): it is busy, not gone. Nothing to read yet, as in the Java
            # consumer; the next poll carries on.
            self.log.debug("%s: time ran out while retrying (%s)", self.what, error)
            return False
        # Not one answer from any broker in the whole timeout: say why.
        if isinstance(error, KafkaTimeoutError):
            raise error
        raise KafkaTimeoutError(f"{self.what} did not complete within {timeout_ms:.0f} ms: {error}") from error

    def _bytes_received(self) -> int:
        return int(self.client.metrics().get("bytes_received", 0))
