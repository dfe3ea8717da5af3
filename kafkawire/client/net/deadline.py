"""One deadline per blocking call, passed down to every retry, connect and read.

A public blocking method (``poll``, ``produce``, ``fetch``, ``commit``, ...) makes one :class:`Deadline`
from the caller's timeout and hands it to everything it calls. Nothing below it starts its own clock:
a connect gets ``deadline.remaining()`` as its socket timeout, a read waits at most what is left, and a
retry loop sleeps ``deadline.clamp(backoff)`` and stops when :meth:`Deadline.expired` says so, not after
a count of attempts. That is what keeps ``poll(timeout_ms=1000)`` from blocking for minutes when every
layer below it had a reasonable timeout of its own (the overruns of 10-120x that this replaced).
"""

from __future__ import annotations

import time

__all__ = ["Deadline"]

# The share of the time left a broker may spend holding a fetch: the rest carries the answer back.
_WAIT_SHARE = 0.8


class Deadline:
    """A point in time (``time.monotonic()``) by which a blocking call must have returned.

    ``Deadline(1.5)`` expires 1.5 s from now; ``Deadline(None)`` never expires (for callers that
    explicitly ask to wait forever). Use :meth:`from_ms` for the millisecond timeouts of the public API.
    """

    __slots__ = ("at", "timeout")

    at: float
    timeout: float | None

    def __init__(self, timeout: float | None) -> None:
        if timeout is not None and timeout < 0:
            timeout = 0.0
        self.timeout = timeout
        self.at = float("inf") if timeout is None else time.monotonic() + timeout

    @classmethod
    def from_ms(cls, timeout_ms: float | None) -> Deadline:
        """A deadline ``timeout_ms`` milliseconds from now (``None``: never)."""
        return cls(None if timeout_ms is None else timeout_ms / 1000.0)

    def remaining(self) -> float:
        """Seconds left, never negative (``inf`` for a deadline that never expires)."""
        return max(0.0, self.at - time.monotonic())

    def remaining_ms(self) -> float:
        """Milliseconds left, never negative."""
        return self.remaining() * 1000.0

    def expired(self) -> bool:
        """True once the deadline has passed."""
        return time.monotonic() >= self.at

    def clamp(self, seconds: float) -> float:
        """``seconds`` cut to what is left: the longest a sleep or a socket wait may take."""
        return max(0.0, min(seconds, self.remaining()))

    def request_timeout_ms(self, cap_ms: float) -> int:
        """The broker-side timeout of a request (CreateTopics' ``timeout_ms``, Produce's ``timeout_ms``, ...):
        ``cap_ms`` cut to what is left, so the broker answers before this deadline passes; at least 1 ms."""
        return max(1, int(self.clamp(cap_ms / 1000) * 1000))

    def wait_ms(self, cap_ms: float) -> int:
        """How long a broker may hold a request that waits for data (Fetch's ``max_wait_ms``): ``cap_ms``,
        cut to 80 % of what is left so that the answer, once sent, still arrives before this deadline."""
        if self.timeout is None:
            return int(cap_ms)
        return max(1, min(int(cap_ms), int(self.remaining_ms() * _WAIT_SHARE)))

    def sooner(self, seconds: float | None) -> Deadline:
        """The earlier of this deadline and one ``seconds`` from now (a per-request cap inside a call)."""
        if seconds is None:
            return self
        other = Deadline(seconds)
        return other if other.at < self.at else self

    def sleep(self, seconds: float) -> None:
        """Sleep ``seconds``, or less if the deadline comes first."""
        delay = self.clamp(seconds)
        if delay > 0:
            time.sleep(delay)

    def __repr__(self) -> str:
        if self.timeout is None:
            return "Deadline(never)"
        return f"Deadline({self.timeout:.3f}s, {self.remaining():.3f}s left)"
