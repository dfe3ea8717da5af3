"""The public API under ``mypy --strict``, as a user's code sees it.

``tests/typing/user_script.py`` uses ``encode_records``, ``decode_records``, the ``RecordColumns`` attributes,
``Client``, ``Consumer`` and ``Producer``; it must type-check with no error. kafkawire's own modules are followed
silently (``--follow-imports=silent``), as mypy treats an installed package: their types are used, their
internal errors are not the user's. A broken script must fail, so a kafkawire that mypy sees as ``Any`` (not
found, or untyped) cannot pass.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
USER_SCRIPT = ROOT / "tests" / "typing" / "user_script.py"


def _mypy(script: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
            "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(cache), str(script),
        ],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )


@pytest.mark.slow  # runs once in CI (the compiled pass), not again on the pure codec
@pytest.mark.timeout(900)
def test_user_script_passes_mypy_strict(tmp_path: Path) -> None:
    proc = _mypy(USER_SCRIPT, tmp_path / "cache")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success: no issues found" in proc.stdout


@pytest.mark.slow  # runs once in CI (the compiled pass), not again on the pure codec
@pytest.mark.timeout(900)
def test_mypy_sees_kafkawire_types(tmp_path: Path) -> None:
    # Misuses a type checker can only catch if it knows kafkawire's real types.
    script = tmp_path / "misuse.py"
    script.write_text(
        "from kafkawire import Client, decode_records\n"
        "cols = decode_records(b'')\n"
        "n: str = cols.next_offset\n"
        "cols.offsets\n"
        "Client('localhost:9092').fetch('t', '0', 0)\n"
    )
    proc = _mypy(script, tmp_path / "cache")
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert 'Incompatible types in assignment (expression has type "int", variable has type "str")' in out, out
    assert '"RecordColumns" has no attribute "offsets"' in out, out
    assert 'Argument 2 to "fetch" of "Client" has incompatible type "str"; expected "int"' in out, out
