"""A SparkSession with kafkawire registered, set up the way this data source needs (tests, demos, notebooks)."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._optional import install_hint, require
from .errors import KafkaSparkError

__all__ = ["SparkSetupError", "activate", "check_worker_python", "prepare_environment", "register", "session"]

# What a Python worker imports to run the data source (pyspark and pyarrow come with it).
_WORKER_IMPORT = "import kafkawire.spark.source"


class SparkSetupError(KafkaSparkError, RuntimeError):
    """Spark is set up so that the ``kafkawire`` format cannot work (the message says what to change)."""


def _same_environment(python: str) -> bool:
    """True when ``python`` lives in this interpreter's bin directory (so it sees the same site-packages).

    Not ``os.path.samefile``: every venv's ``python`` is a symlink to the same base interpreter, and what
    tells environments apart is the directory the link sits in (its ``pyvenv.cfg``).
    """
    found = shutil.which(python)
    return found is not None and Path(found).absolute().parent == Path(sys.executable).absolute().parent


def worker_python(config: Mapping[str, str] | None = None) -> str:
    """The interpreter Spark starts its Python workers with: ``spark.pyspark.python``, else ``PYSPARK_PYTHON``,
    else ``python3`` on PATH (the order of Spark's ``PythonWorkerFactory``)."""
    return (config or {}).get("spark.pyspark.python") or os.environ.get("PYSPARK_PYTHON") or "python3"


def check_worker_python(python: str | None = None) -> None:
    """Raise :class:`SparkSetupError` when ``python`` (default: :func:`worker_python`) cannot import kafkawire.

    Spark looks the ``kafkawire`` format up, and runs it, in Python worker processes that the JVM starts with
    that interpreter, not the driver's. When it lacks kafkawire, the only sign Spark gives is
    ``[DATA_SOURCE_NOT_FOUND] Failed to find the data source: kafkawire``; this names the interpreter, its
    import error and what to set. It runs the interpreter once (about a second), with this process's
    environment, so it speaks for workers on this machine (``local``, ``local-cluster``), not on a cluster's.
    """
    python = python or worker_python()
    if _same_environment(python):
        # This very interpreter: the import answers in-process, without starting another one (~1-3 s).
        try:
            importlib.import_module(_WORKER_IMPORT.removeprefix("import "))
        except ImportError as e:
            raise SparkSetupError(
                f"Spark's Python workers run this interpreter, which cannot import kafkawire's data source "
                f"({type(e).__name__}: {e}); {install_hint('spark')}"
            ) from e
        return
    try:
        proc = subprocess.run(
            [python, "-c", _WORKER_IMPORT], capture_output=True, text=True, timeout=120, check=False
        )
        problem = proc.stderr.strip().splitlines()[-1] if proc.returncode else ""
    except OSError as e:  # not found, not executable
        problem = str(e)
    if problem:
        raise SparkSetupError(
            f"Spark's Python workers would run {python!r}, which cannot import kafkawire ({problem}); Spark "
            f"would fail with DATA_SOURCE_NOT_FOUND. Set PYSPARK_PYTHON to an interpreter that has kafkawire, "
            f"e.g. export PYSPARK_PYTHON={sys.executable} (this one), or pass "
            f"config={{'spark.pyspark.python': {sys.executable!r}}} to kafkawire.spark.session()."
        )


def prepare_environment() -> None:
    """Environment defaults for a local Spark that runs kafkawire in its Python workers.

    * ``PYSPARK_PYTHON`` / ``PYSPARK_DRIVER_PYTHON`` = this interpreter: otherwise workers run whatever
      ``python3`` is first on PATH, which usually lacks kafkawire (and pyarrow).
    * ``SPARK_LOCAL_IP=127.0.0.1``: otherwise Spark binds (and advertises) a non-loopback address.
    * When kafkawire is imported from a source checkout rather than an installed wheel, the checkout is
      put on ``PYTHONPATH`` so that workers (separate processes started by the JVM) can import it too.

    Existing values are kept: this only fills in what is unset.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    root = str(Path(__file__).resolve().parents[2])  # the directory that holds the kafkawire package
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in parts and "site-packages" not in root:
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *parts])


def register(spark: Any) -> None:
    """Register the ``kafkawire`` format with ``spark`` (needed only when the package is not installed)."""
    from .source import KafkaWireDataSource

    spark.dataSource.register(KafkaWireDataSource)


def session(
    master: str = "local[2]",
    *,
    app_name: str = "kafkawire",
    config: Mapping[str, str] | None = None,
) -> Any:
    """Get or create a ``SparkSession`` on ``master`` with the ``kafkawire`` format registered.

    Defaults suit small local runs (no UI, 4 shuffle partitions, UTC session time zone so the
    ``timestamp`` column prints as Kafka stored it); ``config`` overrides any of them.

    On a ``local`` master the workers' interpreter is checked first (:func:`check_worker_python`): one that
    cannot import kafkawire raises :class:`SparkSetupError` saying what to set.
    """
    prepare_environment()
    SparkSession = require("pyspark.sql", "kafkawire.spark.session()").SparkSession

    builder = SparkSession.builder.master(master).appName(app_name)
    settings = {
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.host": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1"),
        "spark.pyspark.python": os.environ["PYSPARK_PYTHON"],
    }
    settings.update(config or {})
    if master.startswith("local"):
        check_worker_python(worker_python(settings))
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if not _format_exists(spark):
        register(spark)
    activate(spark)
    return spark


def _format_exists(spark: Any) -> bool:
    """True when ``kafkawire`` is already a data source of ``spark``: registered statically (the installed
    top-level ``pyspark_kafkawire`` module, found by the workers' interpreter) or by an earlier call.

    Registering it again works but makes Spark log "The data source kafkawire replaced a statically registered
    data source" (``DataSourceManager.registerDataSource``) on every session; so register only when missing.
    """
    try:
        return bool(spark._jsparkSession.sessionState().dataSourceManager().dataSourceExists("kafkawire"))
    except Exception:  # no JVM session (Spark Connect) or an older internal API: register as before
        return False


def activate(spark: Any) -> None:
    """Make ``spark`` the JVM's active session on the calling thread.

    Spark finds a Python data source for ``writeStream.format(...)`` through the *active* session of the
    JVM thread serving the call (``DataSource.lookupDataSource``), unlike ``read``/``readStream``/``write``
    which ask the session they belong to. That thread-local can be unset (seen under pytest, and on any
    new Python thread in pinned-thread mode), and then ``writeStream.format("kafkawire")`` fails with
    ``DATA_SOURCE_NOT_FOUND``. Call this before starting a streaming write from such a thread.
    """
    jvm_session = getattr(spark._jvm, "org.apache.spark.sql.classic.SparkSession")
    jvm_session.setActiveSession(spark._jsparkSession)
