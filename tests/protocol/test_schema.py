"""The schema notation and the generic walker on a made-up message that uses every wire type."""

from __future__ import annotations

import struct
import uuid

import pytest

from kafkawire.errors import ProtocolError
from kafkawire.protocol.message import Request, build_message
from kafkawire.protocol.schema import VersionRange, parse_message

SCHEMA = """
EveryTypeRequest key=900 v0-3 flex=v2+
  i8 int8
  i16 int16 =-2
  i32 int32
  i64 int64 =0x7fffffffffffffff
  u16 uint16 v1+
  u32 uint32 v1+ =7
  f64 float64 v1+
  flag bool =true
  s string
  ns string null=v0+ =null
  b bytes
  nb bytes null=v1+ =null
  id uuid v1+
  ints []int32
  names []string v1+ null=v1+
  ids []uuid v1+
  recs records null=v0+
  items []Item
    key string
    value int64 =-1
    removed int32 v0 =5
  single Pair v1+
    left int16
    right int16
  tagged_num int32 v2+ tag=3 =-1
  tagged_pair Pair2 v2+ tag=1
    x int8
  gone string v0-1 =""
  gone_ok string v0-1 ignorable
"""

EveryTypeRequest = build_message(SCHEMA, Request)


def test_parse():
    s = parse_message(SCHEMA)
    assert (s.name, s.api_key, s.min_version, s.max_version) == ("EveryTypeRequest", 900, 0, 3)
    assert s.flexible == VersionRange(2, None)
    items = next(f for f in s.root.fields if f.name == "items")
    assert items.is_array and items.struct is not None
    assert [f.name for f in items.struct.fields] == ["key", "value", "removed"]
    assert next(f for f in items.struct.fields if f.name == "removed").versions == VersionRange(0, 0)
    tagged = next(f for f in s.root.fields if f.name == "tagged_num")
    assert tagged.tag == 3 and tagged.default == -1


def _full(version: int) -> EveryTypeRequest:
    Item, Pair, Pair2 = EveryTypeRequest.Item, EveryTypeRequest.Pair, EveryTypeRequest.Pair2
    kw = dict(
        i8=-3,
        i16=300,
        i32=-70000,
        i64=2**40,
        flag=False,
        s="héllo",
        ns=None,
        b=b"\x00\x01",
        nb=b"z",
        ints=[1, -2, 3],
        recs=b"RECORDS",
        items=[Item(key="a", value=1), Item(key="b", removed=5 if version > 0 else 9)],
    )
    if version >= 1:
        kw.update(
            u16=65535,
            u32=2**32 - 1,
            f64=-1.5,
            nb=b"",
            id=uuid.UUID(int=42),
            names=None,
            ids=[uuid.UUID(int=1)],
            single=Pair(left=1, right=-1),
        )
    if version >= 2:
        kw.update(tagged_num=9, tagged_pair=Pair2(x=4))
    if version <= 1:
        kw.update(gone="g")
    return EveryTypeRequest(**kw)


@pytest.mark.parametrize("version", range(4))
def test_round_trip_every_type(version):
    obj = _full(version)
    body = obj.encode_body(version)
    assert EveryTypeRequest.decode(body, version) == obj


def test_exact_bytes_v0_and_v2():
    v0 = _full(0).encode_body(0)
    expected = b"".join(
        [
            struct.pack(">bhiq?", -3, 300, -70000, 2**40, False),
            b"\x00\x06" + "héllo".encode(),  # string: int16 length (UTF-8 bytes)
            b"\xff\xff",  # null string
            b"\x00\x00\x00\x02\x00\x01",  # bytes: int32 length
            b"\x00\x00\x00\x01z",  # nb
            b"\x00\x00\x00\x03" + struct.pack(">3i", 1, -2, 3),
            b"\x00\x00\x00\x07RECORDS",
            b"\x00\x00\x00\x02" + b"\x00\x01a" + struct.pack(">qi", 1, 5) + b"\x00\x01b" + struct.pack(">qi", -1, 9),
            b"\x00\x01g",
            b"\x00\x00",  # gone, gone_ok
        ]
    )
    assert v0 == expected
    v2 = _full(2).encode_body(2)
    # flexible: compact lengths (N+1 as unsigned varint) and tag sections, tags in ascending order
    assert v2.startswith(struct.pack(">bhiqHId?", -3, 300, -70000, 2**40, 65535, 2**32 - 1, -1.5, False))
    assert v2.endswith(b"\x02" + b"\x01\x02\x04\x00" + b"\x03\x04\x00\x00\x00\x09")


def test_version_constraints():
    # non-ignorable field that v2 cannot carry
    obj = _full(2)
    obj.gone = "x"
    with pytest.raises(ProtocolError, match="gone"):
        obj.encode_body(2)
    # ignorable one: dropped
    obj.gone = ""
    obj.gone_ok = "dropped"
    assert EveryTypeRequest.decode(obj.encode_body(2), 2).gone_ok == ""
    # nested non-default, non-ignorable field
    obj = _full(1)
    obj.items[0].removed = 6
    with pytest.raises(ProtocolError, match="removed"):
        obj.encode_body(1)
    # null where the version does not allow it
    obj = EveryTypeRequest(nb=None)
    obj.encode_body(1)
    with pytest.raises(ProtocolError, match="null"):
        obj.encode_body(0)


@pytest.mark.parametrize(
    "text",
    [
        "X key=1 v0-1\n  a int33",
        "X key=1 v0-1\n  a int32 v1x",
        "X key=1 v0+\n  a int32",
        "X key=1 v0-1\n  a int32 bogus",
        "X key=1 v0-1\n  a int32\n    b int32",
    ],
)
def test_bad_schemas_rejected(text):
    with pytest.raises(ValueError):
        parse_message(text)
