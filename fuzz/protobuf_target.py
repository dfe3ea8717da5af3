"""The ``protobuf`` fuzz target: hostile Protobuf bodies into the compiled decoder of ``decode_protobuf``.

``data[0] % len(MESSAGES)`` picks the message the rest (the body of one Confluent-framed value) is decoded
as: one with a field of every type (scalars, enum, string, bytes, nested message, packed and unpacked
repeated, maps with scalar and message values, a oneof, proto3 optional, Timestamp, Duration), a chain of
nested messages 30 deep, and a message with field numbers too high for the direct lookup table.

Invariant: no exception (a bad body is a per-row error), output bounded by a multiple of the input, the
buffers build a valid Arrow array, and the compiled decoder and the pure reference agree (same buffers,
same errors) on small inputs.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MESSAGES", "seeds", "target_protobuf"]

_OUTPUT_FACTOR = 64
_OUTPUT_SLACK = 1 << 20
_PLANS: dict[int, Any] = {}


def _messages() -> list[Any]:
    from google.protobuf import descriptor_pb2, descriptor_pool, duration_pb2, timestamp_pb2

    F = descriptor_pb2.FieldDescriptorProto
    pool = descriptor_pool.DescriptorPool()
    for dep in (timestamp_pb2.DESCRIPTOR, duration_pb2.DESCRIPTOR):
        proto = descriptor_pb2.FileDescriptorProto()
        dep.CopyToProto(proto)
        pool.Add(proto)
    fdp = descriptor_pb2.FileDescriptorProto(name="fuzz.proto", package="fz", syntax="proto3",
                                             dependency=["google/protobuf/timestamp.proto",
                                                         "google/protobuf/duration.proto"])
    e = fdp.enum_type.add(name="E")
    for i, n in enumerate(["Z", "A", "B"]):
        e.value.add(name=n, number=i)
    inner = fdp.message_type.add(name="In")
    inner.field.add(name="s", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    inner.field.add(name="r", number=2, type=F.TYPE_SINT64, label=F.LABEL_REPEATED)
    m = fdp.message_type.add(name="All")
    types = [F.TYPE_DOUBLE, F.TYPE_FLOAT, F.TYPE_INT64, F.TYPE_UINT64, F.TYPE_INT32, F.TYPE_FIXED64, F.TYPE_FIXED32,
             F.TYPE_BOOL, F.TYPE_STRING, F.TYPE_BYTES, F.TYPE_UINT32, F.TYPE_SFIXED32, F.TYPE_SFIXED64,
             F.TYPE_SINT32, F.TYPE_SINT64, F.TYPE_ENUM]
    num = 1
    for t in types:
        for label in (F.LABEL_OPTIONAL, F.LABEL_REPEATED):
            f = m.field.add(name=f"f{num}", number=num, type=t, label=label)
            if t == F.TYPE_ENUM:
                f.type_name = ".fz.E"
            num += 1
    m.field.add(name="msg", number=num, type=F.TYPE_MESSAGE, type_name=".fz.In", label=F.LABEL_OPTIONAL)
    m.field.add(name="msgs", number=num + 1, type=F.TYPE_MESSAGE, type_name=".fz.In", label=F.LABEL_REPEATED)
    for j, (kt, vt, vname) in enumerate([(F.TYPE_STRING, F.TYPE_INT32, ""), (F.TYPE_INT64, F.TYPE_MESSAGE, ".fz.In")]):
        entry = m.nested_type.add(name=f"M{j}Entry")
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=kt, label=F.LABEL_OPTIONAL)
        v = entry.field.add(name="value", number=2, type=vt, label=F.LABEL_OPTIONAL)
        if vname:
            v.type_name = vname
        m.field.add(name=f"m{j}", number=num + 2 + j, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                    type_name=f".fz.All.M{j}Entry")
    m.oneof_decl.add(name="pick")
    m.field.add(name="o1", number=num + 4, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL, oneof_index=0)
    m.field.add(name="o2", number=num + 5, type=F.TYPE_MESSAGE, type_name=".fz.In", label=F.LABEL_OPTIONAL,
                oneof_index=0)
    m.field.add(name="ts", number=num + 6, type=F.TYPE_MESSAGE, type_name=".google.protobuf.Timestamp",
                label=F.LABEL_OPTIONAL)
    m.field.add(name="du", number=num + 7, type=F.TYPE_MESSAGE, type_name=".google.protobuf.Duration",
                label=F.LABEL_OPTIONAL)
    opt = m.field.add(name="opt", number=num + 8, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL, proto3_optional=True)
    opt.oneof_index = 1
    m.oneof_decl.add(name="_opt")
    for d in range(30):
        deep = fdp.message_type.add(name=f"D{d}")
        deep.field.add(name="v", number=1, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
        if d < 29:
            deep.field.add(name="next", number=2, type=F.TYPE_MESSAGE, type_name=f".fz.D{d + 1}",
                           label=F.LABEL_OPTIONAL)
    high = fdp.message_type.add(name="High")
    high.field.add(name="a", number=536870911, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    high.field.add(name="b", number=5000, type=F.TYPE_MESSAGE, type_name=".fz.In", label=F.LABEL_REPEATED)
    pool.Add(fdp)
    return [pool.FindMessageTypeByName(n) for n in ("fz.All", "fz.D0", "fz.High")]


MESSAGES: list[Any] = []


def _plan(k: int) -> Any:
    from kafkawire.serde.protobuf_plan import Program, build_columns, compile_program

    got = _PLANS.get(k)
    if got is None:
        if not MESSAGES:
            MESSAGES.extend(_messages())
        desc = MESSAGES[k]
        cols, root = build_columns(desc)
        prog = Program()
        m = compile_program(prog, cols, desc, desc, root)
        msgs, slots, lookup = prog.arrays()
        got = _PLANS[k] = (cols, root, (msgs, slots, lookup, list(prog.blobs), [c.kind for c in cols],
                                        [c.width for c in cols], [list(c.children) for c in cols], root,
                                        {(1, b"\x00"): m}))
    return got


def _run(impl: Any, args: Any, value: bytes) -> Any:
    import numpy as np

    half = value[:len(value) // 2]
    data = np.frombuffer(value + half, dtype=np.uint8)
    offsets = np.array([0, len(value), len(value) + len(half)], dtype=np.int32)
    return impl.decode(*args, data, offsets, None, True)


def target_protobuf(data: bytes) -> None:
    import zlib

    from fuzz.targets import InvariantViolation
    from kafkawire.serde import _protobuf_pure, protobuf_values
    from kafkawire.serde.protobuf_plan import build_arrays

    if not data:
        return
    if not MESSAGES:
        MESSAGES.extend(_messages())
    k = data[0] % len(MESSAGES)
    cols, root, args = _plan(k)
    value = b"\x00\x00\x00\x00\x01\x00" + data[1:]
    try:
        raw, errors = _run(protobuf_values._IMPL, args, value)
    except BaseException as exc:
        raise InvariantViolation(f"protobuf: {type(exc).__name__}: {exc!r}") from exc
    out = sum(len(v) + len(o) + len(d) for _, v, o, d in raw)
    if out > _OUTPUT_FACTOR * len(data) + _OUTPUT_SLACK:
        raise InvariantViolation(f"protobuf: {len(data)} input bytes decoded into {out} bytes")
    if zlib.crc32(data) & 7:
        return
    try:
        build_arrays(cols, raw, root).validate(full=True)
    except BaseException as exc:
        raise InvariantViolation(f"protobuf: decoded buffers do not make a valid Arrow array: {exc!r}") from exc
    if protobuf_values.COMPILED and len(data) <= 512:
        pure_raw, pure_errors = _run(_protobuf_pure, args, value)
        same = [(n, bytes(v), bytes(o), bytes(d)) for n, v, o, d in raw] == [
            (n, bytes(v), bytes(o), bytes(d)) for n, v, o, d in pure_raw]
        if errors != pure_errors or not same:
            raise InvariantViolation(f"protobuf: compiled and pure differ: {errors} vs {pure_errors}, buffers "
                                     f"{'equal' if same else 'differ'}")


def seeds() -> list[bytes]:
    """A valid body per message, written by the protobuf runtime."""
    from google.protobuf import message_factory

    if not MESSAGES:
        MESSAGES.extend(_messages())
    out = []
    every = message_factory.GetMessageClass(MESSAGES[0])()
    every.f1, every.f3, every.f9, every.f17, every.f19 = 1.5, -7, 3, "héllo", b"\x00\xff"
    every.f4.extend([1, -1, 1 << 40])
    every.f6.extend([5, 6])
    every.f18.extend(["a", "b"])
    every.msg.s = "in"
    every.msg.r.extend([-1, 2])
    every.msgs.add(s="x")
    every.m0["k"] = 3
    every.m1[9].s = "v"
    every.o1 = "chosen"
    every.ts.seconds, every.ts.nanos = 1_700_000_000, 5000
    every.du.seconds = -3
    every.opt = 0
    out.append(bytes([0]) + every.SerializeToString())
    deep = message_factory.GetMessageClass(MESSAGES[1])()
    node = deep
    for d in range(29):
        node.v = d
        node = node.next
    out.append(bytes([1]) + deep.SerializeToString())
    high = message_factory.GetMessageClass(MESSAGES[2])(a="far")
    high.b.add(s="q")
    out.append(bytes([2]) + high.SerializeToString())
    out.append(bytes([0]) + b"\x0b\x08\x01\x0c")  # an unknown group, then its end
    return out
