"""A consume-transform-produce worker for the transaction fault test (run as a separate process).

``python txn_worker.py BOOTSTRAP SOURCE SINK GROUP TRANSACTIONAL_ID PAUSE_MS``

Reads SOURCE as a member of GROUP (read_committed, no auto-commit), and for every poll writes each
record's value to SINK and the consumer's positions to the group in one transaction
(``send_offsets_to_transaction``). Between sending and committing it prints
``{"event": "in-txn", ...}`` and waits PAUSE_MS, the window in which the test kills it. Exits after
committing everything up to SOURCE's end offsets as they were at start, printing ``{"event": "finished"}``.
"""

from __future__ import annotations

import json
import sys
import time

from kafkawire.client import Client, Consumer, Producer
from kafkawire.client.producer.transaction import TransactionState


def say(**event: object) -> None:
    print(json.dumps(event), flush=True)


def main() -> None:
    bootstrap, source, sink, group, tid, pause_ms = sys.argv[1:7]
    with Client(bootstrap) as c:
        ends = {(source, p): lo.offset for p, lo in c.list_offsets(source).items()}
    producer = Producer(bootstrap, transactional_id=tid, linger_ms=60_000)
    # First: fence an earlier instance and complete its open transaction, so the offsets the group
    # reads next are the ones the last *committed* transaction left.
    producer.init_transactions(timeout_ms=60_000)
    consumer = Consumer(
        bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        isolation="read_committed",
        session_timeout_ms=6_000,
        heartbeat_interval_ms=1_000,
        partition_max_bytes=1,  # one batch per partition and poll: many small transactions
    )
    consumer.subscribe([source])
    say(event="started", epoch=producer.transaction_manager.producer_epoch)  # type: ignore[union-attr]
    done: dict[tuple[str, int], int] = {}
    deadline = time.monotonic() + 120
    while any(done.get(tp, -1) < end for tp, end in ends.items()):
        if time.monotonic() > deadline:
            say(event="gave-up", done=str(done))
            sys.exit(3)
        batch = consumer.poll(500)
        if not batch:
            if consumer.generation >= 0:
                for tp in consumer.assignment():
                    done[tp] = max(done.get(tp, -1), consumer.position(tp))
            continue
        producer.begin_transaction()
        try:
            n = 0
            for _tp, cols in batch.items():
                for r in cols:
                    producer.send(sink, bytes(r.value), key=None if r.key is None else bytes(r.key))
                    n += 1
            producer.flush()
            offsets = {tp: consumer.position(tp) for tp in batch}
            producer.send_offsets_to_transaction(offsets, consumer.group_metadata())
            say(event="in-txn", records=n)
            time.sleep(float(pause_ms) / 1000)
            producer.commit_transaction()
        except Exception:
            if producer.transaction_manager.state is not TransactionState.ABORTABLE_ERROR:  # type: ignore[union-attr]
                raise
            # Abortable (e.g. the group rebalanced under us): abort and re-read from the committed offsets.
            producer.abort_transaction()
            for tp, off in consumer.committed(list(batch)).items():
                consumer.seek(tp, max(off, 0))
            say(event="aborted")
            continue
        for tp, off in offsets.items():
            done[tp] = off
        say(event="committed", records=n)
    consumer.close()
    producer.close()
    say(event="finished")


if __name__ == "__main__":
    main()
