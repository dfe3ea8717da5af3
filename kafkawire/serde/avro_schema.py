"""Avro schemas parsed from their JSON text into a small tree kafkawire can compile (Avro 1.12 specification).

:func:`parse` resolves names (full names, namespaces inherited from the enclosing named type, references to
types defined earlier, aliases) and checks what the decoder relies on: a fixed has a size, an enum's
symbols are unique, a union holds no union and at most one of each unnamed type. Logical types are kept
when they are valid for their base type and dropped otherwise, as the specification says readers must.
Schemas come from a registry and are treated as hostile: nesting depth and sizes are bounded, and every
failure is an :class:`AvroSchemaError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from ..errors import KafkaWireError

__all__ = ["AvroSchemaError", "Field", "Schema", "parse", "to_json"]

PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
NAMED = ("record", "error", "enum", "fixed")
# A schema nested deeper than this is refused: no real schema comes near it, and the parser, the planner
# and Arrow's type tree all recurse over it.
MAX_SCHEMA_DEPTH = 64
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class AvroSchemaError(KafkaWireError, ValueError):
    """An Avro schema is invalid, or cannot be read as the reader schema asks (resolution failed)."""


class Field:
    """A record field: ``name``, ``type`` (a :class:`Schema`), ``default`` (``NO_DEFAULT`` when absent)."""

    __slots__ = ("name", "type", "default", "aliases", "has_default")

    def __init__(self, name: str, type: Schema, default: Any, has_default: bool, aliases: tuple[str, ...]) -> None:
        self.name = name
        self.type = type
        self.default = default
        self.has_default = has_default
        self.aliases = aliases


class Schema:
    """One node of a parsed schema. ``type`` is a primitive name or ``record``/``enum``/``array``/``map``/
    ``union``/``fixed``; named types carry ``name`` (the full name) and ``aliases`` (full names); ``logical``
    is the logical type kept for this node (``None`` when absent or invalid)."""

    __slots__ = ("type", "name", "aliases", "fields", "symbols", "enum_default", "items", "values", "branches",
                 "size", "logical", "precision", "scale", "__weakref__")

    def __init__(self, type: str) -> None:
        self.type = type
        self.name: str | None = None
        self.aliases: tuple[str, ...] = ()
        self.fields: list[Field] = []
        self.symbols: list[str] = []
        self.enum_default: str | None = None
        self.items: Schema | None = None
        self.values: Schema | None = None
        self.branches: list[Schema] = []
        self.size = 0
        self.logical: str | None = None
        self.precision = 0
        self.scale = 0

    def __repr__(self) -> str:
        return f"<avro {self.name or self.type}{' ' + self.logical if self.logical else ''}>"

    def walk(self) -> Iterator[Schema]:
        """Every node reachable from this one, each once (recursive types are visited once)."""
        seen: set[int] = set()
        stack = [self]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            yield node
            stack.extend(f.type for f in node.fields)
            stack.extend(node.branches)
            if node.items is not None:
                stack.append(node.items)
            if node.values is not None:
                stack.append(node.values)


def parse(text: str | Any, *, named: dict[str, Schema] | None = None) -> Schema:
    """Parse an Avro schema given as JSON text (or already-decoded JSON). ``named``: types defined by
    referenced schemas, by full name (filled in with the types this schema defines)."""
    if isinstance(text, (str, bytes)):
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError) as e:
            raise AvroSchemaError(f"schema is not JSON: {e}") from None
    else:
        obj = text
    return _Parser({} if named is None else named).parse(obj, "", 0)


class _Parser:
    def __init__(self, named: dict[str, Schema]) -> None:
        self.named = named

    def fullname(self, name: Any, namespace: Any, enclosing: str) -> str:
        if not isinstance(name, str) or not name:
            raise AvroSchemaError(f"a named type needs a non-empty string name, not {name!r:.80}")
        if "." in name:
            full = name
        else:
            ns = namespace if isinstance(namespace, str) else enclosing
            full = f"{ns}.{name}" if ns else name
        for part in full.split("."):
            if not _NAME.fullmatch(part):
                raise AvroSchemaError(f"invalid name {full!r:.120}")
        return full

    def lookup(self, name: str, enclosing: str) -> Schema | None:
        if name in PRIMITIVES:
            return None
        if "." not in name and enclosing and f"{enclosing}.{name}" in self.named:
            return self.named[f"{enclosing}.{name}"]
        return self.named.get(name)

    def parse(self, obj: Any, ns: str, depth: int) -> Schema:
        if depth > MAX_SCHEMA_DEPTH:
            raise AvroSchemaError(f"schema nested deeper than {MAX_SCHEMA_DEPTH} levels")
        if isinstance(obj, str):
            if obj in PRIMITIVES:
                return Schema(obj)
            ref = self.lookup(obj, ns)
            if ref is None:
                raise AvroSchemaError(f"unknown type {obj!r:.120}")
            return ref
        if isinstance(obj, list):
            return self.union(obj, ns, depth)
        if not isinstance(obj, dict):
            raise AvroSchemaError(f"a schema is a string, list or object, not {type(obj).__name__}")
        t = obj.get("type")
        if isinstance(t, (dict, list)) or (isinstance(t, str) and t not in PRIMITIVES + NAMED + ("array", "map")):
            # {"type": {...}} or {"type": "SomeNamedType"}: the attributes around it (a logicalType) apply to it
            inner = self.parse(t, ns, depth + 1)
            return inner
        if t in PRIMITIVES:
            node = Schema(t)
        elif t in ("record", "error"):
            node = self.record(obj, ns, depth)
            return node
        elif t == "enum":
            node = self.enum(obj, ns)
        elif t == "fixed":
            node = self.fixed(obj, ns)
        elif t == "array":
            node = Schema("array")
            if "items" not in obj:
                raise AvroSchemaError("array schema without 'items'")
            node.items = self.parse(obj["items"], ns, depth + 1)
        elif t == "map":
            node = Schema("map")
            if "values" not in obj:
                raise AvroSchemaError("map schema without 'values'")
            node.values = self.parse(obj["values"], ns, depth + 1)
        else:
            raise AvroSchemaError(f"unknown type {t!r:.120}")
        self.logical_type(node, obj)
        return node

    def register(self, node: Schema, obj: dict[str, Any], ns: str) -> str:
        full = self.fullname(obj.get("name"), obj.get("namespace"), ns)
        if full in self.named:
            raise AvroSchemaError(f"type {full!r} is defined twice")
        node.name = full
        own_ns = full.rpartition(".")[0]
        aliases = obj.get("aliases") or []
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise AvroSchemaError(f"aliases of {full!r} must be a list of strings")
        node.aliases = tuple(self.fullname(a, None, own_ns) for a in aliases)
        self.named[full] = node
        return own_ns

    def record(self, obj: dict[str, Any], ns: str, depth: int) -> Schema:
        node = Schema("record")
        own_ns = self.register(node, obj, ns)
        fields = obj.get("fields")
        if not isinstance(fields, list):
            raise AvroSchemaError(f"record {node.name!r} needs a 'fields' list")
        names: set[str] = set()
        for f in fields:
            if not isinstance(f, dict) or not isinstance(f.get("name"), str) or not _NAME.fullmatch(f["name"]):
                raise AvroSchemaError(f"record {node.name!r}: invalid field {f!r:.120}")
            if f["name"] in names:
                raise AvroSchemaError(f"record {node.name!r}: field {f['name']!r} appears twice")
            names.add(f["name"])
            if "type" not in f:
                raise AvroSchemaError(f"record {node.name!r}: field {f['name']!r} has no type")
            ftype = self.parse(f["type"], own_ns, depth + 1)
            aliases = f.get("aliases") or []
            if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
                raise AvroSchemaError(f"record {node.name!r}: aliases of field {f['name']!r} must be strings")
            node.fields.append(Field(f["name"], ftype, f.get("default"), "default" in f, tuple(aliases)))
        return node

    def enum(self, obj: dict[str, Any], ns: str) -> Schema:
        node = Schema("enum")
        self.register(node, obj, ns)
        symbols = obj.get("symbols")
        if not isinstance(symbols, list) or not symbols or not all(isinstance(s, str) and _NAME.fullmatch(s)
                                                                   for s in symbols):
            raise AvroSchemaError(f"enum {node.name!r} needs a non-empty list of valid symbols")
        if len(set(symbols)) != len(symbols):
            raise AvroSchemaError(f"enum {node.name!r} repeats a symbol")
        node.symbols = list(symbols)
        default = obj.get("default")
        if default is not None:
            if default not in symbols:
                raise AvroSchemaError(f"enum {node.name!r}: default {default!r:.80} is not a symbol")
            node.enum_default = default
        return node

    def fixed(self, obj: dict[str, Any], ns: str) -> Schema:
        node = Schema("fixed")
        self.register(node, obj, ns)
        size = obj.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= (1 << 30):
            raise AvroSchemaError(f"fixed {node.name!r} needs a size between 0 and 2**30, not {size!r:.40}")
        node.size = size
        self.logical_type(node, obj)
        return node

    def union(self, branches: list[Any], ns: str, depth: int) -> Schema:
        node = Schema("union")
        seen: set[str] = set()
        for b in branches:
            branch = self.parse(b, ns, depth + 1)
            if branch.type == "union":
                raise AvroSchemaError("a union cannot directly contain another union")
            key = branch.name if branch.name else branch.type
            if key in seen:
                raise AvroSchemaError(f"union holds {key!r} twice")
            seen.add(key)
            node.branches.append(branch)
        if not node.branches:
            raise AvroSchemaError("a union needs at least one branch")
        return node

    @staticmethod
    def logical_type(node: Schema, obj: dict[str, Any]) -> None:
        lt = obj.get("logicalType")
        if not isinstance(lt, str):
            return
        t = node.type
        if lt == "decimal" and t in ("bytes", "fixed"):
            precision, scale = obj.get("precision"), obj.get("scale", 0)
            if not (isinstance(precision, int) and isinstance(scale, int)) or isinstance(precision, bool):
                return
            # fixed(n) holds at most floor(log10(2^(8n-1) - 1)) digits; an invalid decimal is ignored (spec).
            max_digits = 76
            if t == "fixed":
                max_digits = min(max_digits, len(str((1 << (8 * node.size - 1)) - 1)) if node.size else 0)
            if not 1 <= precision <= max_digits or not 0 <= scale <= precision:
                return
            node.logical, node.precision, node.scale = "decimal", precision, scale
        elif (lt, t) in (("date", "int"), ("time-millis", "int"), ("time-micros", "long"),
                         ("timestamp-millis", "long"), ("timestamp-micros", "long"), ("timestamp-nanos", "long"),
                         ("local-timestamp-millis", "long"), ("local-timestamp-micros", "long"),
                         ("local-timestamp-nanos", "long"), ("uuid", "string")):
            node.logical = lt
        elif lt == "duration" and t == "fixed" and node.size == 12:
            node.logical = lt


def to_json(schema: Schema) -> Any:
    """The schema as JSON-ready data (named types written in full once, then referenced by name)."""
    defined: set[str] = set()

    def conv(s: Schema) -> Any:
        if s.name is not None and s.name in defined:
            return s.name
        if s.type in PRIMITIVES:
            return s.type if s.logical is None else _with_logical({"type": s.type}, s)
        if s.type == "union":
            return [conv(b) for b in s.branches]
        if s.type == "array":
            return _with_logical({"type": "array", "items": conv(s.items)}, s)  # type: ignore[arg-type]
        if s.type == "map":
            return {"type": "map", "values": conv(s.values)}  # type: ignore[arg-type]
        assert s.name is not None
        defined.add(s.name)
        out: dict[str, Any] = {"type": s.type, "name": s.name}
        if s.aliases:
            out["aliases"] = list(s.aliases)
        if s.type == "record":
            fields = []
            for f in s.fields:
                fd: dict[str, Any] = {"name": f.name, "type": conv(f.type)}
                if f.has_default:
                    fd["default"] = f.default
                if f.aliases:
                    fd["aliases"] = list(f.aliases)
                fields.append(fd)
            out["fields"] = fields
        elif s.type == "enum":
            out["symbols"] = list(s.symbols)
            if s.enum_default is not None:
                out["default"] = s.enum_default
        else:
            out["size"] = s.size
            _with_logical(out, s)
        return out

    return conv(schema)


def _with_logical(out: dict[str, Any], s: Schema) -> Any:
    if s.logical is not None:
        out["logicalType"] = s.logical
        if s.logical == "decimal":
            out["precision"], out["scale"] = s.precision, s.scale
    return out
