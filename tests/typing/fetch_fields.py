"""A user's script of the protocol layer, type-checked by ``tests/test_typing.py`` with ``mypy --strict``.

It builds a Fetch request and reads a decoded Fetch response's partitions field by field, as a tool of one's own
over :mod:`kafkawire.protocol` would. The message classes are built from the schemas at import; their types come
from ``kafkawire/protocol/_messages.pyi`` (``scripts/gen_message_stubs.py``), so mypy knows every field. The test
copies this script with one field misspelled and expects mypy to name it. Only type-checked, never run.
"""

from __future__ import annotations

import uuid

from kafkawire import RecordColumns
from kafkawire.protocol import FetchRequest, FetchResponse, read_response_header


def fetch_frame(topic: str, partition: int, offset: int) -> bytes:
    req = FetchRequest(
        replica_id=-1,
        max_wait_ms=500,
        min_bytes=1,
        isolation_level=1,
        topics=[
            FetchRequest.FetchTopic(
                topic=topic,
                partitions=[
                    FetchRequest.FetchPartition(partition=partition, fetch_offset=offset, partition_max_bytes=1 << 20)
                ],
            )
        ],
    )
    return req.encode(version=11, correlation_id=1, client_id="typing-check")


def read_partitions(frame: bytes, version: int) -> list[tuple[str, int, int, int, int]]:
    _, body = read_response_header(frame, FetchResponse, version)
    resp = FetchResponse.decode(body, version, allow_trailing=True)
    session: int = resp.session_id
    assert session >= 0 and resp.error_code == 0
    out: list[tuple[str, int, int, int, int]] = []
    for t in resp.responses:
        name: str = t.topic
        topic_id: uuid.UUID = t.topic_id
        assert name or topic_id.int
        for p in t.partitions:
            records: memoryview | bytes | None = p.records
            aborted: list[FetchResponse.AbortedTransaction] | None = p.aborted_transactions
            first_aborted = [a.first_offset for a in aborted or []]
            leader = p.current_leader  # a tagged struct: None unless the broker sent it
            epoch: int = -1 if leader is None else leader.leader_epoch
            cols: RecordColumns = p.records_columns(fetch_offset=0, isolation="read_committed")
            assert len(cols) >= 0 and (records is None or len(records) >= 0) and epoch >= -1 and first_aborted != [-2]
            log_start_offset: int = p.log_start_offset  # -1 from a version without the field
            diverging = p.diverging_epoch
            assert diverging is None or diverging.end_offset >= -1 or log_start_offset < 0
            out.append((name, p.partition_index, p.error_code, p.high_watermark, p.last_stable_offset))
    return out
