"""Offset resolution, task splitting and trigger rate limits of the Spark source (no Spark, no broker)."""

from __future__ import annotations

import re

import pytest

from kafkawire.spark.errors import InvalidOptionError, KafkaDataLossError
from kafkawire.spark.options import OffsetSpec
from kafkawire.spark.planning import (
    OffsetRange,
    check_ranges,
    offsets_from_json,
    offsets_to_json,
    pending_records,
    rate_limit,
    resolve,
    split_ranges,
)


class FakeLookup:
    """Partitions with a log start, a log end and records whose timestamp is 1000 * offset."""

    def __init__(self, logs: dict[tuple[str, int], tuple[int, int]]) -> None:
        self.logs = logs
        self.calls: list[str] = []

    def earliest_offsets(self, tps):
        self.calls.append("earliest")
        return {tp: self.logs[tp][0] for tp in tps}

    def latest_offsets(self, tps):
        self.calls.append("latest")
        return {tp: self.logs[tp][1] for tp in tps}

    def offsets_for_times(self, query):
        self.calls.append("times")
        out = {}
        for tp, ts in query.items():
            lo, hi = self.logs[tp]
            first = max(lo, -(-ts // 1000))
            out[tp] = first if first < hi else -1
        return out


LOGS = {("a", 0): (0, 10), ("a", 1): (5, 50), ("b", 0): (0, 0)}
TPS = sorted(LOGS)


def test_resolve_earliest_latest_and_sentinels():
    look = FakeLookup(LOGS)
    assert resolve(OffsetSpec("earliest"), TPS, look, is_start=True) == {("a", 0): 0, ("a", 1): 5, ("b", 0): 0}
    assert resolve(OffsetSpec("latest"), TPS, look, is_start=False) == {("a", 0): 10, ("a", 1): 50, ("b", 0): 0}
    spec = OffsetSpec("offsets", per_partition={("a", 0): 3, ("a", 1): -2, ("b", 0): -1})
    assert resolve(spec, TPS, look, is_start=True) == {("a", 0): 3, ("a", 1): 5, ("b", 0): 0}


def test_resolve_offsets_must_cover_assigned_partitions():
    spec = OffsetSpec("offsets", per_partition={("a", 0): 3})
    with pytest.raises(
        InvalidOptionError,
        match=re.escape("Partitions specified for Kafka start offsets don't match what are assigned."),
    ):
        resolve(spec, TPS, FakeLookup(LOGS), is_start=True)


def test_resolve_timestamps():
    look = FakeLookup(LOGS)
    got = resolve(OffsetSpec("timestamp", timestamp=7500), [("a", 0), ("a", 1)], look, is_start=True)
    assert got == {("a", 0): 8, ("a", 1): 8}
    # no record at or after the timestamp: error for a start, latest for an end / with strategy "latest"
    with pytest.raises(InvalidOptionError, match="No offset matched from request of topic-partition a-0"):
        resolve(OffsetSpec("timestamp", timestamp=20_000), [("a", 0)], look, is_start=True)
    assert resolve(OffsetSpec("timestamp", timestamp=20_000), [("a", 0)], look, is_start=False) == {("a", 0): 10}
    lenient = OffsetSpec("timestamp", timestamp=20_000, no_match_latest=True)
    assert resolve(lenient, [("a", 0)], look, is_start=True) == {("a", 0): 10}
    per = OffsetSpec("timestamps", per_partition={("a", 0): 2000, ("a", 1): 0})
    assert resolve(per, [("a", 0), ("a", 1)], look, is_start=True) == {("a", 0): 2, ("a", 1): 5}
    with pytest.raises(InvalidOptionError, match=re.escape("Partitions specified for Kafka timestamp based")):
        resolve(per, TPS, look, is_start=False)


def test_check_ranges_batch_and_streaming():
    start = {("a", 0): 2, ("a", 1): 5}
    assert check_ranges(start, {("a", 0): 10, ("a", 1): 5}, fail_on_data_loss=True) == [
        OffsetRange("a", 0, 2, 10),
        OffsetRange("a", 1, 5, 5),
    ]
    with pytest.raises(InvalidOptionError, match=re.escape("[RESOLVED_START_OFFSET_GREATER_THAN_END_OFFSET]")):
        check_ranges({("a", 0): 11}, {("a", 0): 10}, fail_on_data_loss=True)
    # streaming: a start below the log start is data loss, or skipped forward when allowed
    earliest = {("a", 0): 4}
    with pytest.raises(KafkaDataLossError, match="Starting offset for a-0 was 2 but consumer reset to 4"):
        check_ranges({("a", 0): 2}, {("a", 0): 10}, fail_on_data_loss=True, earliest=earliest)
    got = check_ranges({("a", 0): 2}, {("a", 0): 10}, fail_on_data_loss=False, earliest=earliest)
    assert got == [OffsetRange("a", 0, 4, 10)]


def test_split_ranges_drops_empty_and_keeps_large():
    ranges = [OffsetRange("a", 0, 0, 10), OffsetRange("a", 1, 5, 5)]
    assert split_ranges(ranges) == [OffsetRange("a", 0, 0, 10)]


def test_split_ranges_max_records_per_partition():
    got = split_ranges([OffsetRange("a", 0, 0, 10), OffsetRange("b", 0, 100, 103)], max_records_per_partition=4)
    assert got == [
        OffsetRange("a", 0, 0, 3),
        OffsetRange("a", 0, 3, 6),
        OffsetRange("a", 0, 6, 10),
        OffsetRange("b", 0, 100, 103),
    ]
    assert all(r.size <= 4 for r in got)


def test_split_ranges_min_partitions_proportional():
    ranges = [OffsetRange("a", 0, 0, 900), OffsetRange("a", 1, 0, 100)]
    got = split_ranges(ranges, min_partitions=10)
    assert len(got) == 10
    assert [r for r in got if r.partition == 1] == [OffsetRange("a", 1, 0, 100)]
    # contiguous, covering, sizes within one of each other
    a0 = [r for r in got if r.partition == 0]
    assert a0[0].start == 0 and a0[-1].end == 900
    assert all(x.end == y.start for x, y in zip(a0, a0[1:]))
    assert max(r.size for r in a0) - min(r.size for r in a0) <= 1
    # shares are rounded half up, like Scala's math.round: 4 x 2.5 -> 4 x 3
    equal = [OffsetRange("a", p, 0, 50) for p in range(4)]
    assert len(split_ranges(equal, min_partitions=10)) == 12
    # already enough partitions: untouched
    assert split_ranges(ranges, min_partitions=2) == ranges
    # never more pieces than records
    assert split_ranges([OffsetRange("a", 0, 0, 2)], min_partitions=5) == [
        OffsetRange("a", 0, 0, 1),
        OffsetRange("a", 0, 1, 2),
    ]


def test_rate_limit_is_proportional_and_bounded():
    start = {("a", 0): 0, ("a", 1): 0, ("a", 2): 100}
    latest = {("a", 0): 900, ("a", 1): 100, ("a", 2): 100}
    end = rate_limit(start, latest, 100)
    assert end == {("a", 0): 90, ("a", 1): 10, ("a", 2): 100}
    assert pending_records(start, end) == 100
    assert rate_limit(start, latest, 10_000) == latest
    # a tiny share still moves one offset
    end = rate_limit({("a", 0): 0, ("a", 1): 0}, {("a", 0): 1000, ("a", 1): 1}, 10)
    assert end[("a", 1)] == 1 and end[("a", 0)] == 9


def test_checkpoint_json_round_trip():
    offs = {("b", 10): 7, ("a", 2): 3, ("a", 0): 1}
    js = offsets_to_json(offs)
    assert js == {"a": {"0": 1, "2": 3}, "b": {"10": 7}}
    assert offsets_from_json(js) == offs
