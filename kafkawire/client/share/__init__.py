"""Share groups (KIP-932, queues for Kafka): :class:`ShareConsumer` and its parts, one job per module:
:mod:`.membership` (ShareGroupHeartbeat), :mod:`.session` (share session epochs), :mod:`.fetch` (ShareFetch
and ShareAcknowledge rounds), :mod:`.acknowledgements` (what is in flight and the wire batches),
:mod:`.records` (acquired records as columns with their delivery count), :mod:`.config` (Java's
property names)."""

from __future__ import annotations

from .consumer import ShareConsumer
from .records import ShareRecordColumns

__all__ = ["ShareConsumer", "ShareRecordColumns"]
