"""kafkawire's transactions as the Java client sees them, on Apache Kafka (issue 14).

The Java side is ``tests/interop/java/KafkaPeer.java`` (kafka-clients of the broker's version): its
read_committed consumer must see exactly the transactions kafkawire committed, with keys, headers and
partitions intact, and nothing of the aborted ones; and a kafkawire producer taking over a Java
producer's transactional id fences it and completes (aborts) the transaction it left open.
"""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path
from typing import Any

import pytest
from visibility import wait_stable

from kafkawire.client import Client, Producer
from kafkawire.testing.java import json_lines, run_java

PEER = Path(__file__).parent / "java" / "KafkaPeer.java"
_ids = itertools.count()

Row = tuple[int, bytes | None, bytes | None, tuple[tuple[bytes, bytes | None], ...]]


def _name(prefix: str) -> str:
    return f"{prefix}-{os.getpid()}-{next(_ids)}-{int(time.time() * 1000) % 100_000}"


def _unhex(s: str | None) -> bytes | None:
    return None if s is None else bytes.fromhex(s)


def _java_consume(bootstrap: str, topic: str, isolation: str) -> list[Row]:
    res = run_java(PEER, "consume", "--bootstrap", bootstrap, "--topic", topic, "--isolation", isolation, timeout=300)
    return sorted(
        (j["p"], _unhex(j["k"]), _unhex(j["v"]), tuple((bytes.fromhex(k), _unhex(v)) for k, v in j["h"]))
        for j in json_lines(res.stdout)
        if "o" in j
    )


def _fetch(client: Client, topic: str, isolation: str) -> list[Row]:
    rows: list[Row] = []
    for p, listed in sorted(client.list_offsets(topic, isolation=isolation).items()):
        offset = 0
        deadline = time.monotonic() + 60
        while offset < listed.offset:
            assert time.monotonic() < deadline, f"{topic}/{p} stuck at {offset} of {listed.offset}"
            cols = client.fetch(topic, p, offset, isolation=isolation, max_wait_ms=100)
            rows += [(p, r.key, r.value, tuple((k.encode(), v) for k, v in r.headers)) for r in cols]
            offset = max(offset, int(cols.next_offset))
    return sorted(rows)


@pytest.fixture(scope="module")
def bootstrap(kafka_broker: Any) -> str:
    return kafka_broker.bootstrap


@pytest.mark.broker
def test_java_read_committed_consumer_sees_exactly_kafkawire_commits(bootstrap: str) -> None:
    topic = _name("txn-java")
    with Client(bootstrap) as c:
        c.create_topics([topic], num_partitions=3)
    committed: list[Row] = []
    aborted: list[Row] = []
    with Producer(bootstrap, transactional_id=_name("tid"), linger_ms=60_000) as producer:
        producer.init_transactions()
        for n in range(5):
            rows: list[Row] = []
            producer.begin_transaction()
            for i in range(40):
                p, key, value = i % 3, f"k{i}".encode(), f"txn{n}-{i}".encode()
                headers = ((b"n", str(n).encode()), (b"dup", None), (b"dup", b"x")) if i % 4 == 0 else ()
                producer.send(topic, value, key, partition=p, headers=[(k.decode(), v) for k, v in headers])
                rows.append((p, key, value, headers))
            if n in (1, 3):
                producer.flush()
                producer.abort_transaction()
                aborted += rows
            else:
                producer.commit_transaction()
                committed += rows
    # The Java consumer reads up to the last stable offset, which the commit markers move after EndTxn returned.
    with Client(bootstrap) as c:
        wait_stable(c, topic)
    assert _java_consume(bootstrap, topic, "read_committed") == sorted(committed)
    assert _java_consume(bootstrap, topic, "read_uncommitted") == sorted(committed + aborted)


@pytest.mark.broker
def test_kafkawire_takes_over_a_java_transactional_id(bootstrap: str) -> None:
    """Java commits one transaction and leaves a second open; kafkawire's init_transactions with the same
    id fences Java's producer and aborts the open transaction; both readers see the committed ones only."""
    topic = _name("txn-takeover")
    tid = _name("tid")
    with Client(bootstrap) as c:
        c.create_topics([topic], num_partitions=2)

    def line(p: int, value: bytes) -> str:
        return f"{p}\t-1\t-\t{value.hex()}\t"

    java_committed = [(i % 2, None, f"java-c{i}".encode(), ()) for i in range(10)]
    java_open = [(i % 2, None, f"java-open{i}".encode(), ()) for i in range(10)]
    lines = ["#begin"] + [line(p, v) for p, _k, v, _h in java_committed] + ["#commit", "#begin"]
    lines += [line(p, v) for p, _k, v, _h in java_open]  # no #commit: the JVM exits mid-transaction
    run_java(
        PEER, "produce", "--bootstrap", bootstrap, "--topic", topic, "--codec", "none", "--transactional-id", tid,
        input="\n".join(lines) + "\n", timeout=300,
    )  # fmt: skip

    ours = [(i % 2, None, f"kw{i}".encode(), ()) for i in range(10)]
    with Producer(bootstrap, transactional_id=tid) as producer:
        producer.init_transactions()
        assert producer.transaction_manager is not None and producer.transaction_manager.producer_epoch > 0
        with producer.transaction():
            for p, _k, v, _h in ours:
                producer.send(topic, v, partition=p)
    expected = sorted(java_committed + ours)
    with Client(bootstrap) as c:
        wait_stable(c, topic)  # our commit's markers are written after EndTxn returned
    assert _java_consume(bootstrap, topic, "read_committed") == expected
    with Client(bootstrap) as c:
        assert _fetch(c, topic, "read_committed") == expected
