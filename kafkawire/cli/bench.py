"""``kafkawire bench``: kafkawire's headline throughput on this machine, next to every peer installed.

Cases (all on the same generated records in the same run):

``decode``
    A fetch response's ``records`` bytes (``--records`` records in ``--batch-size`` batches, written by
    kafkawire's encoder) decoded into columns with one :func:`kafkawire.decode_records` call, CRCs
    checked. Peers do what their consumers do with a fetch: iterate ``MemoryRecords``, check each batch's
    CRC, read key, value and headers of every record (kafka-python's pure-Python reader and aiokafka's
    Cython core).
``encode``
    The same records into v2 batches: kafkawire from columns, the peers' ``DefaultRecordBatchBuilder``.
``produce``
    Only with a broker (``--bootstrap``, or ``--with-broker [noida|kafka]`` to start one): the records
    written to a new topic of ``--partitions`` partitions and acknowledged by all replicas (acks=all):
    kafkawire from columns with one ``Client.produce`` call, confluent-kafka (librdkafka) with
    ``Producer.produce`` per record and ``flush()``.
``consume``
    With a broker: the records read back end to end: kafkawire with ``Client.fetch_many`` into columns,
    confluent-kafka with ``Consumer.consume(num_messages=...)``.

Both broker cases start a new client in every run (connecting, metadata, for librdkafka its threads and
first fetch wait): that start-up is part of an end-to-end figure, and in a short run it is most of it, so a
ratio measured on 100k records says more about start-up than about throughput. The time to the first
record (consume) or first acknowledgement (produce) is measured separately and printed below the table
with the rate after it. The security options (``-X``, ``--command-config``, ``--security-protocol``,
``--sasl-*``, ``--ca-file``) reach both clients: kafkawire through its Java-name mapping, librdkafka as
its own names (a PEM CA file; JAAS usernames and passwords as ``sasl.username``/``sasl.password``).

Peers that are much slower (kafka-python, pure Python) are measured on at most ``--slow-records``
records; every comparison is per record (records/s). Each figure is the median of ``--repeat`` runs in
wall-clock time. The table goes to stdout; a bar chart (log scale) to ``--output`` when matplotlib is
installed (``pip install 'kafkawire[bench]'``).

This module depends on nothing outside the installed package, so it works from a wheel.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import struct
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .bench_peers import (
    confluent_consume,
    confluent_produce,
    installed_peers,
    peer_decode,
    peer_encode,
    peer_security,
)

__all__ = ["BenchResult", "StartUp", "add_arguments", "format_startup", "format_table", "peer_security", "run",
           "run_benchmarks", "write_chart"]

_TS0 = 1_700_000_000_000
_KEY_SIZE = 16


@dataclass
class BenchResult:
    """One contender in one case: ``seconds`` is the median over the repeats for ``records`` records."""

    case: str
    contender: str
    records: int
    nbytes: int
    seconds: float

    @property
    def records_per_s(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else float("inf")

    @property
    def mb_per_s(self) -> float:
        return self.nbytes / self.seconds / 1e6 if self.seconds > 0 else float("inf")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``kafkawire bench``."""
    parser.add_argument("--records", type=int, default=200_000, help="records per case (default: 200000)")
    parser.add_argument("--record-size", type=int, default=100, help="value bytes per record (default: 100)")
    parser.add_argument("--batch-size", type=int, default=1000, help="records per batch (default: 1000)")
    parser.add_argument(
        "--codec", choices=("none", "gzip", "snappy", "lz4", "zstd"), default="none", help="batch compression"
    )
    parser.add_argument("--partitions", type=int, default=1, help="consume case: partitions of the topic")
    parser.add_argument("--repeat", type=int, default=3, help="runs per contender; the median is kept (default: 3)")
    parser.add_argument(
        "--slow-records", type=int, default=20_000, help="at most this many records for pure-Python peers"
    )
    parser.add_argument("--output", "-o", default="kafkawire-bench.png", help="chart file (PNG)")
    parser.add_argument("--no-chart", action="store_true", help="print the table only")
    broker = parser.add_mutually_exclusive_group()
    broker.add_argument("--bootstrap", "-b", metavar="HOST:PORT", help="also run the consume case on this broker")
    from ._common import add_security_args

    add_security_args(parser)
    broker.add_argument(
        "--with-broker",
        nargs="?",
        const="noida",
        choices=("noida", "kafka"),
        metavar="KIND",
        help="start an embedded broker for the consume case: noida (noida-db, the default; no JVM) or kafka "
        "(Apache Kafka itself, the reference; needs Java 17)",
    )


# ------------------------------------------------------------------------------------------- data


def _records(n: int, size: int) -> tuple[Any, Any, np.ndarray]:
    """Keys ``key-%012d`` (16 B) and log-line-like values (compress about 2-3x, like real logs)."""
    from ..columns import BinaryColumn

    words = np.frombuffer(b"alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima ", np.uint8)
    rng = np.random.default_rng(n * 31 + size)
    starts = rng.integers(0, len(words) - 1, n)
    idx = (starts[:, None] + np.arange(size)[None, :]) % len(words)
    values = words[idx].reshape(-1)
    keys = np.frombuffer(b"".join(b"key-%012d" % i for i in range(n)), np.uint8)
    koffs = (np.arange(n + 1, dtype=np.int64) * _KEY_SIZE).astype(np.int32)
    voffs = (np.arange(n + 1, dtype=np.int64) * size).astype(np.int32)
    ts = np.arange(_TS0, _TS0 + n, dtype=np.int64)
    return BinaryColumn(koffs, keys, None), BinaryColumn(voffs, np.ascontiguousarray(values), None), ts


def _slice(col: Any, lo: int, hi: int) -> Any:
    from ..columns import BinaryColumn

    offs = col.offsets[lo : hi + 1]
    return BinaryColumn((offs - offs[0]).astype(np.int32), col.data[offs[0] : offs[-1]], None)


def _encode_all(keys: Any, values: Any, ts: np.ndarray, batch: int, codec: str) -> list[bytes]:
    from ..records import encode_records

    n = len(values)
    return [
        encode_records(
            _slice(values, lo, min(n, lo + batch)),
            _slice(keys, lo, min(n, lo + batch)),
            timestamps=ts[lo : lo + batch],
            base_offset=lo,
            compression=None if codec == "none" else codec,
        )
        for lo in range(0, n, batch)
    ]


def _batch_records(data: bytes) -> int:
    """Records in the v2 batches of ``data`` (record count sits at byte 57 of each batch header)."""
    pos = total = 0
    while pos < len(data):
        length = struct.unpack_from(">i", data, pos + 8)[0]
        total += struct.unpack_from(">i", data, pos + 57)[0]
        pos += 12 + length
    return total


# ------------------------------------------------------------------------------------------ timing


#: What every figure of ``kafkawire bench`` is: printed above its table so a reader knows what was timed.
TIMING_NOTE = (
    "timer: wall clock (time.perf_counter) around each contender's whole job; one untimed warm-up run each, "
    "then the median of --repeat timed runs"
)


def _median_seconds(fn: Callable[[], Any], repeat: int, expect: int | None = None) -> float:
    # One untimed run first: imports, first-touch page faults and caches would otherwise land in run 1.
    got = fn()
    if expect is not None and got != expect:
        raise RuntimeError(f"benchmark sanity check failed: {got} != {expect}")
    times = []
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        got = fn()
        times.append(time.perf_counter() - t0)
        if expect is not None and got != expect:
            raise RuntimeError(f"benchmark sanity check failed: {got} != {expect}")
    return statistics.median(times)


def run_benchmarks(
    *,
    records: int,
    record_size: int,
    batch_size: int,
    codec: str,
    partitions: int = 1,
    repeat: int = 3,
    slow_records: int = 20_000,
    bootstrap: str | None = None,
    log: Callable[[str], None] = lambda s: None,
    client_options: dict[str, Any] | None = None,
    peer_options: dict[str, Any] | None = None,
    startup: list[StartUp] | None = None,
) -> list[BenchResult]:
    """Run every case kafkawire and the installed peers support; return one result per contender.

    ``client_options`` are kafkawire :class:`~kafkawire.client.Client` keyword arguments and
    ``peer_options`` librdkafka settings (security) for the broker cases; ``startup`` collects their
    start-up times."""
    from .. import decode_records
    from ..records import codec_id

    keys, values, ts = _records(records, record_size)
    batches = _encode_all(keys, values, ts, batch_size, codec)
    data = b"".join(batches)
    bytes_per_record = len(data) / records
    peers = installed_peers()
    results: list[BenchResult] = []

    def add(case: str, contender: str, n: int, seconds: float) -> None:
        r = BenchResult(case, contender, n, int(round(n * bytes_per_record)), seconds)
        results.append(r)
        log(f"{case:>8} {contender:<20} {r.records_per_s / 1e6:8.3f} M records/s")

    # decode ------------------------------------------------------------------------------------------
    case = "decode"
    add(case, "kafkawire", records, _median_seconds(lambda: len(decode_records(data)), repeat, records))
    for name, peer in peers.items():
        part = data
        if peer.get("slow") and records > slow_records:
            part = b"".join(batches[: max(1, slow_records // batch_size)])
        n = _batch_records(part)
        add(case, name, n, _median_seconds(functools.partial(peer_decode, peer["memory_records"], part), repeat, n))

    # encode ------------------------------------------------------------------------------------------
    case = "encode"
    add(case, "kafkawire", records, _median_seconds(
        lambda: len(_encode_all(keys, values, ts, batch_size, codec)), repeat))
    key_list, value_list = keys.to_pylist(), values.to_pylist()
    cid = codec_id(codec)
    for name, peer in peers.items():
        n = min(records, slow_records) if peer.get("slow") else records
        encode = functools.partial(peer_encode, peer["builder"], key_list[:n], value_list[:n], batch_size, cid, _TS0)
        add(case, name, n, _median_seconds(encode, repeat))

    # consume end to end ------------------------------------------------------------------------------
    if bootstrap:
        results += _bench_broker(bootstrap, keys, values, partitions, codec, repeat, bytes_per_record, log,
                                 client_options or {}, peer_options or {}, startup if startup is not None else [])
    return results


@dataclass
class StartUp:
    """Time from a new client to its first record (consume) or first acknowledgement (produce)."""

    case: str
    contender: str
    seconds: float


def _median(fn: Callable[[], float], repeat: int) -> float:
    return statistics.median(fn() for _ in range(max(1, repeat)))


def _bench_broker(
    bootstrap: str,
    keys: Any,
    values: Any,
    partitions: int,
    codec: str,
    repeat: int,
    bytes_per_record: float,
    log: Callable[[str], None],
    client_options: dict[str, Any],
    peer_options: dict[str, Any],
    startup: list[StartUp],
) -> list[BenchResult]:
    from ..client import Client

    cases = _BrokerCases(bootstrap, keys, values, codec, repeat, bytes_per_record, log,
                         {"client_id": "kafkawire-bench", **client_options}, peer_options, startup)
    topic = f"kafkawire-bench-{uuid.uuid4().hex[:12]}"
    sink = f"{topic}-produce"
    with Client(bootstrap, retry_timeout_ms=30_000, **cases.options) as client:
        client.create_topics([topic, sink], num_partitions=partitions)
        try:
            cases.produce(sink)
            cases.consume(client, topic)
        finally:
            client.delete_topics([topic, sink], missing_ok=True)
    return cases.out


class _BrokerCases:
    """The produce and consume cases against one broker: kafkawire, then confluent-kafka when installed."""

    def __init__(self, bootstrap: str, keys: Any, values: Any, codec: str, repeat: int, bytes_per_record: float,
                 log: Callable[[str], None], options: dict[str, Any], peer_options: dict[str, Any],
                 startup: list[StartUp]) -> None:
        self.bootstrap, self.keys, self.values, self.codec, self.repeat = bootstrap, keys, values, codec, repeat
        self.n = len(values)
        self.bytes_per_record, self.log, self.options, self.peer_options = bytes_per_record, log, options, peer_options
        self.startup = startup
        self.compression = None if codec == "none" else codec
        self.out: list[BenchResult] = []
        self.ck: Any
        try:
            import confluent_kafka

            self.ck = confluent_kafka
        except ImportError:
            self.ck = None

    def add(self, case: str, contender: str, seconds: float) -> None:
        r = BenchResult(case, contender, self.n, int(round(self.n * self.bytes_per_record)), seconds)
        self.out.append(r)
        self.log(f"{case:>8} {contender:<20} {r.records_per_s / 1e6:8.3f} M records/s")

    def first(self, case: str, contender: str, seconds: float) -> None:
        self.startup.append(StartUp(case, contender, seconds))
        self.log(f"{case:>8} {contender:<20} start-up {seconds * 1e3:8.1f} ms")

    def produce(self, sink: str) -> None:
        from ..client import Client

        n, repeat, bootstrap, codec, peer_options = self.n, self.repeat, self.bootstrap, self.codec, self.peer_options

        def kafkawire_produce(first_only: bool = False) -> int:
            # A new client each run, like the confluent-kafka producer.
            with Client(bootstrap, **self.options) as writer:
                if first_only:
                    writer.produce(sink, [b"x"], acks=-1)
                    return 1
                writer.produce(sink, self.values, self.keys, compression=self.compression, acks=-1)
                return n

        self.add("produce", "kafkawire", _median_seconds(kafkawire_produce, repeat, n))
        self.first("produce", "kafkawire", _median(lambda: _timed(lambda: kafkawire_produce(True)), repeat))
        if self.ck is not None:
            ck = self.ck
            key_list, value_list = self.keys.to_pylist(), self.values.to_pylist()
            self.add("produce", "confluent-kafka", _median_seconds(
                lambda: confluent_produce(ck, bootstrap, sink, key_list, value_list, codec, peer_options), repeat, n))
            self.first("produce", "confluent-kafka", _median(lambda: _timed(lambda: confluent_produce(
                ck, bootstrap, sink, key_list[:1], value_list[:1], codec, peer_options)), repeat))

    def consume(self, client: Any, topic: str) -> None:
        from ..client import Client

        n, repeat, bootstrap, peer_options = self.n, self.repeat, self.bootstrap, self.peer_options
        client.produce(topic, self.values, self.keys, compression=self.compression)
        ends = {p: lo.offset for p, lo in client.list_offsets(topic).items()}
        if sum(ends.values()) != n:
            raise RuntimeError(f"produced {n} records but the topic holds {sum(ends.values())}")

        def kafkawire_consume(first_only: bool = False) -> int:
            # A new client each run, like the confluent-kafka consumer: connecting and the first
            # metadata request are part of an end-to-end read.
            with Client(bootstrap, **self.options) as reader:
                pos = {(topic, p): 0 for p in ends}
                got = 0
                while pos:
                    res = reader.fetch_many(pos, max_bytes=32 << 20, partition_max_bytes=8 << 20)
                    for tp, r in res.items():
                        got += len(r.records)
                        pos[tp] = r.next_offset
                        if pos[tp] >= ends[tp[1]]:
                            del pos[tp]
                    if first_only and got:
                        return got
                return got

        self.add("consume", "kafkawire", _median_seconds(kafkawire_consume, repeat, n))
        self.first("consume", "kafkawire", _median(lambda: _timed(lambda: kafkawire_consume(True)), repeat))
        if self.ck is not None:
            ck = self.ck
            self.add("consume", "confluent-kafka", _median_seconds(
                lambda: confluent_consume(ck, bootstrap, topic, list(ends), n, peer_options), repeat, n))
            self.first("consume", "confluent-kafka", _median(lambda: _timed(lambda: confluent_consume(
                ck, bootstrap, topic, list(ends), 1, peer_options)), repeat))


def _timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


# ------------------------------------------------------------------------------------------ output


def format_table(results: list[BenchResult]) -> str:
    """A Markdown table: per case, records/s, MB/s and kafkawire's speed-up over each contender."""
    lines = [
        "| case | contender | records | median | records/s | MB/s | kafkawire speed-up |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for case in dict.fromkeys(r.case for r in results):
        rows = [r for r in results if r.case == case]
        base = next((r for r in rows if r.contender == "kafkawire"), rows[0])
        for r in rows:
            lines.append(
                f"| {case} | {r.contender} | {r.records} | {r.seconds * 1e3:.1f} ms | "
                f"{r.records_per_s / 1e6:.3f} M | {r.mb_per_s:.1f} | {base.records_per_s / r.records_per_s:.2f}x |"
            )
    return "\n".join(lines)


def format_startup(results: list[BenchResult], startup: list[StartUp]) -> str:
    """The broker cases' start-up (time to the first record or acknowledgement with a new client) and each
    contender's rate once started, so a short run's ratio can be read for what it is."""
    lines = [
        "start-up: a new client's time to its first record (consume) or acknowledgement (produce); the broker",
        "cases include it, so in short runs it dominates their figures and ratios:",
    ]
    for s in startup:
        r = next((x for x in results if x.case == s.case and x.contender == s.contender), None)
        if r is None:
            continue
        after = r.seconds - s.seconds
        rate = f"{r.records / after / 1e6:.3f} M records/s after it" if after > 0 else "all of the run"
        lines.append(f"  {s.case} {s.contender}: {s.seconds * 1e3:.1f} ms of {r.seconds * 1e3:.1f} ms ({rate})")
    return "\n".join(lines)


def write_chart(results: list[BenchResult], path: str, title: str) -> bool:
    """A bar chart of records/s per case (log scale) with kafkawire's speed-up; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    cases = list(dict.fromkeys(r.case for r in results))
    fig, axes = plt.subplots(len(cases), 1, figsize=(9, 1.2 + 1.1 * len(results)), squeeze=False)
    for ax, case in zip(axes[:, 0], cases):
        rows = [r for r in results if r.case == case]
        base = next((r for r in rows if r.contender == "kafkawire"), rows[0])
        names = [r.contender for r in rows][::-1]
        rates = [r.records_per_s for r in rows][::-1]
        colors = ["#d9480f" if name == "kafkawire" else "#868e96" for name in names]
        ax.barh(names, rates, color=colors)
        ax.set_xscale("log")
        ax.set_title(case, loc="left", fontsize=10, fontweight="bold")
        ax.set_xlabel("records/s (log scale)")
        for y, r in enumerate(rows[::-1]):
            label = f" {r.records_per_s / 1e6:.2f} M/s"
            if r is not base:
                label += f"  (kafkawire {base.records_per_s / r.records_per_s:.1f}x)"
            ax.text(r.records_per_s, y, label, va="center", fontsize=8)
        ax.set_xlim(min(rates) / 2, max(rates) * 20)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def run(args: argparse.Namespace) -> int:
    """Run the benchmark, print the table, write the chart."""
    import kafkawire

    from ._common import CliError

    for opt in ("records", "record_size", "batch_size", "partitions", "repeat", "slow_records"):
        if getattr(args, opt) < 1:
            raise CliError(f"--{opt.replace('_', '-')} must be >= 1")
    from ._common import client_properties, client_settings

    broker = None
    bootstrap = args.bootstrap
    client_options, _ = client_settings(args)
    peer_options = peer_security(client_properties(args))
    startup: list[StartUp] = []
    try:
        if args.with_broker:
            from ..testing import BrokerStartError, start_broker

            try:
                broker = start_broker(args.with_broker)
            except BrokerStartError as e:
                raise CliError(f"embedded broker did not start: {e}") from None
            bootstrap = broker.bootstrap
        impl = "compiled core" if kafkawire.compiled else "pure-Python reference (build the extension!)"
        title = (
            f"kafkawire {kafkawire.__version__} ({impl}): {args.records} records x "
            f"({_KEY_SIZE} B key + {args.record_size} B value), {args.batch_size}/batch, codec {args.codec}"
        )
        print(title, file=sys.stderr)
        results = run_benchmarks(
            records=args.records,
            record_size=args.record_size,
            batch_size=args.batch_size,
            codec=args.codec,
            partitions=args.partitions,
            repeat=args.repeat,
            slow_records=args.slow_records,
            bootstrap=bootstrap,
            log=lambda s: print(s, file=sys.stderr, flush=True),
            client_options=client_options,
            peer_options=peer_options,
            startup=startup,
        )
    finally:
        if broker is not None:
            broker.stop()
    print(title)
    print(f"{TIMING_NOTE} (--repeat {args.repeat})")
    print(format_table(results))
    if startup:
        print(format_startup(results, startup))
    if not args.no_chart:
        if write_chart(results, args.output, title):
            print(f"chart: {args.output}")
        else:
            print("no chart: matplotlib is not installed (pip install 'kafkawire[bench]')", file=sys.stderr)
    return 0
