"""Every API x every version: random values that the version can carry survive encode -> decode -> encode."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkawire.protocol import API_BY_KEY, API_MODULES

from .strategies import message, normalise

CASES = [
    pytest.param(cls, v, id=f"{cls.__name__}-v{v}")
    for req, resp in API_BY_KEY.values()
    for cls in (req, resp)
    for v in range(cls.MIN_VERSION, cls.MAX_VERSION + 1)
]


@pytest.mark.parametrize("cls,version", CASES)
@settings(max_examples=6)
@given(data=st.data())
def test_round_trip(cls, version, data):
    obj = data.draw(message(cls, version))
    body = obj.encode_body(version)
    back = cls.decode(body, version)
    assert normalise(back) == normalise(obj)
    assert back.encode_body(version) == body


# KIP-932's share group APIs start at v1: their v0 was Kafka 4.0's early-access protocol, which Kafka 4.1
# removed when share groups became production ready (no broker of today speaks it).
SHARE_GROUP_APIS_FROM_V1 = {76, 77, 78, 79}


def test_every_api_from_version_zero():
    """Versions start at 0 even where Kafka 4.0 dropped them (KIP-896): old brokers still speak them."""
    assert len(API_BY_KEY) == len(API_MODULES) >= 26  # every registered module builds one API
    for key, (req, resp) in API_BY_KEY.items():
        first = 1 if key in SHARE_GROUP_APIS_FROM_V1 else 0
        assert req.MIN_VERSION == resp.MIN_VERSION == first, req.__name__
        assert req.MAX_VERSION == resp.MAX_VERSION
