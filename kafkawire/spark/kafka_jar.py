"""Spark's own Kafka source (``format("kafka")``, the ``spark-sql-kafka-0-10`` jar) beside kafkawire's.

kafkawire's tests and benchmarks compare ``format("kafkawire")`` with Spark's built-in source on the same
topic. That source is not part of the pyspark wheel: it is a Maven artifact, and it must be the version of
the Spark it runs in. Maven Central serves ``org.apache.spark:spark-sql-kafka-0-10_2.13`` at 4.0.0, 4.1.1
and 4.2.0 but not at 4.3.0 (checked 2026-11-24), so the ``spark`` extra pins ``pyspark>=4.2,<4.3`` and
:data:`SPARK_KAFKA_VERSION` names the jar that matches it. Keep the two in step.

:func:`spark_kafka_jars` resolves the jar and its dependencies once into kafkawire's cache
(:mod:`kafkawire.testing.maven`, never inside a checkout) and leaves out every jar pyspark already ships
(Scala, Hadoop, slf4j, lz4, snappy: a second copy at another version on the classpath is a conflict, and
Spark's ``--packages`` would not add them either). :func:`spark_jars_config` is the ``spark.jars`` setting
a session needs.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = [
    "SPARK_AVRO_ARTIFACT",
    "SPARK_KAFKA_ARTIFACT",
    "SPARK_KAFKA_VERSION",
    "spark_avro_jars",
    "spark_jars_config",
    "spark_kafka_jars",
]

#: The Spark release whose ``spark-sql-kafka-0-10`` jar is used; must match the pyspark in use (pyproject pins it).
SPARK_KAFKA_VERSION = "4.2.0"
SPARK_KAFKA_ARTIFACT = "org.apache.spark:spark-sql-kafka-0-10_2.13"
#: Spark's Avro functions (``from_avro``), for comparisons with ``valueFormat=avro``; same version as the above.
SPARK_AVRO_ARTIFACT = "org.apache.spark:spark-avro_2.13"

_VERSIONED_JAR = re.compile(r"^(?P<artifact>.+?)-(?P<version>\d+(?:\.\d+)+(?:-[A-Za-z0-9.]+)?)\.jar$")


def _artifact(jar_name: str) -> str:
    """``kafka-clients-3.9.2.jar`` → ``kafka-clients`` (the name without its version)."""
    m = _VERSIONED_JAR.match(jar_name)
    return m.group("artifact") if m else jar_name


def _pyspark_artifacts() -> set[str]:
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    return {_artifact(p.name) for p in jars.glob("*.jar")}


def _check_pyspark_version() -> None:
    import pyspark

    have = ".".join(pyspark.__version__.split(".")[:2])
    want = ".".join(SPARK_KAFKA_VERSION.split(".")[:2])
    if have != want:
        raise RuntimeError(
            f"pyspark {pyspark.__version__} is installed but Spark's Kafka source is pinned at {SPARK_KAFKA_VERSION} "
            f"(Maven Central has no spark-sql-kafka-0-10 for every pyspark release): install pyspark=={want}.*"
        )


def spark_kafka_jars() -> list[Path]:
    """The jars Spark's ``format("kafka")`` needs that pyspark does not ship (resolved once, then cached)."""
    from ..testing.maven import resolve

    _check_pyspark_version()
    directory = resolve(f"spark-sql-kafka-{SPARK_KAFKA_VERSION}", [f"{SPARK_KAFKA_ARTIFACT}:{SPARK_KAFKA_VERSION}"])
    shipped = _pyspark_artifacts()
    return [p for p in sorted(directory.glob("*.jar")) if _artifact(p.name) not in shipped]


def spark_avro_jars() -> list[Path]:
    """The jars of Spark's ``from_avro`` / ``to_avro`` (spark-avro) that pyspark does not ship (resolved once)."""
    from ..testing.maven import resolve

    _check_pyspark_version()
    directory = resolve(f"spark-avro-{SPARK_KAFKA_VERSION}", [f"{SPARK_AVRO_ARTIFACT}:{SPARK_KAFKA_VERSION}"])
    shipped = _pyspark_artifacts()
    return [p for p in sorted(directory.glob("*.jar")) if _artifact(p.name) not in shipped]


def spark_jars_config(*, avro: bool = False) -> dict[str, str]:
    """``{"spark.jars": ...}``: give it to :func:`kafkawire.spark.session` to make ``format("kafka")`` available
    (and, with ``avro``, Spark's ``from_avro``)."""
    jars = spark_kafka_jars() + (spark_avro_jars() if avro else [])
    return {"spark.jars": ",".join(str(p) for p in jars)}
