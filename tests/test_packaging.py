"""What the sdist and the binary wheel carry: the licence text in both, the compiled core's sources only in the
sdist, and no setuptools deprecation warning on the way (``python -m build``: sdist, then a wheel from it)."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE_SOURCES = ("kafkawire/_codec.pyx", "kafkawire/_codec.pxd", "kafkawire/_csrc/kw_wire.h",
                "kafkawire/_recview.pyx", "kafkawire/serde/_avro.pyx", "kafkawire/serde/_protobuf.pyx",
                "kafkawire/client/producer/_accumulator.pyx")


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_sdist_and_wheel_contents(tmp_path: Path) -> None:
    # --no-isolation: the venv running the tests has the build requirements (./dev installs them); the wheel is
    # built from the sdist, so an sdist that cannot build fails here.
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp_path), str(ROOT)],
        capture_output=True, text=True, timeout=880, check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-6000:]
    assert "SetuptoolsDeprecationWarning" not in output, output[-6000:]

    (sdist,) = tmp_path.glob("kafkawire-*.tar.gz")
    (wheel,) = tmp_path.glob("kafkawire-*.whl")
    with tarfile.open(sdist) as tar:
        top = tar.getnames()[0].split("/")[0]
        sdist_names = {name.removeprefix(top + "/") for name in tar.getnames()}
    with zipfile.ZipFile(wheel) as zf:
        wheel_names = set(zf.namelist())
        metadata = next(zf.read(n).decode() for n in wheel_names if n.endswith(".dist-info/METADATA"))

    license_text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    assert "LICENSE" in sdist_names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in wheel_names), sorted(wheel_names)
    assert "License-Expression: Apache-2.0" in metadata

    for src in CORE_SOURCES:
        assert src in sdist_names, f"{src} missing from the sdist: it could not build the compiled core"
    leaked = sorted(n for n in wheel_names if n.endswith((".c", ".pyx", ".pxd", ".h")))
    assert not leaked, f"build inputs in the binary wheel: {leaked}"
    # The wheel is a binary one (the extension built) and keeps the typing files.
    assert any(n.startswith("kafkawire/_codec.") and n.endswith((".so", ".pyd")) for n in wheel_names)
    assert any(n.startswith("kafkawire/serde/_avro.") and n.endswith((".so", ".pyd")) for n in wheel_names)
    assert any(n.startswith("kafkawire/serde/_protobuf.") and n.endswith((".so", ".pyd")) for n in wheel_names)
    assert any(n.startswith("kafkawire/_recview.") and n.endswith((".so", ".pyd")) for n in wheel_names)
    assert any(n.startswith("kafkawire/client/producer/_accumulator.") and n.endswith((".so", ".pyd"))
               for n in wheel_names)
    assert {"kafkawire/py.typed", "kafkawire/_codec.pyi", "kafkawire/_recview.pyi",
            "kafkawire/protocol/_messages.pyi"} <= wheel_names
    # The protocol layer builds every message class from its schema data file: all of them must ship.
    schemas = {f"kafkawire/protocol/messages/{p.name}" for p in (ROOT / "kafkawire/protocol/messages").glob("*.schema")}
    assert len(schemas) > 50
    assert schemas <= wheel_names, sorted(schemas - wheel_names)
    assert schemas <= sdist_names, sorted(schemas - sdist_names)
    # ... and so does the error table the exception classes are made from.
    assert "kafkawire/protocol/errors.tsv" in wheel_names and "kafkawire/protocol/errors.tsv" in sdist_names
