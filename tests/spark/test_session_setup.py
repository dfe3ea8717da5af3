"""``kafkawire.spark.session()`` set-up traps: the workers' interpreter and the "replaced" log line.

Spark runs the ``kafkawire`` format in Python workers started with ``spark.pyspark.python`` /
``PYSPARK_PYTHON``; an interpreter there without kafkawire makes Spark say only ``DATA_SOURCE_NOT_FOUND``.
These tests show that Spark really fails that way with such an interpreter, that :func:`check_worker_python`
and :func:`session` detect it first and say what to set, and that ``session()`` does not re-register a format
Spark already registered statically (which logs "replaced a statically registered data source").
The Spark runs happen in a subprocess, whose stderr is where the JVM logs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kafkawire.spark import SparkSetupError, check_worker_python, session


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An interpreter with nothing installed (a venv without pip): no numpy, pyspark or kafkawire."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    return str(venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python"))


def test_check_worker_python_accepts_this_interpreter() -> None:
    check_worker_python(sys.executable)  # raises if it could not import kafkawire.spark.source


def test_check_worker_python_on_this_interpreter_missing_a_dependency(monkeypatch: pytest.MonkeyPatch) -> None:
    # This interpreter is checked in-process; without pyarrow the data source cannot load in its workers.
    for name in [m for m in sys.modules if m.startswith("kafkawire.spark.") and m != "kafkawire.spark.session"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(SparkSetupError, match=r'pyarrow.*pip install "kafkawire\[spark\]"'):
        check_worker_python(sys.executable)


def test_check_worker_python_names_the_interpreter_and_the_fix(bare_python: str) -> None:
    with pytest.raises(SparkSetupError) as info:
        check_worker_python(bare_python)
    text = str(info.value)
    assert repr(bare_python) in text
    assert "ModuleNotFoundError" in text
    assert f"PYSPARK_PYTHON={sys.executable}" in text
    assert "DATA_SOURCE_NOT_FOUND" in text
    with pytest.raises(SparkSetupError, match="No such file"):
        check_worker_python(str(Path(bare_python).parent / "no-such-python"))


def test_session_refuses_a_worker_python_without_kafkawire(bare_python: str) -> None:
    # Raised before any JVM starts (a session would be created by getOrCreate otherwise).
    with pytest.raises(SparkSetupError, match="spark.pyspark.python"):
        session("local[1]", config={"spark.pyspark.python": bare_python})


_SCRIPT = textwrap.dedent(
    """
    import os, sys
    from pyspark.sql import SparkSession

    # 1. What a user meets without kafkawire.spark.session(): workers on an interpreter lacking kafkawire.
    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.pyspark.python", sys.argv[1]).getOrCreate())
    try:
        spark.read.format("kafkawire").option("kafka.bootstrap.servers", "127.0.0.1:1").option("subscribe", "t").load()
        print("BARE: loaded")
    except Exception as e:
        print("BARE:", "DATA_SOURCE_NOT_FOUND" if "DATA_SOURCE_NOT_FOUND" in str(e) else str(e)[:300])
    spark.stop()

    # 2. kafkawire.spark.session(), twice: the statically registered format is used, not replaced.
    from kafkawire.spark import session
    spark = session("local[1]")
    spark = session("local[1]")
    print("EXISTS:", spark._jsparkSession.sessionState().dataSourceManager().dataSourceExists("kafkawire"))
    try:
        spark.read.format("kafkawire").load().count()
        print("NOOPT: loaded")
    except Exception as e:
        text = str(e)
        print("NOOPT:", "DATA_SOURCE_NOT_FOUND" if "DATA_SOURCE_NOT_FOUND" in text else "InvalidOptionError"
              if "InvalidOptionError" in text else text[:300])
    spark.stop()
    """
)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_spark_fails_without_kafkawire_and_session_does_not_replace_the_static_source(
    bare_python: str, tmp_path: Path
) -> None:
    script = tmp_path / "setup_traps.py"
    script.write_text(_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    proc = subprocess.run(
        [sys.executable, str(script), bare_python],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=580, check=False,
    )
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr[-4000:]
    assert "BARE: DATA_SOURCE_NOT_FOUND" in out, out  # what check_worker_python predicts
    assert "EXISTS: True" in out, out
    assert "NOOPT: InvalidOptionError" in out, out  # the format resolved to kafkawire's reader
    assert "replaced a statically registered data source" not in proc.stderr, proc.stderr[-4000:]
    assert "replaced a previously registered data source" not in proc.stderr, proc.stderr[-4000:]
