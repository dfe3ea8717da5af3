"""What a share fetch delivers: the records this member acquired, as columns with their delivery count.

A ShareFetch answer carries whole record batches and, beside them, the ranges of offsets this member
acquired (``acquired_records``: first, last, delivery count). A batch can hold records acquired by another
member, or already acknowledged, so only records inside an acquired range are delivered (KIP-932). An
acquired offset with no record (a control record, a compacted-away offset) is a *gap*: the consumer
acknowledges it with type GAP so the broker can move on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ...columns import RecordColumns
from ..producer.produce import take

__all__ = ["ShareRecordColumns", "acquired_columns"]


class ShareRecordColumns(RecordColumns):
    """:class:`~kafkawire.RecordColumns` of a share fetch, plus ``delivery_count`` (int16 per record:
    1 the first time a record is delivered, raised each time it comes back after a release or an expired
    acquisition lock)."""

    __slots__ = ("delivery_count",)
    delivery_count: npt.NDArray[np.int16]

    def __init__(self, **fields: Any) -> None:
        self.delivery_count = fields.pop("delivery_count")
        for name in RecordColumns.__slots__:  # the base __init__ walks type(self).__slots__, which is ours
            setattr(self, name, fields.pop(name))
        if fields:
            raise TypeError(f"unexpected fields: {sorted(fields)}")


def _ranges(acquired: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    first = np.fromiter((a.first_offset for a in acquired), np.int64, len(acquired))
    last = np.fromiter((a.last_offset for a in acquired), np.int64, len(acquired))
    count = np.fromiter((a.delivery_count for a in acquired), np.int16, len(acquired))
    return first, last, count


def acquired_columns(cols: RecordColumns, acquired: Sequence[Any]) -> tuple[ShareRecordColumns, np.ndarray]:
    """``cols`` cut to the records inside ``acquired`` (ShareFetch's ``AcquiredRecords`` entries), each
    with its delivery count; and the acquired offsets that hold no record (gaps), sorted.

    Ranges sent by the broker are hostile input: one with ``last < first`` is ignored, and overlapping
    ranges deliver a record once (the first range that holds it gives its count)."""
    first, last, count = _ranges(acquired)
    keep = last >= first
    first, last, count = first[keep], last[keep], count[keep]
    order = np.argsort(first, kind="stable")
    first, last, count = first[order], last[order], count[order]
    offsets = cols.offset
    # The range of each record: the last range starting at or before it; inside it when offset <= its last.
    idx = np.searchsorted(first, offsets, side="right") - 1
    inside = idx >= 0
    inside[inside] &= offsets[inside] <= last[idx[inside]]
    if len(offsets) and bool(np.all(np.diff(offsets) > 0)):
        unique = inside
    else:  # a duplicated offset (hostile input): deliver it once
        unique = inside & np.concatenate(([True], np.diff(offsets) != 0)) if len(offsets) else inside
    delivered = offsets[unique]
    out = _select(cols, unique, count[idx[unique]])
    total = int(np.sum(last - first + 1)) if len(first) else 0
    if total == len(delivered):
        return out, np.zeros(0, np.int64)
    if total > 1_000_000:  # a hostile range: do not materialise it, the broker's lock expires it anyway
        return out, np.zeros(0, np.int64)
    wanted = np.unique(np.concatenate([np.arange(f, e + 1, dtype=np.int64) for f, e in zip(first, last)]))
    return out, np.setdiff1d(wanted, delivered, assume_unique=True)


def _select(cols: RecordColumns, mask: np.ndarray, delivery: np.ndarray) -> ShareRecordColumns:
    """Rows ``mask`` of ``cols`` (all of them without a copy when every row is kept)."""
    fields = {name: getattr(cols, name) for name in RecordColumns.__slots__}
    if not bool(np.all(mask)):
        idx = np.flatnonzero(mask)
        for name in ("offset", "timestamp", "timestamp_type", "batch_index"):
            fields[name] = fields[name][idx]
        fields["key"] = take(cols.key, idx)
        fields["value"] = take(cols.value, idx)
        hoff = cols.header_offsets.astype(np.int64)
        counts = (hoff[1:] - hoff[:-1])[idx]
        hidx = np.concatenate([np.arange(hoff[i], hoff[i + 1]) for i in idx]) if counts.sum() else np.zeros(0, np.int64)
        fields["header_key"] = take(cols.header_key, hidx)
        fields["header_value"] = take(cols.header_value, hidx)
        new_h = np.zeros(len(idx) + 1, np.int32)
        np.cumsum(counts, out=new_h[1:])
        fields["header_offsets"] = new_h
    return ShareRecordColumns(**fields, delivery_count=delivery.astype(np.int16))
