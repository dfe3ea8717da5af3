"""The record table with its values (and keys) decoded: what :meth:`kafkawire.RecordColumns.to_arrow_decoded`
returns."""

from __future__ import annotations

from typing import Any

from .avro import decode_avro

__all__ = ["decode_record_columns"]

FORMATS = ("avro", "binary", None)


def decode_record_columns(records: Any, registry: Any, *, value: str | None = "avro", key: str | None = None,
                          value_subject: str | None = None, key_subject: str | None = None,
                          value_schema: Any = None, key_schema: Any = None, mode: str = "FAILFAST",
                          partition: int | None = None) -> Any:
    """``records.to_arrow()`` with the ``value`` column (``value="avro"``) and/or the ``key`` column
    (``key="avro"``) replaced by the decoded struct. Subjects and reader schemas as in
    :func:`~kafkawire.serde.decode_avro` (an omitted subject: the newest writer schema is the reader);
    ``partition`` only names the partition in error messages."""
    import pyarrow as pa

    for name, fmt in (("value", value), ("key", key)):
        if fmt not in FORMATS:
            raise ValueError(f"{name} format must be 'avro', 'binary' or None, not {fmt!r}")
    batch = records.to_arrow()
    arrays = list(batch.columns)
    fields = list(batch.schema)
    names = batch.schema.names
    for name, fmt, subject, schema, column in (("value", value, value_subject, value_schema, records.value),
                                               ("key", key, key_subject, key_schema, records.key)):
        if fmt != "avro":
            continue
        decoded = decode_avro(column, registry, subject=subject, reader_schema=schema, mode=mode,
                              offsets=records.offset, partition=partition)
        i = names.index(name)
        arrays[i] = decoded
        fields[i] = pa.field(name, decoded.type)
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
