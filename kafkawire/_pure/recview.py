"""Per-record views of :class:`~kafkawire.columns.RecordColumns`: the pure-Python twin of
``kafkawire/_recview.pyx`` (same classes, same results; the reference the compiled one is tested against).

Each field is read from the columns when asked for, through the columns' own accessors, so it is
obviously what ``columns[i]`` gives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..columns import Record, RecordColumns

__all__ = ["RecordView", "RecordCursor", "iter_records"]

TopicPartition = tuple[str, int]
_NEW = object.__new__


class _Reader:
    __slots__ = ("columns", "topic", "partition", "n")

    def __init__(self, cols: RecordColumns, topic: str | None = None, partition: int = -1) -> None:
        if topic is None:
            topic, partition = cols.topic, cols.partition
        self.columns, self.topic, self.partition = cols, topic, partition
        self.n = len(cols.offset)
        if len(cols.timestamp) < self.n or len(cols.timestamp_type) < self.n or len(cols.batch_index) < self.n:
            raise ValueError("RecordColumns: per-record columns of different lengths")


def _binary(col: Any, i: int) -> bytes | None:
    if not 0 <= i < len(col):
        raise ValueError("RecordColumns: a record's index is past its binary column")
    if col.valid is not None and not col.valid[i]:
        return None
    lo, hi = int(col.offsets[i]), int(col.offsets[i + 1])
    if lo < 0 or hi < lo or hi > len(col.data):
        raise ValueError("RecordColumns: binary column offsets outside its data")
    return bytes(col.data[lo:hi])


def _size(col: Any, i: int) -> int:
    if not 0 <= i < len(col):
        raise ValueError("RecordColumns: a record's index is past its binary column")
    if col.valid is not None and not col.valid[i]:
        return -1
    return int(col.offsets[i + 1]) - int(col.offsets[i])


class RecordView:
    """One record of a RecordColumns (see the compiled ``kafkawire._recview.RecordView`` for the fields)."""

    __slots__ = ("_r", "_i")
    _r: _Reader
    _i: int

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("RecordView objects come from iterating RecordColumns or a Consumer")

    @property
    def offset(self) -> int:
        return int(self._r.columns.offset[self._i])

    @property
    def timestamp(self) -> int:
        return int(self._r.columns.timestamp[self._i])

    @property
    def timestamp_type(self) -> int:
        return int(self._r.columns.timestamp_type[self._i])

    @property
    def key(self) -> bytes | None:
        return _binary(self._r.columns.key, self._i)

    @property
    def value(self) -> bytes | None:
        return _binary(self._r.columns.value, self._i)

    @property
    def headers(self) -> list[tuple[str, bytes | None]]:
        cols, i = self._r.columns, self._i
        if i + 1 >= len(cols.header_offsets):
            raise ValueError("RecordColumns: header_offsets shorter than the records")
        lo, hi = int(cols.header_offsets[i]), int(cols.header_offsets[i + 1])
        if lo < 0 or hi < lo:
            raise ValueError("RecordColumns: header_offsets out of order")
        out = []
        for j in range(lo, hi):
            k = _binary(cols.header_key, j)
            out.append(((k or b"").decode("utf-8", "surrogateescape"), _binary(cols.header_value, j)))
        return out

    @property
    def topic(self) -> str | None:
        return self._r.topic

    @property
    def partition(self) -> int:
        return self._r.partition

    @property
    def leader_epoch(self) -> int:
        cols = self._r.columns
        b = int(cols.batch_index[self._i])
        if not 0 <= b < len(cols.batch_partition_leader_epoch):
            raise ValueError("RecordColumns: a record's batch_index is past the batch columns")
        return int(cols.batch_partition_leader_epoch[b])

    @property
    def serialized_key_size(self) -> int:
        return _size(self._r.columns.key, self._i)

    @property
    def serialized_value_size(self) -> int:
        return _size(self._r.columns.value, self._i)

    @property
    def columns(self) -> RecordColumns:
        return self._r.columns

    @property
    def index(self) -> int:
        return self._i

    def as_tuple(self) -> tuple[int, int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]:
        return (self.offset, self.timestamp, self.timestamp_type, self.key, self.value, self.headers)

    def to_record(self) -> Record:
        return Record(*self.as_tuple())

    def __len__(self) -> int:
        return 6

    def __getitem__(self, i: Any) -> Any:
        return self.as_tuple()[i]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.as_tuple())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RecordView):
            return (
                self.topic == other.topic and self.partition == other.partition and self.as_tuple() == other.as_tuple()
            )
        if isinstance(other, tuple):
            return self.as_tuple() == other
        return NotImplemented

    def __reduce__(self) -> Any:
        raise TypeError("a RecordView is a view into its columns and does not pickle: pickle view.to_record()")

    __hash__ = None  # type: ignore[assignment]  # as Record's: its headers are a list
    def __repr__(self) -> str:
        return (
            f"RecordView(topic={self.topic!r}, partition={self.partition}, offset={self.offset}, "
            f"timestamp={self.timestamp}, timestamp_type={self.timestamp_type}, key={self.key!r}, "
            f"value={self.value!r}, headers={self.headers!r})"
        )


def _view(r: _Reader, i: int) -> RecordView:
    v = _NEW(RecordView)
    v._r, v._i = r, i
    return v


def iter_records(cols: RecordColumns, topic: str | None = None, partition: int = -1) -> Iterator[RecordView]:
    r = _Reader(cols, topic, partition)
    return (_view(r, i) for i in range(r.n))


class RecordCursor:
    """The per-record loop of a consumer (see the compiled ``kafkawire._recview.RecordCursor``)."""

    def __init__(self, refill: Callable[[], Mapping[TopicPartition, RecordColumns] | None] | None) -> None:
        self.refill = refill
        self._parts: list[tuple[TopicPartition, Any]] = []
        self._next_part = 0
        self._cur: _Reader | None = None
        self._cur_tp: TopicPartition | None = None
        self._pos = 0
        self._end = 0
        self._held = False

    def __iter__(self) -> RecordCursor:
        return self

    def __next__(self) -> RecordView:
        self._held = False
        while True:
            cur = self._cur
            if cur is not None and self._pos < self._end:
                self._pos += 1
                self._held = True
                return _view(cur, self._pos - 1)
            self._cur = self._cur_tp = None
            if self._next_part < len(self._parts):
                tp, cols = self._parts[self._next_part]
                self._next_part += 1
                if not len(cols):
                    continue
                self._cur, self._cur_tp, self._pos = _Reader(cols, tp[0], tp[1]), tp, 0
                self._end = self._cur.n
                continue
            self._parts, self._next_part = [], 0
            if self.refill is None:
                raise StopIteration
            batch = self.refill()
            if batch is None:
                raise StopIteration
            self._parts = [(tp, cols) for tp, cols in batch.items() if len(cols)]

    def pending(self, include_held: bool = False) -> dict[TopicPartition, tuple[int, int]]:
        out: dict[TopicPartition, tuple[int, int]] = {}
        cur = self._cur
        if cur is not None and self._cur_tp is not None:
            done = self._pos if (include_held or not self._held) else self._pos - 1
            if done < self._end:
                epoch = _view(cur, done - 1).leader_epoch if done > 0 else -1
                out[self._cur_tp] = (int(cur.columns.offset[done]), epoch)
        for tp, cols in self._parts[self._next_part :]:
            if len(cols):
                out[tp] = (int(cols.offset[0]), -1)
        return out

    def discard(self, tp: TopicPartition | None = None, keep_held: bool = False) -> None:
        if (tp is None or tp == self._cur_tp) and self._cur is not None:
            self._end = self._pos
            if not keep_held:
                self._held = False
        for k in range(self._next_part, len(self._parts)):
            if tp is None or self._parts[k][0] == tp:
                self._parts[k] = (self._parts[k][0], ())

    def buffered(self) -> int:
        n = self._end - self._pos if self._cur is not None else 0
        return n + sum(len(cols) for _, cols in self._parts[self._next_part :])
