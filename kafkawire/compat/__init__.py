"""Drop-in record decoding for existing Kafka consumers: same records, decoded by kafkawire's core.

Two adapters, each imported on its own so that neither client library is needed by the other:

:mod:`kafkawire.compat.kafka_python`
    ``install()`` / ``uninstall()`` for kafka-python's ``KafkaConsumer`` (2.0.2 through 3.x).
:mod:`kafkawire.compat.aiokafka`
    ``install()`` / ``uninstall()`` for aiokafka's ``AIOKafkaConsumer``.

Both replace the ``MemoryRecords`` name inside the client's fetcher module (the fetcher binds it at
import time), decode each fetched partition's data batches in one call of
:func:`kafkawire.decode_records`, and hand the client record objects it cannot tell from its own.
Control batches, legacy message sets and anything the compiled decoder refuses stay with the client's
own classes, so transaction markers, CRC failures and corrupt input behave exactly as before.
"""

from __future__ import annotations

__all__: list[str] = []
