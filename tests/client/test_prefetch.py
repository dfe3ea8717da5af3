"""Prefetch (kafkawire.client.consumer.prefetch): the next Fetch sent while the caller works never changes
what is read. Against Apache Kafka: every record once, in order, per partition; a ``seek``, an assignment
change and a pause drop what was fetched ahead; the range reader reads the same records with and without it
and leaves its client usable when the iteration stops early. Without a broker: the next offset read from the
batch headers is the decoder's."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator

import numpy as np
import pytest

import kafkawire
from kafkawire.client import Client, Consumer
from kafkawire.client.consumer.prefetch import next_offsets_of
from kafkawire.client.consumer.ranges import read_ranges
from kafkawire.client.net.deadline import Deadline
from kafkawire.errors import KafkaWireError
from kafkawire.testing import Broker

PARTITIONS = 6
PER_PARTITION = 4_000


# ------------------------------------------------------------------------------------------ no broker


@pytest.mark.parametrize("codec", [None, "lz4"])
@pytest.mark.parametrize("magic", [2, 1, 0])
def test_next_offset_from_headers_is_the_decoders(codec: str | None, magic: int) -> None:
    batches = [
        kafkawire.encode_records([b"v%d" % i for i in range(n)], base_offset=base, magic=magic,
                                 compression=None if magic == 0 and codec else codec)
        for base, n in ((100, 3), (103, 50), (160, 7))  # a gap (compaction) between the last two
    ]
    data = b"".join(batches)
    rng = np.random.default_rng(3)
    cuts = sorted({len(data), *(int(x) for x in rng.integers(1, len(data), 60)), len(batches[0])})
    checked = 0
    for cut in cuts:
        for fetch_offset in (100, 104, 150):
            try:
                decoded = kafkawire.decode_records(data[:cut], fetch_offset=fetch_offset).next_offset
            except KafkaWireError:  # no complete entry: nothing to compare (the fetch raises)
                continue
            # (a legacy compressed wrapper carries its last record's offset: the same answer)
            assert next_offsets_of(data[:cut], fetch_offset) == decoded, (cut, fetch_offset)
            checked += 1
    assert checked > 20
    assert next_offsets_of(None, 7) == 7 and next_offsets_of(b"", 7) == 7


# ------------------------------------------------------------------------------------------ Kafka


@pytest.fixture(scope="module")
def topic(kafka_broker: Broker) -> Iterator[str]:
    """A 6-partition topic; partition p holds PER_PARTITION records whose values are b"p:i" for i = 0, 1, ..."""
    name = f"prefetch-{uuid.uuid4().hex[:8]}"
    with Client(kafka_broker.bootstrap, max_batch_bytes=8 << 10) as client:  # many batches per partition
        client.create_topics({name: PARTITIONS})
        for p in range(PARTITIONS):
            client.produce(name, [b"%d:%06d" % (p, i) + b"x" * 80 for i in range(PER_PARTITION)], partition=p)
        yield name
        client.delete_topics([name], missing_ok=True)


def _consumer(bootstrap: str, **kw: object) -> Consumer:
    # Small fetches: many rounds, so most of them are answered from ahead.
    return Consumer(bootstrap, partition_max_bytes=16 << 10, max_wait_ms=200, **kw)  # type: ignore[arg-type]


def _index(value: bytes) -> tuple[int, int]:
    p, i = value[:8].split(b":")
    return int(p), int(i)


def _from_start(consumer: Consumer, topic: str) -> Consumer:
    consumer.assign([(topic, p) for p in range(PARTITIONS)])
    for p in range(PARTITIONS):
        consumer.seek((topic, p), 0)
    return consumer


def _read_until(consumer: Consumer, want: int, seen: dict[int, list[int]], work_s: float = 0.0) -> None:
    """Poll until ``want`` records are in ``seen``, spending ``work_s`` (the caller's own work) after each poll."""
    got = sum(len(v) for v in seen.values())
    for _ in range(2_000):
        if got >= want:
            return
        for (_t, p), cols in consumer.poll(5_000).items():
            for off, value in zip(cols.offset.tolist(), cols.value.to_pylist()):
                assert _index(value) == (p, off)  # offset i of partition p holds record p:i
                seen.setdefault(p, []).append(off)
            got += len(cols)
        time.sleep(work_s)
    raise AssertionError(f"read {got} of {want}")


@pytest.mark.broker
def test_every_record_once_in_order(kafka_broker: Broker, topic: str) -> None:
    with _from_start(_consumer(kafka_broker.bootstrap), topic) as consumer:
        seen: dict[int, list[int]] = {}
        _read_until(consumer, PARTITIONS * PER_PARTITION, seen)
        assert consumer.poll(300) == {}
        ahead = consumer._prefetch  # noqa: SLF001 - the test checks prefetch was really used
        assert ahead is not None and ahead.used >= 10, vars(ahead)
    assert {p: seen[p] for p in sorted(seen)} == {p: list(range(PER_PARTITION)) for p in range(PARTITIONS)}
    _no_prefetch_thread_left()


@pytest.mark.broker
def test_answers_ahead_are_read_on_a_thread_while_the_caller_works(kafka_broker: Broker, topic: str) -> None:
    with _from_start(_consumer(kafka_broker.bootstrap), topic) as consumer:
        seen: dict[int, list[int]] = {}
        # 30 ms of the caller's own work after each poll: the answer ahead arrives meanwhile.
        _read_until(consumer, PARTITIONS * PER_PARTITION, seen, work_s=0.03)
        ahead = consumer._prefetch  # noqa: SLF001 - the test checks the thread really read answers
        assert ahead is not None and ahead.read_by_thread >= 1, (ahead.used, ahead.read_by_thread)
    assert {p: seen[p] for p in sorted(seen)} == {p: list(range(PER_PARTITION)) for p in range(PARTITIONS)}
    _no_prefetch_thread_left()


def _no_prefetch_thread_left() -> None:
    """The reading thread ends with its reader (closing waits for it up to a second; allow a loaded machine)."""
    until = time.monotonic() + 10
    while any(t.name == "kafkawire-prefetch" for t in threading.enumerate()) and time.monotonic() < until:
        time.sleep(0.05)
    assert not [t for t in threading.enumerate() if t.name == "kafkawire-prefetch"]


@pytest.mark.broker
def test_seek_assign_and_pause_drop_what_was_fetched_ahead(kafka_broker: Broker, topic: str) -> None:
    tps = [(topic, p) for p in range(PARTITIONS)]
    with _consumer(kafka_broker.bootstrap) as consumer:
        ahead = consumer._prefetch  # noqa: SLF001
        assert ahead is not None
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, 0)
        seen: dict[int, list[int]] = {}
        _read_until(consumer, 3_000, seen)
        assert len(ahead) == 1  # the next fetch is on its way
        # seek back: the next records of partition 0 start at 10, none from where the fetch ahead was.
        pos0 = consumer.position(tps[0])
        consumer.seek(tps[0], 10)
        drained = ahead.drained
        batch = consumer.poll(5_000)
        assert ahead.drained == drained + 1
        if tps[0] in batch:
            assert int(batch[tps[0]].offset[0]) == 10
        for (_t, p), cols in batch.items():
            if p:  # the others go on from their positions, without a gap or a repeat
                assert int(cols.offset[0]) == (seen[p][-1] + 1 if seen.get(p) else 0)
                seen[p] += cols.offset.tolist()
        assert pos0 > 10
        # assign a subset: records of the others stop at once.
        consumer.assign(tps[3:])
        _ = consumer.poll(5_000)
        for _ in range(5):
            assert set(consumer.poll(2_000)) <= set(tps[3:])
        # pause one: nothing of it while paused; after resume it continues where it was.
        consumer.pause([tps[4]])
        paused_at = consumer.position(tps[4])
        for _ in range(5):
            assert tps[4] not in consumer.poll(2_000)
        assert consumer.position(tps[4]) == paused_at
        consumer.resume([tps[4]])
        for _ in range(50):
            batch = consumer.poll(5_000)
            if tps[4] in batch:
                assert int(batch[tps[4]].offset[0]) == paused_at
                break
        else:
            raise AssertionError("partition 4 not read after resume")
        assert ahead.drained >= drained + 3


@pytest.mark.broker
def test_range_reader_same_records_with_and_without_prefetch(kafka_broker: Broker, topic: str) -> None:
    ranges = {(topic, p): (100 * p, PER_PARTITION - 50 * p) for p in range(PARTITIONS)}
    with Client(kafka_broker.bootstrap) as client:
        out = {}
        for prefetch in (False, True):
            got: dict[tuple[str, int], list[int]] = {}
            for s in read_ranges(client, ranges, deadline=Deadline.from_ms(60_000), max_bytes=64 << 10,
                                 partition_max_bytes=16 << 10, prefetch=prefetch):
                got.setdefault((s.topic, s.partition), []).extend(s.offsets.tolist())
            out[prefetch] = got
        assert out[True] == out[False] == {tp: list(range(lo, hi)) for tp, (lo, hi) in ranges.items()}
        # Stopping early drains the fetch ahead: the client's connections stay in step.
        reader = read_ranges(client, ranges, deadline=Deadline.from_ms(60_000), partition_max_bytes=16 << 10)
        next(reader)
        reader.close()
        assert all(c.in_flight == 0 for c in client.cluster.conns.values())
        res = client.fetch_many({(topic, 0): 5}, max_bytes=1 << 10)
        assert int(res[(topic, 0)].records.offset[0]) <= 5
    _no_prefetch_thread_left()
