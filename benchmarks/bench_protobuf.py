"""Decode registry-framed Protobuf values: kafkawire's ``decode_protobuf`` against the Python peers (issue 33).

Run (starts and stops its own Apicurio Registry; a few minutes on 2 cores)::

    .venv/bin/python benchmarks/bench_protobuf.py

``KW_BENCH_PB_RECORDS`` (default 1000000) values of a 10-field message (int64, int32, double, bool, string,
an enum, a nested message, a repeated string, a ``map<string, int32>``, a oneof of string / int64), the
schema registered by confluent-kafka's ``ProtobufSerializer`` (its framing and message indexes on every
value). Then ``KW_BENCH_PB_ROUNDS`` (default 5) rounds; in each, the contenders run one after the other over
the same values, in an order that alternates from round to round:

* ``kafkawire``: ``decode_protobuf(column, SchemaRegistry(url), subject=...)`` on the :class:`BinaryColumn`
  (as ``RecordColumns.value`` holds it) into one ``pyarrow.StructArray``: the compiled decoder, one pass.
* ``ProtobufDeserializer``: confluent-kafka's deserializer called per value, as a consumer loop does, giving
  one message object per value.
* ``upb + MessageToDict``: the ``protobuf`` runtime's own (upb, C) parser per value on the body after the
  header, then ``json_format.MessageToDict``: the fastest other Python path to plain rows.

Peers decode the first ``KW_BENCH_PB_PEER_RECORDS`` (default 200000) values and are compared per record. The
figure is the median over rounds of each round's ratio (peer CPU per value / kafkawire CPU per value, same
round), and the same for wall time. JSON goes to stdout and ``benchmarks/.results/bench_protobuf.json``;
the load average is in it (figures from a loaded machine are not quiet-machine figures).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RECORDS = int(os.environ.get("KW_BENCH_PB_RECORDS", "1000000"))
PEER_RECORDS = int(os.environ.get("KW_BENCH_PB_PEER_RECORDS", "200000"))
ROUNDS = int(os.environ.get("KW_BENCH_PB_ROUNDS", "5"))


def order_class() -> Any:
    """message Order (10 fields) in package bench, with Line and Status."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name="bench/order.proto", package="bench", syntax="proto3")
    status = fdp.enum_type.add(name="Status")
    for i, name in enumerate(["NEW", "PAID", "SHIPPED", "DONE"]):
        status.value.add(name=name, number=i)
    line = fdp.message_type.add(name="Line")
    line.field.add(name="sku", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    line.field.add(name="qty", number=2, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    m = fdp.message_type.add(name="Order")
    m.oneof_decl.add(name="pay")
    m.field.add(name="id", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    m.field.add(name="quantity", number=2, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    m.field.add(name="price", number=3, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL)
    m.field.add(name="paid", number=4, type=F.TYPE_BOOL, label=F.LABEL_OPTIONAL)
    m.field.add(name="customer", number=5, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    m.field.add(name="status", number=6, type=F.TYPE_ENUM, type_name=".bench.Status", label=F.LABEL_OPTIONAL)
    m.field.add(name="line", number=7, type=F.TYPE_MESSAGE, type_name=".bench.Line", label=F.LABEL_OPTIONAL)
    m.field.add(name="tags", number=8, type=F.TYPE_STRING, label=F.LABEL_REPEATED)
    entry = m.nested_type.add(name="AttrsEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    m.field.add(name="attrs", number=9, type=F.TYPE_MESSAGE, type_name=".bench.Order.AttrsEntry",
                label=F.LABEL_REPEATED)
    m.field.add(name="card", number=10, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL, oneof_index=0)
    m.field.add(name="points", number=11, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL, oneof_index=0)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("bench.Order"))


def make_values(order: Any, n: int, header: bytes) -> list[bytes]:
    countries = ["DE", "FR", "US", "JP", "BR", "IN"]
    out = []
    for i in range(n):
        m = order(id=10_000_000 + i, quantity=i % 50, price=(i % 1000) * 0.25, paid=i % 2 == 0,
                  customer=f"customer-{i % 10007:05d}", status=i % 4, tags=countries[: i % 3],
                  attrs={"w": i % 7} if i % 2 else {})
        if i % 3:
            m.line.sku, m.line.qty = f"sku-{i % 101}", i % 9
        if i % 2:
            m.card = f"card-{i % 97}"
        else:
            m.points = i
        out.append(header + m.SerializeToString())
    return out


def timed(fn: Callable[[], Any]) -> tuple[float, float]:
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def main() -> None:
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    from google.protobuf import json_format

    from kafkawire.columns import BinaryColumn
    from kafkawire.serde import SchemaRegistry, decode_protobuf, protobuf_values
    from kafkawire.testing import start_schema_registry

    assert protobuf_values.COMPILED, "build the compiled decoder first (setup.py build_ext --inplace)"
    order = order_class()
    with start_schema_registry() as server:
        sr = SchemaRegistryClient({"url": server.url})
        ctx = SerializationContext("orders-pb", MessageField.VALUE)
        first = ProtobufSerializer(order, sr, {"use.deprecated.format": False})(order(id=1), ctx)
        body = order(id=1).SerializeToString()
        header = first[: len(first) - len(body)]  # magic, schema id, message indexes: as the serializer wrote
        print(f"making {RECORDS:,} values ...", file=sys.stderr, flush=True)
        values = make_values(order, RECORDS, header)
        column = BinaryColumn.from_pylist(values)
        peer_values = values[:PEER_RECORDS]
        reg = SchemaRegistry(server.url)
        deser = ProtobufDeserializer(order, {"use.deprecated.format": False})
        skip = len(header)

        def kafkawire_run() -> Any:
            return decode_protobuf(column, reg, subject="orders-pb-value")

        def deserializer_run() -> Any:
            return [deser(v, ctx) for v in peer_values]

        def upb_run() -> Any:
            parse, to_dict = order.FromString, json_format.MessageToDict
            return [to_dict(parse(v[skip:]), preserving_proto_field_name=True) for v in peer_values]

        contenders: dict[str, tuple[Callable[[], Any], int]] = {
            "kafkawire": (kafkawire_run, RECORDS),
            "ProtobufDeserializer": (deserializer_run, len(peer_values)),
            "upb + MessageToDict": (upb_run, len(peer_values)),
        }
        # warm-up and a correctness check: kafkawire's rows equal the deserializer's messages
        rows = kafkawire_run().to_pylist()
        for row, m in zip(rows[:2000], deserializer_run()[:2000]):
            assert row["id"] == m.id and row["customer"] == m.customer and row["tags"] == list(m.tags)
            assert dict(row["attrs"]) == dict(m.attrs) and row["status"] == ["NEW", "PAID", "SHIPPED", "DONE"][m.status]
            assert row["card"] == (m.card if m.WhichOneof("pay") == "card" else None)
            assert row["line"] == ({"sku": m.line.sku, "qty": m.line.qty} if m.HasField("line") else None)
        for fn, _ in contenders.values():
            fn()
        per_round: list[dict[str, tuple[float, float]]] = []
        names = list(contenders)
        for r in range(ROUNDS):
            order_names = names if r % 2 == 0 else names[::-1]
            got: dict[str, tuple[float, float]] = {}
            for name in order_names:
                fn, n = contenders[name]
                wall, cpu = timed(fn)
                got[name] = (wall / n, cpu / n)  # per value
            per_round.append(got)
            print(f"round {r + 1}/{ROUNDS} done", file=sys.stderr, flush=True)
    load = os.getloadavg()
    result: dict[str, Any] = {"records": RECORDS, "peer_records": PEER_RECORDS, "rounds": ROUNDS,
                              "load_average": load, "python": platform.python_version(), "cores": os.cpu_count(),
                              "contenders": {}}
    for name in names:
        cpu = [rnd[name][1] for rnd in per_round]
        wall = [rnd[name][0] for rnd in per_round]
        result["contenders"][name] = {
            "values_timed": contenders[name][1],
            "cpu_per_1M_values_s": statistics.median(cpu) * 1e6,
            "wall_per_1M_values_s": statistics.median(wall) * 1e6,
            "values_per_s_cpu": 1 / statistics.median(cpu),
            # the median of the per-round ratios (this peer / kafkawire, same round)
            "x_kafkawire_cpu": statistics.median(rnd[name][1] / rnd["kafkawire"][1] for rnd in per_round),
            "x_kafkawire_wall": statistics.median(rnd[name][0] / rnd["kafkawire"][0] for rnd in per_round),
        }
    text = json.dumps(result, indent=2)
    print(text)
    out = Path(__file__).parent / ".results"
    out.mkdir(exist_ok=True)
    (out / "bench_protobuf.json").write_text(text)


if __name__ == "__main__":
    main()
