"""Where a :class:`~kafkawire.client.Consumer` reads next in each partition, and how it gets there (the role of
the Java client's ``OffsetFetcher`` and of the position checks of its ``Fetcher``).

:class:`Positions` sets the positions kept in the consumer's
:class:`~kafkawire.client.consumer.subscription.SubscriptionState`: a partition without one starts from the
group's committed offset, else where ``auto_offset_reset`` says (:meth:`Positions.init`); ``seek_to_*`` and
an out-of-range offset reset it (ListOffsets); after a leader change it is validated against the new leader's
log before anything more is read (KIP-320, :meth:`Positions.validate`, with :mod:`.validation`); and a
fetch's results advance it (:meth:`Positions.take`, once per ``poll()`` round: the hot path).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ...columns import RecordColumns
from ...protocol.errors import OffsetOutOfRangeError
from ..errors import LogTruncationError, NoOffsetForPartitionError
from ..net.deadline import Deadline
from ..types import FetchResult
from .offsets import EARLIEST, LATEST
from .subscription import SubscriptionState, TopicPartition, names
from .validation import end_offsets_for_epochs, leader_epoch_of

if TYPE_CHECKING:
    from .consumer import Consumer

__all__ = ["Positions"]

log = logging.getLogger("kafkawire.consumer")


class Positions:
    """The positions of one consumer's partitions in its ``state``.

    ``consumer`` gives the settings read when they are used (``client``, ``group_id``, ``auto_offset_reset``);
    ``counters`` is the consumer's counter dict (``records_consumed``, ``bytes_consumed``).
    """

    def __init__(self, consumer: Consumer, state: SubscriptionState, counters: dict[str, int]) -> None:
        self.consumer = consumer
        self.state = state
        self.counters = counters

    def set(self, tp: TopicPartition, offset: int, epoch: int) -> None:
        """Move ``tp`` to ``offset``, read under leader epoch ``epoch`` (-1 unknown: nothing to validate)."""
        self.state.positions[tp] = offset
        if epoch >= 0:
            self.state.epochs[tp] = epoch
        else:
            self.state.epochs.pop(tp, None)
        self.note_leader_epoch(tp)

    def note_leader_epoch(self, tp: TopicPartition) -> None:
        """The position of ``tp`` stands in the log of the leader epoch the metadata shows now (none known
        yet: the first one seen is taken as it, without a check)."""
        current = leader_epoch_of(self.consumer.client.cluster, tp)
        if current >= 0:
            self.state.leader_epochs[tp] = current
        else:
            self.state.leader_epochs.pop(tp, None)

    def reset(self, tps: list[TopicPartition], which: int, deadline: Deadline) -> None:
        """Move ``tps`` to the offset ListOffsets gives for ``which`` (``EARLIEST``, ``LATEST``)."""
        by_topic: dict[str, list[int]] = {}
        for t, p in tps:
            by_topic.setdefault(t, []).append(p)
        for t, ps in by_topic.items():
            for p, listed in self.consumer.client.list_offsets(t, ps, timestamp=which, deadline=deadline).items():
                self.set((t, p), listed.offset, listed.leader_epoch)

    def reset_by_policy(self, tps: list[TopicPartition], deadline: Deadline) -> None:
        """Move ``tps`` where ``auto_offset_reset`` says (``"earliest"`` or ``"latest"``)."""
        self.reset(tps, EARLIEST if self.consumer.auto_offset_reset == "earliest" else LATEST, deadline)

    def init(self, tps: list[TopicPartition], deadline: Deadline) -> None:
        """Positions for partitions that have none: the committed offset, else ``auto_offset_reset``."""
        positions = self.state.positions
        missing = [tp for tp in tps if tp not in positions]
        if not missing:
            return
        client, group_id = self.consumer.client, self.consumer.group_id
        if group_id is not None:
            for tp, c in client.committed(group_id, missing, deadline=deadline).items():
                if c.offset >= 0:
                    self.set(tp, c.offset, c.leader_epoch)
                    self.state.committed[tp] = c.offset
        missing = [tp for tp in missing if tp not in positions]
        if missing:
            if self.consumer.auto_offset_reset == "none":
                raise NoOffsetForPartitionError(
                    f"no committed offset for {names(missing)} and auto_offset_reset is 'none'"
                )
            self.reset_by_policy(missing, deadline)

    def ready(self, deadline: Deadline) -> list[TopicPartition]:
        """The partitions to fetch in this ``poll()`` round (assigned, not paused), their positions set and
        validated (KIP-320); none when nothing is assigned or everything is paused (after a short sleep, so
        that a poll loop does not spin) or when too little time is left for a round trip."""
        state = self.state
        if not state.assignment:
            deadline.sleep(0.05)
            return []
        self.init(state.assignment, deadline)
        if deadline.remaining_ms() < 5:
            return []  # too little left for a round trip: not worth a request
        fetchable = state.fetchable()
        if not fetchable:
            deadline.sleep(min(0.05, deadline.remaining()))
            return []
        self.validate(fetchable, deadline)
        return fetchable

    def validate(self, tps: list[TopicPartition], deadline: Deadline) -> None:
        """KIP-320: partitions whose leader epoch changed since their position was last checked are asked
        where the epoch of their last record ends on the new leader (OffsetForLeaderEpoch). An end below
        the position means a truncated log: back to the divergence point (as Java's consumer does), or
        :class:`LogTruncationError` when ``auto_offset_reset`` is ``"none"``."""
        cluster, state = self.consumer.client.cluster, self.state
        asked: dict[TopicPartition, int] = {}
        for tp in tps:
            current, known = leader_epoch_of(cluster, tp), state.leader_epochs.get(tp)
            if known is None or current < 0 or tp not in state.epochs:
                if known is None or tp not in state.epochs:
                    self.note_leader_epoch(tp)  # nothing read under a known epoch: nothing to check
                continue
            if current != known:
                asked[tp] = state.epochs[tp]
        if not asked:
            return
        with cluster.held(deadline, "offsets for leader epochs"):
            ends = end_offsets_for_epochs(cluster, deadline, asked)
        policy = self.consumer.auto_offset_reset
        for tp, end in ends.items():
            position = state.positions[tp]
            self.note_leader_epoch(tp)
            if end.end_offset < 0 or end.leader_epoch < 0:
                # The leader knows nothing of that epoch or before: where the log diverges is unknown.
                if policy == "none":
                    raise LogTruncationError(tp, position, None)
                log.warning("%s/%d: the leader knows no epoch up to %d; resetting to %s",
                            tp[0], tp[1], asked[tp], policy)  # fmt: skip
                self.reset_by_policy([tp], deadline)
            elif end.end_offset < position:
                if policy == "none":
                    raise LogTruncationError(tp, position, end.end_offset)
                log.warning("%s/%d: truncation detected at offset %d; going back to %d, the first offset known "
                            "to diverge", tp[0], tp[1], position, end.end_offset)  # fmt: skip
                self.set(tp, end.end_offset, end.leader_epoch)

    def take(
        self, results: Mapping[TopicPartition, FetchResult], deadline: Deadline
    ) -> dict[TopicPartition, RecordColumns]:
        """The records of a fetch's ``results`` that the consumer returns, positions advanced past them.

        A partition's error is handled here (out of range: validated once if it may be a truncated log,
        then reset by ``auto_offset_reset``) or raised; records a fetch brought from a leader the position
        was not validated against yet are left for the next round (KIP-320)."""
        state, counters = self.state, self.counters
        positions, epochs, leader_epochs = state.positions, state.epochs, state.leader_epochs
        out: dict[TopicPartition, RecordColumns] = {}
        for tp, r in results.items():
            if r.error is not None:
                self._fetch_error(tp, r, deadline)
                continue
            if r.high_watermark >= 0:
                state.high_watermarks[tp] = r.high_watermark
            state.out_of_range_checked.discard(tp)
            known = leader_epochs.get(tp)
            if known is None:
                self.note_leader_epoch(tp)
            elif tp in epochs and leader_epoch_of(self.consumer.client.cluster, tp) not in (known, -1):
                # The leader changed while fetching (the fetch followed it): what it sent is not accepted until
                # the position is validated against the new leader's log (KIP-320), at the next poll.
                continue
            records = r.records
            if len(records):
                batch_epochs = records.batch_partition_leader_epoch
                if len(batch_epochs) and int(batch_epochs[-1]) >= 0:
                    epochs[tp] = int(batch_epochs[-1])
            if tp in positions and r.next_offset > positions[tp]:
                positions[tp] = r.next_offset
            if len(records):
                out[tp] = records
                counters["records_consumed"] += len(records)
                counters["bytes_consumed"] += records.value.nbytes + records.key.nbytes
        return out

    def _fetch_error(self, tp: TopicPartition, r: FetchResult, deadline: Deadline) -> None:
        """A partition's fetch failed with ``r.error``: out of range is handled, anything else raised."""
        state = self.state
        if not isinstance(r.error, OffsetOutOfRangeError):
            assert r.error is not None
            raise r.error
        if tp in state.epochs and tp not in state.out_of_range_checked:
            # Out of range on a new leader may be a truncated log (Java's consumer learns it from a
            # FENCED_LEADER_EPOCH instead): validate first (KIP-320); if the position survives the check and
            # is still out of range, it is reset the next time.
            state.out_of_range_checked.add(tp)
            state.leader_epochs[tp] = -2  # differs from any epoch: the next poll validates
            return
        state.out_of_range_checked.discard(tp)
        policy = self.consumer.auto_offset_reset
        if policy == "none":
            raise NoOffsetForPartitionError(
                f"{tp[0]}/{tp[1]}: offset {r.fetch_offset} is out of range and auto_offset_reset is 'none'"
            ) from r.error
        log.info("%s/%d: offset %d out of range, resetting to %s", tp[0], tp[1], r.fetch_offset, policy)
        self.reset_by_policy([tp], deadline)
