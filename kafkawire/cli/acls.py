"""``kafkawire acls list|create|delete``: ACLs as Kafka's ``kafka-acls.sh`` manages them, on
:class:`kafkawire.admin.Admin` (the cluster needs an authorizer; without one the broker answers
SECURITY_DISABLED)."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import CliError, add_action, make_client, print_rows, run_action

__all__ = ["add_arguments", "run"]


def _resource_args(p: argparse.ArgumentParser, *, pattern_default: str) -> None:
    which = p.add_mutually_exclusive_group()
    which.add_argument("--topic", metavar="TOPIC", help="a topic ('*': every topic)")
    which.add_argument("--group", metavar="GROUP", help="a consumer group ('*': every group)")
    which.add_argument("--transactional-id", metavar="ID", help="a transactional id ('*': every one)")
    which.add_argument("--user", metavar="USER", help="a user principal as a resource (delegation tokens)")
    which.add_argument("--cluster", action="store_true", help="the cluster itself")
    p.add_argument(
        "--resource-pattern-type",
        default=pattern_default,
        choices=["literal", "prefixed", "any", "match"],
        help=f"how the name matches (default {pattern_default}; any/match only to list or delete)",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Subcommands of ``kafkawire acls``."""
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    ls = add_action(sub, "list", _list, help="the ACLs matching a resource and principal (default: every ACL)")
    _resource_args(ls, pattern_default="any")
    ls.add_argument("--principal", metavar="TYPE:NAME", help="only this principal (e.g. User:alice)")
    ls.add_argument("--json", action="store_true", help="print JSON instead of a table")

    create = add_action(sub, "create", _create, help="allow or deny principals operations on a resource")
    _resource_args(create, pattern_default="literal")
    create.add_argument("--allow-principal", action="append", default=[], metavar="TYPE:NAME")
    create.add_argument("--deny-principal", action="append", default=[], metavar="TYPE:NAME")
    create.add_argument(
        "--operation", action="append", required=True, metavar="OP", help="READ, WRITE, ... (repeatable)"
    )
    create.add_argument("--host", default="*", help="the client host the ACL applies to (default *)")

    delete = add_action(sub, "delete", _delete, help="delete the ACLs matching a resource, principal and operation")
    _resource_args(delete, pattern_default="any")
    delete.add_argument("--principal", metavar="TYPE:NAME", help="only this principal")
    delete.add_argument("--operation", metavar="OP", default="ANY", help="only this operation")
    delete.add_argument("--json", action="store_true", help="print the deleted ACLs as JSON")


def run(args: argparse.Namespace) -> int:
    """Run the chosen action."""
    return run_action(args)


def _resource(args: argparse.Namespace) -> tuple[str, str | None]:
    if args.topic is not None:
        return "TOPIC", args.topic
    if args.group is not None:
        return "GROUP", args.group
    if args.transactional_id is not None:
        return "TRANSACTIONAL_ID", args.transactional_id
    if args.user is not None:
        return "USER", args.user
    if args.cluster:
        return "CLUSTER", "kafka-cluster"  # Kafka's one cluster resource name
    return "ANY", None


def _filter(args: argparse.Namespace, operation: str = "ANY") -> Any:
    from ..admin import AclBindingFilter

    rtype, name = _resource(args)
    flt = AclBindingFilter(
        resource_type=rtype,
        name=name,
        pattern_type=args.resource_pattern_type.upper(),
        principal=getattr(args, "principal", None),
        operation=operation.upper(),
    )
    try:
        flt.codes()
    except ValueError as e:
        raise CliError(str(e)) from None
    return flt


def _show(bindings: list[Any], as_json: bool) -> None:
    rows = sorted(
        (b.resource_type, b.name, b.pattern_type, b.principal, b.host, b.operation, b.permission) for b in bindings
    )
    header = ("RESOURCE-TYPE", "NAME", "PATTERN-TYPE", "PRINCIPAL", "HOST", "OPERATION", "PERMISSION")
    print_rows(rows, header, as_json)


def _list(args: argparse.Namespace) -> int:
    from ..admin import Admin

    with Admin(client=make_client(args)) as admin, admin.client:
        _show(admin.describe_acls(_filter(args)), args.json)
    return 0


def _create(args: argparse.Namespace) -> int:
    from ..admin import AclBinding, Admin

    rtype, name = _resource(args)
    if name is None:
        raise CliError("give the resource: --topic, --group, --transactional-id, --user or --cluster")
    if args.resource_pattern_type in ("any", "match"):
        raise CliError("an ACL's pattern type is literal or prefixed")
    if not args.allow_principal and not args.deny_principal:
        raise CliError("give --allow-principal and/or --deny-principal")
    bindings = [
        AclBinding(rtype, name, principal, op.upper(), permission, args.host, args.resource_pattern_type.upper())
        for permission, principals in (("ALLOW", args.allow_principal), ("DENY", args.deny_principal))
        for principal in principals
        for op in args.operation
    ]
    try:
        for b in bindings:
            b.codes()  # an operation that is not Kafka's fails here, before any connection
    except ValueError as e:
        raise CliError(str(e)) from None
    with Admin(client=make_client(args)) as admin, admin.client:
        admin.create_acls(bindings)
    print(f"created {len(bindings)} ACL(s)")
    return 0


def _delete(args: argparse.Namespace) -> int:
    from ..admin import Admin

    with Admin(client=make_client(args)) as admin, admin.client:
        deleted = admin.delete_acls([_filter(args, args.operation)])
    if args.json:
        _show(deleted, True)
    else:
        print(f"deleted {len(deleted)} ACL(s)")
        if deleted:
            _show(deleted, False)
    return 0
