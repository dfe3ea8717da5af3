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

from ..errors import ProtocolError

__all__ = [
    "encode_subscription",
    "decode_subscription",
    "encode_assignment",
    "decode_assignment",
    "range_assign",
    "roundrobin_assign",
    "ASSIGNORS",
]

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


class _Reader:
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
        return _I16.unpack(self._take(2))[0]

    def i32(self) -> int:
        return _I32.unpack(self._take(4))[0]

    def string(self) -> str:
        n = self.i16()
        if n < 0:
            raise ProtocolError("null string in consumer protocol payload")
        try:
            return self._take(n).decode("utf-8")
        except UnicodeDecodeError as exc:  # a hostile member's payload: a protocol error, not a crash
            raise ProtocolError(f"invalid UTF-8 in consumer protocol payload: {exc}") from None

    def count(self) -> int:
        n = self.i32()
        if n < 0:
            return 0  # null array
        if n > len(self.buf) - self.pos:  # each element takes at least one byte: refuse forged counts
            raise ProtocolError(f"array count {n} exceeds the payload")
        return n


def _string(s: str) -> bytes:
    raw = s.encode("utf-8")
    return _I16.pack(len(raw)) + raw


def encode_subscription(topics: Iterable[str], user_data: bytes | None = None) -> bytes:
    """ConsumerProtocolSubscription v0: the topics this member wants."""
    topics = sorted(set(topics))
    out = bytearray(_I16.pack(0))
    out += _I32.pack(len(topics))
    for t in topics:
        out += _string(t)
    out += _I32.pack(-1) if user_data is None else _I32.pack(len(user_data)) + user_data
    return bytes(out)


def decode_subscription(data: bytes | bytearray | memoryview) -> list[str]:
    """Topics of a ConsumerProtocolSubscription of any version."""
    r = _Reader(data)
    if r.i16() < 0:
        raise ProtocolError("negative consumer protocol version")
    return [r.string() for _ in range(r.count())]


def encode_assignment(partitions: Mapping[str, Iterable[int]], user_data: bytes | None = None) -> bytes:
    """ConsumerProtocolAssignment v0: the partitions given to one member."""
    out = bytearray(_I16.pack(0))
    items = [(t, sorted(ps)) for t, ps in sorted(partitions.items())]
    out += _I32.pack(len(items))
    for t, ps in items:
        out += _string(t)
        out += _I32.pack(len(ps))
        for p in ps:
            out += _I32.pack(p)
    out += _I32.pack(-1) if user_data is None else _I32.pack(len(user_data)) + user_data
    return bytes(out)


def decode_assignment(data: bytes | bytearray | memoryview | None) -> dict[str, list[int]]:
    """Partitions of a ConsumerProtocolAssignment of any version (empty bytes: nothing assigned)."""
    if not data:
        return {}
    r = _Reader(data)
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
