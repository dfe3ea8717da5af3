"""``kafkawire topics configs|alter-config|add-partitions|delete-records``: the topic actions built on
:class:`kafkawire.admin.Admin` (registered by :mod:`kafkawire.cli.topics`)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from ._common import CliError, add_action, make_admin, parse_pairs, partitions_of, print_table

__all__ = ["add_actions", "ACTIONS"]


def add_actions(sub: Any) -> None:
    """Add this module's actions to the ``kafkawire topics`` subparsers ``sub``."""
    configs = add_action(sub, "configs", help="a topic's configs: value and source (non-default ones unless --all)")
    configs.add_argument("topic", metavar="TOPIC")
    configs.add_argument("--all", action="store_true", help="also the configs left at their defaults")
    configs.add_argument("--json", action="store_true", help="print JSON instead of a table")

    alter = add_action(sub, "alter-config", help="change a topic's configs incrementally (others keep their values)")
    alter.add_argument("topic", metavar="TOPIC")
    alter.add_argument("--set", action="append", metavar="KEY=VALUE[,...]", help="set configs (repeatable)")
    alter.add_argument("--delete", action="append", metavar="KEY", help="back to the default (repeatable)")
    alter.add_argument("--append", action="append", metavar="KEY=VALUE", help="add to a list config (repeatable)")
    alter.add_argument(
        "--subtract", action="append", metavar="KEY=VALUE", help="remove from a list config (repeatable)"
    )
    alter.add_argument("--validate-only", action="store_true", help="let the broker check, change nothing")

    grow = add_action(sub, "add-partitions", help="grow a topic to a total number of partitions")
    grow.add_argument("topic", metavar="TOPIC")
    grow.add_argument("--partitions", "-p", type=int, required=True, metavar="N", help="the new total")

    trim = add_action(sub, "delete-records", help="delete a topic's records before an offset")
    trim.add_argument("topic", metavar="TOPIC")
    trim.add_argument("--partition", "-p", type=int, action="append", help="only this partition (repeatable)")
    trim.add_argument(
        "--before", type=int, required=True, metavar="OFFSET", help="first offset to keep (-1: delete everything)"
    )


def _configs(args: argparse.Namespace) -> int:
    from ..admin import ConfigResource

    with make_admin(args) as admin, admin.client:
        entries = admin.describe_configs([args.topic])[ConfigResource.topic(args.topic)]
    shown = [e for _, e in sorted(entries.items()) if args.all or not e.is_default]
    if args.json:
        print(json.dumps([{"name": e.name, "value": e.value, "source": e.source, "read_only": e.read_only,
                           "sensitive": e.is_sensitive} for e in shown]))
    else:
        print_table([(e.name, "(sensitive)" if e.is_sensitive else e.value, e.source) for e in shown],
                    ("CONFIG", "VALUE", "SOURCE"))
    return 0


def _alter(args: argparse.Namespace) -> int:
    from ..admin import AlterConfigOp

    ops = [AlterConfigOp(k, "set", v) for k, v in parse_pairs(args.set, "--set")]
    ops += [AlterConfigOp(k, "delete") for k in args.delete or ()]
    ops += [AlterConfigOp(k, "append", v) for k, v in parse_pairs(args.append, "--append")]
    ops += [AlterConfigOp(k, "subtract", v) for k, v in parse_pairs(args.subtract, "--subtract")]
    if not ops:
        raise CliError("nothing to change: give --set, --delete, --append or --subtract")
    with make_admin(args) as admin, admin.client:
        admin.alter_configs({args.topic: ops}, validate_only=args.validate_only)
    verb = "validated" if args.validate_only else "altered"
    print(f"{verb} {len(ops)} config change(s) of topic {args.topic}", file=sys.stderr)
    return 0


def _grow(args: argparse.Namespace) -> int:
    with make_admin(args) as admin, admin.client:
        admin.create_partitions({args.topic: args.partitions})
    print(f"topic {args.topic} now has {args.partitions} partitions", file=sys.stderr)
    return 0


def _trim(args: argparse.Namespace) -> int:
    if args.before < -1:
        raise CliError("--before must be an offset >= 0, or -1 for everything")
    with make_admin(args) as admin, admin.client:
        available = partitions_of(admin.client, args.topic)
        partitions = sorted(set(args.partition)) if args.partition else available
        missing = [p for p in partitions if p not in available]
        if missing:
            raise CliError(f"topic {args.topic!r} has no partition {missing[0]} (partitions: {available})")
        low = admin.delete_records({(args.topic, p): args.before for p in partitions})
    print_table([(args.topic, p, w) for (_, p), w in sorted(low.items())], ("TOPIC", "PARTITION", "LOW-WATERMARK"))
    return 0


#: Action name -> function, for :func:`kafkawire.cli.topics.run`.
ACTIONS: dict[str, Callable[[argparse.Namespace], int]] = {
    "configs": _configs,
    "alter-config": _alter,
    "add-partitions": _grow,
    "delete-records": _trim,
}
