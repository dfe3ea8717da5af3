"""Fetching from the nearest replica (KIP-392, the Java client's ``client.rack``).

A client with a rack sends it in every Fetch (v11+ ``rack_id``). A leader whose broker runs a replica
selector (``replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector``) answers with
the ``preferred_read_replica`` for that rack and no records; the client then fetches that partition from
that replica. :class:`ReadReplicas` keeps those preferences:

* a preference lasts ``metadata_max_age_ms`` (Java's rule), after which the leader is asked again, so a
  client follows a selector that changes its mind (a replica added to the rack, one out of sync);
* a preference is dropped, and the partition fetched from its leader, when the replica fails (connection
  refused or broken, a timeout), when it answers with an error (NOT_LEADER_OR_FOLLOWER, a follower not yet
  at the offset asked for: OFFSET_OUT_OF_RANGE from a follower is not the log's end, as Java's consumer
  treats it), when it disappears from the metadata, and when a broker names another replica.

Used by :mod:`kafkawire.client.consumer.fetch`, so the consumer and the range reader (Spark, the CLI) both
follow it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Container

__all__ = ["ReadReplicas"]

log = logging.getLogger("kafkawire.client.fetch")

TP = tuple[str, int]


class ReadReplicas:
    """Preferred read replicas per partition, each until ``max_age_ms`` after the broker named it."""

    def __init__(self, max_age_ms: float) -> None:
        self.max_age_ms = max_age_ms
        self._preferred: dict[TP, tuple[int, float]] = {}  # tp -> (node id, time.monotonic() it expires)

    def node_for(self, tp: TP, leader: int, brokers: Container[int]) -> int:
        """The node to fetch ``tp`` from: its preferred replica while that is fresh and known, else ``leader``."""
        pref = self._preferred.get(tp)
        if pref is None:
            return leader
        node, expires = pref
        if node not in brokers or time.monotonic() >= expires:
            del self._preferred[tp]
            return leader
        return node

    def prefer(self, tp: TP, node: int, leader: int) -> None:
        """The broker named ``node`` as ``tp``'s preferred read replica (the leader itself: no preference)."""
        if node == leader:
            self._preferred.pop(tp, None)
            return
        if self._preferred.get(tp, (None,))[0] != node:
            log.info("%s/%d: fetching from preferred read replica %d (leader %d; KIP-392)", tp[0], tp[1], node, leader)
        self._preferred[tp] = (node, time.monotonic() + self.max_age_ms / 1000)

    def forget(self, tp: TP, why: object) -> None:
        """Fetch ``tp`` from its leader again (its preferred replica failed: ``why``)."""
        pref = self._preferred.pop(tp, None)
        if pref is not None:
            log.info("%s/%d: preferred read replica %d failed (%s); back to the leader", tp[0], tp[1], pref[0], why)

    def preferred(self) -> dict[TP, int]:
        """The current preferences (expired ones included until next used)."""
        return {tp: node for tp, (node, _) in self._preferred.items()}
