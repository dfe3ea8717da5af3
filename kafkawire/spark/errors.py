"""Errors raised by the kafkawire Spark data source.

The messages mirror the wording of Spark's own Kafka connector (``KafkaSourceProvider``, ``KafkaWriter``,
``JsonUtils`` and ``kafka-error-conditions.json``) so that a user moving between ``format("kafka")`` and
``format("kafkawire")`` sees the same explanation for the same mistake. Where Spark raises an
``IllegalArgumentException`` we raise :class:`InvalidOptionError` (a :class:`ValueError`); where Spark
uses an error class we prefix the message with ``[ERROR_CLASS]`` as Spark does.
"""

from __future__ import annotations

from ..errors import KafkaWireError

__all__ = ["InvalidOptionError", "KafkaDataLossError", "KafkaSparkError", "WriteSchemaError", "tp_str"]


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

    def __reduce__(self):  # picklable: raised on executors, re-raised on the driver
        return (type(self), (self.reason,))


def tp_str(topic: str, partition: int) -> str:
    """A topic-partition as Kafka's ``TopicPartition.toString`` spells it (``topic-3``)."""
    return f"{topic}-{partition}"
