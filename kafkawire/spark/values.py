"""Spark read options that decode registry-framed values into columns: ``valueFormat`` / ``keyFormat``.

``spark.read.format("kafkawire").option("valueFormat", "avro").option("schema.registry.url", url)`` turns the
``value`` column into the decoded struct, built by :func:`kafkawire.serde.decode_avro` in the Python workers
straight into Arrow (Spark's own ``from_avro`` cannot read the Confluent framing at all, SPARK-34652).

Options (names case-insensitive, like every Spark option):

``valueFormat`` / ``keyFormat``
    ``binary`` (default: the bytes as they are) or ``avro``.
``schema.registry.url``
    The registry; its client properties come along with the same names as Confluent's clients
    (``basic.auth.credentials.source``, ``basic.auth.user.info``, ``bearer.auth.*``, ``ssl.ca.location``...,
    also with the Java client's ``schema.registry.`` prefix).
``valueSubject`` / ``keySubject``
    The subject whose latest version is the reader schema (default ``<topic>-value`` / ``<topic>-key``, which
    needs a read of exactly one topic).
``avroSchema`` / ``keyAvroSchema``
    A reader schema given inline instead (JSON), as for Spark's ``from_avro``.
``mode``
    ``FAILFAST`` (default: a value that cannot be decoded fails the task, naming its partition, offset and the
    cause) or ``PERMISSIVE`` (such values become null), as ``from_avro``'s option of that name.

The reader schema is fixed on the driver when the query is planned (the subject's latest version then), so
every task decodes into the schema Spark was given; tasks fetch only writer schemas by id, once per Python
worker (the registry client and the compiled programs are cached per process, not per micro-batch).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import InvalidOptionError

__all__ = ["ValueDecoding", "ValueEncoding", "read_topics", "value_decoding", "value_encoding"]

FORMATS = ("binary", "avro")
_REGISTRY_PREFIXES = ("schema.registry.", "basic.auth.", "bearer.auth.")


def _get(options: Mapping[str, str], name: str) -> str | None:
    lower = name.lower()
    for k, v in options.items():
        if k.lower() == lower:
            return v
    return None


@dataclass(frozen=True)
class ValueDecoding:
    """What to decode in a read (picklable: it travels to the executors with the reader)."""

    value_format: str
    key_format: str
    registry: tuple[tuple[str, str], ...]
    value_schema: str | None  # the reader schema text, resolved on the driver
    key_schema: str | None
    mode: str

    def registry_client(self) -> Any:
        return _client(self.registry)

    def spark_schema(self, base: Any) -> Any:
        """``base`` (Spark's Kafka schema) with ``key`` / ``value`` replaced by their decoded types."""
        from pyspark.sql.types import StructField, StructType

        fields = []
        for f in base.fields:
            text = {"value": self.value_schema, "key": self.key_schema}.get(f.name)
            if text is not None:
                fields.append(StructField(f.name, _spark_type(text), True))
            else:
                fields.append(f)
        return StructType(fields)

    def decode(self, batch: Any, partition: int | None = None) -> Any:
        """One Arrow batch of Spark's Kafka schema with ``key`` / ``value`` decoded."""
        import pyarrow as pa

        from ..serde import decode_avro

        arrays = list(batch.columns)
        fields = list(batch.schema)
        names = batch.schema.names
        offsets = batch.column(names.index("offset")).to_numpy() if "offset" in names else None
        for name, text in (("value", self.value_schema), ("key", self.key_schema)):
            if text is None:
                continue
            i = names.index(name)
            decoded = decode_avro(arrays[i], self.registry_client(), reader_schema=text, mode=self.mode,
                                  offsets=offsets, partition=partition)
            if self.mode == "PERMISSIVE":
                decoded = _drop_error(decoded)
            target = _arrow_for_spark(decoded.type)
            arrays[i] = _array_for_spark(decoded, target)
            fields[i] = pa.field(name, target)
        return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def read_topics(options: Mapping[str, str]) -> list[str] | None:
    """The topics a read names (``subscribe`` or ``assign``); None for ``subscribePattern``."""
    subscribe = _get(options, "subscribe")
    if subscribe:
        return [t.strip() for t in subscribe.split(",") if t.strip()]
    assign = _get(options, "assign")
    if assign:
        try:
            return sorted(json.loads(assign))
        except (ValueError, TypeError):
            return None  # the source's own option check reports it
    return None


def value_decoding(options: Mapping[str, str], topics: list[str] | None) -> ValueDecoding | None:
    """The decoding a read asks for, or None (both formats ``binary``). ``topics``: the topics the read
    names (None for ``subscribePattern``), for the default subjects. Talks to the registry for the subjects'
    latest schemas."""
    value_format = (_get(options, "valueFormat") or "binary").lower()
    key_format = (_get(options, "keyFormat") or "binary").lower()
    for name, fmt in (("valueFormat", value_format), ("keyFormat", key_format)):
        if fmt not in FORMATS:
            raise InvalidOptionError(f"{name} must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if value_format == key_format == "binary":
        return None
    mode = (_get(options, "mode") or "FAILFAST").upper()
    if mode not in ("FAILFAST", "PERMISSIVE"):
        raise InvalidOptionError(f"mode must be FAILFAST or PERMISSIVE, not {mode!r}")
    registry = tuple(sorted((k.lower(), v) for k, v in options.items()
                            if k.lower().startswith(_REGISTRY_PREFIXES)))
    if not any(k == "schema.registry.url" for k, _ in registry):
        raise InvalidOptionError(f"valueFormat/keyFormat {value_format}/{key_format} needs schema.registry.url")
    client = _client(registry)

    def reader_schema(kind: str, fmt: str) -> str | None:
        if fmt == "binary":
            return None
        inline = _get(options, "avroSchema" if kind == "value" else "keyAvroSchema")
        if inline:
            from ..serde.avro_schema import AvroSchemaError, parse

            try:
                parse(inline)
            except AvroSchemaError as e:
                raise InvalidOptionError(f"{'avroSchema' if kind == 'value' else 'keyAvroSchema'}: {e}") from None
            return inline
        subject = _get(options, f"{kind}Subject")
        if not subject:
            if not topics or len(topics) != 1:
                raise InvalidOptionError(f"{kind}Subject is required when the read is not of exactly one topic "
                                         f"(the default subject is <topic>-{kind})")
            subject = f"{topics[0]}-{kind}"
        from ..serde.avro import _parse_registered
        from ..serde.avro_schema import to_json

        latest = client.get_latest(subject)
        if latest.schema_type != "AVRO":
            raise InvalidOptionError(f"subject {subject!r} holds a {latest.schema_type} schema, not Avro")
        return json.dumps(to_json(_parse_registered(client, latest))) if latest.references else latest.schema

    decoding = ValueDecoding(value_format, key_format, registry, reader_schema("value", value_format),
                             reader_schema("key", key_format), mode)
    for text in (decoding.value_schema, decoding.key_schema):
        if text is not None:
            _spark_type(text)  # an unsupported type fails the query at planning, not in a task
    return decoding


_CLIENTS: dict[tuple[tuple[str, str], ...], Any] = {}
_CLIENTS_LOCK = threading.Lock()


def _client(registry: tuple[tuple[str, str], ...]) -> Any:
    """One registry client per set of properties and process: its caches outlive a micro-batch."""
    from ..serde import SchemaRegistry

    with _CLIENTS_LOCK:
        client = _CLIENTS.get(registry)
        if client is None:
            try:
                client = _CLIENTS[registry] = SchemaRegistry.from_properties(dict(registry))
            except ValueError as e:
                raise InvalidOptionError(str(e)) from None
        return client


def _drop_error(decoded: Any) -> Any:
    import pyarrow as pa

    from ..serde.avro import ERROR_COLUMN

    names = [f.name for f in decoded.type]
    if names == ["value", ERROR_COLUMN]:
        return decoded.field(0)
    keep = [i for i, n in enumerate(names) if n != ERROR_COLUMN]
    return pa.StructArray.from_arrays([decoded.field(i) for i in keep], fields=[decoded.type.field(i) for i in keep],
                                      mask=decoded.is_null())


def _arrow_for_spark(t: Any) -> Any:
    """The Arrow type Spark reads for a decoded Avro type, as Spark's ``from_avro`` maps them: time-* as
    int/long, fixed as binary, timestamps in microseconds, a union of several non-null types as a struct with
    one field per non-null branch (``member0``, ``member1``, ... in the union's order; the one the value took
    is set), a duration as its 12 bytes (spark-avro does not read the logical type). Decimals wider than 38
    digits have no Spark type."""
    import pyarrow as pa

    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _arrow_for_spark(f.type)) for f in t])
    if pa.types.is_list(t):
        return pa.list_(pa.field("element", _arrow_for_spark(t.value_type)))
    if pa.types.is_map(t):
        return pa.map_(pa.string(), _arrow_for_spark(t.item_type))
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", t.tz)
    if pa.types.is_time32(t):
        return pa.int32()
    if pa.types.is_time64(t):
        return pa.int64()
    if pa.types.is_fixed_size_binary(t):
        return pa.binary()
    if pa.types.is_union(t):
        members = [f for f in t if not pa.types.is_null(f.type)]
        return pa.struct([pa.field(f"member{i}", _arrow_for_spark(f.type)) for i, f in enumerate(members)])
    if t == pa.month_day_nano_interval():
        return pa.binary()
    if pa.types.is_decimal256(t):
        raise InvalidOptionError(f"Spark decimals hold 38 digits at most, not {t.precision}")
    return t


def _array_for_spark(arr: Any, target: Any) -> Any:
    """``arr`` (a decoded Avro column) as the Arrow type ``target`` (:func:`_arrow_for_spark` of its type). A cast
    does it, but for the two conversions Arrow cannot cast (a union into a struct of members, a duration into
    its bytes), which are made here, recursively through structs, lists and maps."""
    import numpy as np
    import pyarrow as pa

    t = arr.type
    if t == target:
        return arr
    if not _needs_rebuild(t):
        return arr.cast(target)
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_struct(t):
        children = [_array_for_spark(arr.field(i), target.field(i).type) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if pa.types.is_list(t) or pa.types.is_map(t):
        # Offsets rebased to the slice's own values (Arrow builds no list from a slice's offsets with nulls).
        offsets = np.asarray(arr.offsets)
        start, stop = int(offsets[0]), int(offsets[-1])
        entries = pa.array(offsets - start, type=pa.int32())
        if pa.types.is_list(t):
            values = _array_for_spark(arr.values.slice(start, stop - start), target.value_type)
            return pa.ListArray.from_arrays(entries, values, type=target, mask=mask)
        pairs = arr.values.slice(start, stop - start)
        items = _array_for_spark(pairs.field(1), target.item_type)
        return pa.MapArray.from_arrays(entries, pairs.field(0), items, type=target, mask=mask)
    if pa.types.is_union(t):
        return _union_as_struct(arr, target)
    return _duration_bytes(arr)


def _needs_rebuild(t: Any) -> bool:
    import pyarrow as pa

    if pa.types.is_union(t) or t == pa.month_day_nano_interval():
        return True
    if pa.types.is_struct(t):
        return any(_needs_rebuild(f.type) for f in t)
    if pa.types.is_list(t):
        return bool(_needs_rebuild(t.value_type))
    if pa.types.is_map(t):
        return bool(_needs_rebuild(t.item_type))
    return False


def _union_as_struct(arr: Any, target: Any) -> Any:
    """A dense union as Spark's ``from_avro`` shows it: one field per non-null branch, set in the row whose
    value took that branch; the row is null when the value took the null branch."""
    import numpy as np
    import pyarrow as pa

    # From the buffers, at the array's own offset: a slice's type_codes/offsets properties start at the parent's
    # first row.
    _, code_buf, offset_buf = arr.buffers()[:3]
    codes = np.frombuffer(code_buf, dtype=np.int8)[arr.offset : arr.offset + len(arr)]
    offsets = np.frombuffer(offset_buf, dtype=np.int32)[arr.offset : arr.offset + len(arr)]
    row_is_null = np.zeros(len(arr), dtype=bool)
    members: list[Any] = []
    for i, f in enumerate(arr.type):
        taken = codes == arr.type.type_codes[i]
        if pa.types.is_null(f.type):
            row_is_null |= taken
            continue
        child = _array_for_spark(arr.field(i), target.field(len(members)).type)
        members.append(child.take(pa.array(offsets, type=pa.int32(), mask=~taken)))
    return pa.StructArray.from_arrays(members, fields=list(target), mask=pa.array(row_is_null))


def _duration_bytes(arr: Any) -> Any:
    """Avro durations (Arrow month_day_nano intervals) back as their 12 bytes: months, days and milliseconds,
    unsigned little-endian, which is what Spark's ``from_avro`` gives for the underlying fixed."""
    import numpy as np
    import pyarrow as pa

    n = len(arr)
    out = np.zeros((n, 3), dtype="<u4")
    for row, v in enumerate(arr.to_pylist()):
        if v is not None:
            out[row] = (v.months, v.days, v.nanoseconds // 1_000_000)
    mask = arr.is_null() if arr.null_count else None
    data = out.tobytes()
    return pa.array([data[12 * i : 12 * i + 12] for i in range(n)], type=pa.binary(), mask=mask)


def _spark_type(text: str) -> Any:
    from pyspark.sql.pandas.types import from_arrow_type

    from ..serde.avro_arrow import arrow_type
    from ..serde.avro_plan import build_columns
    from ..serde.avro_schema import AvroSchemaError, parse

    try:
        cols, root = build_columns(parse(text))
    except AvroSchemaError as e:
        raise InvalidOptionError(f"reader schema: {e}") from None
    return from_arrow_type(_arrow_for_spark(arrow_type(cols, root)))


@dataclass(frozen=True)
class ValueEncoding:
    """``valueFormat=avro`` on a write: the struct ``value`` column encoded as Confluent-framed Avro under
    ``subject`` (the ``avroSchema`` option registered there if given, else the subject's latest schema, else one
    derived from the column's type and registered)."""

    registry: tuple[tuple[str, str], ...]
    subject: str
    schema: str | None

    def encode_all(self, batches: Any) -> Any:
        """The task's Arrow batches with ``value`` encoded (a generator: batches stream through)."""
        import pyarrow as pa

        from ..serde import encode_avro

        client = _client(self.registry)
        for batch in batches:
            names = batch.schema.names
            i = names.index("value")
            encoded = encode_avro(batch.column(i), client, subject=self.subject, schema=self.schema).to_arrow()
            arrays = list(batch.columns)
            arrays[i] = encoded
            fields = list(batch.schema)
            fields[i] = pa.field("value", pa.binary())
            yield pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def value_encoding(options: Mapping[str, str], columns: dict[str, str], topic: str | None) -> ValueEncoding | None:
    """The encoding a write asks for (``valueFormat=avro``), or None. ``columns``: the written DataFrame's
    column types (Spark ``simpleString``); ``topic``: the ``topic`` option (for the default subject)."""
    fmt = (_get(options, "valueFormat") or "binary").lower()
    if fmt not in FORMATS:
        raise InvalidOptionError(f"valueFormat must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if (_get(options, "keyFormat") or "binary").lower() != "binary":
        raise InvalidOptionError("keyFormat is a read option: writes encode the value only")
    if fmt == "binary":
        return None
    if not columns.get("value", "").startswith("struct<"):
        raise InvalidOptionError(f"valueFormat=avro writes a struct value column, not {columns.get('value')}")
    registry = tuple(sorted((k.lower(), v) for k, v in options.items()
                            if k.lower().startswith(_REGISTRY_PREFIXES)))
    if not any(k == "schema.registry.url" for k, _ in registry):
        raise InvalidOptionError("valueFormat=avro needs schema.registry.url")
    subject = _get(options, "valueSubject") or (f"{topic}-value" if topic else None)
    if subject is None:
        raise InvalidOptionError("valueFormat=avro on a write needs the topic option or valueSubject")
    schema = _get(options, "avroSchema")
    if schema:
        from ..serde.avro_schema import AvroSchemaError, parse

        try:
            parse(schema)
        except AvroSchemaError as e:
            raise InvalidOptionError(f"avroSchema: {e}") from None
    _client(registry)  # a malformed registry property fails the query here, not in a task
    return ValueEncoding(registry, subject, schema or None)
