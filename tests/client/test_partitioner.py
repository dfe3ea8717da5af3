"""The murmur2 partitioner agrees with Kafka's Java client (known vectors) and with kafka-python."""

from __future__ import annotations

import random

import numpy as np
import pytest
from kafka.partitioner.default import murmur2 as kafka_python_murmur2

from kafkawire.client.producer.partitioner import (
    Partitioner,
    murmur2,
    partition_for_key,
    partitions_for_keys,
    to_positive,
)
from kafkawire.columns import BinaryColumn

# Values of org.apache.kafka.common.utils.Utils.murmur2 from Kafka's UtilsTest.testMurmur2.
JAVA_VECTORS = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}


@pytest.mark.parametrize("key,expected", sorted(JAVA_VECTORS.items()))
def test_murmur2_matches_java_vectors(key, expected):
    assert murmur2(key) == expected


def test_to_positive_is_not_abs():
    assert to_positive(-(2**31)) == 0  # abs() would overflow to a negative partition in Java
    assert to_positive(-1) == 0x7FFFFFFF
    assert to_positive(5) == 5


def test_murmur2_matches_kafka_python_on_random_keys():
    rng = random.Random(1234)
    for _ in range(2000):
        key = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))
        theirs = kafka_python_murmur2(key)  # kafka-python returns the unsigned 32-bit value
        assert murmur2(key) & 0xFFFFFFFF == theirs & 0xFFFFFFFF


def test_vectorised_partitions_equal_scalar_ones():
    rng = random.Random(99)
    keys = [
        None if rng.random() < 0.1 else bytes(rng.randrange(256) for _ in range(rng.randrange(0, 23)))
        for _ in range(3000)
    ]
    col = BinaryColumn.from_pylist(keys)
    for n in (1, 3, 7, 64):
        got = partitions_for_keys(col, n)
        want = [-1 if k is None else partition_for_key(k, n) for k in keys]
        assert got.tolist() == want
    assert got.dtype == np.int32


@pytest.mark.parametrize("length", [0, 1, 3, 4, 10, 16, 37])
def test_vectorised_partitions_of_keys_of_one_length_equal_scalar_ones(length: int) -> None:
    # Every key present and of one length: hashed in place as one block (no gather); also from a column
    # whose offsets do not start at 0 (a slice of a larger one).
    rng = random.Random(length)
    keys = [bytes(rng.randrange(256) for _ in range(length)) for _ in range(500)]
    whole = BinaryColumn.from_pylist([b"x" * 5, *keys])
    sliced = BinaryColumn(whole.offsets[1:], whole.data)
    for col in (BinaryColumn.from_pylist(keys), sliced):
        for n in (1, 6, 64):
            assert partitions_for_keys(col, n).tolist() == [partition_for_key(k, n) for k in keys]


def test_known_key_partitions():
    # toPositive(murmur2(b"foobar")) % 7, computed from the Java vector above.
    assert partition_for_key(b"foobar", 7) == (-790332482 & 0x7FFFFFFF) % 7
    assert partition_for_key(b"", 10) == to_positive(murmur2(b"")) % 10


def test_keyless_records_of_one_call_share_a_partition_and_calls_rotate():
    p = Partitioner(start=0)
    first = p.partition(None, 5, 3)
    second = p.partition(None, 5, 3)
    assert len(set(first.tolist())) == 1 and len(set(second.tolist())) == 1
    assert first[0] != second[0]
    mixed = p.partition(BinaryColumn.from_pylist([b"foobar", None]), 2, 7)
    assert mixed[0] == partition_for_key(b"foobar", 7)
    assert p.next_unkeyed(10, available=[4]) == 4


def test_bad_partition_count():
    with pytest.raises(ValueError):
        partition_for_key(b"x", 0)
