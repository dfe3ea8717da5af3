"""The Java client's default partitioner: ``toPositive(murmur2(key)) % numPartitions``.

Records with the same key must land in the partition every other Kafka client picks for that key, or a
keyed topic written by two clients loses its per-key ordering. Kafka's ``BuiltInPartitioner`` (and
``DefaultPartitioner`` before KIP-794) hashes the key bytes with MurmurHash2 (32-bit, seed
``0x9747b28c``) and clears the sign bit (``toPositive``, not ``abs``: ``abs(MIN_VALUE)`` is negative).
librdkafka calls this ``murmur2_random``; kafka-python's ``DefaultPartitioner`` matches it.

Records without a key are not hashed: :class:`Partitioner` sends all keyless records of one call to one
partition and moves to the next partition on the next call, in the spirit of the sticky partitioner
(KIP-480): one batch per call instead of one per partition.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ...columns import BinaryColumn
from ...protocol.errors import UnknownTopicOrPartitionError

if TYPE_CHECKING:
    from ..cluster.cluster import Cluster
    from ..net.deadline import Deadline

__all__ = ["murmur2", "to_positive", "partition_for_key", "partitions_for_keys", "Partitioner", "partition_records"]

_M = 0x5BD1E995
_SEED = 0x9747B28C
_MASK = 0xFFFFFFFF


def murmur2(data: bytes | bytearray | memoryview) -> int:
    """Kafka's 32-bit MurmurHash2 of ``data`` as a signed int32 (the value Java's ``Utils.murmur2`` returns)."""
    data = bytes(data)
    length = len(data)
    h = (_SEED ^ length) & _MASK
    n4 = length & ~3
    for i in range(0, n4, 4):
        k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    rest = length & 3
    if rest == 3:
        h ^= data[n4 + 2] << 16
    if rest >= 2:
        h ^= data[n4 + 1] << 8
    if rest >= 1:
        h ^= data[n4]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - 0x100000000 if h & 0x80000000 else h


def to_positive(n: int) -> int:
    """Java's ``Utils.toPositive``: clear the sign bit of an int32."""
    return n & 0x7FFFFFFF


def partition_for_key(key: bytes | bytearray | memoryview, num_partitions: int) -> int:
    """The partition of a non-null key among ``num_partitions`` partitions."""
    if num_partitions <= 0:
        raise ValueError("num_partitions must be positive")
    return to_positive(murmur2(key)) % num_partitions


def _murmur2_same_length(block: np.ndarray) -> np.ndarray:
    """murmur2 of each row of a 2-D uint8 array (all keys of one length), vectorised over rows.

    In uint32 arrays: numpy's array arithmetic wraps modulo 2**32 like Java's int, so the products need no
    widening and masking (a third of the work they took in uint64)."""
    rows, length = block.shape
    m = np.uint32(_M)
    h = np.full(rows, (_SEED ^ length) & _MASK, dtype=np.uint32)
    n4 = length & ~3
    if n4:
        words = np.ascontiguousarray(block[:, :n4]).view("<u4").astype(np.uint32, copy=False)
        for j in range(words.shape[1]):
            k = words[:, j] * m
            k ^= k >> np.uint32(24)
            k *= m
            h *= m
            h ^= k
    rest = length & 3
    if rest == 3:
        h ^= block[:, n4 + 2].astype(np.uint32) << np.uint32(16)
    if rest >= 2:
        h ^= block[:, n4 + 1].astype(np.uint32) << np.uint32(8)
    if rest >= 1:
        h ^= block[:, n4].astype(np.uint32)
        h *= m
    h ^= h >> np.uint32(13)
    h *= m
    h ^= h >> np.uint32(15)
    return h


def partitions_for_keys(keys: BinaryColumn, num_partitions: int) -> np.ndarray:
    """Partition of every key in ``keys`` (int32 array; -1 where the key is null).

    Keys are grouped by length and hashed with numpy in lockstep, so a million short keys cost a few
    dozen array operations rather than a million Python calls. When every key is present and of one
    length (ids, UUIDs, fixed-width keys), the data is already that 2-D block and is hashed in place.
    """
    if num_partitions <= 0:
        raise ValueError("num_partitions must be positive")
    n = len(keys)
    out = np.full(n, -1, dtype=np.int32)
    if n == 0:
        return out
    offsets = np.asarray(keys.offsets, dtype=np.int64)
    lengths = offsets[1:] - offsets[:-1]
    data = np.asarray(keys.data, dtype=np.uint8)
    if (keys.valid is None or bool(np.all(keys.valid))) and bool(np.all(lengths == lengths[0])):
        length, base = int(lengths[0]), int(offsets[0])
        block = data[base : base + n * length].reshape(n, length)
        hashes = _murmur2_same_length(block) & np.uint32(0x7FFFFFFF)
        out[:] = hashes % np.uint32(num_partitions)
        return out
    valid = np.ones(n, dtype=bool) if keys.valid is None else np.asarray(keys.valid, dtype=bool)
    for length in np.unique(lengths[valid]).tolist():
        rows = np.flatnonzero(valid & (lengths == length))
        if length == 0:
            block = np.zeros((len(rows), 0), dtype=np.uint8)
        else:
            starts = offsets[:-1][rows]
            block = data[starts[:, None] + np.arange(length, dtype=np.int64)[None, :]]
        hashes = _murmur2_same_length(block) & np.uint32(0x7FFFFFFF)
        out[rows] = (hashes % np.uint32(num_partitions)).astype(np.int32)
    return out


class Partitioner:
    """Chooses partitions for records: murmur2 for keyed records, one rotating partition for keyless ones."""

    def __init__(self, start: int | None = None) -> None:
        import random

        self._counter = itertools.count(random.randrange(1 << 16) if start is None else start)
        self._lock = threading.Lock()

    def next_unkeyed(self, num_partitions: int, available: Sequence[int] | None = None) -> int:
        """The partition for the keyless records of one call; prefers ``available`` (partitions with a
        live leader) when given and not empty."""
        with self._lock:
            i = next(self._counter)
        if available:
            return int(available[i % len(available)])
        return i % num_partitions

    def partition(
        self, keys: BinaryColumn | None, n: int, num_partitions: int, available: Sequence[int] | None = None
    ) -> np.ndarray:
        """Partition of each of ``n`` records (``keys`` None: all keyless)."""
        unkeyed = self.next_unkeyed(num_partitions, available)
        if keys is None:
            return np.full(n, unkeyed, dtype=np.int32)
        parts = partitions_for_keys(keys, num_partitions)
        parts[parts < 0] = unkeyed
        return parts


def partition_records(cluster: Cluster, partitioner: Partitioner, d: Deadline, topic: str, partition: int | None,
                      keys: BinaryColumn | None, n: int) -> np.ndarray:
    """The partition of each of ``n`` records of one produce call: ``partition`` for all, else by key (murmur2) or
    one rotating partition for keyless records, among the partitions with a leader. Caller holds the cluster's
    lock; a KafkaTimeoutError means the topic's metadata could not be had (nothing was sent)."""
    what = f"metadata of {topic!r}"
    tm = cluster.call(d, lambda dd: cluster.topic(topic, dd), what=what, topics=[topic])
    if partition is not None and partition not in tm.partitions:
        tm = cluster.call(d, lambda dd: cluster.topic(topic, dd, refresh=True), what=what, topics=[topic])
    if partition is not None:
        if partition not in tm.partitions:
            raise UnknownTopicOrPartitionError(f"{topic!r} has no partition {partition}")
        return np.full(n, partition, dtype=np.int32)
    available = [p for p, pm in tm.partitions.items() if pm.leader >= 0]
    return partitioner.partition(keys, n, tm.num_partitions, available)
