"""A SparkSession with kafkawire registered, set up the way this data source needs (tests, demos, notebooks)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["activate", "prepare_environment", "register", "session"]


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
    """
    prepare_environment()
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName(app_name)
    settings = {
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.host": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1"),
        "spark.pyspark.python": os.environ["PYSPARK_PYTHON"],
    }
    settings.update(config or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    register(spark)
    activate(spark)
    return spark


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
