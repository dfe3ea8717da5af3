"""The classic group protocol's payloads (subscription, assignment, sticky user data), now message
classes built from ``protocol/messages/consumer_protocol.schema``: the bytes Java writes, versions
above the highest known, writers that stamp a version without its fields, and hostile bytes."""

from __future__ import annotations

import random
import struct

import pytest

from kafkawire.client.group.assignors import decode_sticky_user_data, encode_sticky_user_data
from kafkawire.client.group.payloads import (
    decode_assignment,
    decode_subscription,
    decode_subscription_full,
    encode_assignment,
    encode_subscription,
)
from kafkawire.errors import ProtocolError


def _string(s: str) -> bytes:
    raw = s.encode()
    return struct.pack(">h", len(raw)) + raw


def test_a_v3_subscription_is_the_bytes_the_java_client_writes() -> None:
    # Written by hand from ConsumerProtocolSubscription.json v3: version, topics, user data, owned
    # partitions, generation, rack.
    want = (
        struct.pack(">h", 3)
        + struct.pack(">i", 2) + _string("a") + _string("b")
        + struct.pack(">i", -1)
        + struct.pack(">i", 1) + _string("a") + struct.pack(">iii", 2, 1, 2)
        + struct.pack(">i", 5)
        + _string("rack-1")
    )
    got = encode_subscription(["b", "a"], owned=[("a", 2), ("a", 1)], generation=5, version=3, rack="rack-1")
    assert got == want
    sub = decode_subscription_full(got)
    assert (sub.topics, sub.owned, sub.generation, sub.rack_id, sub.version) == (
        ["a", "b"], [("a", 1), ("a", 2)], 5, "rack-1", 3
    )


def test_a_later_version_is_read_with_the_fields_known_here() -> None:
    v3 = encode_subscription(["t"], b"ud", owned=[("t", 0)], generation=7, version=3)
    v9 = struct.pack(">h", 9) + v3[2:] + b"fields of a future version"
    sub = decode_subscription_full(v9)
    assert (sub.version, sub.topics, sub.user_data, sub.owned, sub.generation) == (9, ["t"], b"ud", [("t", 0)], 7)
    asg = encode_assignment({"t": [3, 1]}, version=3)
    assert decode_assignment(struct.pack(">h", 4) + asg[2:] + b"\x00\x01") == {"t": [1, 3]}


def test_a_version_stamped_without_its_fields_is_read_at_the_fields_present() -> None:
    v0_body = encode_subscription(["x", "y"], b"u")[2:]
    sub = decode_subscription_full(struct.pack(">h", 2) + v0_body)
    assert (sub.version, sub.topics, sub.user_data, sub.owned, sub.generation) == (2, ["x", "y"], b"u", [], -1)


@pytest.mark.parametrize(
    "data",
    [
        b"\xff\xff" + encode_subscription(["a"])[2:],  # negative version
        b"\x00",  # no room for a version
        encode_subscription(["a"])[:-3],  # cut inside the user data's length
        b"\x00\x00\x7f\xff\xff\xff",  # forged topic count
        b"\x00\x00\x00\x00\x00\x01\x00\x02\xff\xfe",  # invalid UTF-8 in a topic name
    ],
)
def test_hostile_subscriptions_are_protocol_errors(data: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_subscription(data)


def test_random_bytes_never_raise_anything_but_a_protocol_error() -> None:
    rng = random.Random(1)
    good = [
        encode_subscription(["t", "u"], b"x", owned=[("t", 1)], generation=3, version=3),
        encode_assignment({"t": [0, 1]}, b"y", version=3),
    ]
    for _ in range(3000):
        base = bytearray(rng.choice(good))
        for _ in range(rng.randint(1, 4)):
            base[rng.randrange(len(base))] = rng.randrange(256)
        data = bytes(base[: rng.randint(0, len(base))])
        for decode in (decode_subscription_full, decode_assignment, decode_sticky_user_data):
            try:
                decode(data)
            except ProtocolError:
                pass


def test_sticky_user_data_v1_and_v0() -> None:
    v1 = encode_sticky_user_data([("t", 2), ("u", 0), ("t", 1)], 4)
    assert v1 == struct.pack(">i", 2) + _string("t") + struct.pack(">iii", 2, 1, 2) + _string("u") + struct.pack(
        ">ii", 1, 0
    ) + struct.pack(">i", 4)
    assert decode_sticky_user_data(v1) == ([("t", 1), ("t", 2), ("u", 0)], 4)
    assert decode_sticky_user_data(v1[:-4]) == ([("t", 1), ("t", 2), ("u", 0)], -1)
