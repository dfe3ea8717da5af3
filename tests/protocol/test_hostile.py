"""Malformed and hostile bytes: only ProtocolError comes out, and nothing is allocated from a forged count."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkawire.errors import ProtocolError
from kafkawire.protocol import API_BY_KEY, FetchResponse, MetadataResponse, ProduceRequest

from .strategies import message

ALL = [
    pytest.param(cls, v, id=f"{cls.__name__}-v{v}")
    for req, resp in API_BY_KEY.values()
    for cls in (req, resp)
    for v in range(cls.MIN_VERSION, cls.MAX_VERSION + 1)
]


def _decode_or_protocol_error(cls, version, raw):
    try:
        cls.decode(raw, version)
    except ProtocolError:
        pass


@pytest.mark.parametrize("cls,version", ALL)
@settings(max_examples=2)
@given(data=st.data())
def test_truncations_and_flips_only_raise_protocol_error(cls, version, data):
    body = data.draw(message(cls, version)).encode_body(version)
    for cut in range(len(body)):
        _decode_or_protocol_error(cls, version, body[:cut])
    if body:
        i = data.draw(st.integers(0, len(body) - 1))
        flipped = bytearray(body)
        flipped[i] ^= data.draw(st.integers(1, 255))
        _decode_or_protocol_error(cls, version, bytes(flipped))


@pytest.mark.parametrize("cls,version", ALL)
@settings(max_examples=4)
@given(raw=st.binary(max_size=64))
def test_random_bytes_only_raise_protocol_error(cls, version, raw):
    _decode_or_protocol_error(cls, version, raw)


def test_trailing_bytes_rejected_unless_allowed():
    body = MetadataResponse().encode_body(1) + b"\x00"
    with pytest.raises(ProtocolError, match="left after"):
        MetadataResponse.decode(body, 1)
    assert MetadataResponse.decode(body, 1, allow_trailing=True) == MetadataResponse()


@pytest.mark.parametrize(
    "raw",
    [
        # Metadata v1: brokers array claiming 2**31-1 entries, 4 bytes follow
        b"\x7f\xff\xff\xff\x00\x00\x00\x00",
        # Metadata v1: one broker whose host string claims 32767 bytes
        b"\x00\x00\x00\x01\x00\x00\x00\x01\x7f\xff" + b"a" * 10,
        # a negative array count other than -1
        b"\xff\xff\xff\xfe",
    ],
)
def test_forged_lengths_fail_fast(raw):
    t = time.perf_counter()
    with pytest.raises(ProtocolError):
        MetadataResponse.decode(raw, 1)
    # Nothing was allocated from the forged count (2**31 entries would take seconds); 0.05 s with the
    # slack the deadline tests give a loaded machine.
    assert time.perf_counter() - t < 0.05 * 1.1 + 0.2


def test_forged_compact_lengths_fail_fast():
    # Fetch v12 responses: throttle, error, session, then a compact array with a huge uvarint count.
    raw = b"\x00" * 10 + b"\xff\xff\xff\xff\x0f"
    with pytest.raises(ProtocolError):
        FetchResponse.decode(raw, 12)
    # A uvarint longer than 5 bytes is rejected, not looped over.
    with pytest.raises(ProtocolError):
        FetchResponse.decode(b"\x00" * 10 + b"\x80" * 20, 12)


def test_null_where_not_nullable():
    # Metadata v0 topic names are not nullable: a -1 length is an error, not None.
    raw = b"\x00\x00\x00\x00" + b"\x00\x00\x00\x01" + b"\x00\x00" + b"\xff\xff" + b"\x00\x00\x00\x00"
    with pytest.raises(ProtocolError, match="null"):
        MetadataResponse.decode(raw, 0)


def test_encoding_bad_values_raises_protocol_error():
    with pytest.raises(ProtocolError):
        ProduceRequest(acks=1 << 20).encode_body(3)  # int16 overflow
    with pytest.raises(ProtocolError):
        ProduceRequest(topic_data=[ProduceRequest.TopicProduceData(name=None)]).encode_body(3)
