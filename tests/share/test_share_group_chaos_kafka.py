"""The issue's scenario, scaled by ``KAFKAWIRE_SHARE_CHAOS_RECORDS`` (default 6,000; the issue's 1M with
``=1000000``): one share group of kafkawire members and Kafka's own KafkaShareConsumer on 3 partitions of
Apache Kafka 4.4, with a member joining, one leaving, one SIGKILLed while it holds acquired records, and
the broker SIGKILLed and restarted once. Every record is accepted exactly once by the broker's
confirmation across all members, none is lost; the ledger is printed and asserted.

A record counts as accepted when a commit confirmed its partition's acknowledgement. An acknowledgement
without an answer (the broker died under it) leaves its records "unconfirmed": applied (never seen again)
or not (they come again and are confirmed then). So are the records the killed member held: the kill may
come after its commit reached the broker."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter

import pytest

from kafkawire.client import Client
from kafkawire.testing import start_broker

from .helpers import SHARE_BROKER_CONFIG, JavaMember, new_group, new_topic, resilient_member

pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.timeout(900)]

RECORDS = int(os.environ.get("KAFKAWIRE_SHARE_CHAOS_RECORDS", "6000"))
PARTITIONS = 3
WAIT_S = 420

VICTIM = """
import json, sys, time
from kafkawire.client import ShareConsumer
c = ShareConsumer(sys.argv[1], group_id=sys.argv[3], acknowledgement_mode="explicit", max_poll_records=100)
c.subscribe([sys.argv[2]])
while True:
    out = c.poll(1000)
    if not out:
        continue
    print(json.dumps({"held": [[tp[1], int(o)] for tp, cols in out.items() for o in cols.offset]}), flush=True)
    for tp, cols in out.items():
        c.acknowledge(tp, cols.offset, "accept")
    results = c.commit(timeout_ms=15000)
    for tp, cols in out.items():
        key = "confirmed" if results.get(tp, "none") is None else "unconfirmed"
        print(json.dumps({key: [[tp[1], int(o)] for o in cols.offset]}), flush=True)
    time.sleep(0.02)
"""


class Victim:
    """A kafkawire member in a process of its own, to be SIGKILLed while it holds records."""

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", VICTIM, bootstrap, topic, group], stdout=subprocess.PIPE, text=True, env=env
        )
        self.ledger: dict[str, list] = {"confirmed": [], "unconfirmed": [], "held": []}
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                msg = json.loads(line) if line.startswith("{") else {}
            except ValueError:
                continue  # the line the SIGKILL cut short
            for key, recs in msg.items():
                self.ledger[key].extend(tuple(r) for r in recs)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.reader.join(timeout=10)


def test_share_group_through_joins_leaves_a_killed_member_and_a_broker_restart():
    broker = start_broker("kafka", config=SHARE_BROKER_CONFIG, heap="1g")
    stops = {name: threading.Event() for name in ("leaver", "stayer", "joiner")}
    ledgers = {name: {"delivered": [], "confirmed": [], "unconfirmed": [], "retried": []} for name in stops}
    errors: list = []
    threads: dict[str, threading.Thread] = {}
    java = victim = None
    events: list[str] = []

    def start(name: str) -> None:
        args = (broker.bootstrap, topic, group, stops[name], ledgers[name], errors, 0.01)
        threads[name] = threading.Thread(target=resilient_member, args=args)
        threads[name].start()
        events.append(f"{name} joined")

    def confirmed() -> set:
        out = set()
        for led in ledgers.values():
            out.update(led["confirmed"])
        out.update((p, o) for p, o, _ in list(java.accepted))
        out.update(victim.ledger["confirmed"])
        return out

    try:
        client = Client(broker.bootstrap, retry_timeout_ms=120_000)
        topic = new_topic(client, PARTITIONS)
        group = new_group(broker.bootstrap)
        java = JavaMember(broker.bootstrap, topic, group)
        assert java.ready.wait(120), "the Java share consumer did not start"
        victim = Victim(broker.bootstrap, topic, group)
        start("leaver")
        start("stayer")
        sent = set()
        chunk = max(1, RECORDS // PARTITIONS // 10)
        for i in range(0, RECORDS // PARTITIONS, chunk):
            for p in range(PARTITIONS):
                n = min(chunk, RECORDS // PARTITIONS - i)
                res = client.produce(topic, [f"{p}-{i + j}".encode() for j in range(n)], partition=p)
                sent.update((p, int(o)) for o in res.offset)
        client.close()
        until = time.monotonic() + WAIT_S
        steps = [(0.2, "join"), (0.35, "kill member"), (0.5, "leave"), (0.65, "kill broker")]
        for share, step in steps:
            while len(confirmed()) < share * len(sent) and time.monotonic() < until and not errors:
                time.sleep(0.1)
            if step == "join":
                start("joiner")
            elif step == "kill member":
                held = len(victim.ledger["held"])
                victim.kill()
                events.append(f"member SIGKILLed ({held} records delivered to it)")
            elif step == "leave":
                stops["leaver"].set()
                threads["leaver"].join(timeout=60)
                events.append("leaver left")
            else:
                broker.kill_process(signal.SIGKILL)
                time.sleep(3)
                broker.start()
                events.append("broker SIGKILLed and restarted")
        unconfirmed_all: set = set()
        while time.monotonic() < until and not errors:
            unconfirmed_all = {r for led in ledgers.values() for r in led["unconfirmed"]}
            unconfirmed_all |= {(p, o) for p, o, _ in java.unconfirmed} | set(victim.ledger["unconfirmed"])
            unconfirmed_all |= set(victim.ledger["held"])
            missing = sent - confirmed() - unconfirmed_all
            if not missing:
                break
            if int(time.monotonic()) % 10 == 0:
                by_p = Counter(p for p, _ in missing)
                print(f"waiting for {len(missing)} records {dict(by_p)} e.g. {sorted(missing)[:3]}", flush=True)
            time.sleep(0.5)
        time.sleep(2)
    finally:
        for name in stops:
            stops[name].set()
        for t in threads.values():
            t.join(timeout=60)
        if java is not None:
            java.stop()
        if victim is not None and victim.proc.poll() is None:
            victim.kill()
        broker.stop()
    counts: Counter = Counter()
    for led in ledgers.values():
        counts.update(led["confirmed"])
    counts.update((p, o) for p, o, _ in java.accepted)
    counts.update(victim.ledger["confirmed"])
    unconfirmed = {r for led in ledgers.values() for r in led["unconfirmed"]}
    unconfirmed |= {(p, o) for p, o, _ in java.unconfirmed} | set(victim.ledger["unconfirmed"])
    # What the killed member held and had not heard confirmed: the kill may have come after its commit reached
    # the broker (then those records are accepted and never come again) or before (then they come again).
    unconfirmed |= set(victim.ledger["held"])
    # A record delivered more than once must have been delivered before without a confirmed acceptance.
    deliveries = Counter(r for led in ledgers.values() for r in led["delivered"])
    deliveries.update(victim.ledger["held"])
    again = {r for r, n in deliveries.items() if n > 1}
    excused = set(unconfirmed)
    unconfirmed -= set(counts)
    ledger = {
        "sent": len(sent),
        "confirmed": len(set(counts) & sent),
        "confirmed_twice": sum(n - 1 for n in counts.values() if n > 1),
        "unconfirmed_not_seen_again": len(unconfirmed & sent),
        "delivered_again": sum(n - 1 for n in deliveries.values() if n > 1),
        "lost": len(sent - set(counts) - unconfirmed),
        "by_member": {
            **{n: len(led["confirmed"]) for n, led in ledgers.items()},
            "java": len(java.accepted),
            "killed": len(victim.ledger["confirmed"]),
        },
        "events": events,
    }
    print("share group chaos ledger:", ledger)
    assert not errors, errors[:3]
    assert ledger["lost"] == 0 and ledger["confirmed_twice"] == 0, ledger
    assert again <= excused, f"{len(again - excused)} records delivered again after a confirmed acceptance"
    # Unconfirmed (excused from "lost") can only be what one poll of each member held when the broker or the
    # member died: 100 records a poll (max_poll_records; the Java member's 50), the killed member's and one
    # poll per surviving member.
    assert ledger["unconfirmed_not_seen_again"] <= 100 * (len(ledgers) + 2), ledger
    assert len(events) == 6, events
