"""Columnar containers for decoded records: numpy buffers laid out the way Arrow lays them out.

A :class:`BinaryColumn` (:mod:`kafkawire.binary`, re-exported here) is Arrow's ``binary`` layout (int32
offsets, one data buffer, a validity mask), so ``to_arrow()`` wraps the numpy buffers without copying the
data. :class:`RecordColumns` holds one
element per record in each column and is what :func:`kafkawire.decode_records` returns; both the compiled
core and the pure-Python reference build it from the same arrays.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from ._optional import require
from .binary import BinaryColumn, as_binary_column

_EMPTY_I32 = np.zeros(1, dtype=np.int32)

if TYPE_CHECKING:
    from ._pure.recview import RecordView

__all__ = ["BinaryColumn", "Record", "RecordColumns", "as_binary_column"]

class Record(NamedTuple):
    """One record, materialised as Python objects (``RecordColumns[i]``); not used on the hot path."""

    offset: int
    timestamp: int
    timestamp_type: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]


class _Located:
    """Where a RecordColumns came from: ``topic`` and ``partition`` when a fetch made it (its own base
    class, so that ``RecordColumns.__slots__`` stays the list of columns every builder sets)."""

    __slots__ = ("_where",)

    @property
    def topic(self) -> str | None:
        """The topic these records were fetched from (None for :func:`kafkawire.decode_records`)."""
        where = getattr(self, "_where", None)
        return where[0] if where is not None else None

    @property
    def partition(self) -> int:
        """The partition these records were fetched from (-1 for :func:`kafkawire.decode_records`)."""
        where = getattr(self, "_where", None)
        return where[1] if where is not None else -1

    def _locate(self, topic: str, partition: int) -> None:
        self._where = (topic, partition)


class RecordColumns(_Located):
    """Decoded records as numpy columns, one element per record.

    Per record: ``offset`` (int64), ``timestamp`` (int64 ms, -1 where the format has none),
    ``timestamp_type`` (int8: 0 create time, 1 log-append time, -1 none), ``key`` and ``value``
    (:class:`BinaryColumn`), ``header_offsets`` (int32, ``len + 1``: record *i* owns headers
    ``header_offsets[i]:header_offsets[i+1]`` of ``header_key`` / ``header_value``, in wire order,
    duplicates kept) and ``batch_index`` (int32 row in the batch columns).

    Per batch that contributed at least one record: ``batch_base_offset`` (int64),
    ``batch_producer_id`` (int64), ``batch_producer_epoch`` (int16), ``batch_base_sequence`` (int32),
    ``batch_partition_leader_epoch`` (int32), ``batch_transactional`` (bool), ``batch_magic`` (int8),
    ``batch_codec`` (int8: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd), ``batch_start`` (int64: where
    the row's entry, the whole record batch, legacy message or compressed legacy wrapper, starts in the
    decoded input; it ends ``12 + length`` bytes later, ``length`` being the int32 at ``batch_start + 8``.
    A caller that needs the raw batch, e.g. its header fields, reads it there instead of framing the
    input again).

    ``next_offset`` is where the next fetch starts (past control and filtered batches too; -1 when no
    complete entry was seen and no fetch offset given); ``valid_bytes`` is how many input bytes were
    complete entries (a fetch may end in a partial one). ``topic`` / ``partition``: where a fetch
    (``Client.fetch``, ``Consumer.poll``) read them; None / -1 for :func:`kafkawire.decode_records`.

    Iterating yields one :class:`~kafkawire.RecordView` per record, compiled with the core: its fields
    (``key``, ``value``, ``offset``, ``headers``, ``topic``, ``partition``, ...) are read from the columns
    when asked for. A view unpacks and compares equal like the :class:`Record` tuple, which
    ``columns[i]`` and :meth:`to_records` still return.
    """

    #: Names of the per-batch numpy columns, in a stable order (used by equality and tests).
    BATCH_ARRAYS = (
        "batch_base_offset",
        "batch_producer_id",
        "batch_producer_epoch",
        "batch_base_sequence",
        "batch_partition_leader_epoch",
        "batch_transactional",
        "batch_magic",
        "batch_codec",
        "batch_start",
    )
    __slots__ = (
        "offset",
        "timestamp",
        "timestamp_type",
        "key",
        "value",
        "header_offsets",
        "header_key",
        "header_value",
        "batch_index",
        *BATCH_ARRAYS,
        "next_offset",
        "valid_bytes",
    )
    # Declared for type checkers (attributes set through __slots__ in __init__ are invisible to mypy otherwise).
    offset: npt.NDArray[np.int64]
    timestamp: npt.NDArray[np.int64]
    timestamp_type: npt.NDArray[np.int8]
    key: BinaryColumn
    value: BinaryColumn
    header_offsets: npt.NDArray[np.int32]
    header_key: BinaryColumn
    header_value: BinaryColumn
    batch_index: npt.NDArray[np.int32]
    batch_base_offset: npt.NDArray[np.int64]
    batch_producer_id: npt.NDArray[np.int64]
    batch_producer_epoch: npt.NDArray[np.int16]
    batch_base_sequence: npt.NDArray[np.int32]
    batch_partition_leader_epoch: npt.NDArray[np.int32]
    batch_transactional: npt.NDArray[np.bool_]
    batch_magic: npt.NDArray[np.int8]
    batch_codec: npt.NDArray[np.int8]
    batch_start: npt.NDArray[np.int64]
    next_offset: int
    valid_bytes: int

    #: Names of the per-record numpy columns, in a stable order (used by equality and tests).
    RECORD_ARRAYS = ("offset", "timestamp", "timestamp_type", "header_offsets", "batch_index")
    BINARY_COLUMNS = ("key", "value", "header_key", "header_value")

    def __init__(self, **fields: Any) -> None:
        for name in self.__slots__:
            setattr(self, name, fields.pop(name))
        if fields:
            raise TypeError(f"unexpected fields: {sorted(fields)}")

    @classmethod
    def empty(cls, next_offset: int = -1, valid_bytes: int = 0) -> RecordColumns:
        """Columns with no records."""
        e = np.zeros(0, dtype=np.uint8)
        return cls(
            offset=np.zeros(0, np.int64),
            timestamp=np.zeros(0, np.int64),
            timestamp_type=np.zeros(0, np.int8),
            key=BinaryColumn(_EMPTY_I32.copy(), e, None),
            value=BinaryColumn(_EMPTY_I32.copy(), e, None),
            header_offsets=_EMPTY_I32.copy(),
            header_key=BinaryColumn(_EMPTY_I32.copy(), e, None),
            header_value=BinaryColumn(_EMPTY_I32.copy(), e, None),
            batch_index=np.zeros(0, np.int32),
            batch_base_offset=np.zeros(0, np.int64),
            batch_producer_id=np.zeros(0, np.int64),
            batch_producer_epoch=np.zeros(0, np.int16),
            batch_base_sequence=np.zeros(0, np.int32),
            batch_partition_leader_epoch=np.zeros(0, np.int32),
            batch_transactional=np.zeros(0, bool),
            batch_magic=np.zeros(0, np.int8),
            batch_codec=np.zeros(0, np.int8),
            batch_start=np.zeros(0, np.int64),
            next_offset=next_offset,
            valid_bytes=valid_bytes,
        )

    def __len__(self) -> int:
        return len(self.offset)

    @property
    def num_batches(self) -> int:
        return len(self.batch_base_offset)

    def headers_of(self, i: int) -> list[tuple[str, bytes | None]]:
        """The headers of record *i* as ``(key, value)`` pairs, wire order, duplicates kept."""
        lo, hi = int(self.header_offsets[i]), int(self.header_offsets[i + 1])
        out = []
        for j in range(lo, hi):
            k = self.header_key[j]
            out.append(((k or b"").decode("utf-8", "surrogateescape"), self.header_value[j]))
        return out

    def __getitem__(self, i: int) -> Record:
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return Record(
            int(self.offset[i]),
            int(self.timestamp[i]),
            int(self.timestamp_type[i]),
            self.key[i],
            self.value[i],
            self.headers_of(i),
        )

    def __iter__(self) -> Iterator[RecordView]:
        from ._impl import views  # (not at import: the compiled core imports this module)

        it: Iterator[RecordView] = views.iter_records(self)
        return it

    def to_records(self) -> list[Record]:
        """Every record as a :class:`Record` namedtuple (all fields copied out: for tests and small data)."""
        return [view.to_record() for view in self]

    def __repr__(self) -> str:
        return (
            f"RecordColumns(records={len(self)}, batches={self.num_batches}, "
            f"next_offset={self.next_offset}, valid_bytes={self.valid_bytes})"
        )

    def equals(self, other: RecordColumns) -> bool:
        """Field-for-field equality of every column and scalar (used to compare implementations)."""
        if self.next_offset != other.next_offset or self.valid_bytes != other.valid_bytes:
            return False
        for name in self.RECORD_ARRAYS + self.BATCH_ARRAYS:
            a, b = getattr(self, name), getattr(other, name)
            if a.dtype != b.dtype or not np.array_equal(a, b):
                return False
        return all(getattr(self, n) == getattr(other, n) for n in self.BINARY_COLUMNS)

    def to_arrow(self, *, include_batch_columns: bool = False) -> Any:
        """A ``pyarrow.RecordBatch`` that shares the numpy buffers (offsets, data) without copying.

        Columns: ``offset`` int64, ``timestamp`` timestamp[ms, UTC], ``timestamp_type`` int8, ``key`` and
        ``value`` binary, ``headers`` list<struct<key: string, value: binary>> (null when a record has
        none); with ``include_batch_columns`` also the batch attributes of each record's batch.
        """
        pa = require("pyarrow", "RecordColumns.to_arrow()")

        from ._arrow import headers_array  # the one headers builder, shared with the Spark source

        headers = headers_array(self)
        arrays = [
            pa.array(self.offset, pa.int64()),
            pa.array(self.timestamp, pa.int64()).view(pa.timestamp("ms", tz="UTC")),
            pa.array(self.timestamp_type, pa.int8()),
            self.key.to_arrow(),
            self.value.to_arrow(),
            headers,
        ]
        names = ["offset", "timestamp", "timestamp_type", "key", "value", "headers"]
        if include_batch_columns:
            idx = self.batch_index
            for name in self.BATCH_ARRAYS:
                arrays.append(pa.array(getattr(self, name)[idx]))
                names.append(name)
        return pa.RecordBatch.from_arrays(arrays, names=names)

    def to_arrow_decoded(self, registry: Any, *, value: str | None = "avro", key: str | None = None,
                         **options: Any) -> Any:
        """:meth:`to_arrow` with ``value`` (and/or ``key``, ``key="avro"``) decoded from Confluent-framed
        Avro into a struct column, through :func:`kafkawire.serde.decode_avro` (``registry``: a
        :class:`kafkawire.serde.SchemaRegistry`). ``options``: ``value_subject``, ``key_subject``,
        ``value_schema``, ``key_schema``, ``mode``, ``partition`` (see
        :func:`kafkawire.serde.records.decode_record_columns`)."""
        from .serde.records import decode_record_columns

        return decode_record_columns(self, registry, value=value, key=key, **options)

    def to_pandas(self, **kwargs: Any) -> Any:
        """A pandas DataFrame through :meth:`to_arrow` (needs the ``pandas`` extra: pyarrow and pandas)."""
        require("pandas", "RecordColumns.to_pandas()")
        require("pyarrow", "RecordColumns.to_pandas()", extra="pandas")
        return self.to_arrow(**kwargs).to_pandas()
