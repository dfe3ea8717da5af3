"""Counting what a fault test sent, had acknowledged, read back, lost and duplicated.

Every record a fault test writes carries a unique value (``b"<run>-<n>"``). The ledger records which
values were handed to the producer, which the broker acknowledged, and which a consumer read back, and
turns that into the five numbers the fault suite asserts on:

* ``sent``: handed to the client;
* ``acknowledged``: the client reported them written (acks=all);
* ``read_back``: distinct values a consumer saw;
* ``lost``: acknowledged but never read back (must be 0);
* ``duplicated``: read more than once (the at-least-once window; a test bounds it or requires 0).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class LedgerReport:
    sent: int
    acknowledged: int
    read_back: int
    lost: int
    duplicated: int
    unexpected: int  # read back but never sent: invented data

    def __str__(self) -> str:
        return (
            f"sent={self.sent} acknowledged={self.acknowledged} read_back={self.read_back} "
            f"lost={self.lost} duplicated={self.duplicated} unexpected={self.unexpected}"
        )


class Ledger:
    """Thread-safe counts of values sent, acknowledged and read (see the module docstring)."""

    def __init__(self, run: str = "r") -> None:
        self.run = run
        self._lock = threading.Lock()
        self._next = 0
        self._sent: set[bytes] = set()
        self._acked: set[bytes] = set()
        self._read: Counter[bytes] = Counter()

    def make(self, n: int) -> list[bytes]:
        """``n`` fresh unique values, recorded as sent."""
        with self._lock:
            start, self._next = self._next, self._next + n
            values = [f"{self.run}-{i}".encode() for i in range(start, start + n)]
            self._sent.update(values)
        return values

    def acknowledged(self, values: Iterable[bytes | None]) -> None:
        with self._lock:
            self._acked.update(v for v in values if v is not None)

    def read(self, values: Iterable[bytes | None]) -> None:
        with self._lock:
            self._read.update(bytes(v) for v in values if v is not None)

    def duplicated_values(self) -> set[bytes]:
        """Values read more than once."""
        with self._lock:
            return {v for v, n in self._read.items() if n > 1}

    def lost_values(self) -> set[bytes]:
        with self._lock:
            return self._acked - set(self._read)

    def report(self) -> LedgerReport:
        with self._lock:
            read = set(self._read)
            return LedgerReport(
                sent=len(self._sent),
                acknowledged=len(self._acked),
                read_back=len(read & self._sent),
                lost=len(self._acked - read),
                duplicated=sum(c - 1 for c in self._read.values() if c > 1),
                unexpected=len(read - self._sent),
            )
