"""A consumer's subscribed or assigned topics that do not exist: said in a log line and a metric.

A group never assigns a partition of a topic that does not exist, and an assigned partition of one has no
position to fetch from, so such a consumer's ``poll()`` returns ``{}`` forever. The Java consumer logs
``Error while fetching metadata ... {topic=UNKNOWN_TOPIC_OR_PARTITION}`` at WARN on each metadata refresh
(confluent-kafka delivers "Unknown topic or partition"); kafkawire checks the metadata of such topics once
per :data:`CHECK_INTERVAL_S` while it polls (after :data:`PATIENCE_S` of waiting for them), logs a WARNING
once per topic per interval on ``kafkawire.consumer``, and counts them in ``metrics()`` (``missing_topics``:
the topics and partitions missing now; ``missing_topic_warnings``: warnings logged). Issue 34.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ...protocol.errors import UnknownTopicOrPartitionError
from ..cluster.retry import is_retriable
from ..net.deadline import Deadline
from .subscription import TopicPartition

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["CHECK_INTERVAL_S", "MissingTopics"]

#: How often a polling consumer looks again at topics it waits for, and the least time between two warnings
#: about one topic.
CHECK_INTERVAL_S = 30.0
#: How long a subscribed topic stays without a partition, or an assigned partition without a position, before
#: its metadata is checked.
PATIENCE_S = 2.0


class MissingTopics:
    """The check of one consumer: call :meth:`check` in each poll round; it asks the metadata at most once
    per :data:`CHECK_INTERVAL_S`, and only when a subscribed topic has no partition assigned or an assigned
    partition has no position yet (a healthy consumer pays nothing)."""

    def __init__(self, client: Client, log: logging.Logger, counters: dict[str, Any]) -> None:
        self.client = client
        self.log = log
        self.counters = counters
        counters.setdefault("missing_topic_warnings", 0)
        #: ``{topic: None (the topic is missing) or [partitions missing]}`` as of the last check.
        self.missing: dict[str, list[int] | None] = {}
        self._checked = float("-inf")
        self._waiting_since: float | None = None
        self._warned: dict[str, float] = {}

    def check(self, subscribed: Iterable[str], assigned: Iterable[TopicPartition], positioned: Iterable[TopicPartition],
              deadline: Deadline) -> None:
        """Look at the subscribed topics without an assigned partition and the assigned partitions without a
        position: ask the metadata (within ``deadline``, once per interval), warn about those missing."""
        now = time.monotonic()
        if now - self._checked < CHECK_INTERVAL_S:
            return
        assigned = list(assigned)
        have = set(positioned)
        held_topics = {topic for topic, _ in assigned}
        waiting = {t for t in subscribed if t not in held_topics}
        unplaced = [tp for tp in assigned if tp not in have]
        topics = sorted(waiting | {topic for topic, _ in unplaced})
        if not topics:
            self.missing.clear()
            self._waiting_since = None
            return
        # Only after the wait has lasted (a healthy consumer gets its positions in its first round), and with
        # half of what is left of the poll: the poll's own work comes first.
        if self._waiting_since is None:
            self._waiting_since = now
        if now - self._waiting_since < PATIENCE_S or deadline.remaining() < 0.02:
            return
        self._checked = now
        try:
            meta = self.client.metadata(topics, deadline=deadline.sooner(deadline.remaining() / 2))
        except Exception as e:  # the poll's own retries report an unreachable cluster
            if not is_retriable(e):
                raise
            return
        missing: dict[str, list[int] | None] = {}
        for topic in topics:
            tm = meta.topics.get(topic)
            if tm is None or isinstance(tm.error, UnknownTopicOrPartitionError):
                missing[topic] = None
                continue
            if tm.error is None:
                gone = sorted(p for t, p in unplaced if t == topic and p not in tm.partitions)
                if gone:
                    missing[topic] = gone
        self.missing = missing
        for topic, partitions in missing.items():
            if now - self._warned.get(topic, float("-inf")) < CHECK_INTERVAL_S:
                continue
            self._warned[topic] = now
            self.counters["missing_topic_warnings"] += 1
            if partitions is None:
                self.log.warning("Error while fetching metadata: {%s=UNKNOWN_TOPIC_OR_PARTITION}: topic %r does not "
                                 "exist; poll() returns nothing from it until it is created", topic, topic)
            else:
                self.log.warning("Error while fetching metadata: {%s=UNKNOWN_TOPIC_OR_PARTITION}: topic %r has no "
                                 "partition %s; poll() returns nothing from it", topic, topic,
                                 ", ".join(map(str, partitions)))

    def metrics(self) -> dict[str, Any]:
        """``missing_topics``: ``{topic: None (missing) or [partitions missing]}`` as of the last check."""
        return {"missing_topics": {t: (None if p is None else list(p)) for t, p in self.missing.items()}}
