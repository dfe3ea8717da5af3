"""The README's headline figures are the ones benchmarks/README.md records (one source of truth)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _sync_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("sync_readme_figures", ROOT / "scripts" / "sync_readme_figures.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_readme_headline_table_is_the_benchmarks_one() -> None:
    sync = _sync_module()
    readme = (ROOT / "README.md").read_text()
    bench = (ROOT / "benchmarks" / "README.md").read_text()
    table = sync.headline(bench, "benchmarks/README.md").replace("](#", "](benchmarks/README.md#")
    assert table.count("\n|") >= 3, "the headline table has rows"
    assert sync.headline(readme, "README.md") == table, "run scripts/sync_readme_figures.py"


def test_sync_detects_a_stale_readme() -> None:
    sync = _sync_module()
    bench = (ROOT / "benchmarks" / "README.md").read_text()
    stale = f"intro\n{sync.START}\n| | |\n|---|---|\n| decode | 1 record/s |\n{sync.END}\nrest\n"
    fixed = sync.expected_readme(stale, bench)
    assert fixed != stale
    assert sync.headline(fixed, "README.md") == sync.headline(bench, "benchmarks/README.md").replace(
        "](#", "](benchmarks/README.md#"
    )
    assert fixed.startswith("intro\n") and fixed.endswith("rest\n")
