"""Retry policy: which errors to retry, and how long to wait between attempts.

Backoff is exponential with jitter, as in KIP-580 (``retry.backoff.ms`` growing to
``retry.backoff.max.ms``, each wait randomised by ±20% so that clients that failed together do not
retry together). A retry loop stops at the call's :class:`~kafkawire.client.net.deadline.Deadline` (the
role ``delivery.timeout.ms`` / ``default.api.timeout.ms`` play in the Java client), not after a count
of attempts: a count turns "retry for two minutes" into "retry for five seconds" whenever the backoff
is short. ``retries`` remains as an optional extra cap (None: no cap).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from ..net.deadline import Deadline

__all__ = ["DEFAULT_API_TIMEOUT_MS", "DEFAULT_DELIVERY_TIMEOUT_MS", "DEFAULT_MAX_BLOCK_MS", "Final", "RetryPolicy",
           "is_retriable"]


def is_retriable(error: BaseException) -> bool:
    """True for errors that another attempt may cure (broker errors and client errors carry
    ``retriable``; plain ``ConnectionError``/``TimeoutError`` from the OS count as retriable)."""
    flag = getattr(error, "retriable", None)
    if flag is not None:
        return bool(flag)
    return isinstance(error, (ConnectionError, TimeoutError))


#: A call's deadline when the client sets none: the Java client's ``default.api.timeout.ms``.
DEFAULT_API_TIMEOUT_MS = 60_000.0
#: A write's deadline when the client sets none: the Java producer's ``delivery.timeout.ms``.
DEFAULT_DELIVERY_TIMEOUT_MS = 120_000.0
#: How long a write waits for its topic's metadata: the Java producer's ``max.block.ms``.
DEFAULT_MAX_BLOCK_MS = 60_000.0


class Final(Exception):
    """Carries an error that must not be retried although its class says it is retriable."""

    retriable = False

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass(frozen=True)
class RetryPolicy:
    """Waits from ``backoff_ms`` doubling up to ``backoff_max_ms`` with ``jitter`` (a fraction);
    ``timeout_ms`` is the default deadline of a call that retries; ``retries`` (None: unbounded)
    optionally caps the number of extra attempts as well."""

    retries: int | None = None
    backoff_ms: float = 100.0
    backoff_max_ms: float = 1000.0
    jitter: float = 0.2
    timeout_ms: float = 60_000.0

    def backoff(self, attempt: int) -> float:
        """Seconds to wait before attempt number ``attempt + 1`` (``attempt`` counts from 1)."""
        base = min(self.backoff_max_ms, self.backoff_ms * (2 ** max(0, attempt - 1)))
        if self.jitter:
            base *= random.uniform(1 - self.jitter, 1 + self.jitter)
        return max(0.0, float(base)) / 1000.0

    def out_of_attempts(self, attempt: int) -> bool:
        """True when attempt number ``attempt`` was the last one ``retries`` allows."""
        return self.retries is not None and attempt > self.retries

    def attempts(self, deadline: Deadline | None = None) -> Iterator[int]:
        """Yields attempt numbers 1, 2, ... sleeping the backoff (cut to the deadline) before each
        retry; stops when the deadline passes (default: ``timeout_ms`` from the first call) or the
        optional ``retries`` cap is reached. The caller leaves the loop (``break``) on success."""
        if deadline is None:
            deadline = Deadline.from_ms(self.timeout_ms)
        attempt = 1
        while True:
            yield attempt
            if self.out_of_attempts(attempt):
                return
            deadline.sleep(self.backoff(attempt))
            if deadline.expired():
                return
            attempt += 1
