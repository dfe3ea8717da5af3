"""One "task attempt" for the hand-over fault test (run as a separate process, killed by the test).

``python txn_task.py BOOTSTRAP TOPIC TRANSACTIONAL_ID FIRST COUNT MODE``

Writes the values ``<run>-FIRST`` .. ``<run>-(FIRST+COUNT-1)`` (the ledger's naming, ``run`` taken from
TOPIC) in a transaction of TRANSACTIONAL_ID. MODE ``die-halfway``: flushes half of them, prints
``{"event": "half"}`` and waits to be killed. MODE ``hand-over``: writes all, hands the transaction over
(prints the handle as JSON) and waits to be killed. Nothing is ever committed here.
"""

from __future__ import annotations

import json
import sys
import time

from kafkawire.client import Producer


def main() -> None:
    bootstrap, topic, tid, first, count, mode = sys.argv[1:7]
    run = topic.rsplit("-", 1)[0]
    values = [f"{run}-{i}".encode() for i in range(int(first), int(first) + int(count))]
    producer = Producer(bootstrap, transactional_id=tid, linger_ms=60_000)
    producer.init_transactions(timeout_ms=60_000)  # fences an earlier attempt and aborts what it wrote
    producer.begin_transaction()
    if mode == "die-halfway":
        for v in values[: len(values) // 2]:
            producer.send(topic, v)
        producer.flush()
        print(json.dumps({"event": "half"}), flush=True)
    else:
        for v in values:
            producer.send(topic, v)
        handle = producer.hand_over_transaction()
        print(json.dumps({"event": "handle", **handle.__dict__}), flush=True)
    time.sleep(600)


if __name__ == "__main__":
    main()
