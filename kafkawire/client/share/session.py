"""Share sessions (KIP-932): one per broker a member fetches from, numbered by epochs.

A member's first ShareFetch to a broker opens a session (epoch 0) naming every partition it wants from
there; later requests carry the next epoch (1, 2, ..., wrapping from 2^31-1 to 1) and only what changed:
partitions added (``topics``), partitions dropped (``forgotten_topics_data``) and acknowledgements. Epoch
-1 closes the session (a ShareAcknowledge on close). A request that opens a session cannot carry
acknowledgements (the broker answers INVALID_REQUEST): records acquired in a session that is gone are
released by the broker when their acquisition lock expires. SHARE_SESSION_NOT_FOUND or
INVALID_SHARE_SESSION_EPOCH (the broker restarted, evicted the session, or a request was lost) sends the
session back to epoch 0; so does a broken connection, since the broker may or may not have seen the request.
One request per session is in flight at a time except on the same connection, where Kafka handles a
connection's requests in order, so an acknowledgement and the fetch after it may be pipelined.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...protocol import ShareAcknowledgeRequest, ShareFetchRequest
from .acknowledgements import AckBatch

__all__ = ["ShareSession", "OPEN_EPOCH", "CLOSE_EPOCH", "next_epoch"]

OPEN_EPOCH, CLOSE_EPOCH = 0, -1
_MAX_EPOCH = 2**31 - 1

TopicPartition = tuple[str, int]


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch`` (the session's first request is 0; after 2^31-1 comes 1, never 0)."""
    return 1 if epoch >= _MAX_EPOCH else epoch + 1


def _ack_batches(cls: Any, batches: list[AckBatch]) -> list[Any]:
    return [cls(first_offset=f, last_offset=last, acknowledge_types=[t]) for f, last, t in batches]


@dataclass
class ShareSession:
    """This member's share session with broker ``node``."""

    node: int
    epoch: int = OPEN_EPOCH
    #: Partitions the broker holds in the session (as of the last answered request).
    partitions: set[TopicPartition] = field(default_factory=set)

    def reset(self) -> None:
        """Start over: the next request opens a new session."""
        self.epoch, self.partitions = OPEN_EPOCH, set()

    def fetch_request(
        self,
        group_id: str,
        member_id: str,
        wanted: set[TopicPartition],
        acks: Mapping[TopicPartition, list[AckBatch]],
        ids: Mapping[str, uuid.UUID],
        *,
        max_wait_ms: int,
        max_bytes: int,
        max_records: int,
        batch_size: int,
    ) -> Any:
        """The ShareFetch for this session's next epoch: partitions added since the last request (all at
        epoch 0), those dropped, and ``acks`` (which must be for partitions in ``wanted``; none at epoch 0)."""
        if self.epoch == OPEN_EPOCH and acks:
            raise ValueError("a ShareFetch that opens a share session cannot carry acknowledgements")
        listed = (wanted - self.partitions) | set(acks)
        by_topic: dict[str, list[Any]] = defaultdict(list)
        for t, p in sorted(listed):
            by_topic[t].append(
                ShareFetchRequest.FetchPartition(
                    partition_index=p,
                    acknowledgement_batches=_ack_batches(ShareFetchRequest.AcknowledgementBatch, acks.get((t, p), [])),
                )
            )
        forgotten: dict[str, list[int]] = defaultdict(list)
        for t, p in sorted(self.partitions - wanted):
            forgotten[t].append(p)
        return ShareFetchRequest(
            group_id=group_id,
            member_id=member_id,
            share_session_epoch=self.epoch,
            max_wait_ms=max_wait_ms,
            min_bytes=1,
            max_bytes=max_bytes,
            max_records=max_records,
            batch_size=batch_size,
            topics=[ShareFetchRequest.FetchTopic(topic_id=ids[t], partitions=ps) for t, ps in by_topic.items()],
            forgotten_topics_data=[
                ShareFetchRequest.ForgottenTopic(topic_id=ids[t], partitions=ps)
                for t, ps in forgotten.items()
                if t in ids
            ],
        )

    def acknowledge_request(
        self,
        group_id: str,
        member_id: str,
        acks: Mapping[TopicPartition, list[AckBatch]],
        ids: Mapping[str, uuid.UUID],
        *,
        close: bool = False,
    ) -> Any:
        """A ShareAcknowledge in this session (epoch -1 with ``close``: it also ends the session)."""
        by_topic: dict[str, list[Any]] = defaultdict(list)
        for (t, p), batches in sorted(acks.items()):
            by_topic[t].append(
                ShareAcknowledgeRequest.AcknowledgePartition(
                    partition_index=p,
                    acknowledgement_batches=_ack_batches(ShareAcknowledgeRequest.AcknowledgementBatch, batches),
                )
            )
        return ShareAcknowledgeRequest(
            group_id=group_id,
            member_id=member_id,
            share_session_epoch=CLOSE_EPOCH if close else self.epoch,
            topics=[
                ShareAcknowledgeRequest.AcknowledgeTopic(topic_id=ids[t], partitions=ps) for t, ps in by_topic.items()
            ],
        )

    def answered(self, wanted: set[TopicPartition] | None = None) -> None:
        """The broker accepted the request sent at the current epoch (``wanted``: a fetch's partitions)."""
        self.epoch = next_epoch(self.epoch)
        if wanted is not None:
            self.partitions = set(wanted)
