"""The share consumer's bookkeeping without a broker: acquired-record filtering, acknowledgement batches,
share session epochs and requests, argument checks."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import numpy as np
import pytest

from kafkawire import encode_records
from kafkawire.client import ShareConsumer, ShareStateError
from kafkawire.client.share.acknowledgements import ACCEPT, GAP, REJECT, RELEASE, Acknowledgements, to_batches
from kafkawire.client.share.records import acquired_columns
from kafkawire.client.share.session import CLOSE_EPOCH, ShareSession, next_epoch
from kafkawire.protocol import ShareAcknowledgeRequest, ShareFetchRequest
from kafkawire.records import decode_records

TP = ("t", 0)


def _acq(first: int, last: int, count: int) -> SimpleNamespace:
    return SimpleNamespace(first_offset=first, last_offset=last, delivery_count=count)


def _cols(n: int, base: int = 0):
    batch = encode_records(
        [f"v{i}".encode() for i in range(n)], keys=[f"k{i}".encode() for i in range(n)], base_offset=base
    )
    return decode_records(batch)


def test_only_acquired_records_are_delivered_with_their_delivery_count():
    cols = _cols(10)
    out, gaps = acquired_columns(cols, [_acq(2, 4, 1), _acq(7, 8, 3)])
    assert out.offset.tolist() == [2, 3, 4, 7, 8]
    assert out.delivery_count.tolist() == [1, 1, 1, 3, 3]
    assert out.value.to_pylist() == [b"v2", b"v3", b"v4", b"v7", b"v8"]
    assert out.key.to_pylist() == [b"k2", b"k3", b"k4", b"k7", b"k8"]
    assert len(out.header_offsets) == 6 and gaps.tolist() == []


def test_all_acquired_keeps_the_columns_and_gaps_are_the_offsets_without_a_record():
    cols = _cols(5, base=10)
    out, gaps = acquired_columns(cols, [_acq(10, 16, 2)])
    assert out.offset.tolist() == [10, 11, 12, 13, 14] and out.value is cols.value  # no copy
    assert out.delivery_count.tolist() == [2] * 5
    assert gaps.tolist() == [15, 16]


def test_hostile_ranges_deliver_nothing_twice():
    cols = _cols(6)
    out, _ = acquired_columns(cols, [_acq(3, 1, 1), _acq(0, 2, 1), _acq(1, 3, 4), _acq(-5, -1, 1)])
    assert out.offset.tolist() == [0, 1, 2, 3]
    assert out.delivery_count.tolist() == [1, 4, 4, 4]  # later range wins from its start; each record once


def test_batches_are_runs_of_consecutive_offsets_of_one_type():
    offsets = np.array([1, 2, 3, 5, 6, 7, 8], np.int64)
    types = np.array([ACCEPT, ACCEPT, RELEASE, RELEASE, RELEASE, REJECT, REJECT], np.int8)
    assert to_batches(offsets, types) == [(1, 2, ACCEPT), (3, 3, RELEASE), (5, 6, RELEASE), (7, 8, REJECT)]
    assert to_batches(np.zeros(0, np.int64), np.zeros(0, np.int8)) == []


def test_acknowledgements_go_pending_per_broker_with_gaps():
    acks = Acknowledgements()
    acks.delivered(TP, 1, np.arange(0, 5, dtype=np.int64), np.array([5], np.int64))
    acks.acknowledge(TP, [0, 1], ACCEPT)
    acks.acknowledge(TP, np.array([4]), REJECT)
    assert acks.unacknowledged() == 2
    with pytest.raises(ValueError, match=r"offsets \[9\]"):
        acks.acknowledge(TP, [9], ACCEPT)
    with pytest.raises(ValueError, match="already"):
        acks.acknowledge(TP, [0], RELEASE)
    with pytest.raises(TypeError):
        acks.acknowledge(TP, ["1"], ACCEPT)
    with pytest.raises(TypeError):
        acks.acknowledge(TP, np.array([1.0]), ACCEPT)
    with pytest.raises(TypeError):
        acks.acknowledge(TP, 3, ACCEPT)  # type: ignore[arg-type]
    acks.flush()
    assert acks.unacknowledged() == 2
    acks.acknowledge_all(RELEASE)
    acks.flush()
    assert acks.in_flight == {}
    assert acks.take() == {1: {TP: [(0, 1, ACCEPT), (2, 3, RELEASE), (4, 4, REJECT), (5, 5, GAP)]}}
    assert not acks.has_pending()


def test_session_epochs_and_incremental_requests():
    tid = uuid.uuid4()
    ids = {"t": tid}
    s = ShareSession(node=1)
    req = s.fetch_request(
        "g", "m", {("t", 0), ("t", 1)}, {}, ids, max_wait_ms=10, max_bytes=1, max_records=5, batch_size=5
    )
    assert req.share_session_epoch == 0 and [p.partition_index for p in req.topics[0].partitions] == [0, 1]
    with pytest.raises(ValueError):  # opening a session cannot carry acknowledgements
        s.fetch_request(
            "g",
            "m",
            {("t", 0)},
            {("t", 0): [(0, 1, ACCEPT)]},
            ids,
            max_wait_ms=1,
            max_bytes=1,
            max_records=1,
            batch_size=1,
        )
    s.answered({("t", 0), ("t", 1)})
    req = s.fetch_request(
        "g",
        "m",
        {("t", 0)},
        {("t", 0): [(0, 3, ACCEPT)]},
        ids,
        max_wait_ms=10,
        max_bytes=1,
        max_records=5,
        batch_size=5,
    )
    assert req.share_session_epoch == 1
    (part,) = req.topics[0].partitions  # only the partition with acknowledgements is named again
    assert part.acknowledgement_batches[0].acknowledge_types == [ACCEPT]
    assert req.forgotten_topics_data[0].partitions == [1]
    body = req.encode_body(ShareFetchRequest.MAX_VERSION)
    assert ShareFetchRequest.decode(body, ShareFetchRequest.MAX_VERSION).share_session_epoch == 1
    ack = s.acknowledge_request("g", "m", {("t", 0): [(4, 4, REJECT)]}, ids, close=True)
    assert isinstance(ack, ShareAcknowledgeRequest) and ack.share_session_epoch == CLOSE_EPOCH
    assert next_epoch(2**31 - 1) == 1 and next_epoch(0) == 1
    s.reset()
    assert s.epoch == 0 and s.partitions == set()


def test_argument_checks_without_a_broker():
    with pytest.raises(ValueError, match="acknowledgement_mode"):
        ShareConsumer("127.0.0.1:1", group_id="g", acknowledgement_mode="auto")
    with pytest.raises(TypeError):
        ShareConsumer("127.0.0.1:1", group_id=None)  # type: ignore[arg-type]
    c = ShareConsumer("127.0.0.1:1", group_id="g", acknowledgement_mode="explicit")
    try:
        with pytest.raises(TypeError):
            c.acknowledge("t", [1])  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            c.acknowledge(TP, [1], 1)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="type"):
            c.acknowledge(TP, [1], "renew")
        with pytest.raises(ValueError, match="in flight"):
            c.acknowledge(TP, [1], "accept")
        with pytest.raises(ShareStateError, match="subscribe"):
            c.poll(10)
        with pytest.raises(TypeError):
            c.subscribe([1])  # type: ignore[list-item]
    finally:
        c.close(timeout_ms=100)
    with pytest.raises(ShareStateError, match="closed"):
        c.poll(10)


def test_from_properties_takes_java_names():
    c = ShareConsumer.from_properties(
        {
            "bootstrap.servers": "127.0.0.1:1",
            "group.id": "g",
            "share.acknowledgement.mode": "explicit",
            "max.poll.records": "7",
            "client.id": "me",
            "key.deserializer": "x",
        }
    )
    try:
        assert c.acknowledgement_mode == "explicit" and c.group_id == "g"
        assert c._fetcher.max_records == 7
    finally:
        c.close(timeout_ms=100)
