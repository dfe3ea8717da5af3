"""Streaming progress made visible to Kafka's tools: the ``kafka.group.id`` read option.

Spark's own Kafka source never commits offsets to Kafka, so lag monitors (``kafka-consumer-groups``,
Burrow, Datadog) cannot see a streaming query (SPARK-27549). With ``kafka.group.id`` the kafkawire stream
reader commits the end offsets of every micro-batch Spark has committed to that consumer group, after
Spark's own commit (``DataSourceStreamReader.commit``): an OffsetCommit outside any group membership
(generation -1, empty member id, as ``kafka-consumer-groups --reset-offsets`` and other admin tools
write), so the group shows the query's position and lag while no member is ever joined.

Spark calls ``commit(end)`` one micro-batch late (when it plans the next batch) and never for the last
batch of an ``availableNow`` run. It asks ``latestOffset(start, limit)`` only once the micro-batch ending at
``start`` is in its commit log (micro-batches run one at a time), so the reader commits ``start`` there too:
the group then reaches the end of the last batch as soon as Spark has committed it.

Monitoring only: the query's checkpoint stays the source of truth. A restarted query resumes from its
checkpoint, never from these offsets, and a commit that fails (coordinator unreachable, a group that has
live members of its own, which refuses commits from outside) is logged and never fails the query.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from .planning import offsets_from_json

if TYPE_CHECKING:
    from typing import Any

    from .kafka_access import KafkaAccess

__all__ = ["ProgressCommits", "commit_progress"]

log = logging.getLogger("kafkawire.spark")


def commit_progress(access: KafkaAccess, group: str, end: dict[str, Any], timeout_ms: float) -> bool:
    """Commit ``end`` (Spark's offset JSON: ``{topic: {"partition": next offset}}``) to consumer group
    ``group`` within ``timeout_ms``; False (logged at WARNING) when it failed."""
    offsets = offsets_from_json(end)
    if not offsets:
        return True
    try:
        access.client.commit_offsets(group, offsets, timeout_ms=timeout_ms)
    except Exception as e:  # monitoring only: never fail the query for it
        log.warning(
            "kafka.group.id %r: committing the micro-batch's end offsets failed (the query goes on; its "
            "checkpoint is the source of truth): %s",
            group,
            e,
        )
        return False
    log.debug("kafka.group.id %r: committed %d partitions' end offsets", group, len(offsets))
    return True


class ProgressCommits:
    """The end offsets committed to ``group`` so far, so that each position is committed once (``latestOffset``
    runs every trigger, data or not). Plain attributes: pickled with the stream reader."""

    def __init__(self, group: str | None) -> None:
        self.group = group
        self._last: dict[str, Any] | None = None

    def commit(self, access: KafkaAccess, end: dict[str, Any], timeout_ms: float) -> None:
        """Commit ``end`` unless it is what was committed last (or there is no group)."""
        if not self.group or end == self._last:
            return
        if commit_progress(access, self.group, end, timeout_ms):
            self._last = end
