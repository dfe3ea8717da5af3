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
FETCH_SCRIPT = ROOT / "tests" / "typing" / "fetch_fields.py"


def _mypy(*scripts: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
            "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(cache), *map(str, scripts),
        ],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )


@pytest.mark.slow  # runs once in CI (the compiled pass), not again on the pure codec
@pytest.mark.timeout(900)
def test_user_script_passes_mypy_strict(tmp_path: Path) -> None:
    proc = _mypy(USER_SCRIPT, cache=tmp_path / "cache")
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
    proc = _mypy(script, cache=tmp_path / "cache")
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert 'Incompatible types in assignment (expression has type "int", variable has type "str")' in out, out
    assert '"RecordColumns" has no attribute "offsets"' in out, out
    assert 'Argument 2 to "fetch" of "Client" has incompatible type "str"; expected "int"' in out, out


@pytest.mark.slow  # runs once in CI (the compiled pass), not again on the pure codec
@pytest.mark.timeout(900)
def test_mypy_names_a_misspelled_field_of_a_decoded_fetch_response(tmp_path: Path) -> None:
    """Issue 35: the message classes built from the schemas are typed (``kafkawire/protocol/_messages.pyi``), so a
    misspelled field of a decoded ``FetchResponse`` partition is a type error, not a silent default. One mypy run
    checks ``tests/typing/fetch_fields.py`` as written (no error) and copies of it with one mistake each."""
    source = FETCH_SCRIPT.read_text()
    mistakes = [
        # a misspelled field read on a decoded partition
        ("p.last_stable_offset))", "p.last_stable_ofset))",
         '"PartitionData" has no attribute "last_stable_ofset"'),
        # a misspelled keyword of a request's nested struct
        ("fetch_offset=offset,", "fetch_ofset=offset,",
         'Unexpected keyword argument "fetch_ofset" for "FetchPartition"'),
        # a field read as the wrong type
        ("log_start_offset: int =", "log_start_offset: bytes =",
         'Incompatible types in assignment (expression has type "int", variable has type "bytes")'),
    ]
    copies, expected = [], []
    for i, (right, wrong, error) in enumerate(mistakes):
        assert source.count(right) == 1, right
        line = source[: source.index(right)].count("\n") + 1
        copy = tmp_path / f"mistake_{i}.py"
        copy.write_text(source.replace(right, wrong))
        copies.append(copy)
        expected.append(f"mistake_{i}.py:{line}: error: {error}")
    proc = _mypy(FETCH_SCRIPT, *copies, cache=tmp_path / "cache")
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "fetch_fields.py" not in out, out  # the correct spelling passes
    for error in expected:
        assert error in out, (error, out)
    assert " errors in 3 files (checked 4 source files)" in out, out  # one file per mistake, none else


@pytest.mark.slow  # runs once in CI (the compiled pass), not again on the pure codec
@pytest.mark.timeout(900)
def test_the_package_itself_passes_mypy_strict(tmp_path: Path) -> None:
    """Issue 25, item 9: kafkawire's own modules type-check under ``mypy --strict`` (the annotations users'
    tools read are the ones the code keeps), so a change that adds an error fails here, naming it."""
    proc = subprocess.run(
        [
            sys.executable, "-m", "mypy", "--strict", "--config-file", str(ROOT / "pyproject.toml"),
            "--cache-dir", str(tmp_path / "cache"), "-p", "kafkawire",
        ],
        cwd=ROOT, capture_output=True, text=True, timeout=900, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success: no issues found" in proc.stdout


@pytest.mark.slow  # builds a wheel and a venv
@pytest.mark.timeout(1800)
def test_user_script_beside_a_non_editable_install(tmp_path: Path) -> None:
    """Issue 25, item 9: a user's script, in a directory of its own, type-checked against kafkawire installed
    from the wheel (not the checkout): mypy finds the package (``py.typed`` is in the wheel) and accepts
    every call of the script."""
    from test_readme_blocks import _build_wheel, _clean_env, _make_venv

    wheel = _build_wheel(tmp_path / "dist")
    python = _make_venv(tmp_path / "venv", wheel, frozenset())
    work = tmp_path / "user"
    work.mkdir()
    script = work / "user_script.py"
    script.write_text(USER_SCRIPT.read_text())
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--python-executable", str(python), "--no-incremental",
         "--follow-imports=silent", str(script)],
        # No PYTHONPATH (mypy asks the venv's interpreter for its sys.path): only the installed wheel counts.
        cwd=work, capture_output=True, text=True, timeout=900, check=False, env=_clean_env(),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success: no issues found" in proc.stdout
