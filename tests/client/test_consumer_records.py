"""The per-record loop of :class:`kafkawire.client.Consumer` (issue 32) against Apache Kafka 4.4.

* The views a ``records()`` loop yields hold what librdkafka (confluent-kafka) wrote and reads back:
  keys, null keys and values, empty values, headers with duplicate keys and null values, transactions
  (read_committed drops the aborted one and the markers), topic, partition, offset, timestamp, leader
  epoch; and each equals its row of the columns it came from.
* At least once: a loop stopped mid-way (an exception, then ``close()``), or its process SIGKILLed,
  loses nothing when a new member takes over, and the records delivered twice are exactly those
  yielded but not committed; nothing past the records the loop moved past is ever committed.
* ``commit()`` in the loop's body covers the record in hand and nothing buffered behind it; breaking
  out and looping again goes on with the buffered records; ``seek`` drops those of its partition.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer as CKConsumer
from confluent_kafka import Producer as CKProducer
from confluent_kafka import TopicPartition as CKTopicPartition

from kafkawire import RecordView
from kafkawire.client import Client, Consumer

pytestmark = pytest.mark.broker

ROOT = Path(__file__).resolve().parents[2]


def _produce_ck(bootstrap: str, topic: str, partitions: int) -> list[dict[str, Any]]:
    """Records written by librdkafka across ``partitions``: two transactions (the first aborted), each
    record with a key pattern, a value pattern and headers; returns the committed ones as written."""
    p = CKProducer({"bootstrap.servers": bootstrap, "transactional.id": f"tx-{topic}", "linger.ms": 5})
    p.init_transactions(30)
    written = []
    for txn, commit in ((0, False), (1, True)):
        p.begin_transaction()
        for i in range(60):
            key = None if i % 7 == 0 else b"k%d" % i
            value = None if i % 11 == 0 else (b"" if i % 13 == 0 else b"t%d-v%d" % (txn, i) * (1 + i % 3))
            headers = [("h", b"1"), ("h", None), ("n\u00e9", b"%d" % i)] if i % 2 else []
            p.produce(topic, value=value, key=key, headers=headers, partition=i % partitions)
            if commit:
                written.append({"partition": i % partitions, "key": key, "value": value,
                                "headers": [(k, v) for k, v in headers]})
        p.flush(30)
        (p.commit_transaction if commit else p.abort_transaction)(30)
    return written


def _read_ck(bootstrap: str, topic: str, partitions: int, n: int) -> list[dict[str, Any]]:
    """What librdkafka's consumer reads back (read_committed), every field the views have."""
    c = CKConsumer({"bootstrap.servers": bootstrap, "group.id": f"ck-{topic}", "isolation.level": "read_committed",
                    "enable.auto.commit": False})
    c.assign([CKTopicPartition(topic, p, 0) for p in range(partitions)])
    got: list[dict[str, Any]] = []
    deadline = time.monotonic() + 60
    while len(got) < n and time.monotonic() < deadline:
        for m in c.consume(num_messages=1000, timeout=1):
            assert m.error() is None, m.error()
            got.append({"topic": m.topic(), "partition": m.partition(), "offset": m.offset(), "key": m.key(),
                        "value": m.value(), "headers": list(m.headers() or []), "timestamp": m.timestamp()[1],
                        "timestamp_type": m.timestamp()[0] - 1, "leader_epoch": m.leader_epoch()})
    c.close()
    return got


def _fields(v: RecordView) -> dict[str, Any]:
    return {"topic": v.topic, "partition": v.partition, "offset": v.offset, "key": v.key, "value": v.value,
            "headers": v.headers, "timestamp": v.timestamp, "timestamp_type": v.timestamp_type,
            "leader_epoch": v.leader_epoch}


def _by_place(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (r["partition"], r["offset"]))


def _wait_stable(client: Client, topic: str, partitions: int, ends: int) -> None:
    """The transaction markers are written after EndTxn is answered (KIP-98): wait for the last stable offsets."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        lso = client.list_offsets(topic, list(range(partitions)), timestamp="latest", isolation="read_committed")
        if sum(o.offset for o in lso.values()) >= ends:
            return
        time.sleep(0.05)
    raise AssertionError("the transaction markers did not reach the log")


def test_views_hold_what_librdkafka_wrote_and_reads(kafka, topic_name):
    topic = topic_name()
    with Client(kafka.bootstrap) as client:
        client.create_topics([topic], num_partitions=3)
        written = _produce_ck(kafka.bootstrap, topic, 3)
        _wait_stable(client, topic, 3, 120 + 2 * 3)  # 120 records, an abort and a commit marker per partition
    theirs = _read_ck(kafka.bootstrap, topic, 3, len(written))
    with Consumer(kafka.bootstrap, isolation="read_committed", max_wait_ms=100) as c:
        c.assign([(topic, p) for p in range(3)])
        for p in range(3):
            c.seek((topic, p), 0)
        views = []
        for v in c.records(idle_timeout_ms=2_000):
            assert isinstance(v, RecordView)
            assert v == v.columns[v.index]  # the view is its row of the columns poll() decoded
            assert v.columns.topic == topic and v.columns.partition == v.partition
            views.append(v)
    ours = [_fields(v) for v in views]
    assert len(ours) == len(theirs) == len(written) == 60
    assert _by_place(ours) == _by_place(theirs)
    assert all(r["leader_epoch"] >= 0 for r in ours)
    # Per partition in offset order, as written (the aborted transaction and the markers are gone).
    for p in range(3):
        mine = [(r["key"], r["value"], r["headers"]) for r in ours if r["partition"] == p]
        assert mine == [(w["key"], w["value"], w["headers"]) for w in written if w["partition"] == p]
        offsets = [r["offset"] for r in ours if r["partition"] == p]
        assert offsets == sorted(offsets) and offsets[0] > 0  # after the aborted records and their marker
    nulls = Counter((r["key"] is None, r["value"] is None, r["value"] == b"") for r in ours)
    assert nulls[(True, False, False)] and nulls[(False, True, False)] and nulls[(False, False, True)]


def _fill(bootstrap: str, topic: str, partitions: int, per_partition: int) -> None:
    with Client(bootstrap) as client:
        client.create_topics([topic], num_partitions=partitions)
        for p in range(partitions):
            for lo in range(0, per_partition, 100):
                client.produce(topic, [b"%d-%d" % (p, i) for i in range(lo, min(per_partition, lo + 100))],
                               partition=p)


def _committed(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    with Consumer(bootstrap, group_id=group) as c:
        return {tp[1]: off for tp, off in c.committed([(topic, p) for p in range(partitions)]).items()}


def _drain(bootstrap: str, group: str, topic: str, missing: set[tuple[int, int]]) -> list[tuple[int, int]]:
    """A new member of ``group`` reads from the committed offsets, committing as it goes, until it has
    read the ``missing`` records and then 2 s passed without a record (or 30 s without one: the join
    waits for a killed member's session to expire)."""
    got = []
    with Consumer(bootstrap, group_id=group, auto_offset_reset="earliest", auto_commit_interval_ms=0,
                  max_wait_ms=100) as c:
        c.subscribe([topic])
        for v in c.records(idle_timeout_ms=30_000):
            got.append((v.partition, v.offset))
            missing.discard(got[-1])
            if not missing:
                break
        got.extend((v.partition, v.offset) for v in c.records(idle_timeout_ms=2_000))
    return got


class _Crash(Exception):
    pass


def test_a_loop_stopped_midway_and_closed_commits_only_what_it_moved_past(kafka, topic_name):
    topic, group = topic_name(), topic_name("g")
    partitions, per = 3, 400
    _fill(kafka.bootstrap, topic, partitions, per)
    processed: list[tuple[int, int]] = []
    with pytest.raises(_Crash):
        # Small fetches: many polls, each auto-committing (interval 0) what the loop moved past.
        with Consumer(kafka.bootstrap, group_id=group, auto_offset_reset="earliest", auto_commit_interval_ms=0,
                      partition_max_bytes=2_000, max_wait_ms=100) as c:
            c.subscribe([topic])
            for v in c:
                processed.append((v.partition, v.offset))
                if len(processed) == 500:
                    raise _Crash  # while processing record 500: it is not done
    in_hand = processed[-1]
    committed = _committed(kafka.bootstrap, group, topic, partitions)
    for p in range(partitions):
        mine = [o for q, o in processed if q == p]
        # Never past what the loop moved past: the record in hand is not committed.
        limit = (max(mine) + 1 if mine else 0) if p != in_hand[0] else in_hand[1]
        assert committed[p] == limit if mine else committed[p] in (-1, 0), (p, committed, limit)
    sent = {(p, o) for p in range(partitions) for o in range(per)}
    rest = _drain(kafka.bootstrap, group, topic, sent - set(processed))
    everything = Counter(processed + rest)
    assert set(everything) == sent  # lost: 0
    duplicated = {k for k, n in everything.items() if n > 1}
    assert duplicated == {in_hand}  # exactly the record yielded but not moved past
    assert len(processed) + len(rest) == len(sent) + 1


MEMBER = """
import json, sys, time
from kafkawire.client import Consumer
bootstrap, group, topic, log = sys.argv[1:5]
with open(log, "w") as out, Consumer(bootstrap, group_id=group, auto_offset_reset="earliest", session_timeout_ms=6_000,
                                     auto_commit_interval_ms=50, partition_max_bytes=2_000, max_wait_ms=100) as c:
    c.subscribe([topic])
    for v in c:
        out.write(json.dumps([v.partition, v.offset]) + "\\n")
        out.flush()
        time.sleep(0.002)  # the work
"""


def test_a_sigkilled_loop_loses_nothing_and_repeats_only_what_was_not_committed(kafka, topic_name, tmp_path):
    topic, group = topic_name(), topic_name("g")
    partitions, per = 3, 400
    _fill(kafka.bootstrap, topic, partitions, per)
    log = tmp_path / "processed.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", MEMBER, kafka.bootstrap, group, topic, str(log)], env=env)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if log.exists() and log.read_text().count("\n") >= 600:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the member ended before it was killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    processed = [tuple(json.loads(line)) for line in log.read_text().splitlines() if line.endswith("]")]
    assert len(processed) >= 600
    committed = _committed(kafka.bootstrap, group, topic, partitions)
    for p in range(partitions):
        mine = [o for q, o in processed if q == p]
        assert committed[p] <= (max(mine) + 1 if mine else 0), (p, committed)  # nothing past what was processed
    assert any(c > 0 for c in committed.values())  # auto-commits went out while it ran
    sent = {(p, o) for p in range(partitions) for o in range(per)}
    rest = _drain(kafka.bootstrap, group, topic, sent - set(processed))
    everything = Counter(processed + rest)
    assert set(everything) == sent  # lost: 0
    duplicated = {k for k, n in everything.items() if n > 1}
    # Duplicated: exactly the records processed at or past the committed offset (yielded, not committed).
    assert duplicated == {(p, o) for p, o in processed if o >= committed[p]}
    assert all(n <= 2 for n in everything.values())
    print(f"sent {len(sent)} processed before the kill {len(processed)} committed {committed} "
          f"duplicated {len(duplicated)} lost {len(sent - set(everything))}")


def test_commit_in_the_loop_covers_the_record_in_hand_and_loops_resume(kafka, topic_name):
    topic, group = topic_name(), topic_name("g")
    _fill(kafka.bootstrap, topic, 2, 300)
    seen: list[tuple[int, int]] = []
    with Consumer(kafka.bootstrap, group_id=group, auto_offset_reset="earliest", enable_auto_commit=False,
                  max_wait_ms=100) as c:
        c.assign([(topic, 0), (topic, 1)])
        for v in c:
            seen.append((v.partition, v.offset))
            if len(seen) == 100:
                c.commit()
                break
        held = seen[-1]
        committed = _committed(kafka.bootstrap, group, topic, 2)
        assert committed[held[0]] == held[1] + 1  # the record in hand, not what is buffered behind it
        other = 1 - held[0]
        assert committed[other] == max([o for p, o in seen if p == other], default=-1) + 1 or committed[other] == -1
        # Looping again goes on after the record in hand, with what was buffered.
        for v in c.records(idle_timeout_ms=2_000):
            seen.append((v.partition, v.offset))
        assert sorted(seen) == [(p, o) for p in range(2) for o in range(300)]
        # A seek drops what is buffered of its partition and reads from the new offset.
        c.seek((topic, 0), 290)
        c.seek((topic, 1), 295)
        tail = [(v.partition, v.offset) for v in c.records(idle_timeout_ms=2_000)]
        assert sorted(tail) == [(0, o) for o in range(290, 300)] + [(1, o) for o in range(295, 300)]
        c.commit()
    assert _committed(kafka.bootstrap, group, topic, 2) == {0: 300, 1: 300}


def test_poll_after_a_stopped_loop_reads_the_buffered_records_again(kafka, topic_name):
    topic = topic_name()
    _fill(kafka.bootstrap, topic, 1, 200)
    with Consumer(kafka.bootstrap, max_wait_ms=100) as c:
        c.assign([(topic, 0)])
        c.seek((topic, 0), 0)
        first = []
        for v in c:
            first.append(v.offset)
            if len(first) == 10:
                break
        assert first == list(range(10))
        # poll() hands back everything from the record in hand on (at least once), none skipped.
        got: list[int] = []
        deadline = time.monotonic() + 30
        while len(got) < 191 and time.monotonic() < deadline:
            for cols in c.poll(1_000).values():
                got.extend(cols.offset.tolist())
        assert got == list(range(9, 200))


def test_pause_in_the_loop_stops_a_partitions_buffered_records_until_resume(kafka, topic_name):
    topic = topic_name()
    _fill(kafka.bootstrap, topic, 2, 200)
    with Consumer(kafka.bootstrap, max_wait_ms=100) as c:
        c.assign([(topic, 0), (topic, 1)])
        c.seek((topic, 0), 0)
        c.seek((topic, 1), 0)
        seen: list[tuple[int, int]] = []
        paused = None
        for v in c.records(idle_timeout_ms=2_000):
            seen.append((v.partition, v.offset))
            if paused is None:
                paused = (topic, v.partition)
                c.pause([paused])  # while the record in hand is processed
        assert paused is not None
        # Only the record in hand of the paused partition; all of the other one.
        assert [o for p, o in seen if p == paused[1]] == [0]
        assert sorted(o for p, o in seen if p != paused[1]) == list(range(200))
        c.resume([paused])
        seen += [(v.partition, v.offset) for v in c.records(idle_timeout_ms=2_000)]
        assert sorted(seen) == [(p, o) for p in range(2) for o in range(200)]  # none skipped, none twice
