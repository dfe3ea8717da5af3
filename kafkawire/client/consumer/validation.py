"""Position validation after a leader change (KIP-320): is the log a reader stands in still the one it read?

A reader's position carries the leader epoch of the last record it read. When a partition's leader
changes, the new leader may not hold what the old one served (an unclean election: records the old leader
never replicated are gone, and other records may now sit at the same offsets). OffsetForLeaderEpoch asks
the current leader where that epoch ends in its log: an end below the position means the log was truncated
under the reader (the records between the end and the position were never committed data), and the reader
must go back to the end (the first offset known to diverge) or stop, as Java's consumer does
(``SubscriptionState.maybeCompleteValidation``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...protocol import OffsetForLeaderEpochRequest
from ...protocol.errors import broker_error
from ..cluster.cluster import Cluster
from ..net.deadline import Deadline

__all__ = ["EpochEnd", "leader_epoch_of", "end_offsets_for_epochs"]

TP = tuple[str, int]


@dataclass(frozen=True)
class EpochEnd:
    """Where the asked epoch ends on the current leader: ``end_offset`` (the first offset after it) and the
    largest epoch at or below the asked one the leader knows; both -1 when the leader knows none."""

    end_offset: int
    leader_epoch: int


def leader_epoch_of(cluster: Cluster, tp: TP) -> int:
    """The partition's leader epoch in the cached metadata (-1 unknown)."""
    tm = cluster.topics.get(tp[0])
    pm = tm.partitions.get(tp[1]) if tm is not None else None
    return -1 if pm is None else pm.leader_epoch


def end_offsets_for_epochs(cluster: Cluster, deadline: Deadline, asked: Mapping[TP, int]) -> dict[TP, EpochEnd]:
    """OffsetForLeaderEpoch for ``{(topic, partition): last fetched epoch}`` at each partition's leader,
    with the leader epoch of the cached metadata as ``current_leader_epoch`` (a leader that is newer or
    older answers FENCED/UNKNOWN_LEADER_EPOCH: retried after a metadata refresh, until ``deadline``)."""
    topics = sorted({t for t, _ in asked})

    def attempt(d: Deadline) -> dict[TP, EpochEnd]:
        by_leader: dict[int, list[TP]] = defaultdict(list)
        for tp in asked:
            by_leader[cluster.leader(*tp, d)].append(tp)
        out: dict[TP, EpochEnd] = {}
        for leader, tps in by_leader.items():
            conn = cluster.connection(leader, d)
            version = conn.version_for(OffsetForLeaderEpochRequest, 2)  # v2: current_leader_epoch (fencing)
            by_topic: dict[str, list[Any]] = defaultdict(list)  # of OffsetForLeaderPartition
            for t, p in tps:
                by_topic[t].append(
                    OffsetForLeaderEpochRequest.OffsetForLeaderPartition(
                        partition=p, current_leader_epoch=leader_epoch_of(cluster, (t, p)), leader_epoch=asked[(t, p)]
                    )
                )
            req = OffsetForLeaderEpochRequest(
                replica_id=-1,  # a consumer: answers stop at the high watermark's epoch
                topics=[
                    OffsetForLeaderEpochRequest.OffsetForLeaderTopic(topic=t, partitions=ps)
                    for t, ps in by_topic.items()
                ],
            )
            resp = conn.request(req, version, deadline=d)
            for t in resp.topics:
                for p in t.partitions:
                    err = broker_error(p.error_code, None, f"validate the position of {t.topic}/{p.partition}")
                    if err is not None:
                        raise err  # retriable ones (fenced, not leader) are retried after a refresh
                    out[(t.topic, p.partition)] = EpochEnd(p.end_offset, p.leader_epoch)
        missing = [tp for tp in asked if tp not in out]
        if missing:
            raise broker_error(3, None, f"no epoch end offset for {missing}") or RuntimeError(missing)
        return out

    return cluster.call(deadline, attempt, what="validate positions (OffsetForLeaderEpoch)", topics=topics)
