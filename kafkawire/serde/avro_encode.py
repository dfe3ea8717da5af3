"""Avro binary encoding of Python values (the reference encoder) and of JSON field defaults.

:func:`encode_default` turns a reader field's JSON ``default`` into the Avro binary encoding of that value,
which the decoders read in place of the missing writer field (Avro specification: "Schema Resolution").
:func:`encode_value` encodes one datum as Arrow's ``to_pylist`` yields it (dicts for records, lists of
pairs for maps, ``Decimal``, ``datetime``, ``date``, ``time``, ``uuid.UUID``, ``MonthDayNano``): the
pure-Python path of :func:`kafkawire.serde.encode_avro`.
"""

from __future__ import annotations

import datetime
import decimal
import struct
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from .avro_schema import AvroSchemaError, Schema

__all__ = ["encode_default", "encode_value", "write_long"]

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_EPOCH_NAIVE = datetime.datetime(1970, 1, 1)
_EPOCH_DATE = datetime.date(1970, 1, 1)
_PACK_F = struct.Struct("<f").pack
_PACK_D = struct.Struct("<d").pack


def write_long(out: bytearray, n: int) -> None:
    """Append ``n`` as a zig-zag varint (Avro ``int`` and ``long``)."""
    if not -(1 << 63) <= n < (1 << 63):
        raise OverflowError(f"{n} does not fit an Avro long")
    z = (n << 1) ^ (n >> 63)
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)


def _write_bytes(out: bytearray, b: bytes) -> None:
    write_long(out, len(b))
    out += b


def _decimal_bytes(value: Any, s: Schema, size: int | None) -> bytes:
    if not isinstance(value, decimal.Decimal):
        value = decimal.Decimal(value)
    sign, digits, exp = value.as_tuple()
    if not isinstance(exp, int):
        raise ValueError(f"decimal {value} is not finite")
    unscaled = int("".join(map(str, digits)) or "0") * (10 ** max(0, exp + s.scale))
    if exp + s.scale < 0:
        scaled = value.scaleb(s.scale)
        if scaled != scaled.to_integral_value():
            raise ValueError(f"decimal {value} has more than {s.scale} digits after the point")
        unscaled = int(scaled.copy_abs())
    if sign:
        unscaled = -unscaled
    if len(str(abs(unscaled))) > s.precision:
        raise ValueError(f"decimal {value} has more than {s.precision} digits")
    n = size if size is not None else max(1, (unscaled.bit_length() + 8) // 8)
    return int(unscaled).to_bytes(n, "big", signed=True)


def _int_like(value: Any, s: Schema) -> int:
    """The int/long a logical-typed value is stored as (an int passes through)."""
    if isinstance(value, bool):
        raise TypeError(f"{s.type} value must be an int, not bool")
    if isinstance(value, int):
        return value
    lt = s.logical
    if lt == "date" and isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return (value - _EPOCH_DATE).days
    if lt in ("time-millis", "time-micros") and isinstance(value, datetime.time):
        micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
        return micros // 1000 if lt == "time-millis" else micros
    if lt is not None and "timestamp" in lt and isinstance(value, datetime.datetime):
        if lt.startswith("local-"):
            delta = value.replace(tzinfo=None) - _EPOCH_NAIVE
        else:
            delta = (value if value.tzinfo else value.replace(tzinfo=datetime.timezone.utc)) - _EPOCH
        micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
        if lt.endswith("millis"):
            return micros // 1000
        return micros * 1000 if lt.endswith("nanos") else micros
    if lt is not None and "timestamp" in lt and hasattr(value, "value") and hasattr(value, "unit"):
        return int(value.value)  # pandas.Timestamp in nanoseconds
    raise TypeError(f"{type(value).__name__} value cannot be written as Avro {lt or s.type}")


def encode_value(out: bytearray, s: Schema, value: Any, depth: int = 0) -> None:
    """Append the Avro binary encoding of ``value`` under schema ``s``."""
    if depth > 200:
        raise AvroSchemaError("value nested deeper than 200 levels")
    _WRITERS.get(s.type, _write_record)(out, s, value, depth)


def _write_union(out: bytearray, s: Schema, value: Any, depth: int) -> None:
    i = _pick_branch(s, value)
    write_long(out, i)
    encode_value(out, s.branches[i], value, depth + 1)


def _write_null(out: bytearray, s: Schema, value: Any, depth: int) -> None:
    if value is not None:
        raise TypeError(f"null schema given {type(value).__name__}")


def _write_boolean(out: bytearray, s: Schema, value: Any, depth: int) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"boolean schema given {type(value).__name__}")
    out.append(1 if value else 0)


def _write_int(out: bytearray, s: Schema, value: Any, depth: int) -> None:
    n = _int_like(value, s)
    if not -(1 << 31) <= n < (1 << 31):
        raise OverflowError(f"{n} does not fit an Avro int")
    write_long(out, n)


def _write_long(out: bytearray, s: Schema, value: Any, depth: int) -> None:
    write_long(out, _int_like(value, s))


def _write_float(out: bytearray, s: Schema, value: Any, depth: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{s.type} schema given {type(value).__name__}")
    out += _PACK_F(value) if s.type == "float" else _PACK_D(value)


def _write_string(out: bytearray, s: Schema, value: Any, depth: int) -> None:
    if isinstance(value, uuid.UUID):
        value = str(value)
    if not isinstance(value, str):
        raise TypeError(f"string schema given {type(value).__name__}")
    _write_bytes(out, value.encode("utf-8"))


def _write_bytes_value(out: bytearray, s: Schema, value: Any, depth: int) -> None:
    if s.logical == "decimal" and not isinstance(value, (bytes, bytearray)):
        _write_bytes(out, _decimal_bytes(value, s, None))
    elif isinstance(value, (bytes, bytearray, memoryview)):
        _write_bytes(out, bytes(value))
    else:
        raise TypeError(f"bytes schema given {type(value).__name__}")


def _write_fixed(out: bytearray, s: Schema, value: Any, depth: int) -> None:
    if s.logical == "decimal" and not isinstance(value, (bytes, bytearray)):
        out += _decimal_bytes(value, s, s.size)
    elif s.logical == "duration" and not isinstance(value, (bytes, bytearray)):
        months, days, nanos = value
        out += struct.pack("<III", months, days, nanos // 1_000_000)
    elif not isinstance(value, (bytes, bytearray)) or len(value) != s.size:
        raise TypeError(f"fixed {s.name} needs {s.size} bytes")
    else:
        out += value


def _write_enum(out: bytearray, s: Schema, value: Any, depth: int) -> None:
    try:
        write_long(out, s.symbols.index(value))
    except ValueError:
        raise ValueError(f"{value!r:.80} is not a symbol of enum {s.name}") from None


def _write_array(out: bytearray, s: Schema, value: Any, depth: int) -> None:
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"array schema given {type(value).__name__}")
    if value:
        write_long(out, len(value))
        for item in value:
            encode_value(out, s.items, item, depth + 1)  # type: ignore[arg-type]
    out.append(0)


def _write_map(out: bytearray, s: Schema, value: Any, depth: int) -> None:
    items = list(value.items() if isinstance(value, Mapping) else value)
    if items:
        write_long(out, len(items))
        for k, v in items:
            if not isinstance(k, str):
                raise TypeError(f"map keys are strings, not {type(k).__name__}")
            _write_bytes(out, k.encode("utf-8"))
            encode_value(out, s.values, v, depth + 1)  # type: ignore[arg-type]
    out.append(0)


def _write_record(out: bytearray, s: Schema, value: Any, depth: int) -> None:
    if not isinstance(value, Mapping):
        raise TypeError(f"record {s.name} given {type(value).__name__}")
    for f in s.fields:
        if f.name in value:
            v = value[f.name]
        elif f.has_default:
            out += encode_default(f.type, f.default)
            continue
        else:
            raise ValueError(f"record {s.name} value has no field {f.name!r}")
        try:
            encode_value(out, f.type, v, depth + 1)
        except (TypeError, ValueError, OverflowError) as e:
            raise type(e)(f"{s.name}.{f.name}: {e}") from None


#: The writer of each Avro type (a record is the default).
_WRITERS: dict[str, Callable[[bytearray, Schema, Any, int], None]] = {
    "union": _write_union, "null": _write_null, "boolean": _write_boolean, "int": _write_int,
    "long": _write_long, "float": _write_float, "double": _write_float, "string": _write_string,
    "bytes": _write_bytes_value, "fixed": _write_fixed, "enum": _write_enum, "array": _write_array,
    "map": _write_map,
}


def _fits(s: Schema, value: Any) -> bool:
    t = s.type
    if value is None:
        return t == "null"
    if t == "null":
        return False
    if t == "boolean":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if t in ("int", "long"):
        return isinstance(value, int) or (s.logical is not None and isinstance(
            value, (datetime.date, datetime.time, datetime.datetime)))
    if t in ("float", "double"):
        return isinstance(value, (int, float))
    if t == "string":
        return isinstance(value, (str, uuid.UUID))
    if t == "bytes":
        return isinstance(value, (bytes, bytearray)) or (s.logical == "decimal" and isinstance(value, decimal.Decimal))
    if t == "fixed":
        return (isinstance(value, (bytes, bytearray)) and len(value) == s.size) or (
            s.logical == "decimal" and isinstance(value, decimal.Decimal)) or (
            s.logical == "duration" and isinstance(value, tuple))
    if t == "enum":
        return isinstance(value, str) and value in s.symbols
    if t == "array":
        return isinstance(value, (list, tuple))
    if t == "map":
        return isinstance(value, Mapping) or (isinstance(value, list) and all(
            isinstance(p, tuple) and len(p) == 2 for p in value))
    if t == "record":
        return isinstance(value, Mapping) and all(f.name in value or f.has_default for f in s.fields)
    return False


def _pick_branch(s: Schema, value: Any) -> int:
    for i, b in enumerate(s.branches):
        if _fits(b, value):
            return i
    raise TypeError(f"{type(value).__name__} value fits no branch of union "
                    f"[{', '.join(b.name or b.type for b in s.branches)}]")


def encode_default(s: Schema, default: Any) -> bytes:
    """The Avro binary encoding of a field default given as JSON (the specification's default rules: bytes and
    fixed as strings of code points 0-255, a union's default for its first branch)."""
    out = bytearray()
    _default(out, s, default, 0)
    return bytes(out)


def _default_block(
    out: bytearray, items: list[tuple[Any, Any]], item_schema: Schema, depth: int, keyed: bool
) -> None:
    """An array's or (``keyed``) a map's default: one block of its items, a map's each after its key, then
    the 0 count that ends it."""
    if items:
        write_long(out, len(items))
        for key, value in items:
            if keyed:
                _write_bytes(out, str(key).encode("utf-8"))
            _default(out, item_schema, value, depth + 1)
    out.append(0)


def _default(out: bytearray, s: Schema, d: Any, depth: int) -> None:
    if depth > 200:
        raise AvroSchemaError("default nested deeper than 200 levels")
    t = s.type
    if t == "union":
        # The specification asks for the first branch; Avro 1.12 readers also accept any branch that fits.
        errors = []
        for i, b in enumerate(s.branches):
            trial = bytearray()
            try:
                _default(trial, b, d, depth + 1)
            except (TypeError, ValueError, OverflowError, AvroSchemaError) as e:
                errors.append(str(e))
                continue
            write_long(out, i)
            out += trial
            return
        raise ValueError(f"default {d!r:.80} fits no union branch ({'; '.join(errors)})")
    if t in ("bytes", "fixed"):
        if not isinstance(d, str):
            raise TypeError(f"{t} default must be a string, not {type(d).__name__}")
        raw = d.encode("latin-1")
        if t == "fixed":
            if len(raw) != s.size:
                raise ValueError(f"fixed {s.name} default has {len(raw)} bytes, not {s.size}")
            out += raw
        else:
            _write_bytes(out, raw)
        return
    if t in ("int", "long"):
        if isinstance(d, bool) or not isinstance(d, int):
            raise TypeError(f"{t} default must be an integer, not {d!r:.40}")
    if t in ("float", "double") and isinstance(d, str) and d in ("NaN", "Infinity", "-Infinity"):
        d = float(d.replace("Infinity", "inf"))
    if t == "record":
        if not isinstance(d, Mapping):
            raise TypeError(f"record {s.name} default must be an object")
        for f in s.fields:
            if f.name in d:
                _default(out, f.type, d[f.name], depth + 1)
            elif f.has_default:
                _default(out, f.type, f.default, depth + 1)
            else:
                raise ValueError(f"record {s.name} default lacks field {f.name!r}")
        return
    if t == "array":
        if not isinstance(d, list):
            raise TypeError("array default must be a list")
        _default_block(out, [(None, item) for item in d], s.items, depth, False)  # type: ignore[arg-type]
        return
    if t == "map":
        if not isinstance(d, Mapping):
            raise TypeError("map default must be an object")
        _default_block(out, list(d.items()), s.values, depth, True)  # type: ignore[arg-type]
        return
    plain = Schema(t)  # a logical type's default is its underlying value (an int for a date)
    if t == "enum":
        plain = s
    encode_value(out, plain, d, depth + 1)
