"""Never slow in silence (issue 26): the pure-Python codec, when nobody chose it, is reported.

The trap measured: started from a directory holding a kafkawire source checkout without its compiled
extension, Python (``python -c``) and Spark's Python workers (``python -m pyspark.daemon``) import that
checkout, because the working directory comes first on ``sys.path``, and decode with the pure codec.
Each test builds such a checkout (this package tree without the extension) in a temporary directory and
makes it the working directory of a real subprocess: ``python -c "import kafkawire"``, the CLI's
``--version``, and a local Spark session reading Apache Kafka through ``format("kafkawire")``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import kafkawire

ROOT = Path(kafkawire.__file__).resolve().parents[1]

# What makes the run "unexpected": neither opt-in, nor the compiled-suite switch that turns the fallback
# into an error (the test suite's own run sets one of them).
_SWITCHES = ("KAFKAWIRE_PURE", "KAFKAWIRE_NO_EXTENSIONS", "KAFKAWIRE_REQUIRE_COMPILED", "PYSPARK_PYTHON",
             "PYSPARK_DRIVER_PYTHON")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SWITCHES}
    env["PYTHONPATH"] = str(ROOT)  # the driver itself imports this tree (compiled)
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding a copy of the kafkawire package tree without its compiled extension."""
    where = tmp_path_factory.mktemp("checkout")
    shutil.copytree(
        ROOT / "kafkawire",
        where / "kafkawire",
        ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__", "_codec.c"),
    )
    assert not list((where / "kafkawire").glob("_codec*.so"))
    return where


def _import(cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "import kafkawire; print(kafkawire.compiled, kafkawire.codec_status.package)"],
        cwd=cwd, env=_env(**extra), capture_output=True, text=True, timeout=120, check=False,
    )


def test_import_from_a_checkout_without_the_extension_warns_once(checkout: Path) -> None:
    proc = _import(checkout)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", str(checkout / "kafkawire")]
    assert proc.stderr.count("PureCodecWarning") == 1, proc.stderr
    assert str(checkout / "kafkawire") in proc.stderr  # which files were imported
    assert "no compiled extension" in proc.stderr  # why
    assert "KAFKAWIRE_PURE=1" in proc.stderr and "run from another directory" in proc.stderr  # how to fix it


@pytest.mark.parametrize("opt_in", ["KAFKAWIRE_PURE", "KAFKAWIRE_NO_EXTENSIONS"])
def test_import_with_the_opt_in_is_silent(checkout: Path, opt_in: str) -> None:
    proc = _import(checkout, **{opt_in: "1"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[0] == "False"
    assert proc.stderr == ""


def test_import_of_a_pure_build_is_silent(checkout: Path, tmp_path: Path) -> None:
    """A tree built with KAFKAWIRE_NO_EXTENSIONS=1 carries setup.py's marker: pure on purpose."""
    shutil.copytree(checkout / "kafkawire", tmp_path / "kafkawire", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "kafkawire" / "_pure_build").write_text("built with KAFKAWIRE_NO_EXTENSIONS=1\n")
    proc = _import(tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_import_from_elsewhere_is_silent(tmp_path: Path) -> None:
    proc = _import(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[0] == str(kafkawire.compiled)
    assert "PureCodecWarning" not in proc.stderr


def test_version_says_why_and_where(checkout: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kafkawire.cli", "--version"],
        cwd=checkout, env=_env(), capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    first, *rest = proc.stdout.splitlines()
    assert "(pure Python: no compiled extension" in first, proc.stdout
    assert f"package: {checkout / 'kafkawire'}" in proc.stdout
    assert f"interpreter: {sys.executable}" in proc.stdout
    assert "KAFKAWIRE_PURE=1" in proc.stdout


_DRIVER = textwrap.dedent(
    """
    import sys
    from kafkawire.spark import session

    bootstrap, topic = sys.argv[1], sys.argv[2]
    spark = session("local[2]", config={"spark.ui.showConsoleProgress": "false"})
    df = (spark.read.format("kafkawire").option("kafka.bootstrap.servers", bootstrap)
          .option("subscribe", topic).load())
    print("BATCH", df.count(), flush=True)
    stream = (spark.readStream.format("kafkawire").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", topic).option("startingOffsets", "earliest").load())
    q = stream.writeStream.format("memory").queryName("codec_report").trigger(availableNow=True).start()
    q.awaitTermination(300)
    print("STREAM", spark.sql("select count(*) from codec_report").collect()[0][0], flush=True)
    spark.stop()
    """
)

_QUERY_WARNING = "kafkawire Spark source: this query's Python workers decode with the pure-Python codec"


def _spark_run(cwd: Path, script: Path, bootstrap: str, topic: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, str(script), bootstrap, topic],
        cwd=cwd, env=_env(SPARK_LOCAL_IP="127.0.0.1"), capture_output=True, text=True, timeout=580, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    assert "BATCH 300" in proc.stdout and "STREAM 300" in proc.stdout, proc.stdout
    return proc


@pytest.mark.broker
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_spark_from_a_checkout_warns_on_the_driver_once_per_query(
    checkout: Path, tmp_path: Path, kafka_broker: object
) -> None:
    from kafkawire.client import Client

    bootstrap = kafka_broker.bootstrap  # type: ignore[attr-defined]
    topic = f"codec-report-{os.getpid()}"
    with Client(bootstrap) as client:
        client.create_topics({topic: 3})
        for p in range(3):
            client.produce(topic, [f"v{i}".encode() for i in range(100)], partition=p)
    # The driver script lives outside the working directory: the driver imports this tree (PYTHONPATH),
    # the workers (`python -m pyspark.daemon`, working directory first) the checkout.
    script = tmp_path / "driver.py"
    script.write_text(_DRIVER)

    proc = _spark_run(checkout, script, bootstrap, topic)
    err = proc.stderr
    package = str(checkout / "kafkawire")
    # One warning per query (the batch read and the stream), from the planner, naming interpreter and files.
    assert err.count(_QUERY_WARNING) == 2, err[-6000:]
    line = next(x for x in err.splitlines() if _QUERY_WARNING in x)
    assert package in line and sys.executable in line, line
    # The driver's own worker check (kafkawire.spark.session) says the same before Spark starts.
    assert f"Spark's Python workers ({sys.executable}) would import kafkawire from {package}" in err, err[-6000:]
    # The read tasks ran the codec the planner reported, so none of them repeated it.
    assert "this executor's Python worker" not in err

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = _spark_run(elsewhere, script, bootstrap, topic)
    assert "pure-Python codec" not in proc.stderr, proc.stderr[-6000:]
