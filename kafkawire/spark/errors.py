"""Errors raised by the kafkawire Spark data source.

The messages mirror the wording of Spark's own Kafka connector (``KafkaSourceProvider``, ``KafkaWriter``,
``JsonUtils`` and ``kafka-error-conditions.json``) so that a user moving between ``format("kafka")`` and
``format("kafkawire")`` sees the same explanation for the same mistake. Where Spark raises an
``IllegalArgumentException`` we raise :class:`InvalidOptionError` (a :class:`ValueError`); where Spark
uses an error class we prefix the message with ``[ERROR_CLASS]`` as Spark does.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from ..errors import KafkaWireError

__all__ = [
    "InvalidOptionError",
    "KafkaDataLossError",
    "KafkaSparkError",
    "KafkaUnavailableError",
    "WriteSchemaError",
    "driver_errors",
    "tp_str",
    "user_errors",
]


class KafkaSparkError(KafkaWireError):
    """Root of the errors raised by :mod:`kafkawire.spark`."""


class InvalidOptionError(KafkaSparkError, ValueError):
    """A missing, conflicting or malformed source/sink option (Spark: ``IllegalArgumentException``)."""


class WriteSchemaError(KafkaSparkError, ValueError):
    """The DataFrame written to Kafka lacks a required column or has a column of the wrong type.

    Spark's Kafka sink raises an ``AnalysisException`` for these (error class ``_LEGACY_ERROR_TEMP_3080``).
    """


class KafkaDataLossError(KafkaSparkError):
    """Offsets that the query needs are gone from Kafka (``KAFKA_DATA_LOSS``; see ``failOnDataLoss``)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(
            "[KAFKA_DATA_LOSS] Some data may have been lost because they are not available in Kafka any more; "
            "either the data was aged out by Kafka or the topic may have been deleted before all the data in "
            "the topic was processed. If you don't want your streaming query to fail on such cases, set the "
            f"source option failOnDataLoss to false. Reason: {reason}"
        )

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:  # picklable: raised on executors, re-raised on the driver
        return (type(self), (self.reason,))


def tp_str(topic: str, partition: int) -> str:
    """A topic-partition as Kafka's ``TopicPartition.toString`` spells it (``topic-3``)."""
    return f"{topic}-{partition}"


class KafkaUnavailableError(KafkaSparkError):
    """A driver-side call (topics, offsets) could not reach Kafka within ``kafka.default.api.timeout.ms``;
    the message starts with the cause (``Connection refused``, a TLS failure, ...)."""


@contextlib.contextmanager
def driver_errors(what: str, api_timeout_ms: int) -> Iterator[None]:
    """Driver-side planning (``partitions()``, offsets): a client timeout or connection error becomes a
    :class:`KafkaUnavailableError` whose first words are the cause, and Spark shows it without a traceback.

    Spark prints a data source's error as ``[PYTHON_DATA_SOURCE_ERROR] Failed to ...: `` followed by the
    Python traceback, the cause being its last line. A planner worker exits after reporting an error
    (``pyspark.sql.worker.utils.worker_run``), so setting ``SPARK_HIDE_TRACEBACK`` there (what
    ``spark.sql.execution.pyspark.udf.hideTraceback.enabled`` sets) affects only this report: it puts
    ``KafkaUnavailableError: <cause>`` right after Spark's prefix, on the first line.
    """
    from ..client.errors import KafkaConnectionError, KafkaTimeoutError

    try:
        yield
    except (KafkaTimeoutError, KafkaConnectionError) as e:
        last = getattr(e, "last_error", None) or e.__cause__ or e
        cause = str(last).strip() or type(last).__name__
        _hide_traceback()
        raise KafkaUnavailableError(
            f"{cause} (Kafka did not answer {what} within kafka.default.api.timeout.ms = {api_timeout_ms} ms)"
        ) from e
    except KafkaSparkError:
        _hide_traceback()
        raise


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Around the creation of readers and writers on the driver: kafkawire's own errors (a bad option, a
    misspelt one) reach the user as Spark's prefix and the message, without a Python traceback before it
    (see :func:`driver_errors`)."""
    try:
        yield
    except KafkaSparkError:
        _hide_traceback()
        raise


def _hide_traceback() -> None:
    # Only inside a Python worker Spark started (never in a user's own process).
    if "PYTHON_WORKER_FACTORY_SECRET" in os.environ:
        os.environ["SPARK_HIDE_TRACEBACK"] = "1"
