"""Offset arithmetic for the Spark source: resolve offset specs, split ranges into tasks, rate-limit triggers.

Everything here is pure Python over ``{(topic, partition): offset}`` maps; the broker is reached only
through the small :class:`OffsetLookup` protocol (implemented by :class:`~kafkawire.spark.kafka_access.KafkaAccess`),
so the planning rules can be unit-tested without one. The rules follow Spark's Kafka connector:
``KafkaOffsetReader`` (resolution), ``KafkaOffsetRangeCalculator`` (``minPartitions`` /
``maxRecordsPerPartition``) and ``KafkaMicroBatchStream.rateLimit`` (``maxOffsetsPerTrigger``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from .errors import InvalidOptionError, KafkaDataLossError, tp_str
from .options import EARLIEST, LATEST, OffsetSpec, TopicPartition

__all__ = [
    "OffsetLookup",
    "OffsetRange",
    "offsets_from_json",
    "offsets_to_json",
    "rate_limit",
    "resolve",
    "split_ranges",
]


class OffsetLookup(Protocol):
    """What planning needs from Kafka: earliest, latest and by-timestamp offsets of partitions."""

    def earliest_offsets(self, tps: Sequence[TopicPartition]) -> dict[TopicPartition, int]: ...

    def latest_offsets(self, tps: Sequence[TopicPartition]) -> dict[TopicPartition, int]: ...

    def offsets_for_times(self, query: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """The first offset whose timestamp is >= the given one, or -1 when there is none."""
        ...


@dataclass(frozen=True, order=True)
class OffsetRange:
    """Records ``[start, end)`` of one topic-partition: the unit of work of one Spark task."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        return max(self.end - self.start, 0)


# -------------------------------------------------------------------------------------- resolution


def resolve(
    spec: OffsetSpec,
    tps: Sequence[TopicPartition],
    lookup: OffsetLookup,
    *,
    is_start: bool,
) -> dict[TopicPartition, int]:
    """Turn ``spec`` into concrete offsets for every partition in ``tps``.

    Per-partition offsets of -2/-1 become the earliest/latest offset. An explicit offset map must cover
    exactly the assigned partitions (``KAFKA_START_OFFSET_DOES_NOT_MATCH_ASSIGNED``), as must a timestamp
    map. A starting timestamp that matches no record fails unless ``startingOffsetsByTimestampStrategy``
    is ``latest``; an ending timestamp that matches no record means "latest" (``KafkaOffsetReader``).
    """
    tps = list(tps)
    if spec.kind == "earliest":
        return lookup.earliest_offsets(tps)
    if spec.kind == "latest":
        return lookup.latest_offsets(tps)
    if spec.kind == "offsets":
        given = dict(spec.per_partition or {})
        if set(given) != set(tps):
            # Spark's KAFKA_START_OFFSET_DOES_NOT_MATCH_ASSIGNED, line breaks included (its message is
            # joined from the lines of kafka-error-conditions.json; Spark 4.2 shows it without the class).
            raise InvalidOptionError(
                "Partitions specified for Kafka start offsets don't match what are assigned. Maybe topic "
                "partitions are created \nor deleted while the query is running. Use -1 for latest, -2 for "
                f"earliest.\nSpecified: {_tps(given)} Assigned: {_tps(tps)}"
            )
        need_earliest = [tp for tp, o in given.items() if o == EARLIEST]
        need_latest = [tp for tp, o in given.items() if o == LATEST]
        if need_earliest:
            given.update(lookup.earliest_offsets(need_earliest))
        if need_latest:
            given.update(lookup.latest_offsets(need_latest))
        return given
    if spec.kind == "timestamps":
        query = dict(spec.per_partition or {})
        if set(query) != set(tps):
            raise InvalidOptionError(  # Spark's KAFKA_TIMESTAMP_OFFSET_DOES_NOT_MATCH_ASSIGNED, as above
                "Partitions specified for Kafka timestamp based "
                f"{'starting' if is_start else 'ending'} offsets don't match what are assigned. Maybe topic "
                "partitions are created \nor deleted while the query is running, or you didn't specify all the "
                f"partitions.\nSpecified: {_tps(query)} Assigned: {_tps(tps)}"
            )
    else:  # one timestamp for every partition
        query = {tp: int(spec.timestamp or 0) for tp in tps}
    found = lookup.offsets_for_times(query) if query else {}
    missing = [tp for tp in query if found.get(tp, -1) < 0]
    if missing:
        if is_start and not spec.no_match_latest:
            tp = missing[0]
            raise InvalidOptionError(
                f"No offset matched from request of topic-partition {tp_str(*tp)} and timestamp {query[tp]}."
            )
        found.update(lookup.latest_offsets(missing))
    return {tp: found[tp] for tp in query}


def _tps(tps: Iterable[TopicPartition]) -> str:
    return "Set(" + ", ".join(sorted(tp_str(*tp) for tp in tps)) + ")"


def check_ranges(
    start: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
    *,
    fail_on_data_loss: bool,
    earliest: Mapping[TopicPartition, int] | None = None,
) -> list[OffsetRange]:
    """Ranges ``start → end`` per partition, with Spark's checks.

    A resolved start after the resolved end is ``RESOLVED_START_OFFSET_GREATER_THAN_END_OFFSET`` in a batch
    query. With ``earliest`` given (streaming), a start below the earliest retained offset is data loss:
    an error, or a silent move to ``earliest`` when ``failOnDataLoss`` is false.
    """
    out: list[OffsetRange] = []
    for tp in sorted(end):
        if tp not in start:
            continue
        s, e = start[tp], end[tp]
        if earliest is not None and tp in earliest and s < earliest[tp]:
            if fail_on_data_loss:
                raise KafkaDataLossError(
                    f"Starting offset for {tp_str(*tp)} was {s} but consumer reset to {earliest[tp]}."
                )
            s = earliest[tp]
        if s > e:
            if earliest is None:
                raise InvalidOptionError(
                    f"[RESOLVED_START_OFFSET_GREATER_THAN_END_OFFSET] The resolved start offset {s} is greater than "
                    f"the resolved end offset {e} for topic {tp[0]} partition {tp[1]}."
                )
            if fail_on_data_loss:
                raise KafkaDataLossError(f"Partition {tp_str(*tp)} offset was changed from {s} to {e}.")
            continue
        out.append(OffsetRange(tp[0], tp[1], s, e))
    return out


# ------------------------------------------------------------------------------------------ splitting


def split_ranges(
    ranges: Iterable[OffsetRange],
    *,
    min_partitions: int | None = None,
    max_records_per_partition: int | None = None,
) -> list[OffsetRange]:
    """Spark tasks for ``ranges``: empty ranges dropped, then split (``KafkaOffsetRangeCalculator``).

    ``maxRecordsPerPartition`` first cuts every range into pieces of at most that many offsets; then, if
    there are still fewer pieces than ``minPartitions``, each piece is cut into a number of parts
    proportional to its share of all offsets (at least one), sizes differing by at most one.
    """
    out = [r for r in ranges if r.size > 0]
    if max_records_per_partition:
        out = [piece for r in out for piece in _cut(r, math.ceil(r.size / max_records_per_partition))]
    if min_partitions and len(out) < min_partitions:
        total = sum(r.size for r in out)
        # Scala's math.round (half up), not Python's round (half to even): 2.5 parts is 3, as in Spark.
        out = [piece for r in out for piece in _cut(r, max(math.floor(r.size / total * min_partitions + 0.5), 1))]
    return out


def _cut(r: OffsetRange, parts: int) -> list[OffsetRange]:
    parts = max(min(parts, r.size), 1)
    out = []
    start, remaining = r.start, r.size
    for i in range(parts):
        n = remaining // (parts - i)  # the later parts absorb the remainder
        out.append(OffsetRange(r.topic, r.partition, start, start + n))
        start += n
        remaining -= n
    return out


# --------------------------------------------------------------------------------------- rate limits


def rate_limit(
    start: Mapping[TopicPartition, int], latest: Mapping[TopicPartition, int], limit: int
) -> dict[TopicPartition, int]:
    """End offsets that advance at most ``limit`` offsets in total from ``start`` towards ``latest``.

    The budget is shared in proportion to what each partition has pending, like Spark's
    ``KafkaMicroBatchStream.rateLimit``: a partition with a fractional share below one still gets one
    offset so a trickle of data always makes progress. Partitions missing from ``start`` (new ones)
    start at 0 for the purpose of sharing.
    """
    pending = {tp: max(end - start.get(tp, 0), 0) for tp, end in latest.items()}
    total = sum(pending.values())
    if total <= limit:
        return dict(latest)
    out: dict[TopicPartition, int] = {}
    for tp, end in latest.items():
        begin = start.get(tp, 0)
        share = limit * pending[tp] / total
        step = math.ceil(share) if share < 1 else math.floor(share)
        out[tp] = min(begin + step, end) if pending[tp] else end
    return out


def pending_records(start: Mapping[TopicPartition, int], end: Mapping[TopicPartition, int]) -> int:
    """Offsets between ``start`` and ``end`` summed over partitions (new partitions count from 0)."""
    return sum(max(e - start.get(tp, 0), 0) for tp, e in end.items())


# ------------------------------------------------------------------------------- checkpoint offsets


def offsets_to_json(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """``{topic: {"partition": offset}}``: the offset shape Spark's Kafka source checkpoints.

    Partition numbers become strings because Spark stores the dict as JSON (integer keys would come
    back as strings after a restart and the two would no longer compare equal).
    """
    out: dict[str, dict[str, int]] = {}
    for (t, p), off in sorted(offsets.items()):
        out.setdefault(t, {})[str(p)] = int(off)
    return out


def offsets_from_json(data: Mapping[str, Mapping[str, int]]) -> dict[TopicPartition, int]:
    """Inverse of :func:`offsets_to_json`."""
    return {(t, int(p)): int(off) for t, parts in data.items() for p, off in parts.items()}
