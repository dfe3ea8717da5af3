"""A short Consumer.poll on a caught-up partition returns empty while the broker is up, even when its
answer comes after the poll's deadline.

Apache Kafka holds a Fetch on a caught-up partition for max_wait_ms (noida-db answers at once), so on a
busy machine or a slow link its answer lands after a short poll's deadline: measured here, a Fetch with
max_wait_ms=79 came back after 81-298 ms under load, and ``poll(100)`` raised KafkaTimeoutError 10 times
in 50. Kafka's Java consumer returns an empty result from ``poll(timeout)`` then and collects the answer
later. A proxy that delays every answer by 40 ms makes the case deterministic, on Kafka and on noida.
"""

from __future__ import annotations

import time

import pytest
from client_fakes import KafkaProxy

from kafkawire.client import Client, Consumer

pytestmark = pytest.mark.broker


@pytest.mark.parametrize("kind", ["kafka", "noida"])
def test_short_poll_on_a_caught_up_partition_returns_empty_over_a_slow_link(request, kind, topic_name):
    broker = request.getfixturevalue(kind)
    topic = topic_name()
    with Client(broker.bootstrap) as c:
        c.create_topics([topic])
        c.produce(topic, [b"only"], partition=0)
    host, port = broker.bootstrap.split(":")

    def slow_link(api_key: int) -> bool:
        time.sleep(0.04)  # 40 ms on every answer: a broker across a WAN link, or a busy JVM
        return False  # nothing is dropped

    with KafkaProxy(host, int(port), slow_link) as proxy:
        with Consumer(proxy.address, auto_offset_reset="earliest") as cons:
            cons.assign([(topic, 0)])
            got: list[bytes] = []
            deadline = time.monotonic() + 30
            while not got and time.monotonic() < deadline:
                got = [v for cols in cons.poll(2000).values() for v in cols.value]
            assert got == [b"only"]
            for _ in range(5):
                t0 = time.monotonic()
                assert cons.poll(100) == {}  # caught up: nothing new, the broker is alive
                # its deadline, with the deadline tests' slack (+10%, + 0.2 s) and the proxy's 40 ms delay
                assert time.monotonic() - t0 < 0.1 * 1.1 + 0.2 + 0.04
