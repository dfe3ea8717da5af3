"""Every API and version kafkawire declares, both directions, against Apache Kafka's own message specs.

The specs are the JSON files Kafka generates its Java message classes from, read at test time from the
pinned ``kafka-clients`` jar (:mod:`tests.protocol.kafka_specs`); run with ``KAFKAWIRE_KAFKA_VERSION=<v>``
to compare against another release. For each (API, direction) and each version both sides have:

* schema facts: every field's name, type, nullability, tag, default and struct name at that version,
  whether the version is flexible (KIP-482), and, for a field the version cannot carry, whether it is
  ignorable and its default (what decides between dropping a value and refusing it);
* bytes both ways, on messages built from the spec (every field at its default, every nullable field
  null, and random ones mixing values, defaults, nulls and empty arrays): kafkawire's encoding equals the
  spec codec's, the spec codec decodes kafkawire's bytes to the original value, and kafkawire decodes the
  spec codec's bytes to it.

Versions kafkawire declares below the pin's oldest are those Kafka 4.0 removed (KIP-896) and older brokers
still speak; they are compared the same way with the specs (and Java classes) of the legacy release,
Kafka 3.9. A declared version neither release has, or one the pin marks unstable, is a difference.
"""

from __future__ import annotations

import random
import zlib
from pathlib import Path
from typing import Any

import pytest

from kafkawire.protocol import _registry
from kafkawire.protocol.message import Message
from kafkawire.protocol.schema import Field, StructSchema
from kafkawire.testing.java import json_lines, run_java
from kafkawire.testing.kafka import LEGACY_KAFKA_VERSION, kafka_version

from .kafka_specs import (
    STRUCT_DEFAULT,
    MessageSpec,
    SpecCodec,
    SpecStruct,
    default_struct,
    load_specs,
    random_value,
)

RANDOM_MESSAGES = 30  # per (API, version, direction), besides the all-defaults and all-nulls messages

PAIRS = [(key, module, kind) for key, module in sorted(_registry.API_MODULES.items()) for kind in (0, 1)]
IDS = [f"{module}-{'req' if kind == 0 else 'resp'}" for _, module, kind in PAIRS]


def _cls(module: str, kind: int) -> type[Message]:
    return _registry.build_pair(module)[kind]


@pytest.fixture(scope="module")
def specs() -> dict[str, dict[str, MessageSpec]]:
    """Kafka release -> its message specs: the pinned broker's, and the legacy one's for older versions."""
    return {release: load_specs(release) for release in (kafka_version(), LEGACY_KAFKA_VERSION)}


def _plan(cls: type[Message], specs: dict[str, dict[str, MessageSpec]]) -> tuple[list, list[str]]:
    """Which release's spec judges which declared versions: the pin's for the versions it has, the legacy
    release's for older ones (those Kafka 4.0 removed, KIP-896). Returns ``([(release, spec, versions)],
    differences)``; a declared version neither describes is a difference."""
    pin, legacy = kafka_version(), LEGACY_KAFKA_VERSION
    plan, diffs = [], []
    covered: set[int] = set()
    spec = specs[pin].get(cls.SCHEMA.name)
    if spec is None:
        return [], [f"Kafka {pin} has no message named {cls.SCHEMA.name}"]
    if cls.MAX_VERSION > spec.valid.hi:
        diffs.append(f"declares v{cls.MAX_VERSION}, Kafka {pin}'s newest is v{spec.valid.hi}")
    elif spec.latest_unstable and cls.MAX_VERSION == spec.valid.hi:
        diffs.append(f"declares v{cls.MAX_VERSION}, which Kafka {pin} marks unstable (latestVersionUnstable)")
    versions = range(max(cls.MIN_VERSION, spec.valid.lo), min(cls.MAX_VERSION, spec.valid.hi) + 1)
    if versions:
        plan.append((pin, spec, versions))
        covered.update(versions)
    old = specs[legacy].get(cls.SCHEMA.name)
    if cls.MIN_VERSION < spec.valid.lo and old is not None:
        older = range(max(cls.MIN_VERSION, old.valid.lo), min(cls.MAX_VERSION, spec.valid.lo - 1, old.valid.hi) + 1)
        if older:
            plan.append((legacy, old, older))
            covered.update(older)
    missing = [v for v in range(cls.MIN_VERSION, cls.MAX_VERSION + 1) if v not in covered]
    if missing:
        diffs.append(f"no spec of Kafka {pin} or {legacy} describes versions {missing}")
    if spec.api_key != cls.API_KEY:
        diffs.append(f"API key {cls.API_KEY} != Kafka's {spec.api_key}")
    return plan, diffs


# ------------------------------------------------------------------------------------------ schema facts


def _kw_default(f: Field) -> Any:
    if f.is_array:
        return None if f.default is None else []
    if f.struct is not None:
        # None stands for the default struct, except where the field may be null (then it is null)
        return None if f.nullable.lo is not None else STRUCT_DEFAULT
    return f.default


def _kw_facts(st: StructSchema, v: int) -> dict[str, tuple]:
    out = {}
    for f in st.fields:
        if v not in f.versions:
            out[f.name] = ("absent", f.ignorable, _kw_default(f))
            continue
        out[f.name] = (
            ("[]" if f.is_array else "") + f.type,
            "nullable" if v in f.nullable else "not null",
            f"tag {f.tag}" if f.tag is not None else "untagged",
            _kw_default(f),
            _kw_facts(f.struct, v) if f.struct is not None else None,
        )
    return out


def _spec_facts(st: SpecStruct, v: int) -> dict[str, tuple]:
    out = {}
    for f in st.fields:
        if not f.present(v):
            out[f.py] = ("absent", f.ignorable, f.default)
            continue
        out[f.py] = (
            ("[]" if f.is_array else "") + f.type,
            "nullable" if v in f.nullable else "not null",
            f"tag {f.tag}" if f.is_tagged(v) else "untagged",
            f.default,
            _spec_facts(f.struct, v) if f.struct is not None else None,
        )
    return out


def _compare_facts(kw: dict, kafka: dict, path: str, diffs: list[str]) -> None:
    for name in dict.fromkeys([*kafka, *kw]):
        a, b = kw.get(name), kafka.get(name)
        where = f"{path}.{name}"
        if a is None or b is None:
            present = b if a is None else a
            if present[0] != "absent":  # a field one side lacks entirely matters where the other has it
                diffs.append(f"{where}: {'only Kafka' if a is None else 'only kafkawire'} has it {present[:4]}")
            continue
        if a[0] == "absent" or b[0] == "absent":
            if a != b:
                diffs.append(f"{where}: kafkawire {a[:4]} != Kafka {b[:4]}")
            continue
        if a[:4] != b[:4]:
            diffs.append(f"{where}: kafkawire {a[:4]} != Kafka {b[:4]}")
        if a[4] is not None and b[4] is not None:
            _compare_facts(a[4], b[4], where, diffs)


def _struct_names(kw: StructSchema, kafka: SpecStruct, v: int, path: str, diffs: list[str]) -> None:
    by_name = {f.name: f for f in kw.fields}
    for sf in kafka.fields:
        f = by_name.get(sf.py)
        if f is None or sf.struct is None or f.struct is None or not sf.present(v) or v not in f.versions:
            continue
        if f.struct.name != sf.struct.name:
            diffs.append(f"{path}.{sf.py}: struct {f.struct.name} != Kafka's {sf.struct.name}")
        _struct_names(f.struct, sf.struct, v, f"{path}.{sf.py}", diffs)


@pytest.mark.parametrize(("key", "module", "kind"), PAIRS, ids=IDS)
def test_schema_facts(specs, key, module, kind):
    cls = _cls(module, kind)
    plan, diffs = _plan(cls, specs)
    for release, spec, versions in plan:
        for v in versions:
            where = f"v{v} {spec.name} (Kafka {release})"
            if cls.is_flexible(v) != (v in spec.flexible):
                diffs.append(f"{where}: flexible {cls.is_flexible(v)} != Kafka's {v in spec.flexible}")
            _compare_facts(_kw_facts(cls.SCHEMA.root, v), _spec_facts(spec.root, v), where, diffs)
            _struct_names(cls.SCHEMA.root, spec.root, v, where, diffs)
    assert diffs == [], f"{len(diffs)} differences from Kafka's spec:\n" + "\n".join(diffs[:40])


# ------------------------------------------------------------------------------------------------- bytes


def _to_kw(cls: type, st: StructSchema, classes: dict[int, type], value: dict) -> Any:
    """Build kafkawire's object for a spec value (a dict keyed by snake_case names)."""
    by_name = {f.name: f for f in st.fields}
    kwargs = {}
    for name, x in value.items():
        f = by_name.get(name)
        if f is None:
            raise AssertionError(f"kafkawire's {st.name} has no field {name}")
        if f.struct is not None and x is not None:
            sub = classes[id(f.struct)]
            x = [_to_kw(sub, f.struct, classes, e) for e in x] if f.is_array else _to_kw(sub, f.struct, classes, x)
        kwargs[name] = x
    return cls(**kwargs)


def _project(obj: Any, st: SpecStruct, v: int) -> dict:
    """kafkawire's decoded object as a spec value: the fields Kafka's spec has at ``v``."""
    out = {}
    for f in st.fields:
        if not f.present(v):
            continue
        x = getattr(obj, f.py)
        if f.struct is not None:
            if f.is_array:
                x = None if x is None else [_project(e, f.struct, v) for e in x]
            elif x is None:
                # kafkawire's None for a non-nullable struct is the default struct
                x = None if v in f.nullable else default_struct(f.struct, v)
            else:
                x = _project(x, f.struct, v)
        elif isinstance(x, memoryview):
            x = x.tobytes()
        out[f.py] = x
    return out


def _messages(spec: Any, v: int) -> list[tuple[str, dict]]:
    rng = random.Random(zlib.crc32(f"{spec.name} v{v}".encode()))
    out = [("defaults", random_value(rng, spec.root, v, "default")), ("nulls", random_value(rng, spec.root, v, "null"))]
    out += [(f"random #{i}", random_value(rng, spec.root, v)) for i in range(RANDOM_MESSAGES)]
    return out


def _first_difference(a: bytes, b: bytes, names: tuple[str, str] = ("kafkawire", "Kafka")) -> str:
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return (
        f"first difference at byte {i} of {len(a)}/{len(b)}: "
        f"{names[0]} {a[i : i + 12].hex()} {names[1]} {b[i : i + 12].hex()}"
    )


@pytest.mark.parametrize(("key", "module", "kind"), PAIRS, ids=IDS)
def test_bytes_both_ways(specs, key, module, kind):
    cls = _cls(module, kind)
    plan, _ = _plan(cls, specs)  # what no spec describes is test_schema_facts' finding
    diffs: list[str] = []
    count = 0
    for release, spec, versions in plan:
        for v in versions:
            codec = SpecCodec(spec, v)
            for label, value in _messages(spec, v):
                count += 1
                where = f"v{v} {label} (Kafka {release})"
                kafka_bytes = codec.encode(value)
                assert codec.decode(kafka_bytes) == value, f"{where}: the spec codec does not round-trip"  # self-check
                # The all-defaults message is kafkawire's object built with no arguments: its defaults are checked too.
                obj = cls() if label == "defaults" else _to_kw(cls, cls.SCHEMA.root, cls._classes, value)
                kw_bytes = obj.encode_body(v)
                if kw_bytes != kafka_bytes:
                    diffs.append(f"{where}: encodes differently, {_first_difference(kw_bytes, kafka_bytes)}")
                    continue
                if (back := _project(cls.decode(kafka_bytes, v), spec.root, v)) != value:
                    diffs.append(f"{where}: kafkawire decodes Kafka's bytes to {back!r:.300}, not {value!r:.300}")
    assert count > 0
    assert diffs == [], f"{len(diffs)} of {count} messages differ from Kafka's spec:\n" + "\n".join(diffs[:30])


# ------------------------------------------------------------------------------------- the codec's judge

JAVA = Path(__file__).parent / "java" / "KafkaMessages.java"


@pytest.mark.parametrize("which", ["pin", "legacy"])
def test_spec_codec_and_kafkawire_match_kafkas_java_classes(specs, which):
    """The spec codec is only as good as its reading of Kafka's generator: Kafka's generated Java classes
    (kafka-clients of the same release) parse every message of the test above and write it back, and a
    fresh ``<Message>Data()`` is written at every version; both must give the spec codec's bytes, and
    kafkawire's default-built messages must give Java's."""
    release = kafka_version() if which == "pin" else LEGACY_KAFKA_VERSION
    lines: list[str] = []
    expected: list[tuple[str, str, str]] = []  # (message, whose bytes, hex)
    for _key, module, kind in PAIRS:
        cls = _cls(module, kind)
        for spec_release, spec, versions in _plan(cls, specs)[0]:
            if spec_release != release:
                continue
            for v in versions:
                codec = SpecCodec(spec, v)
                lines.append(f"default\t{spec.name}\t{v}")
                expected.append((f"{spec.name} v{v} defaults", "kafkawire", cls().encode_body(v).hex()))
                for label, value in _messages(spec, v):
                    lines.append(f"decode\t{spec.name}\t{v}\t{codec.encode(value).hex()}")
                    expected.append((f"{spec.name} v{v} {label}", "spec codec", lines[-1].rsplit("\t", 1)[1]))
    assert lines, f"nothing of kafkawire's is judged by Kafka {release}'s specs"
    out = json_lines(run_java(JAVA, input="\n".join(lines) + "\n", timeout=600, version=release).stdout)
    assert len(out) == len(lines)
    diffs = []
    for (where, whose, want), got in zip(expected, out):
        if "error" in got:
            diffs.append(f"{where}: Kafka's class refuses it: {got['error']}")
        elif got["hex"] != want:
            got_bytes = bytes.fromhex(got["hex"])
            diffs.append(f"{where}: {_first_difference(bytes.fromhex(want), got_bytes, (whose, 'Java'))}")
    head = f"{len(diffs)} of {len(lines)} messages differ from Kafka {release}'s Java classes:\n"
    assert diffs == [], head + "\n".join(diffs[:30])
