"""Request header v0/v1/v2, response header v0/v1, and the header version each API uses."""

from __future__ import annotations

import struct

import pytest

from kafkawire.errors import ProtocolError
from kafkawire.protocol import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    FetchRequest,
    MetadataRequest,
    MetadataResponse,
    SaslHandshakeRequest,
    decode_request,
    decode_request_header,
    decode_response_header,
    encode_request_header,
    encode_response_header,
    read_response_header,
)


def test_request_header_v0_v1_v2_bytes():
    h0 = encode_request_header(bytearray(), 3, 9, 0x01020304, "ignored", 0)
    assert bytes(h0) == b"\x00\x03\x00\x09\x01\x02\x03\x04"
    h1 = encode_request_header(bytearray(), 3, 9, 7, "ab", 1)
    assert bytes(h1) == b"\x00\x03\x00\x09\x00\x00\x00\x07\x00\x02ab"
    # v2 keeps client_id a plain (non-compact) nullable string, then an empty tag section (KIP-482).
    h2 = encode_request_header(bytearray(), 3, 9, 7, "ab", 2)
    assert bytes(h2) == b"\x00\x03\x00\x09\x00\x00\x00\x07\x00\x02ab\x00"
    null = encode_request_header(bytearray(), 3, 9, 7, None, 2)
    assert bytes(null) == b"\x00\x03\x00\x09\x00\x00\x00\x07\xff\xff\x00"


@pytest.mark.parametrize("hv", [0, 1, 2])
@pytest.mark.parametrize("client_id", [None, "", "client-é"])
def test_request_header_round_trip(hv, client_id):
    tags = {5: b"xyz", 1: b""} if hv == 2 else None
    raw = encode_request_header(bytearray(), 1, 12, -5, client_id, hv, tags)
    header, pos = decode_request_header(bytes(raw) + b"BODY", hv)
    assert pos == len(raw)
    assert (header.api_key, header.api_version, header.correlation_id) == (1, 12, -5)
    assert header.client_id == (client_id if hv >= 1 else None)
    assert header.unknown_tags == tags
    if hv == 2:
        # unknown header tags are written back in ascending order
        assert raw.endswith(b"\x02\x01\x00\x05\x03xyz")


@pytest.mark.parametrize("hv", [0, 1])
def test_response_header_round_trip(hv):
    raw = encode_response_header(bytearray(), 123456, hv, {7: b"\x01"} if hv else None)
    header, pos = decode_response_header(bytes(raw), hv)
    assert header.correlation_id == 123456 and pos == len(raw)
    assert header.unknown_tags == ({7: b"\x01"} if hv else None)


def test_header_versions_per_api():
    assert FetchRequest.header_version(11) == 1 and FetchRequest.header_version(12) == 2
    assert MetadataResponse.header_version(8) == 0 and MetadataResponse.header_version(9) == 1
    # KIP-511: ApiVersions responses always use header v0, flexible body or not.
    assert ApiVersionsResponse.header_version(3) == 0 and ApiVersionsResponse.header_version(4) == 0
    assert ApiVersionsRequest.header_version(3) == 2
    # SaslHandshake never became flexible.
    assert SaslHandshakeRequest.header_version(1) == 1


def test_full_request_frame_and_broker_side_parse():
    req = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="t")], allow_auto_topic_creation=False)
    frame = req.encode(version=9, correlation_id=42, client_id="cli")
    (size,) = struct.unpack_from(">i", frame)
    assert size == len(frame) - 4
    header, back = decode_request(frame[4:])
    assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (3, 9, 42, "cli")
    assert back == req


def test_response_frame_split():
    resp = MetadataResponse(cluster_id="c", controller_id=1)
    for v, hlen in ((8, 4), (9, 5)):
        frame = resp.encode(v, correlation_id=99)
        cid, body = read_response_header(frame[4:], MetadataResponse, v)
        assert cid == 99 and len(body) == len(frame) - 4 - hlen
        assert MetadataResponse.decode(body, v) == resp


def test_api_versions_flexible_response_uses_header_v0():
    resp = ApiVersionsResponse(api_keys=[ApiVersionsResponse.ApiVersion(api_key=18, min_version=0, max_version=4)])
    frame = resp.encode(3, correlation_id=1)
    cid, body = read_response_header(frame[4:], ApiVersionsResponse, 3)
    assert cid == 1
    assert bytes(body[:2]) == b"\x00\x00"  # the body starts right after the 4-byte correlation id
    assert ApiVersionsResponse.decode(body, 3) == resp


@pytest.mark.parametrize(
    "raw,hv",
    [
        (b"\x00\x01\x00", 0),
        (b"\x00\x01\x00\x02\x00\x00\x00\x01\x00\x09ab", 1),
        (b"\x00\x01\x00\x02\x00\x00\x00\x01\xff\xff\x01\x05\x09", 2),
    ],
)
def test_truncated_headers_raise_protocol_error(raw, hv):
    with pytest.raises(ProtocolError):
        decode_request_header(raw, hv)
