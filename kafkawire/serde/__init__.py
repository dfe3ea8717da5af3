"""Registry-framed values as columns: Confluent Schema Registry formats decoded and encoded in bulk.

Most topics carry Avro (or JSON Schema, or Protobuf) values in the Confluent wire format: magic byte 0, a
big-endian int32 schema id, then the body, with the schemas in a Schema Registry. This package turns a whole
column of such values into one Arrow array in a compiled pass, and back::

    from kafkawire.serde import SchemaRegistry, decode_avro, encode_avro

    registry = SchemaRegistry("http://localhost:8081")
    table = decode_avro(records.value, registry, subject="orders-value")   # pyarrow.StructArray
    values = encode_avro(table, registry, subject="orders-value")          # kafkawire.BinaryColumn

:class:`SchemaRegistry` speaks the registry's REST API (cached, one deadline per call);
:func:`decode_avro` resolves every writer schema id it meets against one reader schema (by default the
subject's latest), so values written under several schema versions decode into one table.
:func:`decode_json` / :func:`encode_json` do the same for JSON Schema values (Arrow's JSON reader parses every
body in one pass); :func:`decode_protobuf` / :func:`encode_protobuf` for Protobuf (descriptors from the registry,
message indexes; parsed by the protobuf runtime one value at a time, not yet in one compiled pass).
"""

from .avro import AvroDecodeError, decode_avro, encode_avro
from .avro_schema import AvroSchemaError
from .json_values import JsonDecodeError, JsonSchemaError, decode_json, encode_json
from .protobuf_values import ProtobufDecodeError, ProtobufSchemaError, decode_protobuf, encode_protobuf
from .registry import RegisteredSchema, SchemaReference, SchemaRegistry, SchemaRegistryError

__all__ = [
    "AvroDecodeError",
    "AvroSchemaError",
    "JsonDecodeError",
    "JsonSchemaError",
    "ProtobufDecodeError",
    "ProtobufSchemaError",
    "RegisteredSchema",
    "SchemaReference",
    "SchemaRegistry",
    "SchemaRegistryError",
    "decode_avro",
    "decode_json",
    "decode_protobuf",
    "encode_avro",
    "encode_json",
    "encode_protobuf",
]
