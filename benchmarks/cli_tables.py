"""The CLI's table printer against rich's Table with the same layout (why kafkawire does not use rich).

``python benchmarks/cli_tables.py [ROWS ...]`` (needs ``pip install rich``; default 100, 1000 and 5000 rows)

Rows as ``kafkawire offsets`` prints them (topic, partition, three offsets, lag). rich renders a
``Table(box=None, pad_edge=False, padding=(0, 1))``, plain text into a buffer as wide as the widest row
(what a pipe gets); the script first checks that both give the same bytes, then prints the best of three
CPU times (``time.process_time``) of each and the ratio.
"""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from kafkawire.cli._common import _is_number, print_table

HEADER = ("TOPIC", "PARTITION", "EARLIEST", "LATEST", "COMMITTED", "LAG")


def rows_of(n: int) -> list[tuple[Any, ...]]:
    return [("events", p, p * 10, p * 10_000 + 7, p * 9_000, p * 1_000 + 7) for p in range(n)]


def rich_table(rows: Sequence[Sequence[Any]], header: Sequence[str], out: io.StringIO) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="")
    for i, name in enumerate(header):
        numeric = bool(rows) and all(_is_number(r[i]) for r in rows)
        table.add_column(Text(name), justify="right" if numeric else "left", no_wrap=True)
    for row in rows:
        table.add_row(*(Text("" if c is None else str(c)) for c in row))
    buf = io.StringIO()
    Console(file=buf, width=1 << 20, color_system=None, highlight=False).print(table)
    out.write("".join(line.rstrip() + "\n" for line in buf.getvalue().splitlines()))


def cpu(fn: Callable[[list[tuple[Any, ...]], Sequence[str], io.StringIO], None], rows: list[tuple[Any, ...]]) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        fn(rows, HEADER, io.StringIO())
        best = min(best, time.process_time() - start)
    return best


def main(argv: list[str]) -> None:
    for n in [int(a) for a in argv] or [100, 1000, 5000]:
        rows = rows_of(n)
        ours, theirs = io.StringIO(), io.StringIO()
        print_table(rows, HEADER, ours)
        rich_table(rows, HEADER, theirs)
        assert ours.getvalue() == theirs.getvalue(), "the two layouts differ"
        a, b = cpu(print_table, rows), cpu(rich_table, rows)
        print(f"{n:>6} rows: print_table {a * 1e3:8.2f} ms   rich {b * 1e3:9.2f} ms   ({b / a:,.0f}x)")


if __name__ == "__main__":
    main(sys.argv[1:])
