"""End to end: unmodified kafka-python and aiokafka consumers against a real broker, drop-in on and off.

Every test runs against Apache Kafka (the session's ``kafka_broker``) and against a noida-db broker of the
module's own (noida supports idempotence, transactions and read_committed). Data is
produced with kafka-python's own ``KafkaProducer``; each scenario is consumed twice, without and with
the drop-in installed, and the ConsumerRecords must be identical field for field (and equal to what was
produced). A counter on :meth:`FetchColumns.build` proves the drop-in really decoded the fetches.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

from kafkawire.compat import _fast
from kafkawire.compat import aiokafka as kw_aiokafka
from kafkawire.compat import kafka_python as kw_kafka_python
from kafkawire.testing import start_broker

pytestmark = pytest.mark.broker

CODECS = [None, "gzip", "snappy", "lz4", "zstd"]
N = 600  # records per topic: several fetches' worth of batches with small linger


def _payload(i: int) -> tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]:
    key = None if i % 4 == 0 else b"key-%d" % (i % 50)
    # Null values (tombstones) need a key with kafka-python's producer; it also rejects null header values.
    value = None if i % 20 == 5 else (b"" if i % 31 == 0 else b"value-%d-" % i * (1 + i % 9))
    headers = [] if i % 3 else [("trace-id", b"%08d" % i), ("h\u00e9", b""), ("trace-id", b"x")]
    return key, value, headers


@pytest.fixture(scope="module", params=["kafka", "noida"])
def broker(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "kafka":
        yield request.getfixturevalue("kafka_broker")  # shared by the session
        return
    b = start_broker(kind=request.param)
    try:
        yield b
    finally:
        b.stop()


@pytest.fixture(scope="module")
def run_id() -> str:
    """A suffix that keeps this module's topics and transactional ids apart on the shared Kafka broker."""
    return uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def txn_topic(broker: Any, run_id: str) -> str:
    return f"dropin-txn-{run_id}"


@pytest.fixture(scope="module")
def topics(broker: Any, run_id: str, txn_topic: str) -> dict[str, str]:
    """One topic per codec (2 partitions), filled by kafka-python's producer."""
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    names = {str(c): f"dropin-{c or 'none'}-{run_id}" for c in CODECS}
    admin.create_topics([NewTopic(n, 2, 1) for n in names.values()] + [NewTopic(txn_topic, 1, 1)])
    admin.close()
    for codec in CODECS:
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap, compression_type=codec, linger_ms=2)
        for i in range(N):
            key, value, headers = _payload(i)
            producer.send(names[str(codec)], key=key, value=value, headers=headers or None, partition=i % 2)
            if i % 150 == 0:
                producer.flush()  # vary batch sizes: some tiny batches, some full ones
        producer.flush()
        producer.close()
    return names


@pytest.fixture
def build_counter(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    original = _fast.FetchColumns.build.__func__  # type: ignore[attr-defined]

    def counting(cls: type, *args: Any, **kwargs: Any) -> Any:
        result = original(cls, *args, **kwargs)
        calls[0] += result is not None
        return result

    monkeypatch.setattr(_fast.FetchColumns, "build", classmethod(counting))
    return calls


def _consume_kafka_python(bootstrap: str, topic: str, expected: int, **config: Any) -> list[Any]:
    consumer = KafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False, **config
    )
    records: list[Any] = []
    deadline = time.monotonic() + 60
    while len(records) < expected and time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=500).values():
            records.extend(batch)
    while extra := [r for batch in consumer.poll(timeout_ms=300).values() for r in batch]:
        records.extend(extra)  # anything beyond what was expected shows up in the comparisons
    consumer.close()
    return sorted(records, key=lambda r: (r.partition, r.offset))


def _with_and_without(run: Callable[[], list[Any]], adapter: Any) -> tuple[list[Any], list[Any]]:
    adapter.uninstall()
    plain = run()
    adapter.install()
    try:
        assert adapter.is_installed()
        if hasattr(adapter, "fetcher_fast_path_installed"):
            assert adapter.fetcher_fast_path_installed()  # kafka-python 3.0.x: the fetcher loop too
        dropped_in = run()
    finally:
        adapter.uninstall()
    return plain, dropped_in


@pytest.mark.parametrize("codec", CODECS, ids=[str(c) for c in CODECS])
def test_kafka_python_consumer_records_identical(
    broker: Any, topics: dict[str, str], codec: str | None, build_counter: list[int]
) -> None:
    topic = topics[str(codec)]
    plain, dropped_in = _with_and_without(lambda: _consume_kafka_python(broker.bootstrap, topic, N), kw_kafka_python)
    assert build_counter[0] > 0  # the drop-in decoded the fetches
    assert len(plain) == N
    assert dropped_in == plain
    # And both are what was produced (guards against both sides being wrong the same way).
    by_index = {(r.partition, r.offset): r for r in plain}
    for i in range(N):
        key, value, headers = _payload(i)
        r = by_index[(i % 2, i // 2)]
        assert (r.key, r.value, r.headers) == (key, value, headers)


def test_kafka_python_deserializers_and_max_poll_records(broker: Any, topics: dict[str, str]) -> None:
    def run() -> list[Any]:
        return _consume_kafka_python(
            broker.bootstrap,
            topics["lz4"],
            N,
            key_deserializer=lambda b: None if b is None else b.decode(),
            value_deserializer=lambda b: None if b is None else len(b),
            max_poll_records=7,
        )

    plain, dropped_in = _with_and_without(run, kw_kafka_python)
    assert len(plain) == N and dropped_in == plain


def test_kafka_python_group_commit(broker: Any, topics: dict[str, str], run_id: str) -> None:
    """Consume part, commit, close; a new member of the group resumes at the committed offsets."""

    def run_group(group: str) -> list[Any]:
        tps = [TopicPartition(topics["gzip"], p) for p in (0, 1)]
        first = KafkaConsumer(
            topics["gzip"], bootstrap_servers=broker.bootstrap, group_id=group,
            auto_offset_reset="earliest", enable_auto_commit=False, max_poll_records=100,
        )  # fmt: skip
        part: list[Any] = []
        deadline = time.monotonic() + 60
        while len(part) < 250 and time.monotonic() < deadline:
            for batch in first.poll(timeout_ms=500).values():
                part.extend(batch)
        first.commit()
        committed = {tp.partition: first.committed(tp) for tp in tps}
        first.close()
        second = KafkaConsumer(
            topics["gzip"], bootstrap_servers=broker.bootstrap, group_id=group,
            auto_offset_reset="earliest", enable_auto_commit=False,
        )  # fmt: skip
        rest: list[Any] = []
        deadline = time.monotonic() + 60
        while len(part) + len(rest) < N and time.monotonic() < deadline:
            for batch in second.poll(timeout_ms=500).values():
                rest.extend(batch)
        second.close()
        # Positions, not which records happened to be in the first polls (that depends on timing).
        resumed = {p: min((r.offset for r in rest if r.partition == p), default=None) for p in (0, 1)}
        assert all(resumed[p] is None or resumed[p] == committed[p] for p in (0, 1))
        return sorted(part + rest, key=lambda r: (r.partition, r.offset))

    kw_kafka_python.uninstall()
    plain = run_group(f"group-plain-{run_id}")
    with kw_kafka_python.installed():
        dropped_in = run_group(f"group-dropin-{run_id}")
    assert len(plain) == N and dropped_in == plain


@pytest.fixture(scope="module")
def transactions(broker: Any, topics: dict[str, str], txn_topic: str, run_id: str) -> dict[str, list[bytes]]:
    """Committed, aborted and plain writes interleaved on one partition.

    Returns the values in log order: ``"committed"`` (what read_committed shows: committed transactions and
    plain writes) and ``"all"`` (committed, aborted and plain: what read_uncommitted shows on Kafka).
    """
    producer = KafkaProducer(
        bootstrap_servers=broker.bootstrap, transactional_id=f"dropin-tx-{run_id}", linger_ms=1
    )
    plain = KafkaProducer(bootstrap_servers=broker.bootstrap)
    producer.init_transactions()
    committed: list[bytes] = []
    everything: list[bytes] = []
    for round_ in range(6):
        producer.begin_transaction()
        values = [b"txn-%d-%d" % (round_, i) for i in range(20)]
        for v in values:
            producer.send(txn_topic, value=v, headers=[("round", b"%d" % round_)])
        # Flushed before the abort: kafka-python fails records still unsent at abort_transaction() instead of
        # writing them, and read_uncommitted readers should find the aborted ones in the log (as Kafka keeps
        # them, with the abort marker). Without this flush they were never written, which once looked like
        # noida-db hiding aborted records from read_uncommitted readers (it does not).
        producer.flush()
        if round_ % 3 == 1:
            producer.abort_transaction()
        else:
            producer.commit_transaction()
            committed.extend(values)
        everything.extend(values)
        v = b"plain-%d" % round_
        plain.send(txn_topic, value=v).get(timeout=30)
        committed.append(v)
        everything.append(v)
    producer.close()
    plain.close()
    return {"committed": committed, "all": everything}


@pytest.mark.parametrize("isolation", ["read_committed", "read_uncommitted"])
def test_kafka_python_transactions(
    broker: Any, transactions: dict[str, list[bytes]], txn_topic: str, isolation: str
) -> None:
    expected = transactions["committed" if isolation == "read_committed" else "all"]

    def run() -> list[Any]:
        return _consume_kafka_python(broker.bootstrap, txn_topic, len(expected), isolation_level=isolation)

    plain, dropped_in = _with_and_without(run, kw_kafka_python)
    assert dropped_in == plain
    values = [r.value for r in plain]
    # Log order: aborted records (read_uncommitted) interleaved where they were written, markers hidden.
    assert values == expected


# ---------------------------------------------------------------------------------------- aiokafka


def _consume_aiokafka(bootstrap: str, topic: str, expected: int, **config: Any) -> list[Any]:
    from aiokafka import AIOKafkaConsumer

    async def run() -> list[Any]:
        consumer = AIOKafkaConsumer(
            topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False, **config
        )
        await consumer.start()
        records: list[Any] = []
        try:
            deadline = time.monotonic() + 60
            while len(records) < expected and time.monotonic() < deadline:
                for batch in (await consumer.getmany(timeout_ms=500)).values():
                    records.extend(batch)
        finally:
            await consumer.stop()
        return sorted(records, key=lambda r: (r.partition, r.offset))

    return asyncio.run(run())


@pytest.mark.parametrize("codec", CODECS, ids=[str(c) for c in CODECS])
def test_aiokafka_consumer_records_identical(
    broker: Any, topics: dict[str, str], codec: str | None, build_counter: list[int]
) -> None:
    topic = topics[str(codec)]
    plain, dropped_in = _with_and_without(lambda: _consume_aiokafka(broker.bootstrap, topic, N), kw_aiokafka)
    assert build_counter[0] > 0
    assert len(plain) == N and dropped_in == plain
    by_index = {(r.partition, r.offset): r for r in plain}
    for i in range(N):
        key, value, headers = _payload(i)
        r = by_index[(i % 2, i // 2)]
        assert (r.key, r.value, list(r.headers)) == (key, value, headers)


@pytest.mark.parametrize("isolation", ["read_committed", "read_uncommitted"])
def test_aiokafka_transactions(
    broker: Any, transactions: dict[str, list[bytes]], txn_topic: str, isolation: str
) -> None:
    expected = transactions["committed" if isolation == "read_committed" else "all"]

    def run() -> list[Any]:
        return _consume_aiokafka(broker.bootstrap, txn_topic, len(expected), isolation_level=isolation)

    plain, dropped_in = _with_and_without(run, kw_aiokafka)
    assert dropped_in == plain
    values = [r.value for r in plain]
    assert values == expected  # in log order; control records never leak out
