"""The classic consumer group protocol's embedded payloads and the range and round-robin assignors.

A consumer joins a group with ``protocol_type="consumer"``; the per-member ``metadata`` (a
*ConsumerProtocolSubscription*) and the per-member ``assignment`` (a *ConsumerProtocolAssignment*) are
opaque bytes to the broker, encoded with Kafka's non-flexible rules (``clients/src/main/resources/common/
message/ConsumerProtocolSubscription.json`` and ``ConsumerProtocolAssignment.json``). kafkawire writes
version 0 of both, which every consumer understands, and reads any version: later versions only append
fields, which are ignored here.
"""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from ...errors import ProtocolError

__all__ = [
    "PayloadReader",
    "encode_string",
    "encode_subscription",
    "decode_subscription",
    "decode_subscription_full",
    "Subscription",
    "encode_assignment",
    "decode_assignment",
    "range_assign",
    "roundrobin_assign",
    "ASSIGNORS",
]

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


class PayloadReader:
    """Bounds-checked big-endian reader; any overrun is a :class:`ProtocolError`."""

    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        self.buf = bytes(data)
        self.pos = 0

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.buf):
            raise ProtocolError("consumer protocol payload is truncated")
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return out

    def i16(self) -> int:
        return int(_I16.unpack(self._take(2))[0])

    def i32(self) -> int:
        return int(_I32.unpack(self._take(4))[0])

    def string(self) -> str:
        n = self.i16()
        if n < 0:
            raise ProtocolError("null string in consumer protocol payload")
        try:
            return self._take(n).decode("utf-8")
        except UnicodeDecodeError as exc:  # a hostile member's payload: a protocol error, not a crash
            raise ProtocolError(f"invalid UTF-8 in consumer protocol payload: {exc}") from None

    def nullable_string(self) -> str | None:
        n = self.i16()
        if n < 0:
            return None
        self.pos -= 2
        return self.string()

    def nullable_bytes(self) -> bytes | None:
        n = self.i32()
        return None if n < 0 else self._take(n)

    def at_end(self) -> bool:
        return self.pos >= len(self.buf)

    def count(self) -> int:
        n = self.i32()
        if n < 0:
            return 0  # null array
        if n > len(self.buf) - self.pos:  # each element takes at least one byte: refuse forged counts
            raise ProtocolError(f"array count {n} exceeds the payload")
        return n


def encode_string(s: str) -> bytes:
    """A consumer protocol string: int16 length, then the UTF-8 bytes (also the sticky user data's)."""
    raw = s.encode("utf-8")
    return _I16.pack(len(raw)) + raw


def encode_subscription(
    topics: Iterable[str],
    user_data: bytes | None = None,
    *,
    owned: Iterable[tuple[str, int]] | None = None,
    generation: int = -1,
    version: int = 0,
) -> bytes:
    """ConsumerProtocolSubscription: the topics this member wants (v0); from v1 the partitions it owns
    (KIP-429), from v2 its generation (KIP-792), from v3 its rack (always null here). The Java client
    writes v3."""
    topics = sorted(set(topics))
    out = bytearray(_I16.pack(version))
    out += _I32.pack(len(topics))
    for t in topics:
        out += encode_string(t)
    out += _I32.pack(-1) if user_data is None else _I32.pack(len(user_data)) + user_data
    if version >= 1:
        by_topic: dict[str, list[int]] = defaultdict(list)
        for t, p in sorted(owned or ()):
            by_topic[t].append(p)
        out += _I32.pack(len(by_topic))
        for t, ps in by_topic.items():
            out += encode_string(t) + _I32.pack(len(ps)) + b"".join(_I32.pack(p) for p in ps)
    if version >= 2:
        out += _I32.pack(generation)
    if version >= 3:
        out += _I16.pack(-1)  # rack_id: null
    return bytes(out)


@dataclass
class Subscription:
    """A decoded ConsumerProtocolSubscription (fields of later versions take their defaults)."""

    topics: list[str]
    user_data: bytes | None = None
    owned: list[tuple[str, int]] = field(default_factory=list)
    generation: int = -1
    rack_id: str | None = None
    version: int = 0


def decode_subscription_full(data: bytes | bytearray | memoryview) -> Subscription:
    """Every field of a ConsumerProtocolSubscription v0-v3 (later versions: the fields known here)."""
    r = PayloadReader(data)
    version = r.i16()
    if version < 0:
        raise ProtocolError("negative consumer protocol version")
    sub = Subscription([r.string() for _ in range(r.count())], version=version)
    if r.at_end():  # a v0 writer may omit the trailing user data of an empty subscription (old clients)
        return sub
    sub.user_data = r.nullable_bytes()
    if version >= 1 and not r.at_end():
        for _ in range(r.count()):
            t = r.string()
            sub.owned.extend((t, r.i32()) for _ in range(r.count()))
    if version >= 2 and not r.at_end():
        sub.generation = r.i32()
    if version >= 3 and not r.at_end():
        sub.rack_id = r.nullable_string()
    return sub


def decode_subscription(data: bytes | bytearray | memoryview) -> list[str]:
    """Topics of a ConsumerProtocolSubscription of any version."""
    r = PayloadReader(data)
    if r.i16() < 0:
        raise ProtocolError("negative consumer protocol version")
    return [r.string() for _ in range(r.count())]


def encode_assignment(
    partitions: Mapping[str, Iterable[int]], user_data: bytes | None = None, *, version: int = 0
) -> bytes:
    """ConsumerProtocolAssignment: the partitions given to one member (v1-v3 carry the same fields; the
    Java client writes v3)."""
    out = bytearray(_I16.pack(version))
    items = [(t, sorted(ps)) for t, ps in sorted(partitions.items())]
    out += _I32.pack(len(items))
    for t, ps in items:
        out += encode_string(t)
        out += _I32.pack(len(ps))
        for p in ps:
            out += _I32.pack(p)
    out += _I32.pack(-1) if user_data is None else _I32.pack(len(user_data)) + user_data
    return bytes(out)


def decode_assignment(data: bytes | bytearray | memoryview | None) -> dict[str, list[int]]:
    """Partitions of a ConsumerProtocolAssignment of any version (empty bytes: nothing assigned)."""
    if not data:
        return {}
    r = PayloadReader(data)
    if r.i16() < 0:
        raise ProtocolError("negative consumer protocol version")
    out: dict[str, list[int]] = {}
    for _ in range(r.count()):
        topic = r.string()
        out[topic] = [r.i32() for _ in range(r.count())]
    return out


def range_assign(
    subscriptions: Mapping[str, Iterable[str]], partitions_per_topic: Mapping[str, int]
) -> dict[str, dict[str, list[int]]]:
    """Kafka's RangeAssignor: per topic, its partitions split into contiguous ranges over the members
    subscribed to it, sorted by member id; the first ``partitions % members`` members get one extra.

    ``subscriptions`` maps member id to topics; ``partitions_per_topic`` gives each topic's partition
    count (topics missing from it are skipped). Returns member id -> topic -> partitions; every member
    appears, possibly with nothing.
    """
    members_of: dict[str, list[str]] = defaultdict(list)
    for member, topics in subscriptions.items():
        for t in set(topics):
            members_of[t].append(member)
    out: dict[str, dict[str, list[int]]] = {m: {} for m in subscriptions}
    for topic, members in members_of.items():
        n = partitions_per_topic.get(topic)
        if not n:
            continue
        members.sort()
        share, extra = divmod(n, len(members))
        start = 0
        for i, m in enumerate(members):
            k = share + (1 if i < extra else 0)
            if k:
                out[m][topic] = list(range(start, start + k))
            start += k
    return out


def roundrobin_assign(
    subscriptions: Mapping[str, Iterable[str]], partitions_per_topic: Mapping[str, int]
) -> dict[str, dict[str, list[int]]]:
    """Kafka's RoundRobinAssignor: every subscribed topic-partition, sorted by topic then partition, is
    dealt in turn to the members sorted by member id; a member not subscribed to a partition's topic is
    passed over (the turn moves on to the next member that is).

    With identical subscriptions the members' counts differ by at most one; with different ones the
    result can be lopsided, exactly as in Java (the dealer does not rebalance). Arguments and result as
    :func:`range_assign`. Members are ordered by member id only: kafkawire joins without a
    ``group.instance.id`` (KIP-345), so the static-members-first ordering of Java's assignor never applies.
    """
    topics_of = {m: set(ts) for m, ts in subscriptions.items()}
    members = sorted(topics_of)
    out: dict[str, dict[str, list[int]]] = {m: {} for m in members}
    if not members:
        return out
    topics = sorted({t for ts in topics_of.values() for t in ts if partitions_per_topic.get(t)})
    turn = 0  # index into ``members`` of the member whose turn it is
    for topic in topics:
        for partition in range(partitions_per_topic[topic]):
            # Someone subscribes to ``topic`` (it came from the subscriptions), so this ends within a lap.
            while topic not in topics_of[members[turn]]:
                turn = (turn + 1) % len(members)
            out[members[turn]].setdefault(topic, []).append(partition)
            turn = (turn + 1) % len(members)
    return out


#: Partition assignors by the name a member announces in JoinGroup (the names Java uses).
ASSIGNORS: dict[str, Callable[[Mapping[str, Iterable[str]], Mapping[str, int]], dict[str, dict[str, list[int]]]]] = {
    "range": range_assign,
    "roundrobin": roundrobin_assign,
}
