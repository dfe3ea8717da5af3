"""Apache Kafka's own message specs, and an encoder/decoder driven by them, for the conformance test.

Kafka ships the JSON specs its Java message classes are generated from inside ``kafka-clients-<v>.jar``
(``common/message/*.json``). :func:`load_specs` reads them from the jar the test suite resolves for the
pinned broker (:func:`kafkawire.testing.kafka.kafka_jars`), at test time: nothing is copied into the
repository, and a newer pin (``KAFKAWIRE_KAFKA_VERSION``) is compared as soon as it is resolved.

:class:`SpecCodec` encodes and decodes plain values (a struct is a ``dict`` keyed by the snake_case field
names) straight from a spec, following the rules of Kafka's message generator: the KIP-482 compact
encodings in flexible versions, a nullable struct preceded by an int8 (-1 null, 1 present), and a tagged
field written only when it differs from its default (for a struct: when it differs from a fresh default
struct). It shares no code with :mod:`kafkawire.protocol`, so agreement between the two means something.
:func:`random_value` builds values a version can carry: random ones, defaults, nulls and empty arrays.
"""

from __future__ import annotations

import json
import random
import re
import struct
import uuid
import zipfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from kafkawire.testing.kafka import kafka_jars, kafka_version

__all__ = [
    "Versions",
    "SpecField",
    "SpecStruct",
    "MessageSpec",
    "load_specs",
    "clients_jar",
    "snake_case",
    "SpecCodec",
    "random_value",
    "default_value",
]

_FIXED = {
    "int8": ">b",
    "int16": ">h",
    "uint16": ">H",
    "int32": ">i",
    "uint32": ">I",
    "int64": ">q",
    "float64": ">d",
}
_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
PRIMITIVES = frozenset(_FIXED) | {"bool", "uuid", "string", "bytes", "records"}
#: Defaults of fields the spec gives none (numbers: 0); records are null, as in Kafka's generated classes.
_IMPLICIT = {"bool": False, "float64": 0.0, "string": "", "bytes": b"", "records": None, "uuid": uuid.UUID(int=0)}
STRUCT_DEFAULT = "<default struct>"  # the default of a non-nullable struct field: every field at its default


@dataclass(frozen=True)
class Versions:
    """A spec's ``"N+"``, ``"A-B"``, ``"N"`` or ``"none"``."""

    lo: int | None
    hi: int | None = None

    @classmethod
    def parse(cls, text: str | None) -> Versions:
        if text is None or text == "none":
            return cls(None)
        m = re.fullmatch(r"(\d+)(\+|-(\d+))?", text.strip())
        if not m:
            raise ValueError(f"bad spec versions {text!r}")
        lo = int(m.group(1))
        if m.group(2) == "+":
            return cls(lo, None)
        return cls(lo, int(m.group(3)) if m.group(3) else lo)

    def __contains__(self, v: int) -> bool:
        return self.lo is not None and v >= self.lo and (self.hi is None or v <= self.hi)


@dataclass
class SpecField:
    name: str  # Kafka's CamelCase name
    py: str  # its snake_case form, kafkawire's field name
    type: str  # base type: a primitive or a struct name
    is_array: bool
    versions: Versions
    nullable: Versions
    tagged: Versions
    tag: int | None
    default: Any  # parsed; STRUCT_DEFAULT for a non-nullable struct; [] or None for arrays
    ignorable: bool
    struct: SpecStruct | None = None

    def present(self, v: int) -> bool:
        return v in self.versions

    def is_tagged(self, v: int) -> bool:
        return self.tag is not None and v in self.tagged


@dataclass
class SpecStruct:
    name: str
    fields: list[SpecField] = field(default_factory=list)


@dataclass
class MessageSpec:
    name: str
    api_key: int
    kind: str  # "request" or "response"
    valid: Versions
    flexible: Versions
    latest_unstable: bool
    root: SpecStruct


def snake_case(name: str) -> str:
    """Kafka's CamelCase field name as snake_case (``ThrottleTimeMs`` -> ``throttle_time_ms``)."""
    out: list[str] = []
    for i, c in enumerate(name):
        if c.isupper() and i > 0:
            prev, nxt = name[i - 1], name[i + 1 : i + 2]
            if prev.islower() or prev.isdigit() or (prev.isupper() and nxt.islower()):
                out.append("_")
        out.append(c.lower())
    return "".join(out)


def clients_jar(version: str | None = None) -> Path:
    """The pinned ``kafka-clients`` jar, resolved (once, cached) like the broker's jars."""
    version = kafka_version(version)
    jar = kafka_jars(version) / f"kafka-clients-{version}.jar"
    if not jar.exists():
        raise FileNotFoundError(f"{jar} is missing from the resolved Kafka {version} jars")
    return jar


def _read_json(text: str) -> dict:
    # The specs carry //-comment lines (the license header, notes between fields), which JSON does not allow.
    return json.loads("\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("//")))


def _parse_default(raw: Any, ftype: str, is_array: bool, is_struct: bool, nullable: Versions) -> Any:
    if raw is None:  # implicit
        if is_array:
            return []
        if is_struct:
            return STRUCT_DEFAULT
        return _IMPLICIT.get(ftype, 0)
    if raw == "null":
        return None
    if is_array:
        raise ValueError(f"array default {raw!r}")
    if ftype == "bool":
        return raw if isinstance(raw, bool) else raw == "true"
    if ftype == "string":
        return raw
    if ftype == "float64":
        return float(raw)
    if ftype in _RANGES:
        return raw if isinstance(raw, int) else int(raw, 0)
    raise ValueError(f"type {ftype} with default {raw!r}")


def _parse_fields(raw: list[dict], common: dict[str, list[dict]]) -> list[SpecField]:
    out = []
    for f in raw:
        if "flexibleVersions" in f:
            raise ValueError(f"{f['name']}: per-field flexibleVersions is not handled by this codec")
        t = f["type"]
        is_array = t.startswith("[]")
        base = t[2:] if is_array else t
        is_struct = base not in PRIMITIVES
        nullable = Versions.parse(f.get("nullableVersions"))
        st = None
        if is_struct:
            sub = f.get("fields")
            if sub is None:
                sub = common[base]
            st = SpecStruct(base, _parse_fields(sub, common))
        out.append(
            SpecField(
                name=f["name"],
                py=snake_case(f["name"]),
                type=base,
                is_array=is_array,
                versions=Versions.parse(f["versions"]),
                nullable=nullable,
                tagged=Versions.parse(f.get("taggedVersions")),
                tag=f.get("tag"),
                default=_parse_default(f.get("default"), base, is_array, is_struct, nullable),
                ignorable=bool(f.get("ignorable", False)),
                struct=st,
            )
        )
    return out


@cache
def load_specs(version: str | None = None) -> dict[str, MessageSpec]:
    """Every request and response spec of the pinned ``kafka-clients`` jar, by message name."""
    specs = {}
    with zipfile.ZipFile(clients_jar(version)) as jar:
        for name in jar.namelist():
            if not (name.startswith("common/message/") and name.endswith(".json")):
                continue
            d = _read_json(jar.read(name).decode("utf-8"))
            if d.get("type") not in ("request", "response"):
                continue
            common = {c["name"]: c["fields"] for c in d.get("commonStructs", [])}
            root = SpecStruct(d["name"], _parse_fields(d.get("fields", []), common))
            specs[d["name"]] = MessageSpec(
                name=d["name"],
                api_key=d["apiKey"],
                kind=d["type"],
                valid=Versions.parse(d["validVersions"]),
                flexible=Versions.parse(d.get("flexibleVersions", "none")),
                latest_unstable=bool(d.get("latestVersionUnstable", False)),
                root=root,
            )
    if not specs:
        raise AssertionError("no message specs found in the kafka-clients jar")
    return specs


# ------------------------------------------------------------------------------------------------ values


def default_value(f: SpecField, v: int) -> Any:
    """The value of ``f`` when it is not set (what Kafka's generated constructor assigns)."""
    if f.is_array:
        return None if f.default is None else []
    if f.struct is not None:
        return None if f.default is None else default_struct(f.struct, v)
    if f.type == "records" and v not in f.nullable:
        # Kafka's classes start records at null, which a version that cannot carry null refuses to write
        # (ShareFetch's records are nullable in v0 only): the value such a version can carry is empty.
        return b""
    return f.default


def default_struct(st: SpecStruct, v: int) -> dict:
    return {f.py: default_value(f, v) for f in st.fields if f.present(v)}


def _is_default(f: SpecField, value: Any, v: int) -> bool:
    return value == default_value(f, v)


_TEXT = "abcXYZ09-_. é€😀"


def _random_scalar(rng: random.Random, t: str) -> Any:
    if t in _RANGES:
        lo, hi = _RANGES[t]
        return rng.choice([lo, hi, -1 if lo < 0 else 1, 0, rng.randint(lo, hi), rng.randint(0, min(hi, 300))])
    if t == "bool":
        return rng.random() < 0.5
    if t == "float64":
        return rng.choice([0.0, -1.5, 1e300, rng.uniform(-1e6, 1e6)])
    if t == "string":
        n = rng.choice([0, 1, 5, rng.randint(0, 140)])
        return "".join(rng.choice(_TEXT) for _ in range(n))
    if t in ("bytes", "records"):
        return rng.randbytes(rng.choice([0, 1, 7, rng.randint(0, 200)]))
    if t == "uuid":
        return rng.choice([uuid.UUID(int=0), uuid.UUID(int=rng.getrandbits(128))])
    raise AssertionError(t)


def random_value(rng: random.Random, st: SpecStruct, v: int, mode: str = "random", depth: int = 0) -> dict:
    """A struct value ``v`` can carry. ``mode``: ``random`` (a mix of random values, defaults, nulls and empty
    arrays), ``default`` (every field at its default) or ``null`` (every nullable field null, every array
    empty)."""
    out = {}
    for f in st.fields:
        if not f.present(v):
            continue
        nullable = v in f.nullable
        if mode == "default":
            val = default_value(f, v)
        elif mode == "null" and nullable:
            val = None
        elif mode == "null":
            val = [] if f.is_array else (random_value(rng, f.struct, v, mode, depth + 1) if f.struct else f.default)
        else:
            r = rng.random()
            if r < 0.2:
                val = default_value(f, v)
            elif r < 0.3 and nullable:
                val = None
            elif f.is_array:
                n = 0 if r < 0.4 or depth > 3 else rng.randint(1, 3)
                if f.struct is not None:
                    val = [random_value(rng, f.struct, v, mode, depth + 1) for _ in range(n)]
                else:
                    val = [_random_scalar(rng, f.type) for _ in range(n)]
            elif f.struct is not None:
                val = random_value(rng, f.struct, v, "default" if r < 0.45 else mode, depth + 1)
            else:
                val = _random_scalar(rng, f.type)
        out[f.py] = val
    return out


# ------------------------------------------------------------------------------------------------- codec


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


class SpecCodec:
    """Encode and decode one message spec's values at one version, as Kafka's generated classes do."""

    def __init__(self, spec: MessageSpec, version: int) -> None:
        if version not in spec.valid:
            raise ValueError(f"{spec.name} has no version {version}")
        self.spec = spec
        self.v = version
        self.flex = version in spec.flexible

    # encode
    def encode(self, value: dict) -> bytes:
        out = bytearray()
        self._w_struct(out, self.spec.root, value)
        return bytes(out)

    def _w_len(self, out: bytearray, n: int | None, short: bool) -> None:
        if self.flex:
            out += _uvarint(0 if n is None else n + 1)
        else:
            out += struct.pack(">h" if short else ">i", -1 if n is None else n)

    def _w_scalar(self, out: bytearray, t: str, x: Any) -> None:
        if t in _FIXED:
            out += struct.pack(_FIXED[t], x)
        elif t == "bool":
            out.append(1 if x else 0)
        elif t == "uuid":
            out += x.bytes
        else:  # string, bytes, records
            data = x.encode("utf-8") if t == "string" and x is not None else x
            self._w_len(out, None if data is None else len(data), t == "string")
            if data is not None:
                out += data

    def _w_field(self, out: bytearray, f: SpecField, x: Any) -> None:
        nullable = self.v in f.nullable
        if x is None and not nullable and not (f.struct is not None and not f.is_array):
            raise ValueError(f"{f.name} is null in version {self.v}, which cannot carry null")
        if f.is_array:
            self._w_len(out, None if x is None else len(x), False)
            for e in x or ():
                if f.struct is not None:
                    self._w_struct(out, f.struct, e)
                else:
                    self._w_scalar(out, f.type, e)
        elif f.struct is not None:
            if nullable:
                out += b"\xff" if x is None else b"\x01"
                if x is None:
                    return
            self._w_struct(out, f.struct, default_struct(f.struct, self.v) if x is None else x)
        else:
            self._w_scalar(out, f.type, x)

    def _w_struct(self, out: bytearray, st: SpecStruct, value: dict) -> None:
        tagged = []
        for f in st.fields:
            if not f.present(self.v):
                continue
            x = value[f.py] if f.py in value else default_value(f, self.v)
            if f.is_tagged(self.v):
                if not _is_default(f, x, self.v):  # KIP-482: a tagged field at its default is omitted
                    tagged.append((f.tag, f, x))
                continue
            self._w_field(out, f, x)
        if not self.flex:
            if tagged:
                raise ValueError("tagged fields in a non-flexible version")
            return
        out += _uvarint(len(tagged))
        for tag, f, x in sorted(tagged, key=lambda t: t[0]):
            buf = bytearray()
            self._w_field(buf, f, x)
            out += _uvarint(tag) + _uvarint(len(buf)) + buf

    # decode
    def decode(self, data: bytes) -> dict:
        self._buf, self._pos = memoryview(data), 0
        value = self._r_struct(self.spec.root)
        if self._pos != len(data):
            raise ValueError(f"{len(data) - self._pos} bytes left after {self.spec.name} v{self.v}")
        return value

    def _take(self, n: int) -> bytes:
        if n < 0 or self._pos + n > len(self._buf):
            raise ValueError("truncated")
        b = bytes(self._buf[self._pos : self._pos + n])
        self._pos += n
        return b

    def _r_uvarint(self) -> int:
        n = shift = 0
        while True:
            b = self._take(1)[0]
            n |= (b & 0x7F) << shift
            if b < 0x80:
                return n
            shift += 7

    def _r_len(self, short: bool) -> int | None:
        if self.flex:
            n = self._r_uvarint() - 1
        else:
            n = struct.unpack(">h" if short else ">i", self._take(2 if short else 4))[0]
        if n < -1:
            raise ValueError("negative length")
        return None if n == -1 else n

    def _r_scalar(self, t: str) -> Any:
        if t in _FIXED:
            fmt = _FIXED[t]
            return struct.unpack(fmt, self._take(struct.calcsize(fmt)))[0]
        if t == "bool":
            return self._take(1)[0] != 0
        if t == "uuid":
            return uuid.UUID(bytes=self._take(16))
        n = self._r_len(t == "string")
        if n is None:
            return None
        b = self._take(n)
        return b.decode("utf-8") if t == "string" else b

    def _r_field(self, f: SpecField) -> Any:
        nullable = self.v in f.nullable
        if f.is_array:
            n = self._r_len(False)
            if n is None:
                if not nullable:
                    raise ValueError(f"{f.name}: null where the version cannot carry null")
                return None
            if f.struct is not None:
                return [self._r_struct(f.struct) for _ in range(n)]
            return [self._r_scalar(f.type) for _ in range(n)]
        if f.struct is not None:
            if nullable:
                marker = struct.unpack(">b", self._take(1))[0]
                if marker < 0:
                    return None
            return self._r_struct(f.struct)
        x = self._r_scalar(f.type)
        if x is None and not nullable:
            raise ValueError(f"{f.name}: null where the version cannot carry null")
        return x

    def _r_struct(self, st: SpecStruct) -> dict:
        out = {}
        tagged = {}
        for f in st.fields:
            if not f.present(self.v):
                continue
            if f.is_tagged(self.v):
                tagged[f.tag] = f
                out[f.py] = default_value(f, self.v)
                continue
            out[f.py] = self._r_field(f)
        if self.flex:
            for _ in range(self._r_uvarint()):
                tag, size = self._r_uvarint(), self._r_uvarint()
                end = self._pos + size
                if tag not in tagged:
                    raise ValueError(f"{st.name}: unknown tag {tag}")
                out[tagged[tag].py] = self._r_field(tagged[tag])
                if self._pos != end:
                    raise ValueError(f"{st.name}: tagged field {tag} size mismatch")
        return out
