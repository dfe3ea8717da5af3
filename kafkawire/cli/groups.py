"""``kafkawire groups list|describe|delete|reset-offsets``: consumer group administration, as Kafka's
``kafka-consumer-groups.sh`` (reset-offsets is a dry run unless ``--execute``, like the tool)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ._common import (
    CliError,
    add_action,
    add_reset_target,
    assignment_text,
    make_admin,
    partitions_of,
    print_described,
    print_reset_plan,
    print_table,
    reset_target,
    run_action,
)

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Subcommands of ``kafkawire groups``."""
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    ls = add_action(sub, "list", _list, help="list groups with their state and type")
    ls.add_argument("--state", action="append", metavar="STATE", help="only groups in this state (repeatable)")
    ls.add_argument("--type", action="append", metavar="TYPE", help="only groups of this type: classic, consumer, ...")
    ls.add_argument("--json", action="store_true", help="print JSON instead of a table")

    describe = add_action(sub, "describe", _describe, help="state, members and committed offsets with lag")
    describe.add_argument("groups", nargs="+", metavar="GROUP")
    describe.add_argument("--json", action="store_true", help="print JSON instead of tables")

    delete = add_action(sub, "delete", _delete, help="delete groups that have no active member, with their offsets")
    delete.add_argument("groups", nargs="+", metavar="GROUP")
    delete.add_argument("--if-exists", action="store_true", help="no error when a group does not exist")

    forget = add_action(
        sub, "delete-offsets", _delete_offsets,
        help="delete a group's committed offsets of a topic (KIP-496)",
    )
    forget.add_argument("group", metavar="GROUP")
    forget.add_argument(
        "--topic", action="append", required=True, metavar="TOPIC[:P,P...]", help="a topic or some partitions"
    )

    reset = add_action(
        sub, "reset-offsets", _reset,
        help="set an inactive group's offsets (a dry run that prints the plan unless --execute)",
    )
    reset.add_argument("group", metavar="GROUP")
    which = reset.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--topic", action="append", metavar="TOPIC[:P,P...]", help="a topic, or some of its partitions (repeatable)"
    )
    which.add_argument("--all-topics", action="store_true", help="every partition the group has committed")
    to = add_reset_target(reset)
    to.add_argument("--shift-by", type=int, metavar="N", help="move the committed offsets by N (may be negative)")
    reset.add_argument("--execute", action="store_true", help="commit the new offsets (default: only print them)")
    reset.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    """Run the chosen action."""
    return run_action(args)


def _list(args: argparse.Namespace) -> int:
    with make_admin(args) as admin, admin.client:
        groups = admin.list_groups(states=args.state, types=args.type)
    if args.json:
        print(json.dumps([{"group": g.group_id, "state": g.state, "type": g.type,
                           "protocol_type": g.protocol_type} for g in groups]))
    else:
        print_table([(g.group_id, g.state or "-", g.type or "-", g.protocol_type or "-") for g in groups],
                    ("GROUP", "STATE", "TYPE", "PROTOCOL-TYPE"))
    return 0


def _describe(args: argparse.Namespace) -> int:
    out = []
    with make_admin(args) as admin, admin.client:
        descriptions = admin.describe_groups(args.groups)
        for group in args.groups:
            d = descriptions[group]
            owner = {(t, p): m for m in d.members for t, ps in m.assignment.items() for p in ps}
            offsets = admin.list_consumer_group_offsets(group)
            # Assigned partitions without a commit are shown too (CURRENT-OFFSET "-"), as Kafka's tool does.
            missing = [tp for tp in owner if tp not in offsets]
            if missing:
                offsets.update(admin.list_consumer_group_offsets(group, missing))
            partitions = []
            for (t, p), o in sorted(offsets.items()):
                m = owner.get((t, p))
                partitions.append({
                    "topic": t, "partition": p, "committed": o.committed if o.committed >= 0 else None,
                    "end_offset": o.end_offset, "lag": o.lag,
                    "member_id": m.member_id if m else None, "host": m.client_host if m else None,
                    "client_id": m.client_id if m else None,
                })
            out.append({
                "group": group, "type": d.type, "state": d.state, "protocol_type": d.protocol_type,
                "assignor": d.protocol,
                "coordinator": d.coordinator,
                "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                             "client_id": m.client_id, "host": m.client_host,
                             "assignment": {t: ps for t, ps in sorted(m.assignment.items())}} for m in d.members],
                "offsets": partitions,
            })
    print_described(out, args.json, _show_group)
    return 0


def _show_group(g: dict[str, Any]) -> None:
    print(f"group {g['group']} ({g['type']}): {g['state']}, {len(g['members'])} member(s), "
          f"assignor {g['assignor'] or '-'}, coordinator {g['coordinator']}")
    if g["members"]:
        print_table(
            [(m["member_id"], m["host"], m["client_id"],
              assignment_text(m["assignment"]))
             for m in g["members"]],
            ("MEMBER-ID", "HOST", "CLIENT-ID", "ASSIGNMENT"),
        )
    if g["offsets"]:

        def dash(v: Any) -> Any:
            return "-" if v is None else v

        print_table(
            [(p["topic"], p["partition"], dash(p["committed"]), p["end_offset"], dash(p["lag"]),
              dash(p["member_id"])) for p in g["offsets"]],
            ("TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "MEMBER-ID"),
        )


def _delete(args: argparse.Namespace) -> int:
    with make_admin(args) as admin, admin.client:
        admin.delete_groups(args.groups, missing_ok=args.if_exists)
    for g in args.groups:
        print(f"deleted group {g}", file=sys.stderr)
    return 0


def _topics(specs: list[str]) -> list[Any]:
    out: list[Any] = []
    for spec in specs:
        topic, sep, parts = spec.rpartition(":") if ":" in spec else (spec, "", "")
        if not sep:
            out.append(spec)
            continue
        try:
            out += [(topic, int(p)) for p in parts.split(",") if p]
        except ValueError:
            raise CliError(f"bad --topic {spec!r}: expected TOPIC or TOPIC:P,P...") from None
    return out


def _reset(args: argparse.Namespace) -> int:
    from ..admin import GroupNotInactiveError

    spec = reset_target(args)
    topics = None if args.all_topics else _topics(args.topic)
    with make_admin(args) as admin, admin.client:
        try:
            plan = admin.reset_consumer_group_offsets(args.group, topics, dry_run=not args.execute, **spec)
        except GroupNotInactiveError as e:
            raise CliError(str(e)) from None
    print_reset_plan(args, plan, "committed")
    return 0


def _delete_offsets(args: argparse.Namespace) -> int:
    with make_admin(args) as admin, admin.client:
        partitions = []
        for spec in args.topic:
            topic, sep, ps = spec.partition(":")
            if sep:
                try:
                    partitions += [(topic, int(p)) for p in ps.split(",") if p]
                except ValueError:
                    raise CliError(f"--topic takes TOPIC or TOPIC:P,P..., not {spec!r}") from None
            else:
                partitions += [(topic, p) for p in partitions_of(admin.client, topic)]
        admin.delete_consumer_group_offsets(args.group, partitions)
    print(f"deleted the committed offsets of group {args.group} on {len(partitions)} partition(s)")
    return 0
