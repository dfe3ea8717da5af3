"""``kafkawire offsets TOPIC``: earliest and latest offsets per partition, the offset at a time, and a
consumer group's committed offsets and lag."""

from __future__ import annotations

import argparse
import json

from ._common import CliError, add_connection_args, make_client, parse_time_ms, partitions_of, print_table

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``kafkawire offsets``."""
    parser.add_argument("topic")
    add_connection_args(parser)
    parser.add_argument("--partition", "-p", type=int, action="append", help="only this partition (repeatable)")
    parser.add_argument(
        "--time",
        "-t",
        metavar="TIME",
        help="also the first offset at or after TIME (@MILLISECONDS or ISO 8601; -1 when there is none)",
    )
    parser.add_argument("--group", "-g", help="also this consumer group's committed offsets and lag")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    """Print one row per partition."""
    when = parse_time_ms(args.time) if args.time else None
    with make_client(args) as client:
        available = partitions_of(client, args.topic)
        partitions = sorted(set(args.partition)) if args.partition else available
        missing = [p for p in partitions if p not in available]
        if missing:
            raise CliError(f"topic {args.topic!r} has no partition {missing[0]} (partitions: {available})")
        earliest = client.list_offsets(args.topic, partitions, timestamp="earliest")
        latest = client.list_offsets(args.topic, partitions, timestamp="latest")
        at_time = client.list_offsets(args.topic, partitions, timestamp=when) if when is not None else None
        committed = client.committed(args.group, [(args.topic, p) for p in partitions]) if args.group else None
    rows = []
    for p in partitions:
        row: dict[str, int | None] = {"partition": p, "earliest": earliest[p].offset, "latest": latest[p].offset}
        if at_time is not None:
            row["at_time"] = at_time[p].offset
        if committed is not None:
            c = committed[(args.topic, p)].offset
            row["committed"] = c if c >= 0 else None
            # Lag: records between the committed position (or the log start when nothing is committed,
            # where a consumer with auto.offset.reset=earliest would begin) and the end of the log.
            row["lag"] = latest[p].offset - (c if c >= 0 else earliest[p].offset)
        rows.append(row)
    if args.json:
        print(json.dumps({"topic": args.topic, "group": args.group, "time": when, "partitions": rows}))
        return 0
    header = ["PARTITION", "EARLIEST", "LATEST"]
    keys = ["partition", "earliest", "latest"]
    if at_time is not None:
        header.append("AT TIME")
        keys.append("at_time")
    if committed is not None:
        header += ["COMMITTED", "LAG"]
        keys += ["committed", "lag"]
    table = [[("-" if r[k] is None else r[k]) for k in keys] for r in rows]
    print_table(table, header)
    if committed is not None:
        print(f"group {args.group}: total lag {sum(int(r['lag'] or 0) for r in rows)}")
    return 0
