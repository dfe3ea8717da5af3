"""Arrow in and out of the Spark source: record batches from :class:`RecordColumns`, produce arguments from
the batches Spark hands a writer.

Reading builds each ``pyarrow.RecordBatch`` from the decoder's numpy buffers without a Python object per
record. ``key``, ``value`` and ``headers`` come from :mod:`kafkawire._arrow` (the builders ``to_arrow``
uses too): they wrap the slice's offsets and the shared data buffer, so a slice costs its own rows only.
``offset`` wraps the int64 array, ``timestamp`` is one vectorised multiply (ms → µs, Spark's
``TimestampType`` travels as ``timestamp[us, tz=UTC]``), and the constant ``topic`` and ``partition``
columns are sliced out of arrays built once per task and grown on demand. PySpark compares the first
batch's schema with the declared one exactly (types, nullability, the list's ``element`` field name), so
the schema comes from one place: :func:`arrow_schema`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from .._arrow import binary_array, header_struct_type, headers_array
from ..columns import RecordColumns
from .errors import WriteSchemaError

__all__ = [
    "HEADERS_TYPE",
    "SCHEMA_DDL",
    "ArrowBuilder",
    "ProduceGroup",
    "arrow_schema",
    "batch_to_produce_groups",
    "check_write_schema",
    "spark_schema_ddl",
]

#: The columns of Spark's Kafka source, in order (``KafkaRecordToRowConverter.kafkaSchema``).
SCHEMA_DDL = (
    "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, timestampType int"
)
HEADERS_DDL = "headers array<struct<key:string,value:binary>>"

HEADER_STRUCT = header_struct_type()
#: Arrow type of the ``headers`` column as PySpark's ``to_arrow_schema`` spells it.
HEADERS_TYPE = pa.list_(pa.field("element", HEADER_STRUCT))
_TS_TYPE = pa.timestamp("us", tz="UTC")


def spark_schema_ddl(include_headers: bool) -> str:
    """The read schema as a Spark DDL string."""
    return f"{SCHEMA_DDL}, {HEADERS_DDL}" if include_headers else SCHEMA_DDL


def arrow_schema(include_headers: bool) -> pa.Schema:
    """The Arrow schema of the batches :class:`ArrowBuilder` yields (every field nullable, as Spark's)."""
    fields = [
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("timestamp", _TS_TYPE),
        pa.field("timestampType", pa.int32()),
    ]
    if include_headers:
        fields.append(pa.field("headers", HEADERS_TYPE))
    return pa.schema(fields)


class ArrowBuilder:
    """Turns the :class:`RecordColumns` of one topic-partition into Arrow record batches for Spark.

    One builder serves one read task (one topic-partition). The ``topic`` and ``partition`` columns are
    constant, so they are built once at a capacity that doubles when a larger batch comes and then sliced
    (zero-copy) for every batch. Measured here for an 8 192-row batch (timeit, shared 2-core machine
    under load): slicing 0.85 µs, building the string buffers with numpy 45 µs, ``pa.repeat`` 104 µs,
    ``pa.array([topic] * n)`` 1 863 µs.
    """

    def __init__(self, topic: str, partition: int, include_headers: bool) -> None:
        self.topic = topic
        self.partition = partition
        self.include_headers = include_headers
        self.schema = arrow_schema(include_headers)
        self._capacity = 0
        self._topic_col: pa.Array = pa.array([], pa.string())
        self._partition_col: pa.Array = pa.array([], pa.int32())

    def _constants(self, n: int) -> tuple[pa.Array, pa.Array]:
        if n > self._capacity:
            cap = max(n, 2 * self._capacity, 1024)
            t = self.topic.encode("utf-8")
            # Arrow string layout built directly: offsets 0, len, 2*len, ... and the name repeated.
            if len(t) * cap > 0x7FFFFFFF:
                cap = n
            offsets = np.arange(cap + 1, dtype=np.int32) * np.int32(len(t))
            data = np.frombuffer(t * cap, dtype=np.uint8)
            self._topic_col = pa.Array.from_buffers(pa.string(), cap, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
            self._partition_col = pa.array(np.full(cap, self.partition, dtype=np.int32))
            self._capacity = cap
        return self._topic_col.slice(0, n), self._partition_col.slice(0, n)

    def build(self, cols: RecordColumns, lo: int = 0, hi: int | None = None) -> pa.RecordBatch:
        """Records ``lo:hi`` of ``cols`` as a batch with the Spark Kafka schema."""
        n_all = len(cols)
        hi = n_all if hi is None else hi
        n = hi - lo
        topic_col, partition_col = self._constants(n)
        ts = np.asarray(cols.timestamp[lo:hi], dtype=np.int64) * 1000
        arrays = [
            binary_array(cols.key, lo, hi),
            binary_array(cols.value, lo, hi),
            topic_col,
            partition_col,
            pa.array(np.ascontiguousarray(cols.offset[lo:hi], dtype=np.int64)),
            pa.Array.from_buffers(_TS_TYPE, n, [None, pa.py_buffer(ts)]),
            pa.array(np.asarray(cols.timestamp_type[lo:hi], dtype=np.int32)),
        ]
        if self.include_headers:
            arrays.append(headers_array(cols, lo, hi, element_name="element"))
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


# ------------------------------------------------------------------------------------------- writing

_HEADERS_SPARK = "array<struct<key:string,value:binary>>"


#: Arrow type tests and the Spark ``catalogString`` of the simple types they recognise.
_SPARK_TYPE_NAMES: tuple[tuple[tuple[Callable[[pa.DataType], bool], ...], str], ...] = (
    ((pa.types.is_string, pa.types.is_large_string), "string"),
    ((pa.types.is_binary, pa.types.is_large_binary), "binary"),
    ((pa.types.is_int32,), "int"),
    ((pa.types.is_int64,), "bigint"),
    ((pa.types.is_int16,), "smallint"),
    ((pa.types.is_int8,), "tinyint"),
    ((pa.types.is_float64,), "double"),
    ((pa.types.is_float32,), "float"),
    ((pa.types.is_boolean,), "boolean"),
    ((pa.types.is_timestamp,), "timestamp"),
)


def _spark_type_name(t: pa.DataType) -> str:
    """Spark's ``catalogString`` of the column type Arrow shows us (for error messages)."""
    for tests, name in _SPARK_TYPE_NAMES:
        if any(test(t) for test in tests):
            return name
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"array<{_spark_type_name(t.value_type)}>"
    if pa.types.is_struct(t):
        return "struct<" + ",".join(f"{f.name}:{_spark_type_name(f.type)}" for f in t) + ">"
    return str(t)


def check_write_schema(columns: dict[str, str], topic_option: str | None) -> None:
    """Check the written DataFrame's columns (name → Spark ``simpleString``) as ``KafkaWriter.validateQuery``.

    Spark does not check a Python data source's input schema, so the writer must. ``value`` is required
    (string or binary); ``key`` optional (string or binary); ``topic`` (string) is required unless the
    ``topic`` option is set; ``partition`` optional int; ``headers`` optional
    ``array<struct<key:string,value:binary>>``.
    """

    def fail(msg: str) -> None:
        raise WriteSchemaError(msg)

    def expect(name: str, allowed: Sequence[str]) -> None:
        t = columns.get(name)
        if t is not None and t not in allowed:
            fail(f"{name} attribute unsupported type {t}. {name} must be a(n) {' or '.join(allowed)}")

    if topic_option is None:
        if "topic" not in columns:
            fail(
                "topic option required when no 'topic' attribute is present. Use the topic option for setting a topic."
            )
        expect("topic", ["string"])
    expect("key", ["string", "binary"])
    if "value" not in columns:
        fail("Required attribute 'value' not found")
    expect("value", ["string", "binary"])
    expect("headers", [_HEADERS_SPARK])
    expect("partition", ["int"])


def arrow_columns(schema: pa.Schema) -> dict[str, str]:
    """Column name → Spark type name for an Arrow schema (what :func:`check_write_schema` takes)."""
    return {f.name: _spark_type_name(f.type) for f in schema}


@dataclass
class ProduceGroup:
    """Rows of one written batch that go to one topic and (maybe) one partition, as column arrays."""

    topic: str
    partition: int | None
    keys: pa.Array | None
    values: pa.Array
    headers: list[list[tuple[str, bytes | None]] | None] | None


def _as_binary(arr: pa.Array | pa.ChunkedArray | None) -> pa.Array | None:
    if arr is None:
        return None
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not pa.types.is_binary(arr.type):
        arr = arr.cast(pa.binary())  # string → binary keeps the UTF-8 bytes; large_* → 32-bit offsets
    return arr


def batch_to_produce_groups(batch: pa.RecordBatch, topic_option: str | None) -> Iterator[ProduceGroup]:
    """Split a written batch into :class:`ProduceGroup` s by (topic, partition), keeping row order per group.

    The ``topic`` option overrides a ``topic`` column (as in Spark). A null topic is Spark's
    ``KAFKA_NULL_TOPIC_IN_DATA``. Headers are the only column that becomes Python objects, and only when
    the batch has a ``headers`` column with at least one non-null entry.
    """
    names = batch.schema.names
    n = batch.num_rows
    if n == 0:
        return
    values = _as_binary(batch.column(names.index("value")))
    assert values is not None  # check_write_schema requires the value column
    keys = _as_binary(batch.column(names.index("key"))) if "key" in names else None
    headers_col = batch.column(names.index("headers")) if "headers" in names else None
    if headers_col is not None and headers_col.null_count == n:
        headers_col = None

    if topic_option is not None:
        topics = None
        topic_names = [topic_option]
    else:
        tcol = batch.column(names.index("topic"))
        if tcol.null_count:
            raise WriteSchemaError(
                "[KAFKA_NULL_TOPIC_IN_DATA] The Kafka message data sent to the producer contains a null topic. "
                "Use the `topic` option for setting a default topic."
            )
        enc = tcol.dictionary_encode()
        topic_names = enc.dictionary.to_pylist()
        topics = enc.indices.to_numpy(zero_copy_only=False)
    if "partition" in names:
        pcol = batch.column(names.index("partition"))
        parts = pcol.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    else:
        parts = None

    if topics is None and parts is None:
        yield ProduceGroup(topic_names[0], None, keys, values, _headers_py(headers_col, None))
        return
    # One sort key per row: (topic index, partition); stable order inside a group preserves row order.
    tkey = np.zeros(n, np.int64) if topics is None else topics.astype(np.int64)
    pkey = np.full(n, -1, np.int64) if parts is None else parts
    combined = tkey * (1 << 32) + (pkey + 1)
    order = np.argsort(combined, kind="stable")
    sorted_keys = combined[order]
    bounds = np.flatnonzero(np.diff(sorted_keys)) + 1
    for idx in np.split(order, bounds):
        take = pa.array(idx)
        t = topic_names[int(tkey[idx[0]])]
        p = int(pkey[idx[0]])
        yield ProduceGroup(
            t,
            None if p < 0 else p,
            keys.take(take) if keys is not None else None,
            values.take(take),
            _headers_py(headers_col, take),
        )


def _headers_py(col: Any, take: pa.Array | None) -> list[list[tuple[str, bytes | None]] | None] | None:
    if col is None:
        return None
    if take is not None:
        col = col.take(take)
    out: list[list[tuple[str, bytes | None]] | None] = []
    for rec in col.to_pylist():
        out.append(None if rec is None else [(h["key"], h["value"]) for h in rec])
    return out
