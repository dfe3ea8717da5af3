"""``kafkawire share-groups list|describe|reset-offsets|delete``: share group administration (KIP-932), as
Kafka's ``kafka-share-groups.sh`` (reset-offsets is a dry run unless ``--execute``, like the tool)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ._common import (
    add_action,
    add_reset_target,
    assignment_text,
    make_admin,
    print_described,
    print_reset_plan,
    print_table,
    reset_target,
    run_action,
)

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Subcommands of ``kafkawire share-groups``."""
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    ls = add_action(
        sub, "list", _list,
        help="list share groups with their state", json_help="print JSON instead of a table",
    )
    ls.add_argument("--state", action="append", metavar="STATE", help="only groups in this state (repeatable)")

    describe = add_action(
        sub, "describe", _describe,
        help="state, members with their assignments, start offsets and lag",
        json_help="print JSON instead of tables",
    )
    describe.add_argument("groups", nargs="+", metavar="GROUP")

    delete = add_action(
        sub, "delete", _delete,
        help="delete share groups with no members (or, with --topic, their offsets)",
    )
    delete.add_argument("groups", nargs="+", metavar="GROUP")
    delete.add_argument("--topic", action="append", metavar="TOPIC", help="delete only the group's state of TOPIC")

    reset = add_action(
        sub, "reset-offsets", _reset,
        help="move an inactive share group's start offsets (a dry run unless --execute)",
    )
    reset.add_argument("group", metavar="GROUP")
    reset.add_argument("--topic", action="append", required=True, metavar="TOPIC", help="a topic (repeatable)")
    add_reset_target(reset)
    reset.add_argument("--execute", action="store_true", help="apply the new offsets (default: only print them)")
    reset.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    """Run the chosen action."""
    return run_action(args)


def _list(args: argparse.Namespace) -> int:
    with make_admin(args) as admin, admin.client:
        groups = admin.list_share_groups(states=args.state)
    if args.json:
        print(json.dumps([{"group": g.group_id, "state": g.state} for g in groups]))
    else:
        print_table([(g.group_id, g.state or "-") for g in groups], ("GROUP", "STATE"))
    return 0


def _describe(args: argparse.Namespace) -> int:
    out = []
    with make_admin(args) as admin, admin.client:
        descriptions = admin.describe_share_groups(args.groups)
        for group in args.groups:
            d = descriptions[group]
            offsets = admin.list_share_group_offsets(group) if d.state != "Dead" else {}
            out.append({
                "group": group, "state": d.state, "group_epoch": d.group_epoch, "assignment_epoch": d.assignment_epoch,
                "assignor": d.assignor, "coordinator": d.coordinator,
                "members": [{"member_id": m.member_id, "client_id": m.client_id, "host": m.client_host,
                             "rack": m.rack_id, "member_epoch": m.member_epoch, "subscribed": m.subscribed_topics,
                             "assignment": dict(sorted(m.assignment.items()))} for m in d.members],
                "offsets": [{"topic": t, "partition": p, "start_offset": o.start_offset,
                             "leader_epoch": o.leader_epoch, "lag": o.lag if o.lag >= 0 else None}
                            for (t, p), o in offsets.items()],
            })
    print_described(out, args.json, _show_group)
    return 0


def _show_group(g: dict[str, Any]) -> None:
    print(f"share group {g['group']}: {g['state']}, {len(g['members'])} member(s), epoch {g['group_epoch']}, "
          f"assignor {g['assignor'] or '-'}, coordinator {g['coordinator']}")
    if g["members"]:
        print_table(
            [(m["member_id"], m["host"], m["client_id"], m["member_epoch"],
              assignment_text(m["assignment"]))
             for m in g["members"]],
            ("MEMBER-ID", "HOST", "CLIENT-ID", "EPOCH", "ASSIGNMENT"),
        )
    if g["offsets"]:
        print_table(
            [(p["topic"], p["partition"], p["start_offset"], "-" if p["lag"] is None else p["lag"])
             for p in g["offsets"]],
            ("TOPIC", "PARTITION", "START-OFFSET", "LAG"),
        )


def _delete(args: argparse.Namespace) -> int:
    with make_admin(args) as admin, admin.client:
        if args.topic:
            for g in args.groups:
                admin.delete_share_group_offsets(g, args.topic)
                print(f"deleted the state of share group {g} on {', '.join(args.topic)}", file=sys.stderr)
            return 0
        admin.delete_groups(args.groups)
    for g in args.groups:
        print(f"deleted share group {g}", file=sys.stderr)
    return 0


def _reset(args: argparse.Namespace) -> int:
    spec = reset_target(args)
    with make_admin(args) as admin, admin.client:
        plan = admin.reset_share_group_offsets(args.group, args.topic, dry_run=not args.execute, **spec)
    print_reset_plan(args, plan, "applied")
    return 0
