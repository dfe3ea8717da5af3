"""The README says what a user needs in their second hour (issue 25, item 10): every path of the layout
table exists (docs/ included), how to get Spark's own Kafka source for the comparison the README makes, a
TLS + SASL embedded broker, and what ``keytool`` really writes into a ``.jks`` file."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end >= 0 else None]


def test_layout_table_names_the_docs_and_only_paths_that_exist() -> None:
    layout = _section("Project layout")
    paths = [p for cell in re.findall(r"^\| ([^|]+) \|", layout, re.M) for p in re.findall(r"`([^`]+)`", cell)]
    for doc in ("ARCHITECTURE.md", "BROKERS.md", "EXACTLY_ONCE.md"):
        assert f"](docs/{doc})" in layout, doc
        assert (ROOT / "docs" / doc).exists()
    for path in paths:
        base = path.split(",")[0].strip().rstrip("/")
        if "/" in base and "*" not in base:
            assert (ROOT / base).exists(), base


def test_embedded_brokers_show_a_secured_kafka() -> None:
    brokers = _section("Embedded brokers")
    block = re.search(r"```python\n(.*?)```", brokers, re.S)
    assert block is not None
    code = block.group(1)
    assert 'start_broker("kafka", tls=True' in code and 'bootstrap_for("SASL_SSL")' in code
    assert "Client.from_properties" in code  # with the Java client's names


def test_readme_says_how_to_get_sparks_kafka_source_and_what_keytool_writes() -> None:
    assert "spark_jars_config()" in README
    assert "keytool" in README and "PKCS12" in README and "-storetype JKS" in README
