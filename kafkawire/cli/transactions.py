"""``kafkawire transactions list|describe|describe-producers|abort``: producers and transactions as
Kafka's ``kafka-transactions.sh`` shows and aborts them (KIP-664), on :class:`kafkawire.admin.Admin`."""

from __future__ import annotations

import argparse
import time

from ._common import CliError, add_action, make_admin, print_rows, run_action

__all__ = ["add_arguments", "run"]


def _partition_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--topic", required=True)
    parser.add_argument("--partition", required=True, type=int)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Subcommands of ``kafkawire transactions``."""
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    ls = add_action(sub, "list", _list, help="the transactional ids the coordinators know, with state and producer id")
    ls.add_argument("--state", action="append", metavar="STATE", help="only in this state, e.g. Ongoing (repeatable)")
    ls.add_argument("--producer-id", action="append", type=int, metavar="ID", help="only this producer (repeatable)")
    ls.add_argument("--duration-ms", type=int, metavar="MS", help="only transactions open longer than this")
    ls.add_argument("--json", action="store_true", help="print JSON instead of a table")

    describe = add_action(sub, "describe", _describe, help="a transaction as its coordinator describes it")
    describe.add_argument("--transactional-id", required=True, metavar="ID")
    describe.add_argument("--json", action="store_true", help="print JSON instead of a table")

    producers = add_action(
        sub, "describe-producers", _producers,
        help="the active producers of a partition (its leader's view)",
    )
    _partition_args(producers)
    producers.add_argument("--json", action="store_true", help="print JSON instead of a table")

    abort = add_action(
        sub, "abort", _abort,
        help="abort the (hanging) transaction that starts at an offset of a partition",
    )
    _partition_args(abort)
    abort.add_argument("--start-offset", required=True, type=int, metavar="OFFSET")


def run(args: argparse.Namespace) -> int:
    """Run the chosen action."""
    return run_action(args)


def _list(args: argparse.Namespace) -> int:
    with make_admin(args) as admin, admin.client:
        try:
            found = admin.list_transactions(
                states=args.state, producer_ids=args.producer_id, duration_ms=args.duration_ms
            )
        except ValueError as e:  # an unknown state
            raise CliError(str(e)) from None
    rows = [(t.transactional_id, t.coordinator_id, t.producer_id, t.state) for t in found]
    header = ("TRANSACTIONAL-ID", "COORDINATOR", "PRODUCER-ID", "STATE")
    print_rows(rows, header, args.json)
    return 0


def _describe(args: argparse.Namespace) -> int:
    with make_admin(args) as admin, admin.client:
        t = admin.describe_transactions([args.transactional_id])[args.transactional_id]
    # As Kafka's tool: the duration of the open transaction, measured here, -1 when none is open.
    duration = int(time.time() * 1000) - t.start_time_ms if t.start_time_ms >= 0 else -1
    partitions = ",".join(f"{topic}-{p}" for topic, p in sorted(t.partitions))
    row = (
        t.coordinator_id,
        t.transactional_id,
        t.producer_id,
        t.producer_epoch,
        t.state,
        t.timeout_ms,
        t.start_time_ms,
        duration,
        partitions,
    )
    header = (
        "COORDINATOR",
        "TRANSACTIONAL-ID",
        "PRODUCER-ID",
        "PRODUCER-EPOCH",
        "STATE",
        "TIMEOUT-MS",
        "START-TIME-MS",
        "DURATION-MS",
        "PARTITIONS",
    )
    print_rows([row], header, args.json)
    return 0


def _producers(args: argparse.Namespace) -> int:
    with make_admin(args) as admin, admin.client:
        states = admin.describe_producers([(args.topic, args.partition)])[(args.topic, args.partition)]
    rows = [
        (
            s.producer_id,
            s.producer_epoch,
            s.coordinator_epoch,
            s.last_sequence,
            s.last_timestamp,
            s.current_transaction_start_offset if s.current_transaction_start_offset >= 0 else "None",
        )
        for s in states
    ]
    header = (
        "PRODUCER-ID",
        "PRODUCER-EPOCH",
        "COORDINATOR-EPOCH",
        "LAST-SEQUENCE",
        "LAST-TIMESTAMP",
        "TRANSACTION-START-OFFSET",
    )
    print_rows(rows, header, args.json)
    return 0


def _abort(args: argparse.Namespace) -> int:
    with make_admin(args) as admin, admin.client:
        try:
            state = admin.abort_transaction(args.topic, args.partition, args.start_offset)
        except ValueError as e:  # no open transaction starts there
            raise CliError(str(e)) from None
    print(
        f"aborted the transaction of producer {state.producer_id} (epoch {state.producer_epoch}) that started at "
        f"offset {args.start_offset} of {args.topic}/{args.partition}"
    )
    return 0


