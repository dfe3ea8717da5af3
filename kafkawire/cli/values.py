"""``kafkawire consume --value-format avro --schema-registry URL``: values decoded from the Confluent wire format.

The whole fetch is decoded in one :func:`kafkawire.serde.decode_avro` call. With ``--format parquet`` the
``value`` column of the file is the decoded struct (no Python object per record); ``--format json`` writes
the decoded value as a JSON object; ``--format values`` writes one JSON document per line. The reader
schema is fixed when the command starts (the subject's latest version, ``--value-subject``, default
``<topic>-value``), so every batch, and the Parquet file, has one schema.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import decimal
import json
from typing import IO, Any

from ._common import CliError

__all__ = ["add_value_args", "wrap_writer"]


def add_value_args(parser: argparse.ArgumentParser) -> None:
    """The value-decoding options of ``kafkawire consume``."""
    parser.add_argument("--value-format", choices=("binary", "avro"), default="binary",
                        help="avro: decode Confluent-framed Avro values with the registry's schemas (default: binary)")
    parser.add_argument("--schema-registry", metavar="URL", help="Schema Registry URL (needed by --value-format avro)")
    parser.add_argument("--value-subject", metavar="SUBJECT",
                        help="subject whose latest schema is the reader schema (default: TOPIC-value)")


def wrap_writer(writer: Any, args: argparse.Namespace, out: IO[bytes] | None) -> Any:
    """``writer`` itself for binary values, else a writer that decodes the values first."""
    if getattr(args, "value_format", "binary") == "binary":
        return writer
    if not args.schema_registry:
        raise CliError("--value-format avro needs --schema-registry URL")
    from ..serde import SchemaRegistry, SchemaRegistryError

    try:
        registry = SchemaRegistry(args.schema_registry)
        subject = args.value_subject or f"{args.topic}-value"
        reader = registry.get_latest(subject).schema
    except (ValueError, SchemaRegistryError) as e:
        raise CliError(str(e)) from None
    return _DecodingWriter(writer, registry, reader, args.format, out, args.binary)


def _jsonable(binary: str) -> Any:
    def conv(o: Any) -> Any:
        if isinstance(o, (bytes, bytearray)):
            if binary == "base64":
                return base64.b64encode(o).decode("ascii")
            return o.hex() if binary == "hex" else o.decode("utf-8", "replace")
        if isinstance(o, decimal.Decimal):
            return str(o)
        if isinstance(o, (datetime.datetime, datetime.date, datetime.time)):
            return o.isoformat()
        return str(o)

    return conv


class _DecodingWriter:
    def __init__(self, inner: Any, registry: Any, reader: str, fmt: str, out: IO[bytes] | None, binary: str) -> None:
        self.inner, self.registry, self.reader, self.fmt, self.out = inner, registry, reader, fmt, out
        self.default = _jsonable(binary)
        self.binary = binary

    def _decode(self, partition: int, cols: Any, count: int) -> Any:
        from ..serde import AvroDecodeError, decode_avro

        values = cols.value.to_arrow().slice(0, count)
        try:
            return decode_avro(values, self.registry, reader_schema=self.reader, offsets=cols.offset[:count],
                               partition=partition)
        except AvroDecodeError as e:
            raise CliError(str(e)) from None

    def write(self, topic: str, partition: int, cols: Any, count: int) -> None:
        decoded = self._decode(partition, cols, count)
        if self.fmt == "parquet":  # the same columns as without --value-format, the value a struct
            self.inner.write(topic, partition, cols, count, value=decoded)
            return
        if self.fmt == "json":
            self.inner.write(topic, partition, cols, count, value=decoded.to_pylist(), default=self.default)
            return
        assert self.out is not None
        lines = [json.dumps(r, default=self.default, ensure_ascii=False) for r in decoded.to_pylist()]
        self.out.write(("\n".join(lines) + "\n").encode("utf-8"))
        self.out.flush()

    def close(self) -> None:
        if self.fmt == "parquet":
            # nothing consumed: an empty file with the decoded schema
            from ..serde.avro_arrow import arrow_type
            from ..serde.avro_plan import build_columns
            from ..serde.avro_schema import parse

            cols, root = build_columns(parse(self.reader))
            self.inner.close(value_type=arrow_type(cols, root))
            return
        self.inner.close()
