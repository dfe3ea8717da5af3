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

from kafkawire.client import Client, ShareConsumer
from kafkawire.client.cluster.retry import is_retriable
from kafkawire.testing import start_broker

from .helpers import SHARE_BROKER_CONFIG, new_group, new_topic

pytestmark = [pytest.mark.broker, pytest.mark.slow]

PARTITIONS, PER_PARTITION = 3, 1_000
WAIT_S = 240


def _member(bootstrap: str, topic: str, group: str, stop: threading.Event, ledger: dict, errors: list) -> None:
    try:
        with ShareConsumer(bootstrap, group_id=group, acknowledgement_mode="explicit", max_poll_records=100) as c:
            c.subscribe([topic])
            while not stop.is_set():
                try:
                    out = c.poll(1000)
                    for tp, cols in out.items():
                        c.acknowledge(tp, cols.offset, "accept")
                    results = c.commit(timeout_ms=15_000) if out else {}
                except Exception as e:
                    if not is_retriable(e):
                        raise
                    ledger["retried"].append(repr(e))
                    continue
                for (_, p), cols in out.items():
                    recs = [(p, int(o)) for o in cols.offset]
                    ledger["delivered"].extend(recs)
                    (ledger["confirmed"] if results.get((topic, p), "none") is None else ledger["unconfirmed"]).extend(
                        recs
                    )
    except BaseException as e:
        errors.append(e)


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
            t = threading.Thread(target=_member, args=(broker.bootstrap, topic, group, stop, ledger, errors))
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
