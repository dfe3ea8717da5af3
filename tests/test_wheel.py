"""The wheel works for Spark executors: ``scripts/wheel_smoke.sh`` end to end.

sdist → wheel built from that sdist → ``auditwheel repair`` (manylinux) → a fresh venv holding only the
wheel and its ``spark`` and ``brokers`` extras → from a temp directory, Spark ``local-cluster`` (separate executor
JVMs) reads and writes through the auto-registered ``kafkawire`` format, and its executors import the
compiled core from the fresh venv. Several minutes (a Cython build and three JVMs), hence ``slow``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "wheel_smoke.sh"


@pytest.mark.slow
@pytest.mark.broker
@pytest.mark.timeout(1260)
def test_wheel_smoke_script_passes() -> None:
    # The build venv is the one running pytest; the script makes its own temp dirs and fresh venv.
    env = dict(os.environ, KAFKAWIRE_VENV=str(Path(sys.prefix)))
    env.pop("KAFKAWIRE_SMOKE_KEEP", None)
    proc = subprocess.run(
        ["bash", str(SCRIPT)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200, check=False
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-6000:]
    # Each stage reported success, so a script that silently skipped a stage cannot pass.
    for line in (
        "manylinux",
        "[smoke] driver: kafkawire",
        "counts and CRC-32 sums match",
        "kafkawire compiled, from",
        "read back identical with kafkawire.Client",
        "[smoke] OK",
        "OK: sdist -> wheel -> manylinux -> fresh venv -> Spark",
    ):
        assert line in output, f"{line!r} not in the script output:\n{output[-6000:]}"
