"""A SparkSession with kafkawire registered, set up the way this data source needs (tests, demos, notebooks)."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import _impl
from .._impl import CodecStatus
from .._optional import install_hint, require
from ..errors import PureCodecWarning
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


# The probe prints what kafkawire's import decided (kafkawire._impl.status) as one JSON line.
_WORKER_PROBE = (
    f"{_WORKER_IMPORT}; import dataclasses, json, kafkawire; "
    "print(json.dumps(dataclasses.asdict(kafkawire.codec_status)))"
)


def _shadowing_checkout() -> Path | None:
    """A kafkawire directory in the working directory other than the one this process imported: Spark's
    Python workers (``python -m pyspark.daemon``, working directory first on ``sys.path``) import that one."""
    here = Path.cwd() / "kafkawire"
    if not (here / "__init__.py").is_file():
        return None
    import kafkawire

    mine = Path(kafkawire.__file__ or "").parent
    return None if here.resolve() == mine.resolve() else here


def check_worker_python(python: str | None = None) -> CodecStatus:
    """Check that ``python`` (default: :func:`worker_python`) imports kafkawire, and with which codec.

    Spark looks the ``kafkawire`` format up, and runs it, in Python worker processes that the JVM starts with
    that interpreter, not the driver's. When it lacks kafkawire, the only sign Spark gives is
    ``[DATA_SOURCE_NOT_FOUND] Failed to find the data source: kafkawire``: this raises
    :class:`SparkSetupError` naming the interpreter, its import error and what to set. When the workers would
    decode with the pure-Python codec nobody chose (:data:`kafkawire.codec_status`), it warns
    (:class:`kafkawire.PureCodecWarning`) naming their interpreter and the kafkawire directory they import.
    Returns the workers' codec status. It runs the interpreter once (about a second), with this process's
    environment and working directory, so it speaks for workers on this machine (``local``,
    ``local-cluster``), not on a cluster's; when the workers would import exactly what this process did,
    it answers in-process.
    """
    python = python or worker_python()
    if _same_environment(python) and _shadowing_checkout() is None:
        # This very interpreter, and the same kafkawire: the import answers in-process (~1-3 s saved).
        try:
            importlib.import_module(_WORKER_IMPORT.removeprefix("import "))
        except ImportError as e:
            raise SparkSetupError(
                f"Spark's Python workers run this interpreter, which cannot import kafkawire's data source "
                f"({type(e).__name__}: {e}); {install_hint('spark')}"
            ) from e
        status = _impl.status
    else:
        status = _probe(python)
    if status.unexpected:
        warnings.warn(
            f"Spark's Python workers ({status.python}) would import kafkawire from {status.package} and decode "
            f"with the pure-Python codec. {status.warning_text()}",
            PureCodecWarning,
            stacklevel=2,
        )
    return status


def _probe(python: str) -> CodecStatus:
    """Run ``python`` as Spark would start a worker (working directory first on ``sys.path``) and return
    its codec status; raise :class:`SparkSetupError` when it cannot import kafkawire's data source."""
    try:
        proc = subprocess.run([python, "-c", _WORKER_PROBE], capture_output=True, text=True, timeout=120, check=False)
        problem = proc.stderr.strip().splitlines()[-1] if proc.returncode else ""
    except OSError as e:  # not found, not executable
        problem, proc = str(e), None
    if problem or proc is None:
        raise SparkSetupError(
            f"Spark's Python workers would run {python!r}, which cannot import kafkawire ({problem}); Spark "
            f"would fail with DATA_SOURCE_NOT_FOUND. Set PYSPARK_PYTHON to an interpreter that has kafkawire, "
            f"e.g. export PYSPARK_PYTHON={sys.executable} (this one), or pass "
            f"config={{'spark.pyspark.python': {sys.executable!r}}} to kafkawire.spark.session()."
        )
    return CodecStatus(**json.loads(proc.stdout.strip().splitlines()[-1]))


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
    cannot import kafkawire raises :class:`SparkSetupError` saying what to set; one that would decode with
    the pure-Python codec unexpectedly warns, naming the interpreter and the kafkawire directory.
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
    with warnings.catch_warnings():
        # PySpark 4.2 imports pyspark.testing while it starts (py4j argument conversion), which warns that
        # pandas 3 is not fully supported. kafkawire's source and sink never use pandas (Arrow batches),
        # so that warning, printed at every session start, says nothing about this session.
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
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
