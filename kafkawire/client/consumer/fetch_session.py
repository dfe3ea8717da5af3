"""Incremental fetch sessions (KIP-227), one per broker, as the Java client's ``FetchSessionHandler``.

Without a session every Fetch lists every partition the client reads from that broker, with its offset
and size limit, tens of bytes each. With one, the first ("full", epoch 0) request creates a session on
the broker, which answers with its id; later ("incremental") requests carry the id and the next epoch and
list only the partitions whose fetch offset, ``partition_max_bytes`` or current leader epoch (KIP-320)
changed, plus those to forget. The
broker keeps reading every partition of the session, and an incremental answer leaves out the partitions
with nothing new (no records, same high watermark, log start and last stable offset).

Whenever the broker does not know the session (FETCH_SESSION_ID_NOT_FOUND: restarted, or evicted it from
its cache), sees a stale epoch (INVALID_FETCH_SESSION_EPOCH: an answer lost on the way back) or rejects it
for topic ids (FETCH_SESSION_TOPIC_ID_ERROR, KIP-516), or when a request fails on the client's side, the
handler falls back to a full request that opens a new session (``session_id`` kept, epoch 0: the broker
closes the old one), as ``FetchSessionHandler.handleError`` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["FetchSessionHandler", "FetchSessions", "SessionRequest", "SESSION_ERRORS"]

TP = tuple[str, int]

#: Fetch request versions that carry session fields (KIP-227 added them in v7).
MIN_SESSION_VERSION = 7
#: Epoch of a full request that asks for a new session.
INITIAL_EPOCH = 0
#: Epoch of a request outside any session (nothing cached on the broker).
FINAL_EPOCH = -1
#: Top-level error codes after which the session is gone and the next request is a full one.
SESSION_ERRORS = frozenset({70, 71, 106})  # FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH, ..._TOPIC_ID_ERROR


@dataclass
class PartitionState:
    """What the broker's session holds for a partition, and what it last reported about it (filled in
    for a partition an incremental answer leaves out: nothing new, same offsets)."""

    fetch_offset: int
    max_bytes: int
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    leader_epoch: int = -1  # the current_leader_epoch the session was last sent for it (KIP-320)


@dataclass
class SessionRequest:
    """One Fetch to build: the session fields, the partitions to list and those to forget."""

    session_id: int
    epoch: int
    send: list[TP]
    forget: list[TP]
    wanted: dict[TP, tuple[int, int]]
    uses_ids: bool
    #: ``current_leader_epoch`` per partition (absent: -1, unknown).
    epochs: dict[TP, int] = field(default_factory=dict)

    @property
    def full(self) -> bool:
        """True for a request that lists every partition (a new session or none)."""
        return self.epoch in (INITIAL_EPOCH, FINAL_EPOCH)


@dataclass
class FetchSessionHandler:
    """The fetch session with one broker. :meth:`build` says what the next request lists;
    :meth:`handle_response` / :meth:`handle_error` move the session on once its answer is known."""

    node_id: int
    enabled: bool = True
    session_id: int = 0
    epoch: int = INITIAL_EPOCH
    uses_ids: bool = False
    partitions: dict[TP, PartitionState] = field(default_factory=dict)

    def build(
        self, wanted: dict[TP, tuple[int, int]], version: int, uses_ids: bool, epochs: dict[TP, int] | None = None
    ) -> SessionRequest:
        """The request for ``wanted`` (``{tp: (fetch_offset, partition_max_bytes)}``) at ``version``, each
        partition with its ``current_leader_epoch`` from ``epochs`` (absent: -1)."""
        epochs = {} if epochs is None else epochs
        if not self.enabled or version < MIN_SESSION_VERSION:
            return SessionRequest(0, FINAL_EPOCH, list(wanted), [], wanted, uses_ids, epochs)
        if uses_ids != self.uses_ids and self.session_id:
            # A session opened with topic names cannot continue with ids (KIP-516): start a new one.
            self.epoch = INITIAL_EPOCH
        if self.session_id == 0 or self.epoch == INITIAL_EPOCH:
            return SessionRequest(self.session_id, INITIAL_EPOCH, list(wanted), [], wanted, uses_ids, epochs)
        send = [
            tp
            for tp, (off, mb) in wanted.items()
            if (st := self.partitions.get(tp)) is None
            or st.fetch_offset != off
            or st.max_bytes != mb
            or st.leader_epoch != epochs.get(tp, -1)
        ]
        forget = [tp for tp in self.partitions if tp not in wanted]
        return SessionRequest(self.session_id, self.epoch, send, forget, wanted, uses_ids, epochs)

    def handle_response(self, req: SessionRequest, error_code: int, response_session_id: int) -> bool:
        """Record the answer to ``req``; False when the session was refused (the caller retries and the
        next request is a full one)."""
        if req.epoch == FINAL_EPOCH:
            return True
        if error_code in SESSION_ERRORS:
            self.reset()
            return False
        if error_code:
            self.reset()
            return True
        if req.full:
            if response_session_id == 0:
                # The broker did not create a session (its cache is full, or it has none): stay
                # sessionless and ask again next time, as the Java client does.
                self.session_id, self.epoch = 0, INITIAL_EPOCH
                self.partitions = {}
                return True
            self.session_id, self.epoch = response_session_id, 1
            self.uses_ids = req.uses_ids
            self.partitions = _carried(self.partitions, req)
            return True
        self.epoch = self.epoch + 1 if self.epoch < 0x7FFFFFFF else 1  # wraps to 1, never back to 0
        self.partitions = _carried(self.partitions, req)
        return True

    def observe(self, tp: TP, high_watermark: int, last_stable_offset: int, log_start_offset: int) -> None:
        """Remember what the broker reported for ``tp``, for the answers that will leave it out."""
        st = self.partitions.get(tp)
        if st is not None:
            st.high_watermark, st.last_stable_offset, st.log_start_offset = (
                high_watermark,
                last_stable_offset,
                log_start_offset,
            )

    def unchanged(self, tp: TP) -> PartitionState | None:
        """The last known state of ``tp`` when an incremental answer left it out (None outside a session)."""
        return self.partitions.get(tp) if self.session_id else None

    def handle_error(self) -> None:
        """The request failed on the client's side (no answer): the broker may or may not have moved
        the epoch on, so the next request is a full one that replaces the session."""
        self.epoch = INITIAL_EPOCH

    def reset(self) -> None:
        """Forget the session entirely; the next request opens a new one."""
        self.session_id, self.epoch = 0, INITIAL_EPOCH
        self.partitions = {}


def _carried(old: dict[TP, PartitionState], req: SessionRequest) -> dict[TP, PartitionState]:
    """The session's partitions once ``req`` was answered: what it asked for, with what was last reported."""
    return {tp: _carry(old.get(tp), off, mb, req.epochs.get(tp, -1)) for tp, (off, mb) in req.wanted.items()}


def _carry(old: PartitionState | None, off: int, mb: int, epoch: int) -> PartitionState:
    if old is None:
        return PartitionState(off, mb, leader_epoch=epoch)
    return PartitionState(off, mb, old.high_watermark, old.last_stable_offset, old.log_start_offset, epoch)


class FetchSessions:
    """The client's fetch sessions, one :class:`FetchSessionHandler` per broker node id. ``enabled``
    False sends every Fetch outside any session (epoch -1), as before KIP-227."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._handlers: dict[int, FetchSessionHandler] = {}

    def handler(self, node_id: int) -> FetchSessionHandler:
        """The session with broker ``node_id`` (created on first use)."""
        h = self._handlers.get(node_id)
        if h is None:
            h = self._handlers[node_id] = FetchSessionHandler(node_id, self.enabled)
        return h
