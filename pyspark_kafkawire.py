"""Automatic registration of the ``kafkawire`` Spark data source.

PySpark (4.x) imports every top-level module whose name starts with ``pyspark_`` and registers the
``DefaultSource`` it defines under ``DefaultSource.name()``, so with kafkawire installed
``spark.read.format("kafkawire")`` works without calling ``spark.dataSource.register``.

An import error here would break the lookup of *every* Python data source in the session, so a broken
kafkawire install only warns and defines nothing.
"""

import warnings

__all__ = ["DefaultSource"]

try:
    from kafkawire.spark.source import KafkaWireDataSource as DefaultSource
except ImportError as exc:  # pragma: no cover - depends on the installation
    warnings.warn(f"kafkawire Spark data source not registered: {exc}", RuntimeWarning, stacklevel=1)
    __all__ = []
