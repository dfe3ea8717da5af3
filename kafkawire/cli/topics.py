"""``kafkawire topics list|create|delete|describe`` (and, from :mod:`.topic_admin`, ``configs``,
``alter-config``, ``add-partitions``, ``delete-records``): topic administration."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ._common import CliError, add_action, make_client, parse_pairs, print_described, print_table

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Subcommands of ``kafkawire topics``."""
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    ls = add_action(sub, "list", help="list topics with their partition counts")
    ls.add_argument("--internal", action="store_true", help="include internal topics (__consumer_offsets, ...)")
    ls.add_argument("--json", action="store_true", help="print JSON instead of a table")

    create = add_action(sub, "create", help="create topics")
    create.add_argument("names", nargs="+", metavar="TOPIC")
    create.add_argument("--partitions", "-p", type=int, default=1, help="default: 1")
    create.add_argument("--replication-factor", "-r", type=int, default=1, help="default: 1")
    create.add_argument(
        "--config", "-c", action="append", metavar="KEY=VALUE[,...]", help="topic configs (repeatable)"
    )
    create.add_argument("--if-not-exists", action="store_true", help="no error when a topic already exists")

    delete = add_action(sub, "delete", help="delete topics")
    delete.add_argument("names", nargs="+", metavar="TOPIC")
    delete.add_argument("--if-exists", action="store_true", help="no error when a topic does not exist")

    describe = add_action(sub, "describe", help="partitions, leaders, replicas and offsets of topics")
    describe.add_argument("names", nargs="+", metavar="TOPIC")
    describe.add_argument("--json", action="store_true", help="print JSON instead of a table")

    from .topic_admin import add_actions

    add_actions(sub)  # configs, alter-config, add-partitions, delete-records


def run(args: argparse.Namespace) -> int:
    """Dispatch to the chosen action."""
    from .topic_admin import ACTIONS

    actions = {"list": _list, "create": _create, "delete": _delete, "describe": _describe, **ACTIONS}
    return actions[args.action](args)


def _list(args: argparse.Namespace) -> int:
    with make_client(args) as client:
        meta = client.metadata()
    topics = sorted(
        (t for t in meta.topics.values() if args.internal or not t.is_internal), key=lambda t: t.name
    )
    if args.json:
        print(json.dumps([{"name": t.name, "partitions": t.num_partitions} for t in topics]))
    else:
        print_table([(t.name, t.num_partitions) for t in topics], ("TOPIC", "PARTITIONS"))
    return 0


def _create(args: argparse.Namespace) -> int:
    if args.partitions < 1 or args.replication_factor < 1:
        raise CliError("--partitions and --replication-factor must be >= 1")
    configs = dict(parse_pairs(args.config, "config"))
    with make_client(args) as client:
        client.create_topics(
            args.names,
            num_partitions=args.partitions,
            replication_factor=args.replication_factor,
            configs=configs,
            exist_ok=args.if_not_exists,
        )
    for name in args.names:
        print(f"created topic {name} ({args.partitions} partition{'s' if args.partitions != 1 else ''})",
              file=sys.stderr)
    return 0


def _delete(args: argparse.Namespace) -> int:
    with make_client(args) as client:
        client.delete_topics(args.names, missing_ok=args.if_exists)
    for name in args.names:
        print(f"deleted topic {name}", file=sys.stderr)
    return 0


def _describe(args: argparse.Namespace) -> int:
    out = []
    with make_client(args) as client:
        meta = client.metadata(args.names)
        for name in args.names:
            tm = meta.topics.get(name)
            if tm is None:
                raise CliError(f"topic {name!r} does not exist")
            if tm.error is not None:
                raise tm.error
            earliest = client.list_offsets(name, timestamp="earliest")
            latest = client.list_offsets(name, timestamp="latest")
            parts = []
            for p, pm in tm.partitions.items():
                parts.append(
                    {
                        "partition": p,
                        "leader": pm.leader,
                        "replicas": list(pm.replicas),
                        "isr": list(pm.isr),
                        "earliest": earliest[p].offset,
                        "latest": latest[p].offset,
                        "records": latest[p].offset - earliest[p].offset,
                    }
                )
            out.append(
                {"name": name, "topic_id": str(tm.topic_id) if tm.topic_id else None, "partitions": parts}
            )
    print_described(out, args.json, _show_topic)
    return 0


def _show_topic(t: dict[str, Any]) -> None:
    topic_id = f", id {t['topic_id']}" if t["topic_id"] else ""
    print(f"topic {t['name']}: {len(t['partitions'])} partitions{topic_id}")
    print_table(
        [
            (
                p["partition"],
                p["leader"],
                ",".join(map(str, p["replicas"])),
                ",".join(map(str, p["isr"])),
                p["earliest"],
                p["latest"],
                p["records"],
            )
            for p in t["partitions"]
        ],
        ("PARTITION", "LEADER", "REPLICAS", "ISR", "EARLIEST", "LATEST", "RECORDS"),
    )
