"""The docs say what a user needs in their second hour (issue 25, item 10; moved into the user guide by issue
37): every path of the layout table exists (docs/ included), how to get Spark's own Kafka source for the
comparison the guide makes, a TLS + SASL embedded broker, and what ``keytool`` really writes into a ``.jks``
file."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guide"


def _section(page: str, title: str) -> str:
    text = (GUIDE / page).read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


def test_layout_table_names_the_docs_and_only_paths_that_exist() -> None:
    layout = _section("development.md", "Layout")
    paths = [p for cell in re.findall(r"^\| ([^|]+) \|", layout, re.M) for p in re.findall(r"`([^`]+)`", cell)]
    for doc in ("ARCHITECTURE.md", "BROKERS.md", "EXACTLY_ONCE.md"):
        assert f"`{doc}`" in layout, doc
        assert (ROOT / "docs" / doc).exists()
    for path in paths:
        base = path.split(",")[0].strip().rstrip("/")
        if "/" in base and "*" not in base:
            assert (ROOT / base).exists(), base
    # The README links every one of them.
    readme = (ROOT / "README.md").read_text()
    for doc in ("ARCHITECTURE.md", "BROKERS.md", "EXACTLY_ONCE.md", "CODEC-SPEC.md", "SECURITY.md"):
        assert f"](docs/{doc})" in readme, doc


def test_the_guide_shows_a_secured_kafka() -> None:
    section = _section("security.md", "TLS and SCRAM, tried on an embedded Kafka")
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    code = block.group(1)
    assert 'start_broker("kafka", tls=True' in code and 'bootstrap_for("SASL_SSL")' in code
    assert "Client.from_properties" in code  # with the Java client's names


def test_the_guide_says_how_to_get_sparks_kafka_source_and_what_keytool_writes() -> None:
    assert "spark_jars_config()" in (GUIDE / "spark.md").read_text()
    security = (GUIDE / "security.md").read_text()
    assert "keytool" in security and "PKCS12" in security and "-storetype JKS" in security


def test_the_readme_is_short_and_starts_with_the_two_set_up_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    first_block = re.search(r"```bash\n(.*?)```", readme, re.S)
    assert first_block is not None and readme.index("```bash") < readme.index("\n## ")
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands == ["./dev demo", "./dev test"]
    # and it links every page of the guide
    for page in GUIDE.glob("*.md"):
        if page.stem != "index":
            assert f"](docs/guide/{page.name})" in readme, page.name
