"""``kafkawire users describe|set-scram|delete-scram``: SCRAM credentials (KIP-554), as
``kafka-configs.sh --entity-type users`` shows and changes them, on :class:`kafkawire.admin.Admin`. The
password is salted here; only the salt and the salted password go to the broker."""

from __future__ import annotations

import argparse
import getpass
import sys

from ._common import CliError, add_action, make_admin, print_rows, run_action

__all__ = ["add_arguments", "run"]

_MECHANISMS = ["SCRAM-SHA-256", "SCRAM-SHA-512"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Subcommands of ``kafkawire users``."""
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    describe = add_action(sub, "describe", _describe, help="users with SCRAM credentials: mechanisms and iterations")
    describe.add_argument("users", nargs="*", metavar="USER", help="only these users (default: every one)")
    describe.add_argument("--json", action="store_true", help="print JSON instead of a table")
    upsert = add_action(sub, "set-scram", _set, help="create or replace a user's SCRAM credential")
    upsert.add_argument("user", metavar="USER")
    upsert.add_argument("--mechanism", choices=_MECHANISMS, default="SCRAM-SHA-256")
    upsert.add_argument("--iterations", type=int, default=8192, help="PBKDF2 iterations (Kafka: 4096-16384)")
    upsert.add_argument(
        "--password-stdin", action="store_true", help="read the password from stdin (default: prompt for it)"
    )
    delete = add_action(sub, "delete-scram", _delete, help="delete a user's SCRAM credential")
    delete.add_argument("user", metavar="USER")
    delete.add_argument("--mechanism", choices=_MECHANISMS, default="SCRAM-SHA-256")


def run(args: argparse.Namespace) -> int:
    """Run the chosen action."""
    return run_action(args)


def _describe(args: argparse.Namespace) -> int:
    with make_admin(args) as admin, admin.client:
        found = admin.describe_user_scram_credentials(args.users or None)
    rows = [(u, m, it) for u, creds in sorted(found.items()) for m, it in sorted(creds.items())]
    print_rows(rows, ("USER", "MECHANISM", "ITERATIONS"), args.json)
    return 0


def _set(args: argparse.Namespace) -> int:
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = getpass.getpass(f"password for {args.user}: ")
    if not password:
        raise CliError("the password is empty")
    with make_admin(args) as admin, admin.client:
        admin.alter_user_scram_credentials(upsert=[(args.user, args.mechanism, password, args.iterations)])
    print(f"set the {args.mechanism} credential of {args.user} ({args.iterations} iterations)")
    return 0


def _delete(args: argparse.Namespace) -> int:
    with make_admin(args) as admin, admin.client:
        admin.alter_user_scram_credentials(delete=[(args.user, args.mechanism)])
    print(f"deleted the {args.mechanism} credential of {args.user}")
    return 0
