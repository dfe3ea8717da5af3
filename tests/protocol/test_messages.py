"""Message-level behaviour: defaults, fields a version cannot carry, nullability, records, error classes."""

from __future__ import annotations

import pickle
import uuid

import numpy as np
import pytest

import kafkawire
from kafkawire.errors import KafkaWireError, ProtocolError
from kafkawire.protocol import (
    FetchRequest,
    FetchResponse,
    MetadataRequest,
    OffsetCommitRequest,
    ProduceRequest,
    ProduceResponse,
)
from kafkawire.protocol import errors as perr


def test_defaults_from_the_spec():
    req = FetchRequest()
    assert req.replica_id == -1 and req.max_bytes == 0x7FFFFFFF and req.session_epoch == -1
    assert req.topics == [] and req.rack_id == "" and req.cluster_id is None
    p = FetchRequest.FetchPartition()
    assert p.current_leader_epoch == -1 and p.log_start_offset == -1
    assert FetchRequest.FetchTopic().topic_id == uuid.UUID(int=0)
    # Arrays default to a fresh list per instance.
    assert FetchRequest().topics is not FetchRequest().topics


def test_non_default_value_in_a_version_that_cannot_carry_it():
    # retention_time_ms exists in v2-v4 only, and is ignorable: silently dropped elsewhere.
    req = OffsetCommitRequest(group_id="g", retention_time_ms=1000)
    assert OffsetCommitRequest.decode(req.encode_body(5), 5).retention_time_ms == -1
    # commit_timestamp exists in v1 only and is not ignorable: an error elsewhere.
    part = OffsetCommitRequest.OffsetCommitRequestPartition(partition_index=0, commit_timestamp=5)
    topic = OffsetCommitRequest.OffsetCommitRequestTopic(name="t", partitions=[part])
    req = OffsetCommitRequest(group_id="g", topics=[topic])
    assert OffsetCommitRequest.decode(req.encode_body(1), 1) == req
    with pytest.raises(ProtocolError, match="commit_timestamp"):
        req.encode_body(2)
    part.commit_timestamp = -1  # back to the default: fine again
    req.encode_body(2)


def test_nullable_only_where_the_spec_says():
    # Metadata v0 cannot send a null topic list (it means "all topics" from v1 on).
    with pytest.raises(ProtocolError, match="null"):
        MetadataRequest(topics=None).encode_body(0)
    assert MetadataRequest.decode(MetadataRequest(topics=None).encode_body(1), 1).topics is None


def test_version_range_checked():
    with pytest.raises(ProtocolError, match="versions 0-"):
        FetchRequest().encode_body(FetchRequest.MAX_VERSION + 1)
    with pytest.raises(ProtocolError):
        FetchResponse.decode(b"", -1)


def _fetch_response(records: bytes, version: int, aborted=None) -> bytes:
    part = FetchResponse.PartitionData(
        partition_index=0, high_watermark=10, records=records, aborted_transactions=aborted
    )
    return FetchResponse(responses=[FetchResponse.FetchableTopicResponse(topic="t", partitions=[part])]).encode(
        version, correlation_id=1
    )


@pytest.mark.parametrize("version", [0, 4, 11, 12])
def test_fetch_records_are_zero_copy_and_decode_to_columns(version):
    batch = kafkawire.encode_records(
        [b"a", None, b"ccc"], [b"k1", b"k2", None], timestamps=[1, 2, 3], base_offset=5, magic=2 if version >= 4 else 1
    )
    frame = _fetch_response(batch, version)
    body = memoryview(frame)[4 + (5 if version >= 12 else 4) :]
    resp = FetchResponse.decode(body, version)
    part = resp.responses[0].partitions[0]
    assert isinstance(part.records, memoryview) and part.records.obj is frame  # a slice, not a copy
    cols = part.columns
    assert cols is part.columns  # cached
    assert cols.value.to_pylist() == [b"a", None, b"ccc"]
    assert cols.offset.tolist() == [5, 6, 7]
    assert part.records_columns(fetch_offset=6).offset.tolist() == [6, 7]


def test_fetch_read_committed_passes_aborted_transactions():
    pid = 77
    aborted = kafkawire.encode_records(
        [b"x"], timestamps=[1], base_offset=0, producer_id=pid, producer_epoch=0, base_sequence=0, transactional=True
    )
    plain = kafkawire.encode_records([b"y"], timestamps=[1], base_offset=1)
    tx = [FetchResponse.AbortedTransaction(producer_id=pid, first_offset=0)]
    frame = _fetch_response(aborted + plain, 11, tx)
    part = FetchResponse.decode(memoryview(frame)[8:], 11).responses[0].partitions[0]
    assert part.records_columns().value.to_pylist() == [b"x", b"y"]
    assert part.records_columns(isolation="read_committed").value.to_pylist() == [b"y"]


def test_produce_accepts_bytes_columns_or_values():
    batch = kafkawire.encode_records([b"v1", b"v2"], timestamps=[10, 11])
    cols = kafkawire.decode_records(batch)

    def req(records):
        return ProduceRequest(
            acks=-1,
            timeout_ms=1000,
            topic_data=[
                ProduceRequest.TopicProduceData(
                    name="t", partition_data=[ProduceRequest.PartitionProduceData(index=0, records=records)]
                )
            ],
        )

    as_bytes = req(batch).encode_body(9)
    assert req(memoryview(batch)).encode_body(9) == as_bytes
    assert req(cols).encode_body(9) == as_bytes  # RecordColumns are re-encoded to the same batch
    from_values = ProduceRequest.decode(req([b"v1", b"v2"]).encode_body(9), 9)
    records = from_values.topic_data[0].partition_data[0].records
    assert kafkawire.decode_records(records).value.to_pylist() == [b"v1", b"v2"]


def test_produce_response_round_trip_with_record_errors():
    resp = ProduceResponse(
        responses=[
            ProduceResponse.TopicProduceResponse(
                name="t",
                partition_responses=[
                    ProduceResponse.PartitionProduceResponse(
                        index=1,
                        error_code=87,
                        base_offset=-1,
                        record_errors=[
                            ProduceResponse.BatchIndexAndErrorMessage(batch_index=0, batch_index_error_message="bad")
                        ],
                        error_message="invalid record",
                    )
                ],
            )
        ],
        throttle_time_ms=3,
    )
    back = ProduceResponse.decode(resp.encode_body(8), 8)
    assert back == resp
    assert back.to_dict()["responses"][0]["partition_responses"][0]["error_message"] == "invalid record"


def test_error_table():
    assert perr.error_for_code(0) is None
    cls = perr.error_for_code(6)
    assert cls is perr.NotLeaderOrFollowerError and cls.retriable and cls.name == "NOT_LEADER_OR_FOLLOWER"
    assert perr.error_for_code(-1) is perr.UnknownServerError and not perr.UnknownServerError.retriable
    assert perr.error_for_code(35) is perr.UnsupportedVersionError
    assert perr.error_for_code(133).name == "SHARE_SESSION_LIMIT_REACHED"
    assert issubclass(perr.BrokerError, KafkaWireError)
    codes = sorted(perr.ERRORS)
    assert codes[0] == -1 and codes[-1] == 133 and len(codes) == 134  # -1, then 1..133 with none missing
    unknown = perr.error_for_code(999)
    assert issubclass(unknown, perr.UnknownBrokerError) and unknown.code == 999
    assert perr.error_for_code(999) is unknown
    with pytest.raises(perr.TopicAuthorizationFailedError, match=r"\[Error 29\].*denied"):
        perr.raise_for_code(29, "denied")
    perr.raise_for_code(0)
    err = pickle.loads(pickle.dumps(perr.NotCoordinatorError("moved")))
    assert isinstance(err, perr.NotCoordinatorError) and err.message == "moved"


def test_retriable_flags_match_kafka():
    retriable = {c for c, cls in perr.ERRORS.items() if cls.retriable}
    for code in (3, 5, 6, 7, 13, 14, 15, 16, 19, 20, 56, 74, 75, 89, 100):
        assert code in retriable
    for code in (1, 10, 17, 22, 25, 27, 29, 35, 36, 47, 87):
        assert code not in retriable


def test_nested_classes_and_repr():
    assert FetchResponse.PartitionData.__qualname__ == "FetchResponse.PartitionData"
    p = FetchResponse.PartitionData(records=memoryview(b"abc"))
    assert "<3 bytes>" in repr(p)
    assert np.array_equal(np.array(FetchRequest.MIN_VERSION), np.array(0))
