"""Spark's own Kafka source jar: the version of the pyspark in use, and nothing pyspark already ships."""

from __future__ import annotations

from pathlib import Path

import pyspark

from kafkawire.spark.kafka_jar import SPARK_KAFKA_VERSION, _artifact, spark_jars_config, spark_kafka_jars


def test_jar_version_matches_the_installed_pyspark():
    # pyproject pins pyspark>=4.2,<4.3 because Maven Central has no spark-sql-kafka-0-10 4.3.0
    assert pyspark.__version__.split(".")[:2] == SPARK_KAFKA_VERSION.split(".")[:2]


def test_jars_are_the_kafka_source_and_what_pyspark_lacks():
    jars = spark_kafka_jars()
    names = [p.name for p in jars]
    assert f"spark-sql-kafka-0-10_2.13-{SPARK_KAFKA_VERSION}.jar" in names
    assert any(n.startswith("kafka-clients-") for n in names)
    shipped = {_artifact(p.name) for p in (Path(pyspark.__file__).parent / "jars").glob("*.jar")}
    assert not shipped & {_artifact(n) for n in names}  # no second Scala, slf4j, lz4, snappy, Hadoop...
    assert spark_jars_config() == {"spark.jars": ",".join(str(p) for p in jars)}


def test_artifact_names_without_versions():
    assert _artifact("kafka-clients-3.9.2.jar") == "kafka-clients"
    assert _artifact("spark-sql-kafka-0-10_2.13-4.2.0.jar") == "spark-sql-kafka-0-10_2.13"
    assert _artifact("zstd-jni-1.5.7-7.jar") == "zstd-jni"
    assert _artifact("scala-library-2.13.15.jar") == "scala-library"
