"""Fixtures for the Spark data source tests: the brokers, and one local[2] SparkSession per run.

Every test that takes ``bootstrap`` runs against Apache Kafka (the session's ``kafka_broker``, the reference)
and against noida-db (the stand-in these suites first ran on). The session also carries Spark's own Kafka
source (``format("kafka")``, :mod:`kafkawire.spark.kafka_jar`) for the parity tests.

Test data is produced and checked with librdkafka and kafka-python, implementations independent of
kafkawire, so a bug shared by kafkawire's reader and writer cannot hide itself.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from spark_helpers import create_topic, unique_topic

from kafkawire.testing import start_broker


@pytest.fixture(scope="session", params=["kafka", "noida"])
def broker(request: pytest.FixtureRequest) -> Iterator[object]:
    if request.param == "kafka":
        yield request.getfixturevalue("kafka_broker")  # shared with the other suites; stopped by its owner
        return
    b = start_broker(request.param)
    try:
        yield b
    finally:
        b.stop()


@pytest.fixture(scope="session")
def bootstrap(broker: object) -> str:
    return broker.bootstrap  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    from kafkawire.spark import session
    from kafkawire.spark.kafka_jar import spark_jars_config

    s = session(
        "local[2]",
        app_name="kafkawire-tests",
        config={
            "spark.sql.shuffle.partitions": "2",
            "spark.ui.showConsoleProgress": "false",
            **spark_jars_config(avro=True),  # Spark's own format("kafka") and from_avro, for the parity tests
        },
    )
    s.sparkContext.setLogLevel("ERROR")
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture()
def topic_factory(bootstrap: str):
    def make(partitions: int = 1, prefix: str = "t") -> str:
        name = unique_topic(prefix)
        create_topic(bootstrap, name, partitions)
        return name

    return make


@pytest.fixture(autouse=True)
def _active_session(request: pytest.FixtureRequest) -> None:
    """Re-activate the session for each Spark test: ``writeStream.format("kafkawire")`` looks the source up
    through the JVM thread's active session, which does not survive between pytest tests (see
    :func:`kafkawire.spark.activate`)."""
    if "spark" in request.fixturenames:
        from kafkawire.spark import activate

        activate(request.getfixturevalue("spark"))
