"""Retry policy: which errors to retry, and how long to wait between attempts.

Backoff is exponential with jitter, as in KIP-580 (``retry.backoff.ms`` growing to
``retry.backoff.max.ms``, each wait randomised by ±20% so that clients that failed together do not
retry together), bounded both by a number of attempts and by an overall deadline (the role
``delivery.timeout.ms`` plays in the Java producer).
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["RetryPolicy", "is_retriable"]


def is_retriable(error: BaseException) -> bool:
    """True for errors that another attempt may cure (broker errors and client errors carry
    ``retriable``; plain ``ConnectionError``/``TimeoutError`` from the OS count as retriable)."""
    flag = getattr(error, "retriable", None)
    if flag is not None:
        return bool(flag)
    return isinstance(error, (ConnectionError, TimeoutError))


@dataclass(frozen=True)
class RetryPolicy:
    """``retries`` extra attempts after the first, waits from ``backoff_ms`` doubling up to
    ``backoff_max_ms`` with ``jitter`` (a fraction), and no attempt started after ``timeout_ms``."""

    retries: int = 8
    backoff_ms: float = 100.0
    backoff_max_ms: float = 1000.0
    jitter: float = 0.2
    timeout_ms: float = 60_000.0

    def backoff(self, attempt: int) -> float:
        """Seconds to wait before attempt number ``attempt + 1`` (``attempt`` counts from 1)."""
        base = min(self.backoff_max_ms, self.backoff_ms * (2 ** max(0, attempt - 1)))
        if self.jitter:
            base *= random.uniform(1 - self.jitter, 1 + self.jitter)
        return max(0.0, base) / 1000.0

    def attempts(self) -> Iterator[int]:
        """Yields attempt numbers 1, 2, ... sleeping the backoff before each retry; stops when the
        attempts or the deadline run out. The caller ``break``s on success."""
        deadline = time.monotonic() + self.timeout_ms / 1000.0
        attempt = 1
        while True:
            yield attempt
            if attempt > self.retries:
                return
            delay = self.backoff(attempt)
            if time.monotonic() + delay >= deadline:
                return
            time.sleep(delay)
            attempt += 1
