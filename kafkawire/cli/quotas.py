"""``kafkawire quotas describe|alter``: client quotas (KIP-546) of users, client ids and IPs, as
``kafka-configs.sh --entity-type users|clients|ips`` shows and changes them, on :class:`kafkawire.admin.Admin`."""

from __future__ import annotations

import argparse

from ._common import CliError, add_action, make_admin, parse_pairs, print_rows, run_action

__all__ = ["add_arguments", "run"]


def _entity_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user", metavar="NAME", help="a user principal's name ('<default>': the default user)")
    p.add_argument("--client-id", metavar="ID", help="a client id ('<default>': the default client id)")
    p.add_argument("--ip", metavar="IP", help="a client IP address ('<default>': the default IP)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Subcommands of ``kafkawire quotas``."""
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    describe = add_action(sub, "describe", _describe, help="the quotas of the entities matching (default: every quota)")
    _entity_args(describe)
    describe.add_argument("--strict", action="store_true", help="only the entity exactly as given")
    describe.add_argument("--json", action="store_true", help="print JSON instead of a table")
    alter = add_action(sub, "alter", _alter, help="set or remove quotas of one entity")
    _entity_args(alter)
    alter.add_argument("--set", action="append", metavar="KEY=VALUE[,...]", help="e.g. producer_byte_rate=1048576")
    alter.add_argument("--delete", action="append", metavar="KEY", help="remove a quota (repeatable)")
    alter.add_argument("--validate-only", action="store_true", help="let the broker check, change nothing")


def run(args: argparse.Namespace) -> int:
    """Run the chosen action."""
    return run_action(args)


def _entity(args: argparse.Namespace) -> dict[str, str | None]:
    given = {"user": args.user, "client-id": args.client_id, "ip": args.ip}
    return {k: (None if v == "<default>" else v) for k, v in given.items() if v is not None}


def _describe(args: argparse.Namespace) -> int:
    entity = _entity(args) or None
    with make_admin(args) as admin, admin.client:
        found = admin.describe_client_quotas(entity, strict=args.strict)
    rows = [
        (" ".join(f"{t}={'<default>' if n is None else n}" for t, n in e), key, value)
        for e, quotas in sorted(found.items(), key=lambda kv: str(kv[0]))
        for key, value in sorted(quotas.items())
    ]
    print_rows(rows, ("ENTITY", "QUOTA", "VALUE"), args.json)
    return 0


def _alter(args: argparse.Namespace) -> int:
    entity = _entity(args)
    if not entity:
        raise CliError("give the entity: --user, --client-id and/or --ip")
    quotas: dict[str, float | None] = {}
    for key, value in parse_pairs(args.set, "--set"):
        try:
            quotas[key] = float(value)
        except ValueError:
            raise CliError(f"quota {key} takes a number, not {value!r}") from None
    quotas.update({key: None for key in args.delete or ()})
    if not quotas:
        raise CliError("nothing to change: give --set or --delete")
    with make_admin(args) as admin, admin.client:
        admin.alter_client_quotas([(entity, quotas)], validate_only=args.validate_only)
    print(f"{'validated' if args.validate_only else 'altered'} {len(quotas)} quota(s)")
    return 0
