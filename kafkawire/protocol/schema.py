"""The schema notation for Kafka messages and its parser.

Each API is described by two short text blocks (request and response) in the data file
``kafkawire/protocol/messages/<api>.schema`` (``#`` lines are comments). The first line names the message::

    FetchRequest key=1 v0-18 flex=v12+

(``flex=none`` for a message that never became flexible, KIP-482). A data message (Kafka's ``"type":
"data"``: bytes embedded in another message, such as a group member's subscription) has no ``key=``.
Every following line is one field, indented two spaces per nesting level under the struct that holds it::

    name type [versions] [null=versions] [tag=N] [=default] [ignorable]

``type`` is one of ``int8 int16 int32 int64 uint16 uint32 float64 bool string bytes uuid records``,
``[]type`` for an array of one of those, ``StructName`` for a nested struct or ``[]StructName`` for an
array of structs; a struct's fields are the more deeply indented lines that follow it. ``versions`` is
``vN+``, ``vA-B`` or ``vN`` and defaults to the versions of the enclosing struct. ``null=`` lists the
versions where the field may be null. ``tag=N`` makes the field a tagged field (KIP-482) in the
flexible versions it exists in. ``=default`` is the value of an omitted field (``null``, ``true``,
``false``, a number, or a JSON string such as ``""``). Arrays default to empty, or to null with ``=null``
(only on a nullable array): null and empty are different values on the wire and stay different here.
A non-nullable struct left ``None`` stands for its default (every field at its default); decoding an
absent tagged struct gives ``None``. A tagged field is written only when it differs from its default;
for a struct that means any field differs (KIP-482, as Kafka's generated code does). ``ignorable``
means a non-default value may be dropped silently when encoding a version that cannot carry the field;
without it that is an error.

Adding a version is a one-line change: raise the top line's upper bound, and give any new field its
``vN+``.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from types import EllipsisType
from typing import Any

__all__ = ["VersionRange", "Field", "StructSchema", "MessageSchema", "parse_message", "PRIMITIVES", "FIXED"]

#: Types with a fixed wire size: struct format character(s) and size in bytes.
FIXED: dict[str, tuple[str, int]] = {
    "int8": ("b", 1),
    "int16": ("h", 2),
    "int32": ("i", 4),
    "int64": ("q", 8),
    "uint16": ("H", 2),
    "uint32": ("I", 4),
    "float64": ("d", 8),
    "bool": ("?", 1),
    "uuid": ("16s", 16),
}
#: Every non-struct type name.
PRIMITIVES = frozenset(FIXED) | {"string", "bytes", "records"}

ZERO_UUID = uuid.UUID(int=0)


@dataclass(frozen=True)
class VersionRange:
    """Inclusive range of versions; ``hi`` None means open-ended (``vN+``); ``lo`` None means never."""

    lo: int | None
    hi: int | None = None

    def __contains__(self, v: int) -> bool:
        return self.lo is not None and v >= self.lo and (self.hi is None or v <= self.hi)

    @classmethod
    def parse(cls, text: str) -> VersionRange:
        if text == "none":
            return NEVER
        m = re.fullmatch(r"v(\d+)(\+|-(\d+))?", text)
        if not m:
            raise ValueError(f"bad version range {text!r}")
        lo = int(m.group(1))
        if m.group(2) == "+":
            return cls(lo, None)
        if m.group(3) is not None:
            return cls(lo, int(m.group(3)))
        return cls(lo, lo)

    def __str__(self) -> str:
        if self.lo is None:
            return "none"
        if self.hi is None:
            return f"v{self.lo}+"
        return f"v{self.lo}" if self.lo == self.hi else f"v{self.lo}-{self.hi}"


NEVER = VersionRange(None, None)


@dataclass
class Field:
    """One field of a struct: its wire type, the versions carrying it and how it behaves when absent."""

    name: str
    type: str  # primitive name, or struct name
    is_array: bool
    versions: VersionRange
    nullable: VersionRange
    tag: int | None
    default: Any
    ignorable: bool
    struct: StructSchema | None = None  # for struct and struct-array fields

    @property
    def is_struct(self) -> bool:
        return self.struct is not None

    def make_default(self) -> Any:
        """A fresh default value: a new list for arrays, except that an array declared ``=null`` defaults
        to null (``None``), which is not the same value as an empty list on the wire (KIP-848's
        heartbeat: null means "unchanged since the last heartbeat", empty means "none")."""
        if self.is_array:
            return [] if self.default is not None else None
        return self.default


@dataclass
class StructSchema:
    """A list of fields; the message body itself is the root struct."""

    name: str
    fields: list[Field] = field(default_factory=list)

    def signature(self) -> tuple[Any, ...]:
        """What makes two structs of one message the same Python class: field names, types, nullability,
        defaults and nested shapes, not the versions or tags carrying them (AddPartitionsToTxn's topic moved
        into a batch of transactions in v4, KIP-890: the same ``AddPartitionsToTxnTopic`` serves both)."""
        return tuple(
            (
                f.name,
                f.type,
                f.is_array,
                f.nullable.lo is not None,
                repr(f.default),
                f.struct.signature() if f.struct else None,
            )
            for f in self.fields
        )


@dataclass
class MessageSchema:
    """A request or response: API key, valid and flexible versions, and its root struct."""

    name: str
    api_key: int
    min_version: int
    max_version: int
    flexible: VersionRange
    root: StructSchema

    @property
    def is_request(self) -> bool:
        return self.name.endswith("Request")

    def is_flexible(self, version: int) -> bool:
        return version in self.flexible


def _parse_default(text: str, ftype: str, is_array: bool) -> Any:
    if text == "null":
        return None
    if is_array:
        raise ValueError("arrays take no default other than null")
    if ftype == "bool":
        if text not in ("true", "false"):
            raise ValueError(f"bad bool default {text!r}")
        return text == "true"
    if ftype in ("string",):
        return json.loads(text) if text.startswith('"') else text
    if ftype == "float64":
        return float(text)
    if ftype in FIXED and ftype != "uuid":
        return int(text, 0)
    raise ValueError(f"type {ftype} takes no default {text!r}")


def _implicit_default(ftype: str, is_array: bool, is_struct: bool) -> Any:
    if is_array:
        return []  # marker: arrays default to a fresh empty list
    if is_struct:
        return None
    if ftype == "bool":
        return False
    if ftype == "float64":
        return 0.0
    if ftype == "string":
        return ""
    if ftype in ("bytes", "records"):
        return b"" if ftype == "bytes" else None
    if ftype == "uuid":
        return ZERO_UUID
    return 0


def parse_message(text: str) -> MessageSchema:
    """Parse one message block of the notation described in this module's docstring."""
    lines = [ln.rstrip() for ln in text.strip("\n").splitlines() if ln.strip() and not ln.strip().startswith("#")]
    if not lines:
        raise ValueError("empty schema")
    head = lines[0].split()
    name = head[0]
    opts = dict(p.split("=", 1) for p in head[1:] if "=" in p)
    vr = VersionRange.parse(next(p for p in head[1:] if p.startswith("v")))
    if vr.lo is None or vr.hi is None:
        raise ValueError(f"{name}: the message needs a closed version range")
    flex = VersionRange.parse(opts.get("flex", "none"))
    root = StructSchema(name)
    all_versions = VersionRange(vr.lo, None)
    # stack of (indent, struct, versions of that struct)
    stack: list[tuple[int, StructSchema, VersionRange]] = [(-1, root, all_versions)]
    last: tuple[int, Field] | None = None
    for ln in lines[1:]:
        indent = (len(ln) - len(ln.lstrip(" "))) // 2
        if last is not None and indent > last[0]:
            f = last[1]
            if f.struct is None:
                raise ValueError(f"{name}: field {f.name} of type {f.type} cannot have sub-fields")
            stack.append((last[0], f.struct, f.versions))
        while stack[-1][0] >= indent:
            stack.pop()
        parent, pvers = stack[-1][1], stack[-1][2]
        parts = ln.split()
        fname, ftype = parts[0], parts[1]
        is_array = ftype.startswith("[]")
        base = ftype[2:] if is_array else ftype
        versions, nullable, tag, ignorable = pvers, NEVER, None, False
        default: str | EllipsisType = ...
        for p in parts[2:]:
            if p.startswith("null="):
                nullable = VersionRange.parse(p[5:])
            elif p.startswith("tag="):
                tag = int(p[4:])
            elif p.startswith("="):
                default = p[1:]
            elif p == "ignorable":
                ignorable = True
            elif p.startswith("v"):
                versions = VersionRange.parse(p)
            else:
                raise ValueError(f"{name}.{fname}: unknown attribute {p!r}")
        is_struct = base not in PRIMITIVES
        if is_struct and not base[:1].isupper():
            raise ValueError(f"{name}.{fname}: unknown type {base!r}")
        if default is ...:
            default = _implicit_default(base, is_array, is_struct)
        else:
            default = _parse_default(default, base, is_array)
            if default is None and nullable.lo is None and (is_array or not is_struct) and base != "records":
                # Kafka's generator refuses the same: a null default needs a version that can carry null.
                raise ValueError(f"{name}.{fname}: default null on a field that is never nullable")
        fld = Field(
            fname,
            base,
            is_array,
            versions,
            nullable,
            tag,
            default,
            ignorable,
            StructSchema(base) if is_struct else None,
        )
        parent.fields.append(fld)
        last = (indent, fld)
    return MessageSchema(name, int(opts.get("key", "-1")), vr.lo, vr.hi, flex, root)
