"""The documentation (``docs/``: the user guide in ``docs/guide`` and the API reference in ``docs/api``, Sphinx
with MyST and autodoc) builds with no warning, and no internal link of it is broken (issue 37).

``-W --keep-going`` turns every warning (a malformed docstring, a module that fails to import, a directive
naming something that no longer exists) into a failed build and reports all of them at once; ``-n`` (nitpicky)
makes every unresolved reference of the guide a warning: a ``{doc}``/``{ref}`` target, a Markdown link to a page
or heading that does not exist, an API name (docs/conf.py). The built HTML is then crawled: every link that does
not leave the site must name a page that was built and an id on it (the network is closed: external links are
not fetched).
"""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if tag == "a" and a.get("name"):
            self.ids.add(str(a["name"]))
        for attr in ("href", "src"):
            if tag in ("a", "img", "link", "script") and a.get(attr):
                self.links.append(str(a[attr]))


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(errors="replace"))
    return page


def broken_internal_links(out: Path) -> list[str]:
    """Every link of the built site that stays inside it but names a file or an id that is not there."""
    pages = {p: _parse(p) for p in out.rglob("*.html")}
    broken = []
    for path, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:")):
                continue  # leaves the site: not checked here (no network)
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if not target.exists():
                broken.append(f"{path.relative_to(out)}: {link} (no such file)")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{path.relative_to(out)}: {link} (no such id)")
    return broken


def _build(tmp_path: Path, source: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path / "html"
    proc = subprocess.run(
        [
            sys.executable, "-m", "sphinx", "-W", "-n", "--keep-going", "-q", "-b", "html",
            "-d", str(tmp_path / "doctrees"), str(source), str(out),
        ],
        cwd=tmp_path, capture_output=True, text=True, timeout=880, check=False,
    )
    return proc, out


@pytest.mark.slow  # runs once in CI (the compiled pass), not again on the pure codec
@pytest.mark.timeout(900)
def test_docs_build_without_warnings_and_without_broken_links(tmp_path: Path) -> None:
    proc, out = _build(tmp_path, ROOT / "docs")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-8000:]
    assert "WARNING" not in output and "ERROR" not in output, output[-8000:]

    # The API pages document the public API from its docstrings (not just headings): each name has an entry.
    expected = {
        "api/codec.html": ["kafkawire.decode_records", "kafkawire.encode_records", "kafkawire.RecordColumns.to_arrow",
                           "kafkawire.BinaryColumn.from_pylist", "kafkawire.errors.KafkaWireError"],
        "api/client.html": ["kafkawire.client.Client", "kafkawire.client.Client.produce",
                            "kafkawire.client.Consumer.poll", "kafkawire.client.Producer.send"],
        "api/spark.html": ["kafkawire.spark.session", "kafkawire.spark.check_worker_python",
                           "kafkawire.spark.KafkaWireDataSource"],
        "api/compat.html": ["kafkawire.compat.kafka_python.install", "kafkawire.compat.aiokafka.install"],
        "api/testing.html": ["kafkawire.testing.start_broker"],
    }
    for page, names in expected.items():
        html = (out / page).read_text()
        ids = set(re.findall(r'id="([^"]+)"', html))
        missing = [n for n in names if n not in ids]
        assert not missing, f"{page} lacks {missing}"
    # A docstring made it through, not only the signatures.
    assert "Decode the" in (out / "api" / "codec.html").read_text()

    # Every guide page is reachable from the guide's index, and the API reference points at the guide.
    guide_index = _parse(out / "guide" / "index.html")
    linked = {urlsplit(link).path for link in guide_index.links}
    pages = sorted(p.stem for p in (ROOT / "docs" / "guide").glob("*.md") if p.stem != "index")
    assert len(pages) >= 15
    assert not [p for p in pages if f"{p}.html" not in linked], linked
    assert any("guide/index.html" in link for link in _parse(out / "api" / "index.html").links)

    # The option tables were rendered from the code, into the pages.
    from kafkawire.spark.options import SINK_OPTIONS, SOURCE_OPTIONS

    spark = (out / "guide" / "spark.html").read_text()
    assert spark.count("kafkawire-options") >= 3  # read, write and kafka.* tables
    assert not [o for o in (*SOURCE_OPTIONS, *SINK_OPTIONS) if f">{o}<" not in spark]

    assert broken_internal_links(out) == []


def test_link_check_finds_a_broken_link(tmp_path: Path) -> None:
    """The crawler above can fail: a page linking to a missing page and to a missing id is reported."""
    (tmp_path / "a.html").write_text('<p id="here"><a href="b.html">b</a> <a href="a.html#here">ok</a> '
                                     '<a href="#gone">gone</a> <a href="https://example.org/x">out</a></p>')
    assert broken_internal_links(tmp_path) == ["a.html: b.html (no such file)", "a.html: #gone (no such id)"]
