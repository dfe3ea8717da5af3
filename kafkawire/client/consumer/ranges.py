"""Read offsets ``[start, end)`` of one or more partitions: the one bounded range reader.

The Spark source (one task = one range of one partition) and ``kafkawire consume`` (every partition of a
topic up to the end offsets it saw at start, or without end with ``--follow``) both need the same loop, and
it is easy to get subtly wrong. :func:`read_ranges` is that loop, on top of the public
:meth:`Client.fetch_many <kafkawire.client.Client.fetch_many>` and :meth:`Client.list_offsets
<kafkawire.client.Client.list_offsets>`:

* **Partial tails and records past the end.** A fetch may stop inside a batch (Kafka cuts the log at
  the byte limit, not at a batch boundary) and may return records at or after ``end``; a batch may also
  start before the fetch offset. Each :class:`RangeSlice` says which rows of the decoded columns lie inside
  the range, and the position moves to the decoder's ``next_offset`` (the first offset not yet read).
* **Gaps are normal.** Offsets missing from the log (compaction), transaction markers (control records)
  and, under ``read_committed``, aborted transactions are not data loss: ``next_offset`` moves past them
  (KAFKA-5443), and a range may yield fewer records than ``end - start``.
* **Data that is gone.** A start below the log start (``OFFSET_OUT_OF_RANGE``, retention or
  DeleteRecords) or an end beyond the log (the topic was truncated or re-created: the high watermark, or
  under ``read_committed`` the last stable offset, stays below ``end`` while nothing more arrives) is
  reported as a :class:`LostRange` to ``on_loss``, which raises to stop (the default raises
  :class:`RecordsLostError`) or returns to skip what is gone and go on.
* **A truncated log (KIP-320).** When a partition's leader changes under the read, the new leader is asked
  where the epoch of the last record read ends in its log (OffsetForLeaderEpoch); an end below the position
  means records already yielded were never committed data (an unclean election lost them, others may sit
  at their offsets now): :class:`~kafkawire.client.errors.LogTruncationError`, as Java's consumer raises
  without a reset policy (a bounded read cannot reset; Spark fails and retries the task).
* **Bounded.** The whole read takes one :class:`~kafkawire.client.net.deadline.Deadline` and every fetch and
  offset lookup gets what is left of it; ``stall_timeout_ms`` also bounds how long a partition may go
  without progress before :class:`~kafkawire.client.errors.KafkaTimeoutError` (Spark's
  ``kafkaConsumer.pollTimeoutMs``). A broker that answers an empty fetch at once instead of waiting
  ``max_wait_ms`` does not make the loop spin: an idle round backs off (capped at ``max_wait_ms``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...columns import RecordColumns
from ...protocol.errors import OffsetOutOfRangeError
from ..errors import KafkaTimeoutError, LogTruncationError, RecordsLostError
from ..net.deadline import Deadline
from .prefetch import Prefetcher
from .validation import end_offsets_for_epochs, leader_epoch_of

__all__ = ["LostRange", "RangeSlice", "RecordsLostError", "read_range", "read_ranges"]

log = logging.getLogger("kafkawire.client.ranges")

TP = tuple[str, int]

#: First pause after a fetch round that moved no partition forward (doubles up to ``max_wait_ms``).
_IDLE_BACKOFF_S = 0.01


@dataclass(frozen=True)
class RangeSlice:
    """Rows ``lo:hi`` of ``columns`` are records of ``topic``/``partition`` inside the requested range.

    ``next_offset`` is where the range continues after this slice (the position to commit once the rows
    are processed). ``len(slice)`` is ``hi - lo``.
    """

    topic: str
    partition: int
    columns: RecordColumns
    lo: int
    hi: int
    next_offset: int

    def __len__(self) -> int:
        return self.hi - self.lo

    @property
    def offsets(self) -> np.ndarray:
        """The offsets of the rows in the range (a view)."""
        return self.columns.offset[self.lo : self.hi]


@dataclass(frozen=True)
class LostRange:
    """Offsets ``[start, stop)`` of ``topic``/``partition`` that the range needed and the log no longer has."""

    topic: str
    partition: int
    start: int
    stop: int
    reason: str

    def __str__(self) -> str:
        return (
            f"Could not read records in offset [{self.start}, {self.stop}) for topic partition "
            f"{self.topic}-{self.partition}: {self.reason}."
        )


def _raise_lost(lost: LostRange) -> None:
    raise RecordsLostError(lost)


def read_range(
    client: Any,
    topic: str,
    partition: int,
    start: int,
    end: int | None,
    **kwargs: Any,
) -> Iterator[RangeSlice]:
    """:func:`read_ranges` for one partition."""
    return read_ranges(client, {(topic, partition): (start, end)}, **kwargs)


def read_ranges(
    client: Any,
    ranges: Mapping[TP, tuple[int, int | None]],
    *,
    deadline: Deadline,
    stall_timeout_ms: float | None = None,
    max_bytes: int = 16 << 20,
    partition_max_bytes: int | None = None,
    max_wait_ms: int = 500,
    isolation: str = "read_uncommitted",
    on_loss: Callable[[LostRange], None] | None = None,
    prefetch: bool = True,
) -> Iterator[RangeSlice]:
    """Yield :class:`RangeSlice` s covering ``{(topic, partition): (start, end)}``, in offset order per partition.

    ``end`` None reads on without end (follow mode: the caller stops iterating, or the deadline does). All
    partitions still short of their end are fetched together (one request per leader). Raises
    :class:`~kafkawire.client.errors.KafkaTimeoutError` when ``deadline`` passes before every range is read,
    or a partition makes no progress for ``stall_timeout_ms``; ``on_loss`` (default: raise
    :class:`RecordsLostError`) decides what records that are gone do.

    ``prefetch`` (default on): while the caller works on a slice, the next Fetch of each broker is already
    on its way (:mod:`kafkawire.client.consumer.prefetch`; one response per broker ahead, ``max_bytes`` at
    most); what is still ahead when the iteration ends is drained.
    """
    if isolation not in ("read_uncommitted", "read_committed"):
        raise ValueError(f"isolation must be 'read_uncommitted' or 'read_committed', not {isolation!r}")
    ahead = Prefetcher() if prefetch else None
    try:
        read = _RangeRead(client, ranges, deadline, stall_timeout_ms, max_wait_ms, on_loss or _raise_lost)
        yield from read.slices(
            max_bytes=max_bytes, partition_max_bytes=partition_max_bytes, isolation=isolation, ahead=ahead
        )
    finally:
        if ahead is not None:
            ahead.close()


class _RangeRead:
    """The loop of :func:`read_ranges` and its state: each partition's position and end, how long it has
    gone without progress, and the leader epochs KIP-320 validation compares."""

    def __init__(
        self,
        client: Any,
        ranges: Mapping[TP, tuple[int, int | None]],
        deadline: Deadline,
        stall_timeout_ms: float | None,
        max_wait_ms: int,
        on_loss: Callable[[LostRange], None],
    ) -> None:
        self.client, self.deadline, self.on_loss = client, deadline, on_loss
        self.stall_timeout_ms, self.max_wait_ms = stall_timeout_ms, max_wait_ms
        self.pos = {tp: int(s) for tp, (s, _) in ranges.items()}
        self.ends = {tp: (None if e is None else int(e)) for tp, (_, e) in ranges.items()}
        self.stalled_since = {tp: self._stall_clock() for tp in ranges}
        self.epochs: dict[TP, int] = {}  # leader epoch of the last record read
        self.leader_epochs: dict[TP, int] = {}  # the leader's epoch when the position was last known good

    def _stall_clock(self) -> Deadline:
        deadline = self.deadline
        return deadline if self.stall_timeout_ms is None else deadline.sooner(self.stall_timeout_ms / 1000.0)

    def slices(
        self, *, max_bytes: int, partition_max_bytes: int | None, isolation: str, ahead: Prefetcher | None
    ) -> Iterator[RangeSlice]:
        """Fetch every partition short of its end, round after round, until none is left."""
        idle = 0.0
        while True:
            active = self._active()
            if not active:
                return
            call = min((self.stalled_since[tp] for tp in active), key=lambda d: d.at)
            fetch_kw: dict[str, Any] = {} if ahead is None else {"prefetch": ahead}
            if call.timeout is not None:
                fetch_kw["deadline"] = call
            results = self.client.fetch_many(
                active,
                max_bytes=max_bytes,
                partition_max_bytes=partition_max_bytes,
                max_wait_ms=call.wait_ms(self.max_wait_ms),
                isolation=isolation,
                raise_errors=False,
                **fetch_kw,
            )
            moved = False
            _validate(self.client, results, active, self.epochs, self.leader_epochs, call)
            for tp, res in results.items():
                off = active[tp]
                if res.error is not None:
                    moved = self._after_error(tp, res.error, off, isolation, call) or moved
                    continue
                piece, nxt = self._slice(tp, res, off)
                if piece is not None:
                    yield piece
                moved = self._advance(tp, res, off, nxt) or moved
            if moved:
                idle = 0.0
            else:
                # Kafka holds an empty fetch for max_wait_ms; some brokers answer at once. Back off so an idle
                # read (a follow, or a range waiting for a transaction to end) does not spin.
                idle = min(max(_IDLE_BACKOFF_S, idle * 2), self.max_wait_ms / 1000.0)
                self.deadline.sleep(idle)

    def _active(self) -> dict[TP, int]:
        """The partitions short of their end, at their positions; raises when the deadline passed first."""
        ends = self.ends
        active = {tp: off for tp, off in self.pos.items() if (end := ends[tp]) is None or off < end}
        if active and self.deadline.expired():
            raise KafkaTimeoutError(
                f"reading offset ranges timed out after {self.deadline.timeout:.3f} s with "
                + ", ".join(f"{t}-{p} at {off} (end {ends[(t, p)]})" for (t, p), off in sorted(active.items()))
            )
        return active

    def _after_error(self, tp: TP, error: BaseException, off: int, isolation: str, call: Deadline) -> bool:
        """A partition answered ``error`` at ``off``: OFFSET_OUT_OF_RANGE moves on past what is gone (True
        when the position moved); anything else is raised."""
        if not isinstance(error, OffsetOutOfRangeError):
            raise error
        new = _after_out_of_range(self.client, tp, off, self.ends[tp], isolation, call, self.on_loss)
        if new == off:
            return False
        self.pos[tp] = new
        self.stalled_since[tp] = self._stall_clock()
        return True

    def _slice(self, tp: TP, res: Any, off: int) -> tuple[RangeSlice | None, int]:
        """The rows of ``res`` (fetched at ``off``) inside the range, if any, and where the range goes on."""
        cols: RecordColumns = res.records
        nxt: int = res.next_offset
        n = len(cols)
        if not n:
            return None, nxt
        end = self.ends[tp]
        last_epoch = int(cols.batch_partition_leader_epoch[-1]) if cols.num_batches else -1
        if last_epoch >= 0:
            self.epochs[tp] = last_epoch
        lo = int(np.searchsorted(cols.offset, off, side="left"))
        hi = n if end is None else int(np.searchsorted(cols.offset, end, side="left"))
        if end is not None and nxt > end:
            nxt = end  # records at or past the end were fetched: the range is done, the rest is not ours
        return (RangeSlice(tp[0], tp[1], cols, lo, hi, max(nxt, off)) if hi > lo else None), nxt

    def _advance(self, tp: TP, res: Any, off: int, nxt: int) -> bool:
        """Move ``tp`` to ``nxt`` after a fetch at ``off`` (True when it moved); without progress, report
        a log that ends short of the range, or raise when the partition stalled too long."""
        if nxt > off:
            self.pos[tp] = nxt
            self.stalled_since[tp] = self._stall_clock()
            return True
        # No progress. If the log ends at or before this offset while the range goes further, what the
        # range planned is not there (truncated or re-created topic): report it instead of waiting for
        # records that will never come. Under read_committed, an offset between the last stable offset
        # and the high watermark is an open transaction: wait for it (up to the stall timeout).
        end = self.ends[tp]
        if end is not None and 0 <= res.high_watermark <= off:
            self.on_loss(LostRange(tp[0], tp[1], off, end, f"the log ends at {res.high_watermark}"))
            self.pos[tp] = end
            return True
        stall_timeout_ms = self.stall_timeout_ms
        if self.stalled_since[tp].expired() and stall_timeout_ms is not None and not self.deadline.expired():
            raise KafkaTimeoutError(
                f"no record could be fetched at offset {off} of {tp[0]}-{tp[1]} in {stall_timeout_ms:.0f} ms "
                f"(high watermark {res.high_watermark}, last stable offset {res.last_stable_offset})"
            )
        return False

def _validate(
    client: Any,
    results: Mapping[TP, Any],
    positions: Mapping[TP, int],
    epochs: dict[TP, int],
    leader_epochs: dict[TP, int],
    call: Deadline,
) -> None:
    """KIP-320: for partitions whose leader epoch changed since the last fetch (or that came back out of
    range), check that the epoch of the last record read still ends at or after the position on the
    current leader; raise :class:`LogTruncationError` when it does not."""
    cluster = getattr(client, "cluster", None)
    if cluster is None:  # a stand-in client (tests) without cluster metadata: nothing to validate against
        return
    asked: dict[TP, int] = {}
    for tp, res in results.items():
        current, known = leader_epoch_of(cluster, tp), leader_epochs.get(tp)
        out_of_range = isinstance(res.error, OffsetOutOfRangeError)
        if tp in epochs and known is not None and current >= 0 and (current != known or out_of_range):
            asked[tp] = epochs[tp]
        elif current >= 0:
            leader_epochs[tp] = current
    if not asked:
        return
    with cluster.held(call, "offsets for leader epochs"):
        ends = end_offsets_for_epochs(cluster, call, asked)
    for tp, e in ends.items():
        if e.end_offset < 0 or e.end_offset < positions[tp]:
            raise LogTruncationError(tp, positions[tp], e.end_offset if e.end_offset >= 0 else None)
        leader_epochs[tp] = leader_epoch_of(cluster, tp)


def _after_out_of_range(
    client: Any,
    tp: TP,
    off: int,
    end: int | None,
    isolation: str,
    call: Deadline,
    on_loss: Callable[[LostRange], None],
) -> int:
    """Where to continue after OFFSET_OUT_OF_RANGE at ``off``: the same offset when the log does hold it
    now (a leader change), else past what is gone, after telling ``on_loss``."""
    topic, partition = tp
    kw: dict[str, Any] = {} if call.timeout is None else {"deadline": call}
    earliest: int = client.list_offsets(topic, [partition], timestamp="earliest", **kw)[partition].offset
    latest = client.list_offsets(topic, [partition], timestamp="latest", isolation=isolation, **kw)[partition].offset
    if earliest <= off < latest:
        return off
    if off < earliest:
        stop = earliest if end is None else min(earliest, end)
        on_loss(LostRange(topic, partition, off, stop, f"the log now starts at {earliest}"))
        return stop
    # Beyond the end of the log: the topic was truncated or re-created under us.
    stop = latest if end is None else end
    on_loss(LostRange(topic, partition, off, max(stop, off), f"the log now holds [{earliest}, {latest})"))
    return stop
