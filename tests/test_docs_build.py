"""The API reference (``docs/api``, Sphinx autodoc over the docstrings) builds with no warning.

``-W --keep-going`` turns every warning (a malformed docstring, a module that fails to import, a directive
naming something that no longer exists) into a failed build and reports all of them at once.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # runs once in CI (the compiled pass), not again on the pure codec
@pytest.mark.timeout(900)
def test_api_reference_builds_without_warnings(tmp_path: Path) -> None:
    out = tmp_path / "html"
    proc = subprocess.run(
        [
            sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
            "-d", str(tmp_path / "doctrees"), str(ROOT / "docs" / "api"), str(out),
        ],
        cwd=tmp_path, capture_output=True, text=True, timeout=880, check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-8000:]
    assert "WARNING" not in output and "ERROR" not in output, output[-8000:]

    # The pages document the public API from its docstrings (not just headings): each name has an entry.
    expected = {
        "codec.html": ["kafkawire.decode_records", "kafkawire.encode_records", "kafkawire.RecordColumns.to_arrow",
                       "kafkawire.BinaryColumn.from_pylist", "kafkawire.errors.KafkaWireError"],
        "client.html": ["kafkawire.client.Client", "kafkawire.client.Client.produce", "kafkawire.client.Consumer.poll",
                        "kafkawire.client.Producer.send"],
        "spark.html": ["kafkawire.spark.session", "kafkawire.spark.check_worker_python",
                       "kafkawire.spark.KafkaWireDataSource"],
        "compat.html": ["kafkawire.compat.kafka_python.install", "kafkawire.compat.aiokafka.install"],
        "testing.html": ["kafkawire.testing.start_broker"],
    }
    for page, names in expected.items():
        html = (out / page).read_text()
        ids = set(re.findall(r'id="([^"]+)"', html))
        missing = [n for n in names if n not in ids]
        assert not missing, f"{page} lacks {missing}"
    # A docstring made it through, not only the signatures.
    assert "Decode the" in (out / "codec.html").read_text()
