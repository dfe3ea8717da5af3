"""``kafkawire --version``: the console script prints the package version and which codec runs."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import kafkawire

CONSOLE_SCRIPT = Path(sys.executable).parent / "kafkawire"


def test_version_flag_prints_version_and_core() -> None:
    proc = subprocess.run([str(CONSOLE_SCRIPT), "--version"], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    line = proc.stdout.strip()
    # The installed distribution's metadata and the package agree (pyproject reads the version from the package).
    assert line.startswith(f"kafkawire {kafkawire.__version__} ("), line
    assert kafkawire.__version__ == version("kafkawire")
    assert ("compiled core" if kafkawire.compiled else "pure Python") in line
