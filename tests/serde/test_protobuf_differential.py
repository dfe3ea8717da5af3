"""Random Protobuf descriptors and messages (hypothesis): kafkawire's compiled and pure decoders equal the
``protobuf`` runtime's own parser, value by value; on hostile bytes the two decoders agree word for word.

Descriptors are generated too: proto3 files of up to three messages (each may hold the later ones, so no
recursion), fields of every scalar type, enums (open: unknown numbers kept), strings, bytes, nested
messages, ``repeated`` (packed, and the same values written unpacked), ``map<K, V>``, oneofs, proto3
``optional`` and ``google.protobuf.Timestamp`` / ``Duration``."""

from __future__ import annotations

import struct
from typing import Any

import pyarrow as pa
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, timestamp_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkawire.serde import _protobuf_pure, protobuf_values
from kafkawire.serde.protobuf_plan import Program, arrow_type, build_arrays, build_columns, compile_program

IMPLS: dict[str, Any] = {"pure": _protobuf_pure}
if protobuf_values.COMPILED:
    from kafkawire.serde import _protobuf  # type: ignore[attr-defined]

    IMPLS["compiled"] = _protobuf

F = descriptor_pb2.FieldDescriptorProto
SCALARS = [F.TYPE_DOUBLE, F.TYPE_FLOAT, F.TYPE_INT64, F.TYPE_UINT64, F.TYPE_INT32, F.TYPE_FIXED64,
           F.TYPE_FIXED32, F.TYPE_BOOL, F.TYPE_STRING, F.TYPE_BYTES, F.TYPE_UINT32, F.TYPE_SFIXED32,
           F.TYPE_SFIXED64, F.TYPE_SINT32, F.TYPE_SINT64, F.TYPE_ENUM]
MAP_KEYS = [F.TYPE_INT64, F.TYPE_UINT32, F.TYPE_INT32, F.TYPE_SINT64, F.TYPE_BOOL, F.TYPE_STRING, F.TYPE_FIXED32]
_files = [0]


@st.composite
def descriptors(draw: Any) -> Any:
    """A proto3 file of 1-3 messages (M0 may hold M1, M2; M1 may hold M2) and one enum; the pool and M0."""
    _files[0] += 1
    fdp = descriptor_pb2.FileDescriptorProto(name=f"gen{_files[0]}.proto", package=f"g{_files[0]}",
                                             syntax="proto3", dependency=["google/protobuf/timestamp.proto",
                                                                          "google/protobuf/duration.proto"])
    enum = fdp.enum_type.add(name="E")
    numbers = sorted(draw(st.sets(st.integers(1, 50), max_size=3)))
    enum.value.add(name="E_ZERO", number=0)
    for n in numbers:
        enum.value.add(name=f"E_{n}", number=n)
    pkg = "." + fdp.package
    nmsg = draw(st.integers(1, 3))
    for i in range(nmsg):
        m = fdp.message_type.add(name=f"M{i}")
        nums = draw(st.lists(st.sampled_from([1, 2, 3, 5, 8, 15, 16, 100, 2047, 2048, 5000, 536870911]),
                             min_size=0, max_size=8, unique=True))
        oneof_made = False
        for j, num in enumerate(nums):
            kind = draw(st.sampled_from(["scalar"] * 6 + ["repeated"] * 2 + ["map", "message", "wkt",
                                                                              "oneof", "optional"]))
            name = f"f{j}"
            if kind == "message" and i + 1 >= nmsg:
                kind = "scalar"
            if kind == "map":
                entry = m.nested_type.add(name=f"F{j}Entry")
                entry.options.map_entry = True
                entry.field.add(name="key", number=1, type=draw(st.sampled_from(MAP_KEYS)), label=F.LABEL_OPTIONAL)
                vt = draw(st.sampled_from(SCALARS + ([F.TYPE_MESSAGE] if i + 1 < nmsg else [])))
                v = entry.field.add(name="value", number=2, type=vt, label=F.LABEL_OPTIONAL)
                if vt == F.TYPE_ENUM:
                    v.type_name = f"{pkg}.E"
                if vt == F.TYPE_MESSAGE:
                    v.type_name = f"{pkg}.M{nmsg - 1}"
                m.field.add(name=name, number=num, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                            type_name=f"{pkg}.M{i}.F{j}Entry")
                continue
            if kind == "message":
                target = draw(st.integers(i + 1, nmsg - 1))
                label = draw(st.sampled_from([F.LABEL_OPTIONAL, F.LABEL_REPEATED]))
                m.field.add(name=name, number=num, type=F.TYPE_MESSAGE, label=label, type_name=f"{pkg}.M{target}")
                continue
            if kind == "wkt":
                wkt = draw(st.sampled_from([".google.protobuf.Timestamp", ".google.protobuf.Duration"]))
                m.field.add(name=name, number=num, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL, type_name=wkt)
                continue
            t = draw(st.sampled_from(SCALARS))
            f = m.field.add(name=name, number=num, type=t,
                            label=F.LABEL_REPEATED if kind == "repeated" else F.LABEL_OPTIONAL)
            if t == F.TYPE_ENUM:
                f.type_name = f"{pkg}.E"
            if kind == "repeated" and draw(st.booleans()):
                f.options.packed = False
            if kind == "oneof":
                if not oneof_made:
                    m.oneof_decl.add(name="choice")
                    oneof_made = True
                f.oneof_index = 0
            elif kind == "optional":
                f.proto3_optional = True
                f.oneof_index = len(m.oneof_decl)
                m.oneof_decl.add(name=f"_{name}")
        # proto3 wants the synthetic oneofs of optional fields after the real ones: "choice" came first or none
        if oneof_made and m.oneof_decl[0].name != "choice":
            return draw(descriptors())
    pool = descriptor_pool.DescriptorPool()
    for dep in (timestamp_pb2.DESCRIPTOR, ):
        proto = descriptor_pb2.FileDescriptorProto()
        dep.CopyToProto(proto)
        pool.Add(proto)
    from google.protobuf import duration_pb2

    proto = descriptor_pb2.FileDescriptorProto()
    duration_pb2.DESCRIPTOR.CopyToProto(proto)
    pool.Add(proto)
    pool.Add(fdp)
    return pool.FindMessageTypeByName(f"{fdp.package}.M0")


def _scalar(draw: Any, f: Any) -> Any:
    t = f.type
    if t == F.TYPE_DOUBLE:
        return draw(st.floats(allow_nan=False))
    if t == F.TYPE_FLOAT:
        return draw(st.floats(allow_nan=False, width=32))
    if t in (F.TYPE_INT64, F.TYPE_SFIXED64, F.TYPE_SINT64):
        return draw(st.integers(-(1 << 63), (1 << 63) - 1))
    if t in (F.TYPE_UINT64, F.TYPE_FIXED64):
        return draw(st.integers(0, (1 << 64) - 1))
    if t in (F.TYPE_INT32, F.TYPE_SFIXED32, F.TYPE_SINT32):
        return draw(st.integers(-(1 << 31), (1 << 31) - 1))
    if t in (F.TYPE_UINT32, F.TYPE_FIXED32):
        return draw(st.integers(0, (1 << 32) - 1))
    if t == F.TYPE_BOOL:
        return draw(st.booleans())
    if t == F.TYPE_STRING:
        return draw(st.text(max_size=8))
    if t == F.TYPE_BYTES:
        return draw(st.binary(max_size=8))
    assert t == F.TYPE_ENUM
    return draw(st.sampled_from([v.number for v in f.enum_type.values] + [-3, 77]))


def _fill(draw: Any, msg: Any, depth: int = 0) -> None:
    for f in msg.DESCRIPTOR.fields:
        if not draw(st.booleans()):
            continue
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            kf, vf = f.message_type.fields_by_name["key"], f.message_type.fields_by_name["value"]
            for _ in range(draw(st.integers(0, 3))):
                k = _scalar(draw, kf)
                if vf.message_type is not None:
                    _fill(draw, getattr(msg, f.name)[k], depth + 1)
                else:
                    getattr(msg, f.name)[k] = _scalar(draw, vf)
        elif f.message_type is not None and f.message_type.full_name == "google.protobuf.Timestamp":
            getattr(msg, f.name).seconds = draw(st.integers(-62135596800, 253402300799))
            getattr(msg, f.name).nanos = draw(st.integers(0, 999999999))
        elif f.message_type is not None and f.message_type.full_name == "google.protobuf.Duration":
            s = draw(st.integers(-315576000000, 315576000000))
            getattr(msg, f.name).seconds = s
            getattr(msg, f.name).nanos = draw(st.integers(0, 999999999)) * (-1 if s < 0 else 1)
        elif f.message_type is not None:
            if f.is_repeated:
                for _ in range(draw(st.integers(0, 2))):
                    _fill(draw, getattr(msg, f.name).add(), depth + 1)
            else:
                getattr(msg, f.name).SetInParent()
                _fill(draw, getattr(msg, f.name), depth + 1)
        elif f.is_repeated:
            getattr(msg, f.name).extend(_scalar(draw, f) for _ in range(draw(st.integers(0, 3))))
        else:
            setattr(msg, f.name, _scalar(draw, f))


def _expected(msg: Any) -> dict[str, Any]:
    """What the decoders must give for a message the protobuf runtime parsed (Spark's from_protobuf types)."""
    out: dict[str, Any] = {}
    for f in msg.DESCRIPTOR.fields:
        v = getattr(msg, f.name)
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            vf = f.message_type.fields_by_name["value"]
            out[f.name] = sorted((k, _one(vf, x)) for k, x in v.items())
        elif f.is_repeated:
            out[f.name] = [_one(f, x) for x in v]
        elif f.has_presence and not msg.HasField(f.name):
            out[f.name] = None
        else:
            out[f.name] = _one(f, v)
    return out


def _one(f: Any, v: Any) -> Any:
    if f.type == F.TYPE_ENUM:
        names = f.enum_type.values_by_number
        return names[v].name if v in names else str(v)
    if f.type == F.TYPE_FLOAT:
        return struct.unpack("<f", struct.pack("<f", v))[0]
    if f.message_type is not None:
        if f.message_type.full_name in ("google.protobuf.Timestamp", "google.protobuf.Duration"):
            return v.seconds * 1000000 + int(v.nanos / 1000)
        return _expected(v)
    return v


def _sort_maps(cols: list[Any], i: int, v: Any) -> Any:
    """A decoded row with every map's entries sorted by key (the runtime's map order is its own)."""
    c = cols[i]
    if v is None:
        return None
    if c.arrow == "struct":
        return {n: _sort_maps(cols, ch, v[n]) for n, ch in zip(c.names, c.children)}
    if c.arrow == "list":
        return [_sort_maps(cols, c.children[0], x) for x in v]
    if c.arrow == "map":
        return sorted((k, _sort_maps(cols, c.children[1], x)) for k, x in v)
    return v


def _duplicate_keys(cols: list[Any], i: int, v: Any) -> bool:
    """Whether a map anywhere in the decoded value holds a key twice."""
    c = cols[i]
    if v is None:
        return False
    if c.arrow == "struct":
        return any(_duplicate_keys(cols, ch, v[n]) for n, ch in zip(c.names, c.children))
    if c.arrow == "list":
        return any(_duplicate_keys(cols, c.children[0], x) for x in v)
    if c.arrow == "map":
        keys = [k for k, _ in v]
        return len(set(keys)) != len(keys) or any(_duplicate_keys(cols, c.children[1], x) for _, x in v)
    return False


def _run(impl: Any, desc: Any, values: list[bytes | None], permissive: bool = True) -> tuple[Any, Any]:
    cols, root = build_columns(desc)
    prog = Program()
    m = compile_program(prog, cols, desc, desc, root)
    data = b"".join(v or b"" for v in values)
    offs = [0]
    for v in values:
        offs.append(offs[-1] + len(v or b""))
    import numpy as np

    valid = np.array([v is not None for v in values], dtype=np.uint8)
    msgs, slots, lookup = prog.arrays()
    raw, errors = impl.decode(msgs, slots, lookup, list(prog.blobs), [c.kind for c in cols],
                              [c.width for c in cols], [list(c.children) for c in cols], root,
                              {(1, b"\x00"): m, (2, b"\x02\x00"): m, (3, b"\x00"): "a writer that does not fit"},
                              np.frombuffer(data, dtype=np.uint8), np.array(offs, dtype=np.int32), valid, permissive)
    return (cols, root, raw), errors


@pytest.mark.parametrize("name", sorted(IMPLS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_decoders_equal_the_protobuf_runtime(name: str, data: st.DataObject) -> None:
    desc = data.draw(descriptors())
    cls = message_factory.GetMessageClass(desc)
    msgs = []
    for _ in range(data.draw(st.integers(1, 4))):
        m = cls()
        _fill(data.draw, m)
        msgs.append(m)
    values = [b"\x00\x00\x00\x00\x01\x00" + m.SerializeToString() for m in msgs]
    (cols, root, raw), errors = _run(IMPLS[name], desc, values)
    assert errors == []
    got = build_arrays(cols, raw, root)
    got.validate(full=True)
    assert got.type == arrow_type(cols, root)
    for row, m in zip(got.to_pylist(), msgs):
        back = cls.FromString(m.SerializeToString())  # the runtime's own parse is the oracle
        expected = pa.array([_expected(back)], arrow_type(cols, root)).to_pylist()[0]
        assert _sort_maps(cols, root, row) == _sort_maps(cols, root, expected)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_compiled_and_pure_agree_on_hostile_bytes(data: st.DataObject) -> None:
    from kafkawire.serde import _protobuf  # noqa: F401  (the compiled core must be built for this test)
    desc = data.draw(descriptors())
    cls = message_factory.GetMessageClass(desc)
    m = cls()
    _fill(data.draw, m)
    body = bytearray(m.SerializeToString())
    for _ in range(data.draw(st.integers(0, 4))):  # flip, cut, insert
        op = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        if op == "flip" and body:
            body[data.draw(st.integers(0, len(body) - 1))] = data.draw(st.integers(0, 255))
        elif op == "cut" and body:
            del body[data.draw(st.integers(0, len(body) - 1)):]
        else:
            at = data.draw(st.integers(0, len(body)))
            body[at:at] = data.draw(st.binary(max_size=6))
    heads = data.draw(st.sampled_from([b"\x00\x00\x00\x00\x01\x00", b"\x00\x00\x00\x00\x02\x02\x00",
                                       b"\x00\x00\x00\x00\x03\x00", b"\x00\x00\x00\x00\x09\x00", b"\x01\x00",
                                       b"\x00\x00\x00\x00\x01\x81"]))
    values: list[bytes | None] = [heads + bytes(body), None, b"\x00\x00\x00\x00\x01\x00" + m.SerializeToString()]
    (cols, root, raw_c), err_c = _run(IMPLS["compiled"], desc, values)
    (_, _, raw_p), err_p = _run(IMPLS["pure"], desc, values)
    assert err_c == err_p
    assert [(n, bytes(v), bytes(o), bytes(d)) for n, v, o, d in raw_c] == raw_p
    build_arrays(cols, raw_c, root).validate(full=True)
    try:
        parsed = cls.FromString(bytes(body))
    except Exception:
        return
    if heads == b"\x00\x00\x00\x00\x01\x00" and not err_c:  # both accept: the same value
        row = build_arrays(cols, raw_c, root).to_pylist()[0]
        if _duplicate_keys(cols, root, row):
            return  # a map key twice: kafkawire keeps both entries, the runtime the last (a known difference)
        expected = pa.array([_expected(parsed)], arrow_type(cols, root)).to_pylist()[0]
        assert _sort_maps(cols, root, row) == _sort_maps(cols, root, expected)


def _spec_case_message() -> Any:
    """message Case { int64 id = 1; Inner inner = 2; repeated int32 nums = 3; oneof pick { string s = 4;
    int64 n = 5; } google.protobuf.Timestamp at = 6; }  message Inner { int32 a = 1; repeated string b = 2; }"""
    fdp = descriptor_pb2.FileDescriptorProto(name="case.proto", package="case", syntax="proto3",
                                             dependency=["google/protobuf/timestamp.proto"])
    inner = fdp.message_type.add(name="Inner")
    inner.field.add(name="a", number=1, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    inner.field.add(name="b", number=2, type=F.TYPE_STRING, label=F.LABEL_REPEATED)
    m = fdp.message_type.add(name="Case")
    m.oneof_decl.add(name="pick")
    m.field.add(name="id", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    m.field.add(name="inner", number=2, type=F.TYPE_MESSAGE, type_name=".case.Inner", label=F.LABEL_OPTIONAL)
    m.field.add(name="nums", number=3, type=F.TYPE_INT32, label=F.LABEL_REPEATED)
    m.field.add(name="s", number=4, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL, oneof_index=0)
    m.field.add(name="n", number=5, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL, oneof_index=0)
    m.field.add(name="at", number=6, type=F.TYPE_MESSAGE, type_name=".google.protobuf.Timestamp",
                label=F.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    proto = descriptor_pb2.FileDescriptorProto()
    timestamp_pb2.DESCRIPTOR.CopyToProto(proto)
    pool.Add(proto)
    pool.Add(fdp)
    return pool.FindMessageTypeByName("case.Case")


@pytest.mark.parametrize("name", sorted(IMPLS))
@pytest.mark.parametrize("body", [
    b"\x08\x01\x08\x02",                                  # a singular field twice: the last one wins
    b"\x12\x02\x08\x05\x12\x03\x12\x01x\x12\x02\x08\x07",  # a message field three times: merged
    b"\x1a\x02\x01\x02\x18\x03\x1a\x01\x04",              # repeated: packed, unpacked, packed again
    b"\x22\x01s\x28\x09",                                 # oneof: s then n (n wins)
    b"\x28\x09\x22\x01s",                                 # oneof: n then s (s wins)
    b"\x0b\x08\x01\x13\x10\x02\x14\x0c\x08\x03",          # an unknown group (nested) skipped
    b"\x3a\x01z\x45\x01\x02\x03\x04\x08\x04",              # unknown LEN and fixed32 fields skipped
    b"\x10\x05\x08\x06",                                  # a known field with the wrong wire type: unknown
    b"\x32\x02\x08\x01\x32\x02\x10\x05",                  # Timestamp twice: merged (seconds 1, nanos 5)
    b"",                                                  # nothing set: defaults and nulls
])
def test_spec_semantics_equal_the_runtime(name: str, body: bytes) -> None:
    desc = _spec_case_message()
    cls = message_factory.GetMessageClass(desc)
    parsed = cls.FromString(body)  # the runtime accepts every one of these
    (cols, root, raw), errors = _run(IMPLS[name], desc, [b"\x00\x00\x00\x00\x01\x00" + body])
    assert errors == []
    row = build_arrays(cols, raw, root).to_pylist()[0]
    expected = pa.array([_expected(parsed)], arrow_type(cols, root)).to_pylist()[0]
    assert row == expected
