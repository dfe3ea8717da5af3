"""ApiVersions negotiation (KIP-35, KIP-511) against scripted broker answers."""

from __future__ import annotations

import pytest

from kafkawire.errors import ProtocolError
from kafkawire.protocol import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    FetchRequest,
    MetadataRequest,
    ProduceRequest,
    decode_request,
)
from kafkawire.protocol import errors as perr
from kafkawire.protocol.negotiation import ApiVersionsExchange, NegotiatedVersions, negotiate

AV = ApiVersionsResponse.ApiVersion


def _broker(ranges: dict[int, tuple[int, int]], max_av: int = 4, error_body_version: int = 0, garble_from: int = 99):
    """A fake broker: answers ApiVersions like Kafka does; records the versions it was asked."""
    asked: list[int] = []

    def send_and_receive(frame: bytes) -> bytes:
        header, req = decode_request(frame[4:])
        assert isinstance(req, ApiVersionsRequest)
        v = header.api_version
        asked.append(v)
        keys = [AV(api_key=k, min_version=lo, max_version=hi) for k, (lo, hi) in ranges.items()]
        if v > max_av:
            # KIP-511: unknown version -> UNSUPPORTED_VERSION in a v0 body with our key-18 range.
            resp = ApiVersionsResponse(error_code=35, api_keys=[k for k in keys if k.api_key == 18])
            return resp.encode(error_body_version, header.correlation_id)[4:]
        frame = ApiVersionsResponse(api_keys=keys, throttle_time_ms=0).encode(v, header.correlation_id)[4:]
        if v >= garble_from:
            frame = frame[:-3]  # librdkafka mock cluster: a v3+ body that does not parse
        return frame

    return send_and_receive, asked


RANGES = {0: (0, 9), 1: (4, 12), 3: (0, 12), 18: (0, 3), 999: (0, 1)}


def test_happy_path_picks_highest_common_version():
    send, asked = _broker(RANGES, max_av=3)
    ex = ApiVersionsExchange(max_version=3)
    result = ex.handle_response(send(ex.request_frame(1)))
    assert asked == [3]
    assert isinstance(result, NegotiatedVersions)
    assert result.version_for(ProduceRequest) == 9
    assert result.version_for(FetchRequest) == 12
    assert result.get(MetadataRequest) == 12
    assert result.get(999) is None  # an API we do not speak
    assert result.api_versions_version == 3


def test_unsupported_version_retries_with_broker_max():
    send, asked = _broker(RANGES, max_av=3)
    result = negotiate(send)
    assert asked == [ApiVersionsRequest.MAX_VERSION, 3]
    assert result.api_versions_version == 3
    assert result.versions[1] == 12


def test_unsupported_version_without_key_18_falls_back_to_v0():
    ranges = {k: r for k, r in RANGES.items() if k != 18}
    send, asked = _broker(ranges, max_av=2)
    result = negotiate(send)
    assert asked == [ApiVersionsRequest.MAX_VERSION, 0]
    assert result.api_versions_version == 0


def test_undecodable_v3_body_falls_back_to_v0():
    send, asked = _broker(RANGES, garble_from=3)
    result = negotiate(send)
    assert asked == [ApiVersionsRequest.MAX_VERSION, 0]
    assert result.version_for(1) == 12


def test_correlation_mismatch_is_an_error():
    send, _ = _broker(RANGES)
    ex = ApiVersionsExchange()
    frame = send(ex.request_frame(5))
    bad = (6).to_bytes(4, "big") + frame[4:]
    with pytest.raises(ProtocolError, match="correlation"):
        ex.handle_response(bad)


def test_no_overlap_raises_unsupported_version():
    result = NegotiatedVersions({1: (20, 30)})
    with pytest.raises(perr.UnsupportedVersionError):
        result.version_for(FetchRequest)
    with pytest.raises(perr.UnsupportedVersionError):
        NegotiatedVersions({1: (0, 5)}).version_for(FetchRequest, min_version=7)


def test_broker_error_raises_its_class():
    def send(frame: bytes) -> bytes:
        header, _ = decode_request(frame[4:])
        return ApiVersionsResponse(error_code=31).encode(header.api_version, header.correlation_id)[4:]

    with pytest.raises(perr.ClusterAuthorizationFailedError):
        negotiate(send, max_version=0)
