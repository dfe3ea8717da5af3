"""One kafkawire consumer-group member as its own process, for the group chaos tests (SIGKILL is real).

    python group_member.py --bootstrap B --topic T --group G --log PATH
        [--protocol classic|consumer] [--assignor cooperative-sticky] [--rate N]
        [--session-ms MS] [--heartbeat-ms MS] [--max-bytes N] [--name NAME]

At-least-once: auto-commit is off; after each poll the member "processes" the records (appends them to
its log, flushed, then waits ``len/rate`` seconds: the processing time), then commits the offsets after
every record processed and not committed yet (also in ``on_partitions_revoked``, for those partitions).
A line "exit" on stdin (or stdin closing) makes it close the consumer (leave the group) and exit; a line
"fast" ends the pacing (the test drains the topic quickly once its events are over); "hold" makes it stop
for good right after it next logs a poll's records, before committing them, and log an H line (the test
SIGKILLs it there: the at-least-once window is then certainly open, see test_group_chaos.py).

The log (:mod:`faults.group_log` reads it) has one line per event, ``<kind> <wall ms> ...``:

* ``S <ms> <name>``: started;
* ``A|V|L <ms> <partitions> | <owned>``: assigned (added) / revoked / lost, then what it owns after;
* ``R <ms> <partition> <first offset> <last offset> <values>``: processed (values: int64 sequence numbers);
* ``C <ms> <partition>:<offset>,...``: commit acknowledged; ``F <ms> <partition>:<offset>,... <error>``:
  commit refused;
* ``E <ms>``: closed.

Partitions and values are comma-separated decimals ("-" when empty). The Java member
(tests/interop/java/GroupMember.java) writes the same format.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Iterable
from typing import IO

from kafkawire.client import CommitFailedError, Consumer
from kafkawire.client.consumer.listeners import ConsumerRebalanceListener
from kafkawire.errors import KafkaWireError

TP = tuple[str, int]


def _ms() -> int:
    return time.time_ns() // 1_000_000


def _ints(xs: Iterable[int]) -> str:
    s = ",".join(str(int(x)) for x in xs)
    return s or "-"


class Log:
    """The member's event log (flushed per line group: a SIGKILL loses at most the line being written)."""

    def __init__(self, path: str) -> None:
        self.f: IO[str] = open(path, "a", buffering=1 << 16)  # noqa: SIM115 - lives as long as the process

    def write(self, line: str, flush: bool = True) -> None:
        self.f.write(line + "\n")
        if flush:
            self.f.flush()


class Member(ConsumerRebalanceListener):
    """The processing loop's state: offsets processed but not committed yet, and what the member owns.

    Every assignment change is logged with what the member owns afterwards. Processed offsets are
    committed after each poll (with or without new records: a refused commit is tried again) and, as the
    Java client's documentation advises, in ``on_partitions_revoked`` for the partitions given up;
    partitions lost (fenced) are dropped uncommitted.
    """

    def __init__(self, log: Log) -> None:
        self.log = log
        self.owned: set[int] = set()
        self.pending: dict[TP, int] = {}
        self.consumer: Consumer | None = None

    def _event(self, kind: str, partitions: list[TP]) -> None:
        ps = {p for _, p in partitions}
        if kind == "A":
            self.owned |= ps
        else:
            self.owned -= ps
        self.log.write(f"{kind} {_ms()} {_ints(sorted(ps))} | {_ints(sorted(self.owned))}")

    def commit(self, partitions: set[TP] | None = None) -> None:
        todo = {tp: o for tp, o in self.pending.items() if partitions is None or tp in partitions}
        if not todo or self.consumer is None:
            return
        text = ",".join(f"{tp[1]}:{o}" for tp, o in sorted(todo.items()))
        try:
            self.consumer.commit(todo)
        except (CommitFailedError, KafkaWireError) as e:
            # Not committed (or not known to be): these records may come again to the next owner.
            self.log.write(f"F {_ms()} {text} {type(e).__name__}")
            return
        self.log.write(f"C {_ms()} {text}")
        for tp, o in todo.items():
            if self.pending.get(tp) == o:
                del self.pending[tp]

    def on_partitions_assigned(self, partitions: list[TP]) -> None:
        self._event("A", partitions)

    def on_partitions_revoked(self, partitions: list[TP]) -> None:
        self.commit(set(partitions))
        for tp in partitions:
            self.pending.pop(tp, None)
        self._event("V", partitions)

    def on_partitions_lost(self, partitions: list[TP]) -> None:
        for tp in partitions:
            self.pending.pop(tp, None)
        self._event("L", partitions)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--group", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--name", default="kw")
    ap.add_argument("--protocol", default="classic", choices=["classic", "consumer"])
    ap.add_argument("--assignor", default="cooperative-sticky")
    ap.add_argument("--rate", type=float, default=0.0, help="records processed per second (0: no pacing)")
    ap.add_argument("--max-bytes", type=int, default=1 << 20, help="fetch size (1: one batch per poll)")
    ap.add_argument("--session-ms", type=int, default=6000)
    ap.add_argument("--heartbeat-ms", type=int, default=500)
    args = ap.parse_args(argv)

    log = Log(args.log)
    stop = threading.Event()
    hold = threading.Event()

    def read_stdin() -> None:
        for line in sys.stdin:
            if line.strip() == "fast":
                args.rate = 0.0
            if line.strip() == "hold":
                hold.set()
            if line.strip() == "exit":
                break
        stop.set()

    member = Member(log)
    consumer = Consumer(
        args.bootstrap,
        group_id=args.group,
        group_protocol=args.protocol,
        partition_assignment_strategy=(args.assignor,),
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=args.session_ms,
        heartbeat_interval_ms=args.heartbeat_ms,
        rebalance_timeout_ms=max(10_000, 2 * args.session_ms),
        # Small fetches (the Java member's max.poll.records plays this part): one poll's processing time
        # stays short, since heartbeats ride on poll(). A fetch returns at least one whole batch (KIP-74).
        max_bytes=args.max_bytes,
        partition_max_bytes=args.max_bytes,
        max_wait_ms=100,
        listener=member,
    )
    member.consumer = consumer
    consumer.subscribe([args.topic])
    log.write(f"S {_ms()} {args.name}")
    threading.Thread(target=read_stdin, daemon=True).start()
    try:
        while not stop.is_set():
            batch = consumer.poll(200)
            n = 0
            now = _ms()
            for tp, cols in batch.items():
                offs = cols.offset
                vals = cols.value
                # The values are 8-byte big-endian sequence numbers, packed back to back.
                seq = vals.data[vals.offsets[0] : vals.offsets[-1]].view(">i8")
                log.write(f"R {now} {tp[1]} {int(offs[0])} {int(offs[-1])} {_ints(seq.tolist())}", flush=False)
                member.pending[tp] = int(offs[-1]) + 1
                n += len(offs)
            log.f.flush()
            if hold.is_set() and n:
                log.write(f"H {_ms()}")
                while True:  # processed, never to be committed: the test SIGKILLs us here
                    time.sleep(3600)
            if args.rate > 0 and n:
                time.sleep(n / args.rate)  # the processing time of these records
            member.commit()
    finally:
        consumer.close()
        log.write(f"E {_ms()}")


if __name__ == "__main__":
    main()
