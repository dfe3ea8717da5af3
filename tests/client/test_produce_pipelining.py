"""Produce pipelining on Apache Kafka: an idempotent call keeps up to
``max_in_flight_requests_per_connection`` requests in flight per broker, and every partition's records are
still written once each, in order, at the offsets the call reports; a non-idempotent call keeps one."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kafkawire.client import Client
from kafkawire.client.net.connection import BrokerConnection
from kafkawire.protocol import ProduceRequest
from kafkawire.testing import Broker

pytestmark = pytest.mark.broker

N = 20_000


@pytest.fixture
def in_flight_at_produce(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Requests already in flight on the connection each time a Produce is sent."""
    seen: list[int] = []
    real_send = BrokerConnection.send

    def send(self: BrokerConnection, request: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(request, ProduceRequest):
            seen.append(self.in_flight)
        return real_send(self, request, *args, **kwargs)

    monkeypatch.setattr(BrokerConnection, "send", send)
    yield seen


def _read(client: Client, topic: str) -> dict[int, list[tuple[int, bytes]]]:
    out: dict[int, list[tuple[int, bytes]]] = {}
    for p, end in client.list_offsets(topic).items():
        pos = 0
        while pos < end.offset:
            cols = client.fetch(topic, p, pos, max_bytes=1 << 20)
            out.setdefault(p, []).extend(zip(cols.offset.tolist(), cols.value.to_pylist()))
            pos = int(cols.next_offset)
    return out


@pytest.mark.parametrize("in_flight", [5, 1])
def test_pipelined_produce_keeps_order_and_offsets(kafka_broker: Broker, in_flight_at_produce: list[int],
                                                   in_flight: int) -> None:
    topic = f"pipelined-{uuid.uuid4().hex[:8]}"
    values = [b"%06d" % i + b"v" * 60 for i in range(N)]
    keys = [b"k%d" % (i % 7) for i in range(N)]
    # 2 KB batches: each partition's records make dozens of batches, so the waves fill up.
    with Client(kafka_broker.bootstrap, max_batch_bytes=2048, max_in_flight_requests_per_connection=in_flight) as c:
        c.create_topics({topic: 3})
        in_flight_at_produce.clear()
        res = c.produce(topic, values, keys, acks=-1)
        assert bool(res.acknowledged.all())
        if in_flight == 5:
            assert max(in_flight_at_produce) == 4  # the fifth request went out with four in flight
            # ...but not before each partition's leader acknowledged a batch of this producer: a leader with
            # no state for a producer accepts any sequence first, so a second batch in flight could be
            # written while the first was refused (NOT_LEADER_OR_FOLLOWER on a new partition) and overtake it.
            assert in_flight_at_produce[:2] == [0, 0], in_flight_at_produce[:5]
        else:
            assert max(in_flight_at_produce) == 0
        log = _read(c, topic)
        c.delete_topics([topic])
    assert sum(len(v) for v in log.values()) == N  # once each
    by_value = {v: (p, off) for p, rows in log.items() for off, v in rows}
    for i, v in enumerate(values):
        assert by_value[v] == (int(res.partition[i]), int(res.offset[i]))  # where the call said
    for rows in log.values():
        idx = [int(v[:6]) for _, v in rows]
        assert idx == sorted(idx)  # each partition in the order the call had them


def test_in_flight_limits(kafka_broker: Broker, in_flight_at_produce: list[int]) -> None:
    with pytest.raises(ValueError, match="1-5 with idempotence"):
        Client(kafka_broker.bootstrap, max_in_flight_requests_per_connection=6)
    with pytest.raises(ValueError):
        Client(kafka_broker.bootstrap, max_in_flight_requests_per_connection=0)
    topic = f"unpipelined-{uuid.uuid4().hex[:8]}"
    # Without idempotence nothing would stop a retried batch from landing after the next one: one at a time.
    with Client(kafka_broker.bootstrap, max_batch_bytes=2048, enable_idempotence=False,
                max_in_flight_requests_per_connection=50) as c:
        c.create_topics({topic: 1})
        in_flight_at_produce.clear()
        res = c.produce(topic, [b"x" * 100] * 2_000, acks=-1)
        assert bool(res.acknowledged.all()) and len(in_flight_at_produce) > 10
        assert max(in_flight_at_produce) == 0
        c.delete_topics([topic])


def test_transactional_produce_pipelines_and_commits_every_record_once_in_order(
    kafka_broker: Broker, in_flight_at_produce: list[int]
) -> None:
    from kafkawire.client import Producer

    topic = f"pipelined-txn-{uuid.uuid4().hex[:8]}"
    values = [b"%06d" % i + b"t" * 60 for i in range(N)]
    with Client(kafka_broker.bootstrap) as admin:
        admin.create_topics({topic: 2})
    with Producer(kafka_broker.bootstrap, transactional_id=f"tid-{uuid.uuid4().hex[:8]}",
                  max_batch_bytes=2048) as producer:
        producer.init_transactions()
        in_flight_at_produce.clear()
        with producer.transaction():
            for v in values:
                producer.send(topic, v)
            producer.flush()
        assert max(in_flight_at_produce) == 4  # the transaction's batches went out five at a time
    with Client(kafka_broker.bootstrap) as c:
        until = time.monotonic() + 60
        while True:  # EndTxn answers before the markers move the last stable offset: wait for them
            committed: dict[int, list[int]] = {}
            for p, end in c.list_offsets(topic, isolation="read_committed").items():
                pos = 0
                while pos < end.offset:
                    cols = c.fetch(topic, p, pos, max_bytes=1 << 20, isolation="read_committed")
                    committed.setdefault(p, []).extend(int(v[:6]) for v in cols.value.to_pylist())
                    pos = max(int(cols.next_offset), pos + 1)
            if sum(map(len, committed.values())) >= N or time.monotonic() > until:
                break
            time.sleep(0.2)
        c.delete_topics([topic])
    assert sorted(i for rows in committed.values() for i in rows) == list(range(N))  # once each
    for rows in committed.values():
        assert rows == sorted(rows)  # each partition in the order they were sent
