"""A share group through a hung broker (issue 34): Apache Kafka SIGSTOPped while a ShareConsumer polls with
short timeouts. Every ShareFetch sent during the pause is cut by its poll's deadline; its answer must be read
by a later poll (not given up with its connection, which left what the fetch acquired locked until the lock
expired and raised its delivery count: with ``group.share.delivery.count.limit`` reached, archived, lost).

Counted and asserted: sent / delivered / delivered again / lost (archived or never delivered), every record's
delivery count (1), every poll's and the commit's time against its deadline, polls that raised (0) and polls
during which no broker answered (> 0: the pause was felt).
"""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from kafkawire.client import Client, ShareConsumer
from kafkawire.testing import start_broker

from .helpers import new_group, new_topic

pytestmark = [pytest.mark.broker, pytest.mark.slow]

PARTITIONS, PER_PARTITION = 3, 400
POLL_MS = 200
PAUSE_S = 8.0  # within the acquisition lock (30 s here): a lock may not expire while the broker is frozen
#: A second delivery of any record would show in its count; two cut fetches of it would archive it.
CONFIG = {"group.share.delivery.count.limit": "2"}


def within(elapsed: float, timeout_ms: float) -> bool:
    return elapsed <= timeout_ms / 1000 * 1.1 + 0.3


def test_short_polls_through_a_paused_broker_deliver_every_record_once():
    broker = start_broker("kafka", config=CONFIG)
    try:
        client = Client(broker.bootstrap)
        topic = new_topic(client, PARTITIONS, prefix="hung")
        group = new_group(broker.bootstrap)
        sent = set()
        for p in range(PARTITIONS):
            res = client.produce(topic, [f"{p}-{i}".encode() for i in range(PER_PARTITION)], partition=p)
            sent.update((p, int(o)) for o in res.offset)
        client.close()
        counts: Counter = Counter()
        delivery: dict[tuple[int, int], int] = {}
        overruns: list[str] = []
        raised = polls = 0
        pause = threading.Thread(target=lambda: (broker.pause(), time.sleep(PAUSE_S), broker.resume()))
        # Acknowledgements the broker refused, as the consumer reports them (its callback): a record of such a
        # partition may come again, said so; any other second delivery is a fault of the client.
        refused: set[int] = set()

        def on_acks(results: dict) -> None:
            refused.update(tp[1] for tp, err in results.items() if err is not None)

        with ShareConsumer(
            broker.bootstrap, group_id=group, max_poll_records=50, acknowledgement_commit_callback=on_acks
        ) as member:
            member.subscribe([topic])
            until = time.monotonic() + 120
            while set(counts) != sent and time.monotonic() < until:
                start = time.monotonic()
                try:
                    got = member.poll(POLL_MS)
                except Exception as e:  # noqa: BLE001 - counted and asserted: poll must not raise here
                    raised += 1
                    print(f"poll raised {type(e).__name__}: {e}")
                    got = {}
                polls += 1
                if not within(time.monotonic() - start, POLL_MS):
                    overruns.append(f"poll({POLL_MS}) took {time.monotonic() - start:.3f} s")
                for (_, p), cols in got.items():
                    counts.update((p, int(o)) for o in cols.offset)
                    delivery.update({(p, int(o)): int(d) for o, d in zip(cols.offset, cols.delivery_count)})
                if len(counts) >= 100 and pause.ident is None:
                    pause.start()  # once, with records delivered and more to come
            if pause.ident is not None:
                pause.join()
            start = time.monotonic()
            results = member.commit(timeout_ms=10_000)
            if not within(time.monotonic() - start, 10_000):
                overruns.append(f"commit(10000) took {time.monotonic() - start:.3f} s")
            unanswered = member.metrics()["polls_unanswered"]
            ack_failures = member.metrics()["acknowledgement_failures"]
        ledger = {
            "sent": len(sent),
            "delivered": len(set(counts) & sent),
            "delivered_again": sum(n - 1 for n in counts.values() if n > 1),
            "again_unannounced": sum(n - 1 for (p, _), n in counts.items() if n > 1 and p not in refused),
            "most_deliveries": max(counts.values(), default=0),
            "refused_partitions": sorted(refused),
            "ack_failures": ack_failures,
            "count_above_1": sum(1 for d in delivery.values() if d > 1),
            "lost": len(sent - set(counts)),
            "polls": polls,
            "polls_unanswered": unanswered,
            "raised": raised,
        }
        print("hung share broker ledger:", ledger)
        assert pause.ident is not None, "the pause never started"
        assert ledger["lost"] == 0 and ledger["delivered"] == len(sent), ledger
        # No cut fetch left a record locked: the broker never counted a second delivery of any record.
        assert ledger["count_above_1"] == 0, ledger
        # Nothing delivered twice without saying so. Seen once in a full suite run on Kafka 4.4: after SIGCONT
        # the broker refused the acknowledgement of one partition (UNKNOWN_TOPIC_OR_PARTITION, "does not host
        # this topic-partition") and delivered its 400 records again with delivery count 1 (its share state
        # for the partition re-read); the consumer reported that refusal through the callback and metrics.
        assert ledger["again_unannounced"] == 0 and ledger["most_deliveries"] <= 2, ledger
        assert ledger["delivered_again"] == 0 or ack_failures >= 1, ledger
        assert all(err is None for err in results.values()), results
        assert raised == 0 and not overruns, (raised, overruns)
        assert unanswered >= 1, ledger  # the polls felt the pause (and counted it)
    finally:
        broker.stop()
