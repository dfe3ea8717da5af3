"""Share group members ride through a SIGKILL and restart of the broker (Apache Kafka 4.4): every record is
accepted exactly once by the broker's confirmation, none is lost. The ledger is printed and asserted.

A member counts a record as accepted only when a commit (ShareAcknowledge) confirmed its partition's
acknowledgement. Acknowledgements in flight when the broker dies have no answer: their records are
"unconfirmed", and either come again (their acquisition was lost with the session) or were applied before
the kill (then they never come again). Nothing else may be missing, and nothing confirmed twice."""

from __future__ import annotations

import signal
import threading
import time
from collections import Counter

import pytest

from kafkawire.client import Client
from kafkawire.testing import start_broker

from .helpers import SHARE_BROKER_CONFIG, new_group, new_topic, resilient_member

pytestmark = [pytest.mark.broker, pytest.mark.slow]

PARTITIONS, PER_PARTITION = 3, 1_000
WAIT_S = 240


def test_members_ride_through_a_broker_sigkill_and_restart():
    broker = start_broker("kafka", config=SHARE_BROKER_CONFIG)
    stop = threading.Event()
    ledger: dict[str, list] = {"delivered": [], "confirmed": [], "unconfirmed": [], "retried": []}
    errors: list = []
    threads = []
    try:
        client = Client(broker.bootstrap, retry_timeout_ms=120_000)
        topic = new_topic(client, PARTITIONS)
        group = new_group(broker.bootstrap)
        sent = set()
        for p in range(PARTITIONS):
            res = client.produce(topic, [f"{p}-{i}".encode() for i in range(PER_PARTITION)], partition=p)
            sent.update((p, int(o)) for o in res.offset)
        client.close()
        for _ in range(2):
            t = threading.Thread(target=resilient_member, args=(broker.bootstrap, topic, group, stop, ledger, errors))
            t.start()
            threads.append(t)
        until = time.monotonic() + WAIT_S
        while len(set(ledger["confirmed"])) < len(sent) // 3 and time.monotonic() < until and not errors:
            time.sleep(0.05)
        broker.kill_process(signal.SIGKILL)
        time.sleep(3)
        broker.start()
        while set(ledger["confirmed"]) | set(ledger["unconfirmed"]) < sent and time.monotonic() < until and not errors:
            time.sleep(0.5)
        time.sleep(2)  # anything still to come again (an unconfirmed acknowledgement that was not applied)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)
        broker.stop()
    confirmed = Counter(ledger["confirmed"])
    unconfirmed = set(ledger["unconfirmed"]) - set(confirmed)
    deliveries = Counter(ledger["delivered"])
    again = {r for r, n in deliveries.items() if n > 1}
    summary = {
        "sent": len(sent),
        "confirmed": len(set(confirmed) & sent),
        "confirmed_twice": sum(n - 1 for n in confirmed.values() if n > 1),
        "unconfirmed_not_seen_again": len(unconfirmed & sent),
        "delivered_again": len(ledger["delivered"]) - len(set(ledger["delivered"])),
        "lost": len(sent - set(confirmed) - unconfirmed),
        "retried_calls": len(ledger["retried"]),
    }
    print("broker restart ledger:", summary)
    assert not errors, errors[:3]
    assert summary["lost"] == 0 and summary["confirmed_twice"] == 0, summary
    assert summary["confirmed"] + summary["unconfirmed_not_seen_again"] == len(sent), summary
    # Only what was delivered without a confirmed acceptance comes again (its acknowledgement died with the
    # broker), and only one poll per member (max_poll_records=100) can be unconfirmed by one kill.
    assert again <= set(ledger["unconfirmed"]), f"{len(again - set(ledger['unconfirmed']))} confirmed came again"
    assert summary["delivered_again"] <= len(set(ledger["unconfirmed"])), summary
    assert summary["unconfirmed_not_seen_again"] <= 2 * 100, summary
