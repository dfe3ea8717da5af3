"""One measured trial of :func:`kafkawire.bench.tune.tune` (shared by the sweep, its workloads and its
report)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Trial"]


@dataclass
class Trial:
    """One measured run of one set of settings.

    ``ack_ms``: produce acknowledgement latency (``send()`` to its delivery callback) p50/p99 over a
    sample of records; ``latency_ms``: for a producer trial end to end (``send()`` to the record read back
    by a second client, from the record's timestamp, ms resolution), for a consumer trial one ``poll()``
    that returned records. ``cpu_s``: this process's CPU time over the trial (every thread: for a producer
    trial the reading client's too)."""

    role: str
    settings: dict[str, str]
    varied: str
    records: int
    nbytes: int
    seconds: float
    cpu_s: float
    ack_ms: tuple[float, float] | None = None
    latency_ms: tuple[float, float] | None = None
    error: str | None = None

    @property
    def records_per_s(self) -> float:
        return self.records / self.seconds if self.seconds > 0 and not self.error else 0.0

    @property
    def mb_per_s(self) -> float:
        return self.nbytes / self.seconds / 1e6 if self.seconds > 0 and not self.error else 0.0

    @property
    def cpu_us_per_record(self) -> float | None:
        return self.cpu_s / self.records * 1e6 if self.records and not self.error else None

    def label(self) -> str:
        """``linger.ms=5`` (the setting this trial varied), or ``baseline``."""
        return f"{self.varied}={self.settings[self.varied]}" if self.varied else "baseline"

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(records_per_s=self.records_per_s, mb_per_s=self.mb_per_s,
                   cpu_us_per_record=self.cpu_us_per_record)
        return out
