"""Acknowledgements of delivered records (KIP-932): what the application said about each record, and the
batches that carry it to the broker.

Each partition's records delivered by the last ``poll()`` are *in flight* here until acknowledged:
``accept`` (done), ``release`` (deliver again, to anyone, with the delivery count raised) or ``reject``
(never deliver again). Acknowledged records become *pending*, and leave with the next ShareFetch to the
broker that delivered them, or with a ShareAcknowledge (commit, close). On the wire a partition's
acknowledgements are batches of consecutive offsets with one type each (0 gap, 1 accept, 2 release,
3 reject): consecutive offsets of one type make one batch, so a poll accepted as a whole is one batch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["ACK_TYPES", "GAP", "ACCEPT", "RELEASE", "REJECT", "Acknowledgements", "AckBatch", "to_batches"]

GAP, ACCEPT, RELEASE, REJECT = 0, 1, 2, 3
#: The public names of the acknowledgement types (Java's ``AcknowledgeType``).
ACK_TYPES = {"accept": ACCEPT, "release": RELEASE, "reject": REJECT}
_NONE = -1  # in flight, not acknowledged yet

TopicPartition = tuple[str, int]
AckBatch = tuple[int, int, int]  # first offset, last offset (inclusive), type


def to_batches(offsets: np.ndarray, types: np.ndarray) -> list[AckBatch]:
    """Runs of consecutive offsets with one type, from sorted ``offsets`` and their ``types``."""
    if not len(offsets):
        return []
    cut = np.flatnonzero((np.diff(offsets) != 1) | (np.diff(types) != 0)) + 1
    starts = np.concatenate(([0], cut))
    ends = np.concatenate((cut - 1, [len(offsets) - 1]))
    return [(int(offsets[s]), int(offsets[e]), int(types[s])) for s, e in zip(starts, ends)]


@dataclass
class _InFlight:
    node: int  # the broker whose share session acquired the records: acknowledgements go back there
    offsets: np.ndarray  # sorted, int64
    state: np.ndarray  # int8 per offset: _NONE or an acknowledgement type


@dataclass
class Acknowledgements:
    """In-flight records per partition and the acknowledgements waiting to be sent, per broker."""

    in_flight: dict[TopicPartition, _InFlight] = field(default_factory=dict)
    #: node -> partition -> list of (offsets, types) arrays acknowledged and not sent yet.
    pending: dict[int, dict[TopicPartition, list[tuple[np.ndarray, np.ndarray]]]] = field(default_factory=dict)

    def delivered(self, tp: TopicPartition, node: int, offsets: np.ndarray, gaps: np.ndarray) -> None:
        """Records of ``tp`` handed to the application (``gaps``: acquired offsets with no record, which
        are acknowledged as GAP with the next acknowledgement of the partition)."""
        if len(gaps):
            self._queue(node, tp, gaps.astype(np.int64), np.full(len(gaps), GAP, np.int8))
        if not len(offsets):
            return
        offsets = np.asarray(offsets, np.int64)
        state = np.full(len(offsets), _NONE, np.int8)
        old = self.in_flight.pop(tp, None)
        if old is not None and old.node == node:  # a second delivery of the partition in one poll
            offsets, state = np.concatenate((old.offsets, offsets)), np.concatenate((old.state, state))
            order = np.argsort(offsets, kind="stable")
            offsets, state = offsets[order], state[order]
        elif old is not None:  # the leader moved between two rounds: the old session's records go back
            old.state[old.state == _NONE] = RELEASE
            self._queue(old.node, tp, old.offsets, old.state)
        self.in_flight[tp] = _InFlight(node, offsets, state)

    def acknowledge(self, tp: TopicPartition, offsets: Iterable[int] | np.ndarray, kind: int) -> None:
        """Mark ``offsets`` of ``tp`` (delivered by the last poll, not acknowledged yet) with ``kind``."""
        arr = _offsets_array(offsets)
        inf = self.in_flight.get(tp)
        if inf is None:
            if len(arr):
                raise ValueError(
                    f"acknowledge: no records of {tp[0]}/{tp[1]} are in flight (delivered and not acknowledged)"
                )
            return
        pos = np.searchsorted(inf.offsets, arr)
        found = pos < len(inf.offsets)
        found[found] &= inf.offsets[pos[found]] == arr[found]
        if not bool(np.all(found)):
            bad = arr[~found][:5].tolist()
            raise ValueError(f"acknowledge: offsets {bad} of {tp[0]}/{tp[1]} were not delivered by the last poll")
        if bool(np.any(inf.state[pos] != _NONE)) or len(np.unique(pos)) != len(pos):
            dup = arr[inf.state[pos] != _NONE][:5].tolist() or arr[:5].tolist()
            raise ValueError(f"acknowledge: offsets {dup} of {tp[0]}/{tp[1]} are acknowledged already")
        inf.state[pos] = kind

    def unacknowledged(self) -> int:
        """How many delivered records wait for an acknowledgement."""
        return sum(int(np.count_nonzero(i.state == _NONE)) for i in self.in_flight.values())

    def acknowledge_all(self, kind: int) -> None:
        """Give every in-flight record not acknowledged yet the type ``kind`` (implicit mode: accept)."""
        for inf in self.in_flight.values():
            inf.state[inf.state == _NONE] = kind

    def flush(self) -> None:
        """Move what is acknowledged from in flight to pending (whole partitions once all is acknowledged)."""
        for tp in list(self.in_flight):
            inf = self.in_flight[tp]
            done = inf.state != _NONE
            if not bool(np.any(done)):
                continue
            self._queue(inf.node, tp, inf.offsets[done], inf.state[done])
            if bool(np.all(done)):
                del self.in_flight[tp]
            else:
                self.in_flight[tp] = _InFlight(inf.node, inf.offsets[~done], inf.state[~done])

    def _queue(self, node: int, tp: TopicPartition, offsets: np.ndarray, types: np.ndarray) -> None:
        self.pending.setdefault(node, {}).setdefault(tp, []).append((offsets, types))

    def take(self, node: int | None = None) -> dict[int, dict[TopicPartition, list[AckBatch]]]:
        """Remove and return the pending acknowledgements (of ``node`` only, when given) as wire batches."""
        nodes = list(self.pending) if node is None else [node] if node in self.pending else []
        out: dict[int, dict[TopicPartition, list[AckBatch]]] = {}
        for n in nodes:
            per_tp = self.pending.pop(n)
            out[n] = {}
            for tp, parts in per_tp.items():
                offs = np.concatenate([o for o, _ in parts])
                typs = np.concatenate([t for _, t in parts])
                order = np.argsort(offs, kind="stable")
                out[n][tp] = to_batches(offs[order], typs[order])
        return out

    def has_pending(self, node: int | None = None) -> bool:
        return bool(self.pending) if node is None else node in self.pending

    def forget_node(self, node: int) -> list[TopicPartition]:
        """Drop what can no longer reach ``node`` (its share session is gone: the broker releases those
        records when their acquisition lock expires); the partitions concerned."""
        lost = list(self.pending.pop(node, {}))
        for tp in [tp for tp, i in self.in_flight.items() if i.node == node]:
            del self.in_flight[tp]
            lost.append(tp)
        return lost


def _offsets_array(offsets: Iterable[int] | np.ndarray) -> np.ndarray:
    if isinstance(offsets, (str, bytes, bytearray)) or not (
        isinstance(offsets, np.ndarray) or hasattr(offsets, "__iter__")
    ):
        raise TypeError(f"offsets must be an array or an iterable of ints, not {type(offsets).__name__}")
    if isinstance(offsets, np.ndarray):
        if offsets.dtype.kind not in "iu":
            raise TypeError(f"offsets must be integers, not an array of {offsets.dtype}")
        return np.sort(offsets.astype(np.int64).ravel())
    out = []
    for o in offsets:
        if isinstance(o, bool) or not isinstance(o, (int, np.integer)):
            raise TypeError(f"offsets must be integers, not {type(o).__name__}")
        out.append(int(o))
    return np.sort(np.asarray(out, np.int64))
