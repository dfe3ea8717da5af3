"""KIP-482 tag sections: ascending order, defaults omitted, unknown tags kept on decode and written back on
encode; and null arrays kept apart from empty ones."""

from __future__ import annotations

import pytest

from kafkawire.errors import ProtocolError
from kafkawire.protocol import (
    ApiVersionsResponse,
    ConsumerGroupHeartbeatRequest,
    FetchRequest,
    FetchResponse,
    MetadataRequest,
)
from kafkawire.protocol._compile import read_uvarint, write_uvarint


def test_known_tagged_fields_written_in_ascending_order_only_when_set():
    req = FetchRequest(max_wait_ms=1, min_bytes=1)
    plain = req.encode_body(15)
    req.cluster_id = "c"  # tag 0
    req.replica_state = FetchRequest.ReplicaState(replica_id=3, replica_epoch=4)  # tag 1
    tagged = req.encode_body(15)
    assert tagged.endswith(b"\x02" + b"\x00\x02\x02c" + b"\x01\x0d" + b"\x00\x00\x00\x03" + b"\x00" * 7 + b"\x04\x00")
    assert len(tagged) > len(plain)
    assert FetchRequest.decode(tagged, 15) == req


def test_unknown_tags_survive_decode_and_encode():
    resp = ApiVersionsResponse(api_keys=[ApiVersionsResponse.ApiVersion(api_key=1, min_version=0, max_version=17)])
    body = bytearray(resp.encode_body(3))
    # Replace the (empty) top-level tag section with tags 9 and 40, which this schema does not know.
    assert body[-1] == 0
    body[-1:] = b"\x02" + b"\x09\x03abc" + b"\x28\x01\xff"
    back = ApiVersionsResponse.decode(bytes(body), 3)
    assert back._unknown_tags == {9: b"abc", 40: b"\xff"}
    assert back.encode_body(3) == bytes(body)
    # A known tag set on the object is merged with the unknown ones in ascending order.
    back.finalized_features_epoch = 5  # tag 1
    again = back.encode_body(3)
    assert again.endswith(b"\x03" + b"\x01\x08" + (5).to_bytes(8, "big") + b"\x09\x03abc" + b"\x28\x01\xff")
    assert ApiVersionsResponse.decode(again, 3).finalized_features_epoch == 5


def test_unknown_tags_in_nested_structs():
    resp = FetchResponse(
        responses=[
            FetchResponse.FetchableTopicResponse(
                topic="t", partitions=[FetchResponse.PartitionData(partition_index=0, records=b"")]
            )
        ]
    )
    part = resp.responses[0].partitions[0]
    part._unknown_tags = {77: b"\x00\x01"}
    body = resp.encode_body(12)
    back = FetchResponse.decode(body, 12)
    assert back.responses[0].partitions[0]._unknown_tags == {77: b"\x00\x01"}
    assert back.encode_body(12) == body


def test_tagged_field_with_wrong_size_is_rejected():
    req = MetadataRequest(topics=None)
    body = bytearray(req.encode_body(9))
    body[-1:] = b"\x01\x00\x05ab"  # tag 0 claims 5 bytes, only 2 follow
    with pytest.raises(ProtocolError):
        MetadataRequest.decode(bytes(body), 9)


@pytest.mark.parametrize("n", [0, 1, 127, 128, 16383, 16384, 2**21, 2**28, 2**32 - 1])
def test_uvarint_round_trip(n):
    raw = write_uvarint(n)
    assert read_uvarint(raw, 0) == (n, len(raw))


@pytest.mark.parametrize("raw", [b"", b"\x80", b"\xff\xff\xff\xff\x1f", b"\x80\x80\x80\x80\x80\x01"])
def test_uvarint_rejects_truncated_or_overlong(raw):
    with pytest.raises(ProtocolError):
        read_uvarint(raw, 0)


def test_tagged_struct_equal_to_its_default_is_omitted():
    # KIP-482 (and Kafka's generated code): a tagged struct whose fields are all at their defaults is not
    # written, whether it is left None or set to a default instance; any non-default field writes it.
    P = FetchResponse.PartitionData
    plain = FetchResponse(responses=[FetchResponse.FetchableTopicResponse(topic="t", partitions=[P()])])
    for v in (12, 16):
        body = plain.encode_body(v)
        part = plain.responses[0].partitions[0]
        part.diverging_epoch = FetchResponse.EpochEndOffset()
        part.current_leader = FetchResponse.LeaderIdAndEpoch(leader_id=-1, leader_epoch=-1)
        part.snapshot_id = FetchResponse.SnapshotId()
        assert plain.encode_body(v) == body
        part.current_leader = FetchResponse.LeaderIdAndEpoch(leader_id=3, leader_epoch=-1)
        written = plain.encode_body(v)
        assert len(written) > len(body)
        back = FetchResponse.decode(written, v).responses[0].partitions[0]
        assert back.current_leader.leader_id == 3 and back.diverging_epoch is None
        part.current_leader = part.diverging_epoch = part.snapshot_id = None
    req = FetchRequest(replica_state=FetchRequest.ReplicaState())
    assert req.encode_body(15) == FetchRequest().encode_body(15)
    state = FetchRequest(replica_state=FetchRequest.ReplicaState(replica_epoch=4))
    assert FetchRequest.decode(state.encode_body(15), 15).replica_state.replica_epoch == 4


def test_null_and_empty_arrays_stay_distinct():
    # KIP-848: in ConsumerGroupHeartbeat, null means "unchanged since the last heartbeat" and an empty
    # list means "none"; the spec's default is null, as in Java's ConsumerGroupHeartbeatRequestData.
    leave = ConsumerGroupHeartbeatRequest(group_id="g", member_id="m", member_epoch=-1)
    assert leave.subscribed_topic_names is None and leave.topic_partitions is None
    for v in (0, 1):
        back = ConsumerGroupHeartbeatRequest.decode(leave.encode_body(v), v)
        assert back.subscribed_topic_names is None and back.topic_partitions is None
        empty = ConsumerGroupHeartbeatRequest(group_id="g", subscribed_topic_names=[], topic_partitions=[])
        back = ConsumerGroupHeartbeatRequest.decode(empty.encode_body(v), v)
        assert back.subscribed_topic_names == [] and back.topic_partitions == []
        assert empty.encode_body(v) != ConsumerGroupHeartbeatRequest(group_id="g").encode_body(v)
    # A nullable array whose default is empty: null is not the default, so it is written (and read) as null.
    assert MetadataRequest.decode(MetadataRequest(topics=None).encode_body(12), 12).topics is None
    assert MetadataRequest.decode(MetadataRequest().encode_body(12), 12).topics == []
