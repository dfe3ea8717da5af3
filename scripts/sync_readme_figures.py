#!/usr/bin/env python3
"""Copy the headline table of benchmarks/README.md into README.md (one source of truth for figures).

The table lives between ``<!-- headline:start -->`` and ``<!-- headline:end -->`` in both files; this
script replaces README.md's copy with benchmarks/README.md's, pointing its section links at benchmarks/README.md. ``--check``
exits 1 (printing both) when they differ, without writing.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
START, END = "<!-- headline:start -->", "<!-- headline:end -->"
_BLOCK = re.compile(re.escape(START) + r"\n(.*?)" + re.escape(END), re.S)


def headline(text: str, where: str) -> str:
    m = _BLOCK.search(text)
    if m is None:
        raise SystemExit(f"{where}: no {START} ... {END} block")
    return m.group(1)


def expected_readme(readme: str, bench: str) -> str:
    # In benchmarks/README.md the table links to its own sections ("](#codec-...)"); from the top-level
    # README those are sections of benchmarks/README.md.
    table = headline(bench, "benchmarks/README.md").replace("](#", "](benchmarks/README.md#")
    headline(readme, "README.md")
    return _BLOCK.sub(lambda _m: f"{START}\n{table}{END}", readme, count=1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only check; exit 1 when README.md is stale")
    args = ap.parse_args(argv)
    readme_path, bench_path = ROOT / "README.md", ROOT / "benchmarks" / "README.md"
    readme, bench = readme_path.read_text(), bench_path.read_text()
    new = expected_readme(readme, bench)
    if new == readme:
        return 0
    if args.check:
        print("README.md's headline table differs from benchmarks/README.md's: run scripts/sync_readme_figures.py",
              file=sys.stderr)
        return 1
    readme_path.write_text(new)
    print("README.md: headline table updated from benchmarks/README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
