"""Fetching from the nearest replica (KIP-392, ``client_rack``) on a 3-broker Apache Kafka 4.4 cluster with
``broker.rack`` per broker and ``RackAwareReplicaSelector`` (issue 22).

The client counts what each broker's Fetch answers carried (``metrics()["fetch_by_node"]``): with the
rack of a follower, that follower serves every record; stopping it sends the reads back to the leader, with
nothing lost or read twice (the ledger counts). The range reader (Spark's and the CLI's) goes the same way.
"""

from __future__ import annotations

import time

import pytest
from faults.ledger import Ledger
from kafka_cluster import kafka_cluster

from kafkawire.client import Client, Consumer, NewTopic
from kafkawire.client.consumer.ranges import read_range

pytestmark = [pytest.mark.broker, pytest.mark.slow]

RACK_AWARE = {
    "replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector",
    # A stopped follower leaves the ISR after 5 s (not 30), so acks=all writes and the high watermark go on.
    "replica.lag.time.max.ms": 5000,
}


def _read(cons: Consumer, ledger: Ledger, want: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    got = 0
    while got < want:
        assert time.monotonic() < deadline, f"read {got} of {want}"
        for cols in cons.poll(500).values():
            ledger.read(cols.value)
            got += len(cols)


def _records_by_node(client: Client) -> dict[int, int]:
    return {node: c["records"] for node, c in client.metrics()["fetch_by_node"].items()}


def test_consumer_fetches_from_the_same_rack_follower_and_falls_back_to_the_leader(topic_name):
    racks = {n: {"broker.rack": f"rack-{n}"} for n in (1, 2, 3)}
    with kafka_cluster(3, RACK_AWARE, node_config=racks) as nodes:
        bootstrap = nodes[0].bootstrap
        topic = topic_name()
        ledger = Ledger("rack")
        with Client(bootstrap, retry_timeout_ms=120_000) as c:
            c.create_topics([NewTopic(topic, 1, 3)])
            leader = c.metadata([topic]).topics[topic].partitions[0].leader
            # The follower in "our" rack: not the leader, and not node 1 (the controller, never stopped).
            near = min({2, 3} - {leader})
            for _ in range(5):
                values = ledger.make(100)
                c.produce(topic, values, partition=0)
                ledger.acknowledged(values)

        cons = Consumer(bootstrap, auto_offset_reset="earliest", client_rack=f"rack-{near}", max_wait_ms=200)
        cons.assign([(topic, 0)])
        try:
            _read(cons, ledger, 500)
            before = _records_by_node(cons.client)
            print("records fetched per broker, follower up:", before, "leader", leader, "near", near)
            # The same-rack follower served every record; the leader only named it (no records).
            assert before.get(near) == 500 and before.get(leader, 0) == 0
            assert cons.client.cluster.read_replicas.preferred() == {(topic, 0): near}

            # Range reader, same client settings: it follows the preferred replica too.
            with Client(bootstrap, client_rack=f"rack-{near}") as rc:
                rows = sum(len(s) for s in read_range(rc, topic, 0, 0, 500, deadline=rc.deadline(60_000)))
                assert rows == 500
                assert _records_by_node(rc).get(near) == 500 and _records_by_node(rc).get(leader, 0) == 0

            nodes[near - 1].stop()
            with Client(bootstrap, retry_timeout_ms=120_000) as c:
                for _ in range(5):
                    values = ledger.make(100)
                    c.produce(topic, values, partition=0)
                    ledger.acknowledged(values)
            _read(cons, ledger, 500)
            after = _records_by_node(cons.client)
            print("records fetched per broker, follower stopped:", after)
            assert after.get(near) == 500  # nothing more from the stopped follower
            assert after.get(leader, 0) == 500  # the leader served the rest
        finally:
            cons.close()
        report = ledger.report()
        print(report)
        assert report.lost == 0 and report.duplicated == 0 and report.unexpected == 0
