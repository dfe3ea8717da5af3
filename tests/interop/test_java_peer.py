"""The Java client (kafka-clients, the same version as the broker) as the other side of the wire.

Every test runs against Apache Kafka. The Java side is ``tests/interop/java/KafkaPeer.java``, compiled
once per source hash by :mod:`kafkawire.testing.java`:

* what the Java producer writes (every codec, headers with duplicate keys, null and empty keys and values,
  explicit timestamps; committed and aborted transactions) kafkawire reads identically, with
  ``Client.fetch`` and with ``Consumer``, under read_uncommitted and read_committed;
* what kafkawire produces (idempotent, every codec, the same record shapes; and in committed and
  aborted transactions) the Java consumer reads identically, under both isolation levels;
* a Java consumer and a kafkawire ``Consumer`` in one group (classic protocol, range assignor) split a
  topic and hand partitions over when one of them leaves, losing nothing (counted with the fault ledger).

Records are compared whole: partition, offset, timestamp, timestamp type, key, value, headers in order.
"""

from __future__ import annotations

import json
import queue
import random
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from faults.ledger import Ledger
from visibility import wait_stable

from kafkawire.client import Client, Consumer, KafkaTimeoutError, Producer
from kafkawire.testing.java import java_command, json_lines, run_java

pytestmark = pytest.mark.broker

PEER = Path(__file__).parent / "java" / "KafkaPeer.java"
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}

# One record, canonical: (partition, offset, timestamp, timestamp_type, key, value, headers).
Row = tuple[int, int, int, int, "bytes | None", "bytes | None", tuple[tuple[bytes, "bytes | None"], ...]]


def _topic(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _records(n: int, partitions: int, seed: int) -> list[dict[str, Any]]:
    """``n`` records of every shape that has tripped a client: null and empty keys and values, no headers,
    duplicate header keys, null header values, a non-ASCII header key, values from 0 to 3 kB."""
    rnd = random.Random(seed)
    now = int(time.time() * 1000)
    out = []
    for i in range(n):
        key: bytes | None = None if i % 5 == 0 else (b"" if i % 11 == 0 else f"key-{i}".encode())
        if i % 7 == 3:
            value: bytes | None = None
        elif i % 13 == 4:
            value = b""
        else:
            value = rnd.randbytes(rnd.choice([1, 20, 100, 3000])) if i % 2 else f"value-{i}-".encode() * 5
        shape = i % 4
        headers: list[tuple[bytes, bytes | None]]
        if shape == 0:
            headers = []
        elif shape == 1:
            headers = [(b"trace", f"t{i}".encode())]
        elif shape == 2:  # duplicate keys, kept in order; a null value
            headers = [(b"dup", b"first"), (b"other", None), (b"dup", b"second"), (b"dup", b"")]
        else:
            headers = [("clé-ü".encode(), rnd.randbytes(8))]
        out.append({"p": i % partitions, "ts": now - 1000 + i, "k": key, "v": value, "h": headers})
    return out


def _tsv(rec: dict[str, Any]) -> str:
    def h(b: bytes | None) -> str:
        return "-" if b is None else b.hex()

    headers = ",".join(f"{k.hex()}={h(v)}" for k, v in rec["h"])
    return f"{rec['p']}\t{rec['ts']}\t{h(rec['k'])}\t{h(rec['v'])}\t{headers}"


def _expected(rec: dict[str, Any], offset: int) -> Row:
    return (rec["p"], offset, rec["ts"], 0, rec["k"], rec["v"], tuple(rec["h"]))


def _unhex(s: str | None) -> bytes | None:
    return None if s is None else bytes.fromhex(s)


def _java_row(j: dict[str, Any]) -> Row:
    return (
        j["p"], j["o"], j["ts"], j["tt"], _unhex(j["k"]), _unhex(j["v"]),
        tuple((bytes.fromhex(k), _unhex(v)) for k, v in j["h"]),
    )


def _kafkawire_rows(partition: int, cols: Any) -> list[Row]:
    return [
        (partition, r.offset, r.timestamp, r.timestamp_type, r.key, r.value,
         tuple((k.encode(), v) for k, v in r.headers))
        for r in cols
    ]


def _java_produce(bootstrap: str, topic: str, lines: list[str], codec: str, txid: str | None = None) -> list[dict]:
    """Run the Java producer over ``lines``; return its acknowledgements (index, partition, offset)."""
    args = ["produce", "--bootstrap", bootstrap, "--topic", topic, "--codec", codec]
    if txid:
        args += ["--transactional-id", txid]
    res = run_java(PEER, *args, input="\n".join(lines) + "\n", timeout=300)
    acks = [j for j in json_lines(res.stdout) if "i" in j]
    return sorted(acks, key=lambda j: j["i"])


def _java_consume(bootstrap: str, topic: str, isolation: str = "read_uncommitted") -> list[Row]:
    res = run_java(PEER, "consume", "--bootstrap", bootstrap, "--topic", topic, "--isolation", isolation, timeout=300)
    return sorted(_java_row(j) for j in json_lines(res.stdout) if "o" in j)


def _fetch_all(client: Client, topic: str, isolation: str) -> tuple[list[Row], list[Any]]:
    """Every record of ``topic`` through ``Client.fetch``, and each fetch's columns (to inspect batches)."""
    rows: list[Row] = []
    chunks = []
    ends = client.list_offsets(topic)
    for p, listed in sorted(ends.items()):
        offset = 0
        deadline = time.monotonic() + 60
        while offset < listed.offset:
            assert time.monotonic() < deadline, f"{topic}/{p}: stuck at {offset} of {listed.offset}"
            cols = client.fetch(topic, p, offset, isolation=isolation, max_wait_ms=100)
            rows += _kafkawire_rows(p, cols)
            chunks.append(cols)
            offset = max(offset, int(cols.next_offset))
    return sorted(rows), chunks


def _consume_all(bootstrap: str, topic: str, isolation: str, expected: int) -> list[Row]:
    """Every record of ``topic`` through a kafkawire ``Consumer`` on all partitions (manual assignment)."""
    rows: list[Row] = []
    with Client(bootstrap) as client:
        parts = sorted(client.list_offsets(topic))
        ends = {p: lo.offset for p, lo in client.list_offsets(topic).items()}
        consumer = Consumer(client=client, auto_offset_reset="earliest", isolation=isolation)
        consumer.assign([(topic, p) for p in parts])
        deadline = time.monotonic() + 60
        while any(consumer.position((topic, p)) < ends[p] for p in parts):
            assert time.monotonic() < deadline, f"consumer stuck with {len(rows)} of {expected} records"
            for (_t, p), cols in consumer.poll(200).items():
                rows += _kafkawire_rows(p, cols)
        consumer.close()
    return sorted(rows)


@pytest.fixture(scope="module")
def bootstrap(kafka_broker: Any) -> str:
    return kafka_broker.bootstrap


# ------------------------------------------------------------------------------------ Java -> kafkawire


@pytest.mark.parametrize("codec", CODECS)
def test_java_producer_records_read_identically(bootstrap: str, codec: str) -> None:
    topic = _topic(f"java-{codec}")
    with Client(bootstrap) as client:
        client.create_topics({topic: 2})
    recs = _records(400, 2, seed=CODEC_IDS[codec])
    acks = _java_produce(bootstrap, topic, [_tsv(r) for r in recs], codec)
    assert [a["i"] for a in acks] == list(range(len(recs)))
    expected = sorted(_expected(r, a["o"]) for r, a in zip(recs, acks))

    with Client(bootstrap) as client:
        fetched, chunks = _fetch_all(client, topic, "read_uncommitted")
    assert fetched == expected
    # The Java producer really compressed (and batched idempotently): the batches say so.
    codecs = {int(c) for cols in chunks for c in cols.batch_codec}
    assert codecs == {CODEC_IDS[codec]}
    assert all(int(pid) >= 0 for cols in chunks for pid in cols.batch_producer_id)
    assert _consume_all(bootstrap, topic, "read_uncommitted", len(expected)) == expected
    # And the Java consumer sees exactly what kafkawire saw.
    assert _java_consume(bootstrap, topic) == expected


@pytest.mark.parametrize("codec", ["none", "zstd"])
def test_java_transactions_read_committed_and_uncommitted(bootstrap: str, codec: str) -> None:
    """Committed, aborted, committed transactions on two partitions: read_uncommitted returns every data
    record (aborted ones too) and no control record; read_committed drops the aborted transaction."""
    topic = _topic(f"java-txn-{codec}")
    with Client(bootstrap) as client:
        client.create_topics({topic: 2})
    recs = _records(300, 2, seed=99)
    groups = [("commit", recs[:100]), ("abort", recs[100:200]), ("commit", recs[200:250]), ("abort", recs[250:])]
    lines: list[str] = []
    for outcome, part in groups:
        lines += ["#begin", *(_tsv(r) for r in part), f"#{outcome}"]
    acks = _java_produce(bootstrap, topic, lines, codec, txid=f"tx-{topic}")
    assert len(acks) == len(recs)
    aborted = {id(r) for outcome, part in groups if outcome == "abort" for r in part}
    every = sorted(_expected(r, a["o"]) for r, a in zip(recs, acks))
    committed = sorted(_expected(r, a["o"]) for r, a in zip(recs, acks) if id(r) not in aborted)
    assert len(committed) == 150

    with Client(bootstrap) as client:
        # Java's last EndTxn returned before the marker moved the last stable offset, where the Java consumer
        # below stops reading under read_committed.
        wait_stable(client, topic)
        uncommitted_rows, chunks = _fetch_all(client, topic, "read_uncommitted")
        committed_rows, _ = _fetch_all(client, topic, "read_committed")
    assert uncommitted_rows == every  # aborted data visible, control markers (the offset gaps) not returned
    assert committed_rows == committed
    assert all(bool(t) for cols in chunks for t in cols.batch_transactional)
    assert _consume_all(bootstrap, topic, "read_uncommitted", len(every)) == every
    assert _consume_all(bootstrap, topic, "read_committed", len(committed)) == committed
    # The Java consumer agrees under both isolation levels.
    assert _java_consume(bootstrap, topic, "read_uncommitted") == every
    assert _java_consume(bootstrap, topic, "read_committed") == committed


# ------------------------------------------------------------------------------------ kafkawire -> Java


@pytest.mark.parametrize("codec", CODECS)
def test_kafkawire_producer_records_read_identically_by_java(bootstrap: str, codec: str) -> None:
    topic = _topic(f"kw-{codec}")
    recs = _records(400, 2, seed=100 + CODEC_IDS[codec])
    expected: list[Row] = []
    with Client(bootstrap, enable_idempotence=True) as client:
        client.create_topics({topic: 2})
        for p in (0, 1):
            mine = [r for r in recs if r["p"] == p]
            # Two calls per partition: the idempotent sequence must continue across calls.
            for part in (mine[: len(mine) // 2], mine[len(mine) // 2 :]):
                res = client.produce(
                    topic,
                    [r["v"] for r in part],
                    [r["k"] for r in part],
                    partition=p,
                    headers=[[(k.decode(), v) for k, v in r["h"]] for r in part],
                    timestamps=[r["ts"] for r in part],
                    acks=-1,
                    compression=None if codec == "none" else codec,
                )
                assert bool(res.acknowledged.all())
                expected += [_expected(r, int(o)) for r, o in zip(part, res.offset)]
        _, chunks = _fetch_all(client, topic, "read_uncommitted")
    expected.sort()
    assert {int(c) for cols in chunks for c in cols.batch_codec} == {CODEC_IDS[codec]}
    assert all(int(pid) >= 0 for cols in chunks for pid in cols.batch_producer_id)  # idempotent batches
    assert _java_consume(bootstrap, topic) == expected


@pytest.mark.parametrize("codec", ["none", "lz4"])
def test_kafkawire_transactions_read_by_java(bootstrap: str, codec: str) -> None:
    """kafkawire's transactional producer: commit, abort, commit. The Java consumer under read_committed
    sees exactly the committed records, under read_uncommitted every data record and no marker."""
    topic = _topic(f"kw-txn-{codec}")
    with Client(bootstrap) as client:
        client.create_topics({topic: 2})
    recs = _records(300, 2, seed=300 + CODEC_IDS[codec])
    outcomes = [("commit", recs[:100]), ("abort", recs[100:200]), ("commit", recs[200:])]
    every: list[Row] = []
    committed: list[Row] = []
    # No linger: every record of a transaction goes out in the flush below, whose results are then complete.
    producer = Producer(bootstrap, transactional_id=f"kw-tx-{topic}", linger_ms=600_000,
                        compression=None if codec == "none" else codec)
    try:
        producer.init_transactions()
        for outcome, part in outcomes:
            producer.begin_transaction()
            for r in part:
                producer.send(topic, r["v"], r["k"], partition=r["p"],
                              headers=[(k.decode(), v) for k, v in r["h"]], timestamp_ms=r["ts"])
            # One produce call per explicit partition, in order of first appearance; offsets in send order.
            results = producer.flush()
            by_partition = {int(res.partition[0]): res for res in results}
            assert sorted(by_partition) == [0, 1]
            rows = []
            for p, res in by_partition.items():
                mine = [r for r in part if r["p"] == p]
                assert len(res) == len(mine) and bool(res.acknowledged.all())
                rows += [_expected(r, int(o)) for r, o in zip(mine, res.offset)]
            if outcome == "commit":
                producer.commit_transaction()
                committed += rows
            else:
                producer.abort_transaction()
            every += rows
    finally:
        producer.close()
    every.sort()
    committed.sort()
    assert len(committed) == 200
    with Client(bootstrap) as client:
        wait_stable(client, topic)  # the Java consumer stops at the last stable offset, moved by the markers
    assert _java_consume(bootstrap, topic, "read_committed") == committed
    assert _java_consume(bootstrap, topic, "read_uncommitted") == every
    with Client(bootstrap) as client:
        assert _fetch_all(client, topic, "read_committed")[0] == committed


# ------------------------------------------------------------------------------------ one group, two clients


class JavaGroupMember:
    """The Java peer in ``group`` mode, its stdout read by a thread into events and the ledger."""

    def __init__(self, bootstrap: str, topic: str, group: str, ledger: Ledger) -> None:
        cmd = java_command(PEER, "group", "--bootstrap", bootstrap, "--topic", topic, "--group", group)
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.ledger = ledger
        self.assignment: list[int] = []
        self.records = 0
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if not line.startswith("{"):
                continue
            ev = json.loads(line)
            kind = ev.get("event")
            if kind == "record":
                self.ledger.read([_unhex(ev["v"])])
                self.records += 1
            elif kind == "assigned":
                self.assignment = ev["partitions"]
            elif kind == "revoked":
                self.assignment = []
            self.events.put(ev)

    def leave(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("exit\n")
        self.proc.stdin.flush()
        self.proc.stdin.close()
        rc = self.proc.wait(60)
        self._reader.join(10)
        assert self.proc.stderr is not None
        assert rc == 0, self.proc.stderr.read()[-3000:]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def _wait(cond: Any, what: str, timeout: float, tick: Any, state: Any = None) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}; {state() if state else ''}"
        tick()


@pytest.mark.parametrize("leaver", ["java", "kafkawire"])
def test_java_and_kafkawire_share_a_group_and_hand_over(bootstrap: str, leaver: str) -> None:
    """Both members get two of four partitions (range assignor) and each reads its two; when ``leaver``
    leaves, the other owns all four, and every record produced before and after the handover is read,
    none twice."""
    topic = _topic("group")
    group = f"g-{topic}"
    ledger = Ledger(topic)
    with Client(bootstrap) as client:
        client.create_topics({topic: 4})

        def produce(n: int) -> None:
            for p in range(4):
                values = ledger.make(n)
                res = client.produce(topic, values, partition=p)
                ledger.acknowledged(v for v, ok in zip(values, res.acknowledged) if ok)

        java = JavaGroupMember(bootstrap, topic, group, ledger)
        kw = Consumer(
            bootstrap, group_id=group, auto_offset_reset="earliest", partition_assignment_strategy=("range",),
            session_timeout_ms=10_000, heartbeat_interval_ms=1_000, auto_commit_interval_ms=500,
        )
        try:
            kw.subscribe([topic])

            def kw_tick() -> None:
                try:
                    polled = kw.poll(100)
                except KafkaTimeoutError:
                    return  # e.g. the coordinator still loading: poll() says so when its time runs out
                for cols in polled.values():
                    ledger.read(cols.value)

            def kw_parts() -> list[int]:
                return sorted(p for _, p in kw.assignment())

            def state() -> str:
                return (
                    f"{ledger.report()}; Java owns {java.assignment} and read {java.records}; "
                    f"kafkawire owns {kw_parts()}"
                )

            _wait(lambda: len(java.assignment) == 2 and len(kw_parts()) == 2, "a 2 + 2 split", 60, kw_tick, state)
            assert sorted(java.assignment + kw_parts()) == [0, 1, 2, 3]
            # Records only now, so that each member reads its own two partitions' share.
            produce(250)
            _wait(lambda: ledger.report().read_back == 1000, "the first 1000 records", 60, kw_tick, state)
            assert java.records == 500, state()

            if leaver == "java":
                java.leave()
                _wait(lambda: kw_parts() == [0, 1, 2, 3], "kafkawire to own all partitions", 60, kw_tick, state)
                produce(250)
                _wait(lambda: ledger.report().read_back == 2000, "all 2000 records", 60, kw_tick, state)
            else:
                kw.close()
                _wait(lambda: java.assignment == [0, 1, 2, 3], "Java to own all partitions", 60,
                      lambda: time.sleep(0.05), state)
                produce(250)
                _wait(lambda: ledger.report().read_back == 2000, "all 2000 records", 60,
                      lambda: time.sleep(0.05), state)
                java.leave()
        finally:
            java.kill()
            kw.close()
    report = ledger.report()
    print(f"group handover ({leaver} leaves): {report}")
    assert report.acknowledged == 2000
    assert report.lost == 0 and report.unexpected == 0
    assert report.duplicated == 0, report
    assert java.records == (500 if leaver == "java" else 1500)
