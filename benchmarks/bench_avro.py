"""Decode registry-framed Avro values: kafkawire's ``decode_avro`` against the Python peers (issue 20).

Run (starts and stops its own Apicurio Registry; a few minutes on 2 cores)::

    .venv/bin/python benchmarks/bench_avro.py

``KW_BENCH_AVRO_RECORDS`` (default 1000000) values of a 10-field record schema (long, int, double, float,
boolean, two strings, an enum, a nullable string, a timestamp-millis), written once by fastavro in the
Confluent framing with the id the registry gave the schema. Then, alternating, ``KW_BENCH_AVRO_ROUNDS``
(default 3) rounds of each contender over the same values, wall and CPU medians:

* ``kafkawire``: ``decode_avro(column, SchemaRegistry(url), subject=...)`` on the :class:`BinaryColumn`, as
  ``RecordColumns.value`` holds it, into one ``pyarrow.StructArray`` (compiled decoder, one pass).
* ``AvroDeserializer``: confluent-kafka's deserializer (registry client with its cache) called per value,
  as a confluent-kafka consumer loop does, giving one dict per value.
* ``fastavro``: ``schemaless_reader`` per value on the body after the 5-byte header (the schema parsed
  once), one dict per value.
* ``pyruhvro``: ``deserialize_array`` (Rust, Avro to Arrow) on a list of the bodies, header already cut
  off (it does not read the Confluent framing; the slicing is not timed), into a RecordBatch.

Peers slower than 10x kafkawire decode the first ``KW_BENCH_AVRO_PEER_RECORDS`` (default 200000) values
and are scaled per record (the ratio is per record). Results are printed and written to
``benchmarks/.results/bench_avro.json``.
"""

from __future__ import annotations

import io
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RECORDS = int(os.environ.get("KW_BENCH_AVRO_RECORDS", "1000000"))
PEER_RECORDS = int(os.environ.get("KW_BENCH_AVRO_PEER_RECORDS", "200000"))
ROUNDS = int(os.environ.get("KW_BENCH_AVRO_ROUNDS", "3"))

SCHEMA = {"type": "record", "name": "Order", "namespace": "bench", "fields": [
    {"name": "id", "type": "long"},
    {"name": "quantity", "type": "int"},
    {"name": "price", "type": "double"},
    {"name": "discount", "type": "float"},
    {"name": "paid", "type": "boolean"},
    {"name": "customer", "type": "string"},
    {"name": "country", "type": "string"},
    {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED", "DONE"]}},
    {"name": "note", "type": ["null", "string"], "default": None},
    {"name": "created", "type": {"type": "long", "logicalType": "timestamp-millis"}},
]}


def make_values(n: int, sid: int) -> list[bytes]:
    import fastavro

    parsed = fastavro.parse_schema(SCHEMA)
    header = b"\x00" + sid.to_bytes(4, "big")
    countries = ["DE", "FR", "US", "JP", "BR", "IN"]
    out = []
    buf = io.BytesIO()
    for i in range(n):
        buf.seek(0)
        buf.truncate()
        fastavro.schemaless_writer(buf, parsed, {
            "id": 10_000_000 + i, "quantity": i % 50, "price": (i % 1000) * 0.25, "discount": 0.5,
            "paid": i % 2 == 0, "customer": f"customer-{i % 10007:05d}", "country": countries[i % 6],
            "status": ["NEW", "PAID", "SHIPPED", "DONE"][i % 4], "note": None if i % 3 else f"note {i}",
            "created": 1_780_000_000_000 + i,
        })
        out.append(header + buf.getvalue())
    return out


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    w, c = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - w, time.process_time() - c, result


def main() -> None:
    import fastavro
    import pyruhvro
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from kafkawire.columns import BinaryColumn
    from kafkawire.serde import SchemaRegistry, decode_avro
    from kafkawire.serde.avro import implementation
    from kafkawire.testing import start_schema_registry

    assert implementation() == "compiled", "build the compiled decoder first (setup.py build_ext --inplace)"
    with start_schema_registry() as server:
        reg = SchemaRegistry(server.url)
        sid = reg.register("orders-value", json.dumps(SCHEMA))
        print(f"making {RECORDS:,} values ...", flush=True)
        values = make_values(RECORDS, sid)
        column = BinaryColumn.from_pylist(values)
        peer_values = values[:PEER_RECORDS]
        bodies = [v[5:] for v in values]
        parsed = fastavro.parse_schema(SCHEMA)
        schema_text = json.dumps(SCHEMA)
        sr = SchemaRegistryClient({"url": server.url})
        deser = AvroDeserializer(sr, schema_text)
        ctx = SerializationContext("orders", MessageField.VALUE)

        def kafkawire_run() -> Any:
            return decode_avro(column, reg, subject="orders-value")

        def deserializer_run() -> Any:
            return [deser(v, ctx) for v in peer_values]

        def fastavro_run() -> Any:
            reader = fastavro.schemaless_reader
            return [reader(io.BytesIO(v[5:]), parsed, None) for v in peer_values]

        def pyruhvro_run() -> Any:
            return pyruhvro.deserialize_array(bodies, schema_text)

        contenders: dict[str, tuple[Callable[[], Any], int]] = {
            "kafkawire": (kafkawire_run, RECORDS),
            "AvroDeserializer": (deserializer_run, len(peer_values)),
            "fastavro schemaless_reader": (fastavro_run, len(peer_values)),
            "pyruhvro deserialize_array": (pyruhvro_run, RECORDS),
        }
        # warm-up: registry caches, imports, first allocations; and a correctness check of the contenders
        first = kafkawire_run().to_pylist()
        assert first[:1000] == [{**d} for d in deserializer_run()[:1000]]
        for fn, _ in contenders.values():
            fn()
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
        for r in range(ROUNDS):
            for name, (fn, _) in contenders.items():
                wall, cpu, _result = timed(fn)
                times[name].append((wall, cpu))
            print(f"round {r + 1}/{ROUNDS} done", flush=True)
    load = os.getloadavg()
    rows = []
    base = None
    for name, (_fn, n) in contenders.items():
        wall = statistics.median(t[0] for t in times[name])
        cpu = statistics.median(t[1] for t in times[name])
        per_m_wall = wall * 1_000_000 / n
        per_m_cpu = cpu * 1_000_000 / n
        if base is None:
            base = (per_m_wall, per_m_cpu)
        rows.append({"contender": name, "records": n, "wall_s": wall, "cpu_s": cpu,
                     "wall_per_1M_s": per_m_wall, "cpu_per_1M_s": per_m_cpu,
                     "records_per_s": n / wall, "x_wall": per_m_wall / base[0], "x_cpu": per_m_cpu / base[1]})
    print(f"\n{RECORDS:,} values, 10-field schema, {ROUNDS} rounds, load average {load[0]:.1f} "
          f"({platform.python_version()}, {os.cpu_count()} cores)\n")
    print("| contender | values timed | wall / 1M values | CPU / 1M values | values/s "
          "| time vs kafkawire (wall, CPU) |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {row['contender']} | {row['records']:,} | {row['wall_per_1M_s']:.3f} s | {row['cpu_per_1M_s']:.3f} s "
              f"| {row['records_per_s'] / 1e6:.2f} M | {row['x_wall']:.1f}x, {row['x_cpu']:.1f}x |")
    out = Path(__file__).parent / ".results"
    out.mkdir(exist_ok=True)
    (out / "bench_avro.json").write_text(json.dumps({"records": RECORDS, "rounds": ROUNDS, "load": load,
                                                     "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
