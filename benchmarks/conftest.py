"""Shared machinery for the codec benchmarks: a ``measure`` helper, the timer choice and a summary table.

Timer: benchmarks that go through ``measure`` (the codec benchmarks) are timed in process CPU time
(``time.process_time``), not wall time. Every codec contender is single-threaded and does no I/O, so on an
idle machine the two agree; on a shared machine (this project's CI runners and dev boxes run several jobs
on 2 cores) wall time mostly measures the neighbours. ``KAFKAWIRE_BENCH_TIMER=wall`` switches back to
wall time. Other benchmark files (network round trips) keep pytest-benchmark's wall-clock default.

Every benchmark goes through :func:`measure`, which runs ``benchmark.pedantic`` with a fixed number of
rounds (peers that are slow get fewer rounds and a smaller slice of the same bytes), stores records/s in
``benchmark.extra_info`` and remembers the median so the terminal summary can print, per group, each
contender's records/s and its ratio to kafkawire measured in the same run.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest


@dataclass
class Result:
    group: str
    name: str
    median_s: float
    records: int
    nbytes: int

    @property
    def records_per_s(self) -> float:
        return self.records / self.median_s if self.median_s else float("inf")


RESULTS: list[Result] = []


def _timer() -> Callable[[], float]:
    return time.perf_counter if os.environ.get("KAFKAWIRE_BENCH_TIMER", "cpu") == "wall" else time.process_time


@pytest.fixture
def measure(benchmark: Any) -> Callable[..., Any]:
    """``measure(group, name, fn, records=, nbytes=, rounds=)``: benchmark ``fn()`` and record the result.

    ``records``/``nbytes`` describe the work one call does (used for records/s and MB/s).
    """

    def run(group: str, name: str, fn: Callable[[], Any], *, records: int = 0, nbytes: int = 0,
            rounds: int = 5, warmup: int = 1) -> Any:
        benchmark.group = group
        benchmark.name = name
        # pytest-benchmark (4.x, 5.x) keeps the timer in ``_timer`` and binds it when pedantic() builds its
        # runner: setting it here changes the timer for this benchmark only, not for the whole session.
        benchmark._timer = _timer()
        out = benchmark.pedantic(fn, rounds=rounds, iterations=1, warmup_rounds=warmup)
        median = benchmark.stats.stats.median
        benchmark.extra_info.update(
            contender=name,
            records=records,
            bytes=nbytes,
            records_per_s=round(records / median) if records else None,
            mb_per_s=round(nbytes / median / 1e6, 1) if nbytes else None,
        )
        RESULTS.append(Result(group, name, median, records, nbytes))
        return out

    return run


def machine_description() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print a Markdown table: per group, median, records/s, MB/s and the ratio to kafkawire."""
    if not RESULTS:
        return
    import kafkawire

    tr = terminalreporter
    tr.write_sep("=", "kafkawire codec benchmark summary (Markdown)")
    timer = _timer().__name__
    tr.write_line(f"machine: {machine_description()}; kafkawire.compiled={kafkawire.compiled}; timer: {timer}")
    tr.write_line("")
    tr.write_line("| group | contender | records | median | records/s | MB/s | time vs kafkawire |")
    tr.write_line("|---|---|---:|---:|---:|---:|---:|")
    groups: dict[str, list[Result]] = {}
    for r in RESULTS:
        groups.setdefault(r.group, []).append(r)
    for group, results in groups.items():
        base = next((r for r in results if r.name == "kafkawire"), results[0])
        for r in results:
            # Compare cost per record (or per byte) so peers measured on a smaller slice compare fairly.
            if r.records and base.records:
                ratio = base.records_per_s / r.records_per_s
            elif r.nbytes and base.nbytes:
                ratio = (r.median_s / r.nbytes) / (base.median_s / base.nbytes)
            else:
                ratio = r.median_s / base.median_s
            rps = f"{r.records_per_s / 1e6:.2f} M" if r.records else "-"
            mbs = f"{r.nbytes / r.median_s / 1e6:.0f}" if r.nbytes else "-"
            tr.write_line(
                f"| {group} | {r.name} | {r.records or '-'} | {r.median_s * 1e3:.1f} ms | {rps} | {mbs} "
                f"| {ratio:.2f}x |"
            )
