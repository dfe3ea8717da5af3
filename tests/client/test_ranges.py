"""The bounded range reader (kafkawire.client.consumer.ranges): exact records of [start, end) whatever the log holds.

A scripted log (real encoded batches, fetches cut at a byte limit) covers gaps, partial tails, records past
the end, data that is gone and deadlines; Apache Kafka covers the same with a real broker, plus control
records and aborted transactions under read_committed (written by librdkafka's transactional producer).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import pytest

import kafkawire
from kafkawire.client import Client, KafkaTimeoutError
from kafkawire.client.consumer.ranges import LostRange, RecordsLostError, read_range, read_ranges
from kafkawire.client.net.deadline import Deadline
from kafkawire.client.types import FetchResult
from kafkawire.columns import RecordColumns
from kafkawire.protocol.errors import OffsetOutOfRangeError


@dataclass
class _Listed:
    offset: int


class ScriptedLog:
    """One partition's log as Kafka stores it (encoded batches back to back), served as a client would.

    A fetch returns the bytes from the batch holding the fetch offset, cut at ``partition_max_bytes`` but
    never inside the first batch (so the tail is usually a partial batch, as Kafka's log reads are);
    ``hidden_from`` makes offsets at and after it unreadable while the high watermark stays put (an open
    transaction under read_committed).
    """

    def __init__(self, batches: list[tuple[int, int]], log_start: int = 0, hidden_from: int | None = None) -> None:
        self.segments: list[tuple[int, int, bytes]] = []  # (first offset, last offset, bytes)
        for base, count in batches:
            data = kafkawire.encode_records([b"v%d" % (base + i) for i in range(count)], base_offset=base)
            self.segments.append((base, base + count - 1, data))
        self.log_start = log_start
        self.end = self.segments[-1][1] + 1 if self.segments else 0
        self.hidden_from = hidden_from
        self.fetches = 0

    def fetch_many(self, offsets, *, partition_max_bytes=None, max_bytes=1 << 20, isolation="", **_):
        out = {}
        for tp, off in offsets.items():
            self.fetches += 1
            if off < self.log_start or off > self.end:
                out[tp] = FetchResult(tp[0], tp[1], off, RecordColumns.empty(off), error=OffsetOutOfRangeError())
                continue
            limit = self.end if self.hidden_from is None else self.hidden_from
            held = [d for first, last, d in self.segments if last >= off and first < limit]
            data = b"".join(held)
            # at least the first whole batch (KIP-74), then cut at the byte limit wherever it falls
            data = data[: max(partition_max_bytes or max_bytes, len(held[0]) if held else 0)]
            cols = kafkawire.decode_records(data, fetch_offset=off) if data else RecordColumns.empty(off)
            out[tp] = FetchResult(tp[0], tp[1], off, cols, high_watermark=self.end, log_start_offset=self.log_start)
        return out

    def list_offsets(self, topic, partitions, *, timestamp, **_):
        return {p: _Listed(self.log_start if timestamp == "earliest" else self.end) for p in partitions}


def _offsets(slices) -> list[int]:
    return [int(o) for s in slices for o in s.offsets]


def test_gaps_partial_tails_and_records_past_the_end():
    # offsets 0-9, a compaction gap, 20-29, 30-39; fetches of 150 bytes end inside a batch
    log = ScriptedLog([(0, 10), (20, 10), (30, 10)])
    slices = list(read_range(log, "t", 0, 5, 33, deadline=Deadline(10), partition_max_bytes=150))
    assert _offsets(slices) == list(range(5, 10)) + list(range(20, 33))
    assert [v for s in slices for v in s.columns.value.to_pylist()[s.lo : s.hi]] == [
        b"v%d" % o for o in _offsets(slices)
    ]
    assert slices[-1].next_offset == 33  # the records fetched past the end are not part of the range
    assert all(len(s) > 0 for s in slices)


def test_end_beyond_the_log_is_reported_not_waited_for():
    log = ScriptedLog([(0, 10)])
    lost: list[LostRange] = []
    got = _offsets(read_range(log, "t", 0, 0, 15, deadline=Deadline(10), on_loss=lost.append))
    assert got == list(range(10))
    assert lost == [LostRange("t", 0, 10, 15, "the log ends at 10")]
    with pytest.raises(RecordsLostError, match=r"Could not read records in offset \[10, 15\) for topic partition t-0"):
        list(read_range(log, "t", 0, 0, 15, deadline=Deadline(10)))


def test_start_below_the_log_start_skips_what_is_gone():
    log = ScriptedLog([(0, 10), (10, 10)], log_start=10)
    lost: list[LostRange] = []
    got = _offsets(read_range(log, "t", 0, 3, 20, deadline=Deadline(10), on_loss=lost.append))
    assert got == list(range(10, 20))
    assert [(x.start, x.stop) for x in lost] == [(3, 10)]


def test_several_partitions_are_read_together():
    a, b = ScriptedLog([(0, 5)]), ScriptedLog([(0, 8)])

    class Both:
        def fetch_many(self, offsets, **kw):
            out = {}
            for tp, off in offsets.items():
                out.update((a if tp[1] == 0 else b).fetch_many({tp: off}, **kw))
            return out

    slices = list(read_ranges(Both(), {("t", 0): (1, 5), ("t", 1): (0, 8)}, deadline=Deadline(10)))
    by_p: dict[int, list[int]] = {}
    for s in slices:
        by_p.setdefault(s.partition, []).extend(int(o) for o in s.offsets)
    assert by_p == {0: [1, 2, 3, 4], 1: list(range(8))}


def test_a_stalled_partition_times_out_within_its_stall_timeout():
    # records below the high watermark that never become readable (an open transaction that never ends)
    log = ScriptedLog([(0, 4), (4, 6)], hidden_from=4)
    t0 = time.monotonic()
    got = []
    with pytest.raises(KafkaTimeoutError, match="no record could be fetched at offset 4 of t-0 in 300 ms"):
        for s in read_range(log, "t", 0, 0, 10, deadline=Deadline(30), stall_timeout_ms=300):
            got.extend(int(o) for o in s.offsets)
    assert got == [0, 1, 2, 3]
    assert time.monotonic() - t0 <= 0.3 * 1.1 + 0.2  # its bound plus a margin for the scripted fetches
    assert log.fetches < 60  # idle rounds back off instead of spinning


def test_the_deadline_bounds_the_whole_read():
    log = ScriptedLog([(0, 2), (2, 8)], hidden_from=2)
    t0 = time.monotonic()
    with pytest.raises(KafkaTimeoutError, match="timed out after 0.400 s with t-0 at 2"):
        list(read_range(log, "t", 0, 0, 10, deadline=Deadline(0.4)))
    assert time.monotonic() - t0 <= 0.4 * 1.1 + 0.2


# ------------------------------------------------------------------------------------- Apache Kafka


def _topic(client: Client, partitions: int = 1) -> str:
    name = f"ranges-{uuid.uuid4().hex[:8]}"
    client.create_topics([name], num_partitions=partitions)
    return name


@pytest.mark.broker
def test_kafka_control_records_and_aborted_transactions(kafka_broker):
    from confluent_kafka import Producer

    with Client(kafka_broker.bootstrap) as client:
        topic = _topic(client)
        p = Producer({"bootstrap.servers": kafka_broker.bootstrap, "transactional.id": f"tx-{topic}"})
        p.init_transactions(30)
        for txn, commit in enumerate([True, False, True]):
            p.begin_transaction()
            for i in range(10):
                p.produce(topic, value=b"%d-%d" % (txn, i), partition=0)
            p.flush(30)
            (p.commit_transaction if commit else p.abort_transaction)(30)
        # The coordinator writes the markers after EndTxn has been answered (KIP-98), so the last stable
        # offset reaches the end of the log a little after commit_transaction returns.
        deadline = Deadline(30)
        while True:
            end = client.list_offsets(topic, [0], timestamp="latest", isolation="read_committed")[0].offset
            if end >= 33 or deadline.expired():
                break
            deadline.sleep(0.05)
        assert end == 33  # 30 records and three transaction markers
        committed = [
            v
            for s in read_range(client, topic, 0, 0, end, deadline=Deadline(30), isolation="read_committed")
            for v in s.columns.value.to_pylist()[s.lo : s.hi]
        ]
        assert committed == [b"0-%d" % i for i in range(10)] + [b"2-%d" % i for i in range(10)]
        everything = [
            v
            for s in read_range(client, topic, 0, 0, end, deadline=Deadline(30))
            for v in s.columns.value.to_pylist()[s.lo : s.hi]
        ]
        assert everything == [b"%d-%d" % (t, i) for t in range(3) for i in range(10)]
        # a range that starts and ends inside the aborted transaction reads nothing, without waiting
        assert list(read_range(client, topic, 0, 13, 18, deadline=Deadline(30), isolation="read_committed")) == []


@pytest.mark.broker
def test_kafka_partial_tails_data_loss_and_end_beyond_the_log(kafka_broker):
    with Client(kafka_broker.bootstrap) as client:
        topic = _topic(client)
        _produce(kafka_broker, topic, [b"%05d" % i * 20 for i in range(2000)])
        # 3000-byte fetches end inside batches of ~10 kB: Kafka returns the first whole batch, then cut tails
        got = _offsets(read_range(client, topic, 0, 50, 1950, deadline=Deadline(60), partition_max_bytes=3000))
        assert got == list(range(50, 1950))

        _delete_records_before(kafka_broker, topic, 500)
        lost: list[LostRange] = []
        got = _offsets(read_range(client, topic, 0, 100, 2010, deadline=Deadline(60), on_loss=lost.append))
        assert got == list(range(500, 2000))
        assert [(x.start, x.stop) for x in lost] == [(100, 500), (2000, 2010)]


def _produce(broker, topic: str, values: list[bytes]) -> None:
    """Write ``values`` to partition 0 with librdkafka (batches of up to 10 kB), independent of kafkawire."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 50, "batch.size": 10_000})
    for v in values:
        p.produce(topic, value=v, partition=0)
    assert p.flush(30) == 0


def _delete_records_before(broker, topic: str, offset: int) -> None:
    """DeleteRecords through kafka-python's admin client (independent of kafkawire)."""
    from kafka import TopicPartition
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.delete_records({TopicPartition(topic, 0): offset})
    finally:
        admin.close()
