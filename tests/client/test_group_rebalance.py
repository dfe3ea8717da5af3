"""After a rebalance every kept or gained partition restarts from its committed offset (issue 12, item 3).

An application that processes a batch and then commits it treats a :class:`CommitFailedError` as "this
batch was not processed" (it rolls its own side back, as a transactional sink does). That is only safe
if the consumer, once it has rejoined, delivers those records again: the Java consumer does, because
after a rebalance it fetches every partition from the group's committed offset. These tests count with
the fault ledger that everything acknowledged is processed exactly once it was committed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from faults.ledger import Ledger

from kafkawire.client import Client, Consumer
from kafkawire.client.consumer.consumer import CommitFailedError
from kafkawire.testing import Broker, MockCluster, start_broker

pytestmark = pytest.mark.broker

OFFSET_COMMIT = 8
ILLEGAL_GENERATION = 22
# librdkafka's mock closes the connection on JoinGroup v6 and underflows on SyncGroup v4: a group forms
# there only with JoinGroup <= v5 and SyncGroup <= v3.
MOCK_CAPS = {11: 5, 14: 3}


@pytest.fixture(scope="module")
def kafka() -> Iterator[Broker]:
    """Apache Kafka, allowing session timeouts down to 1 s so a stalled member expires quickly."""
    broker = start_broker("kafka", config={"group.min.session.timeout.ms": 1000})
    yield broker
    broker.stop()


def _produce_batches(bootstrap: str, topic: str, ledger: Ledger, batches: int, per_batch: int, **opts: object) -> None:
    """``batches`` produce calls (one record batch each) round-robin over partitions 0 and 1."""
    with Client(bootstrap, **opts) as c:
        for i in range(batches):
            values = ledger.make(per_batch)
            c.produce(topic, values, partition=i % 2)
            ledger.acknowledged(values)


def _process_and_commit(cons: Consumer, ledger: Ledger, lose_membership: Callable[[], None], timeout: float) -> int:
    """Poll; "process" each batch by committing it and, only when the commit succeeded, counting it as read.

    Before the third batch's commit ``lose_membership()`` runs, so that commit fails: the batch is then
    dropped (rolled back) and must come again after the member rejoined. Returns the commit failures.
    """
    failures = batches = 0
    generation = -1
    deadline = time.monotonic() + timeout
    while ledger.lost_values() and time.monotonic() < deadline:
        got = cons.poll(500)
        values = [v for cols in got.values() for v in cols.value]
        if not values:
            continue
        batches += 1
        if batches == 3:
            generation = cons.generation
            lose_membership()
        try:
            cons.commit()
        except CommitFailedError:
            failures += 1
            continue  # rolled back: these records count as not processed
        ledger.read(values)
    assert cons.generation != generation or failures == 0
    return failures


def _group_consumer(bootstrap: str, group: str, topic: str, **opts) -> Consumer:
    cons = Consumer(
        bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        # One record batch per partition per fetch: the records arrive over many polls.
        partition_max_bytes=1,
        **opts,
    )
    cons.subscribe([topic])
    return cons


def test_stalled_member_rejoins_and_resumes_at_the_committed_offset_on_kafka(kafka, topic_name):
    # The real thing: the member stops polling past max_poll_interval_ms, its heartbeat thread leaves the
    # group (KIP-62), its next commit is refused, it rejoins under a new id and gets both partitions back.
    # Before the fix it went on from where poll() had got to, and the batch whose commit failed was never
    # delivered again.
    topic, group = topic_name(), topic_name("g")
    ledger = Ledger("stall")
    with Client(kafka.bootstrap) as c:
        c.create_topics({topic: 2})
    _produce_batches(kafka.bootstrap, topic, ledger, batches=12, per_batch=25)
    cons = _group_consumer(
        kafka.bootstrap,
        group,
        topic,
        session_timeout_ms=1500,
        heartbeat_interval_ms=300,
        max_poll_interval_ms=2000,
        rebalance_timeout_ms=3000,
    )
    try:
        failures = _process_and_commit(cons, ledger, lambda: time.sleep(3.0), timeout=60)
        assert sorted(cons.assignment()) == [(topic, 0), (topic, 1)]  # it kept both partitions
    finally:
        cons.close()
    report = ledger.report()
    print(report)
    assert failures >= 1
    assert report.lost == 0 and report.unexpected == 0


def test_refused_commit_rejoins_and_resumes_at_the_committed_offset_on_the_mock(broker_factory, topic_name):
    # librdkafka's mock does not expire members here quickly; the coordinator's refusal is injected
    # instead: the next OffsetCommit is answered ILLEGAL_GENERATION, as after a rebalance the member
    # missed. The member rejoins under its id and keeps both partitions.
    mock = broker_factory("mock")
    assert isinstance(mock, MockCluster)
    topic, group = topic_name(), topic_name("g")
    ledger = Ledger("refused")
    mock.create_topic(topic, 2)
    _produce_batches(mock.bootstrap, topic, ledger, batches=12, per_batch=25)
    cons = _group_consumer(mock.bootstrap, group, topic, session_timeout_ms=6000, api_version_caps=MOCK_CAPS)
    try:
        failures = _process_and_commit(
            cons, ledger, lambda: mock.push_request_errors(OFFSET_COMMIT, [ILLEGAL_GENERATION]), timeout=60
        )
        assert sorted(cons.assignment()) == [(topic, 0), (topic, 1)]
    finally:
        cons.close()
    report = ledger.report()
    print(report)
    assert failures == 1
    assert report.lost == 0 and report.unexpected == 0
