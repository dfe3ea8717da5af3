"""Waiting for transaction markers before a read_committed read (KIP-98).

EndTxn (``Producer.commit_transaction``, ``end_transaction``, a Java or librdkafka peer committing)
returns once the coordinator has decided; the marker that ends the transaction on each partition, and
so moves that partition's last stable offset, is written afterwards. A read_committed read done right
after may therefore see nothing, or fewer rows, than the commit promised.

``wait_stable`` waits until every partition's last stable offset has reached its log end (the high
watermark): then no transaction on it is waiting for its marker, and every later read_committed read
sees the final outcome of each one, committed rows visible and aborted ones hidden. It waits for
markers, not for an expected row count, so a test that asserts the exact result afterwards still fails
when rows are missing or duplicated, and a test asserting that aborted rows stay invisible is checked
after the abort marker is in the log rather than while the open transaction hides them anyway.

Only for partitions whose transactions are all finished: a transaction left open holds the last
stable offset back until the coordinator times it out, and the wait would fail at its deadline.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from kafkawire.client import Client


def wait_stable(client: Client, topic: str, partitions: Iterable[int] | None = None, timeout: float = 30.0) -> None:
    """Wait (at most ``timeout`` seconds, then fail) until the last stable offset of each partition of
    ``topic`` (all when None) equals its high watermark: every transaction marker written to it is in."""
    wanted = None if partitions is None else list(partitions)
    deadline = time.monotonic() + timeout
    while True:
        stable = {p: lo.offset for p, lo in client.list_offsets(topic, wanted, isolation="read_committed").items()}
        ends = {p: lo.offset for p, lo in client.list_offsets(topic, wanted, isolation="read_uncommitted").items()}
        if stable == ends:
            return
        # Markers are written within milliseconds of EndTxn on a healthy broker; the deadline only bounds
        # a broker that never writes them (the test then fails here, naming the lagging partitions).
        assert time.monotonic() < deadline, f"{topic}: last stable offsets {stable} never reached the ends {ends}"
        time.sleep(0.05)


def read_values(client: Client, topic: str, isolation: str, timeout: float = 30.0) -> list[bytes]:
    """Every value of ``topic`` under ``isolation``, partition by partition, up to the end offsets that
    isolation reports (the last stable offset for read_committed); fails after ``timeout`` seconds per
    partition if the fetches stop short of it."""
    out: list[bytes] = []
    for p, listed in sorted(client.list_offsets(topic, isolation=isolation).items()):
        offset = 0
        deadline = time.monotonic() + timeout
        while offset < listed.offset:
            assert time.monotonic() < deadline, f"{topic}/{p} stuck at {offset} of {listed.offset}"
            cols = client.fetch(topic, p, offset, isolation=isolation, max_wait_ms=100)
            out += [bytes(r.value) for r in cols]
            offset = max(offset, int(cols.next_offset))
    return out
