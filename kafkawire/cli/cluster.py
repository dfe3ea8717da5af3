"""``kafkawire cluster partitions|elect-leaders|reassignments|reassign|log-dirs|features|update-features``:
partition leadership and placement, log directories and feature levels, as Kafka's ``kafka-topics``,
``kafka-leader-election``, ``kafka-reassign-partitions``, ``kafka-log-dirs`` and ``kafka-features`` show and
change them, on :class:`kafkawire.admin.Admin`."""

from __future__ import annotations

import argparse

from ._common import CliError, add_action, make_admin, print_rows, run_action

__all__ = ["add_arguments", "run"]


def _partition_list(text: str) -> tuple[str, int]:
    topic, sep, p = text.rpartition(":")
    if not sep or not topic or not p.isdigit():
        raise argparse.ArgumentTypeError(f"expected TOPIC:PARTITION, got {text!r}")
    return topic, int(p)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Subcommands of ``kafkawire cluster``."""
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    parts = add_action(
        sub, "partitions", _partitions,
        help="leaders, replicas, ISR and eligible leader replicas (KIP-966)",
    )
    parts.add_argument("topics", nargs="+", metavar="TOPIC")
    parts.add_argument("--json", action="store_true", help="print JSON instead of a table")

    elect = add_action(sub, "elect-leaders", _elect, help="preferred or unclean leader election")
    elect.add_argument("--election-type", choices=["preferred", "unclean"], default="preferred")
    which = elect.add_mutually_exclusive_group(required=True)
    which.add_argument("--partition", action="append", type=_partition_list, metavar="TOPIC:P", help="(repeatable)")
    which.add_argument("--all-topic-partitions", action="store_true", help="every partition that needs one")

    add_action(
        sub, "reassignments", _reassignments,
        help="the ongoing replica reassignments", json_help="print JSON instead of a table",
    )

    move = add_action(sub, "reassign", _reassign, help="move a partition's replicas, or cancel its reassignment")
    move.add_argument("partition", type=_partition_list, metavar="TOPIC:P")
    target = move.add_mutually_exclusive_group(required=True)
    target.add_argument("--replicas", metavar="ID,ID,...", help="the new replicas, preferred leader first")
    target.add_argument("--cancel", action="store_true", help="cancel the ongoing reassignment")

    dirs = add_action(sub, "log-dirs", _log_dirs, help="each broker's log directories and the replicas in them")
    dirs.add_argument("--broker", action="append", type=int, metavar="ID", help="only this broker (repeatable)")
    dirs.add_argument("--topic", action="append", metavar="TOPIC", help="only replicas of this topic (repeatable)")
    dirs.add_argument("--json", action="store_true", help="print JSON instead of a table")

    add_action(
        sub, "features", _features, help="finalized feature levels and the ranges the brokers support",
        json_help="print JSON instead of a table",
    )

    upd = add_action(sub, "update-features", _update_features, help="change finalized feature levels (KIP-584)")
    upd.add_argument("--feature", action="append", required=True, metavar="NAME=LEVEL", help="(repeatable)")
    upd.add_argument("--upgrade-type", choices=["upgrade", "safe_downgrade", "unsafe_downgrade"], default="upgrade")
    upd.add_argument("--validate-only", action="store_true", help="let the controller check, change nothing")


def run(args: argparse.Namespace) -> int:
    """Run the chosen action."""
    return run_action(args)


def _ids(v: tuple[int, ...] | None) -> str:
    return "-" if v is None else ",".join(map(str, v))



def _partitions(args: argparse.Namespace) -> int:
    with make_admin(args) as admin, admin.client:
        described = admin.describe_topic_partitions(args.topics)
    rows = [
        (t, p.partition, p.leader, p.leader_epoch, _ids(p.replicas), _ids(p.isr),
         _ids(p.eligible_leader_replicas), _ids(p.last_known_elr))
        for t in args.topics
        for p in described[t].partitions
    ]  # fmt: skip
    header = ("TOPIC", "PARTITION", "LEADER", "LEADER-EPOCH", "REPLICAS", "ISR", "ELR", "LAST-KNOWN-ELR")
    print_rows(rows, header, args.json)
    return 0


def _elect(args: argparse.Namespace) -> int:
    with make_admin(args) as admin, admin.client:
        result = admin.elect_leaders(None if args.all_topic_partitions else args.partition, election=args.election_type)
    from ..protocol.errors import ElectionNotNeededError

    elected = sorted(tp for tp, e in result.items() if e is None)
    not_needed = sorted(tp for tp, e in result.items() if isinstance(e, ElectionNotNeededError))
    failed = {tp: e for tp, e in result.items() if e is not None and not isinstance(e, ElectionNotNeededError)}
    if elected:
        print("elected a leader for " + ", ".join(f"{t}-{p}" for t, p in elected))
    if not_needed:
        print("valid replica already elected for " + ", ".join(f"{t}-{p}" for t, p in not_needed))
    for (t, p), e in sorted(failed.items()):
        print(f"failed for {t}-{p}: {e}")
    return 1 if failed else 0


def _reassignments(args: argparse.Namespace) -> int:
    with make_admin(args) as admin, admin.client:
        ongoing = admin.list_partition_reassignments()
    rows = [(t, p, _ids(r.replicas), _ids(r.adding), _ids(r.removing)) for (t, p), r in sorted(ongoing.items())]
    print_rows(rows, ("TOPIC", "PARTITION", "REPLICAS", "ADDING", "REMOVING"), args.json)
    return 0


def _reassign(args: argparse.Namespace) -> int:
    replicas = None
    if not args.cancel:
        try:
            replicas = [int(x) for x in args.replicas.split(",") if x.strip()]
        except ValueError:
            raise CliError(f"--replicas takes broker ids separated by commas, not {args.replicas!r}") from None
    with make_admin(args) as admin, admin.client:
        err = admin.alter_partition_reassignments({args.partition: replicas})[args.partition]
    if err is not None:
        raise CliError(str(err))
    topic, p = args.partition
    print(f"cancelled the reassignment of {topic}-{p}" if args.cancel else f"reassigning {topic}-{p} to {replicas}")
    return 0


def _log_dirs(args: argparse.Namespace) -> int:
    with make_admin(args) as admin, admin.client:
        dirs = admin.describe_log_dirs(args.broker)
    rows = [
        (broker, path, t, p, r.size, r.offset_lag, r.is_future)
        for broker, by_path in sorted(dirs.items())
        for path, d in sorted(by_path.items())
        for (t, p), r in sorted(d.replicas.items())
        if not args.topic or t in args.topic
    ]
    print_rows(rows, ("BROKER", "LOG-DIR", "TOPIC", "PARTITION", "SIZE", "OFFSET-LAG", "FUTURE"), args.json)
    return 0


def _features(args: argparse.Namespace) -> int:
    with make_admin(args) as admin, admin.client:
        f = admin.describe_features()
    rows = [
        (name, lo, hi, f.finalized.get(name, 0), f.epoch)
        for name, (lo, hi) in sorted(f.supported.items())
    ]
    print_rows(rows, ("FEATURE", "SUPPORTED-MIN", "SUPPORTED-MAX", "FINALIZED", "EPOCH"), args.json)
    return 0


def _update_features(args: argparse.Namespace) -> int:
    levels = {}
    for item in args.feature:
        name, sep, level = item.partition("=")
        if not sep or not level.strip().lstrip("-").isdigit():
            raise CliError(f"--feature takes NAME=LEVEL, not {item!r}")
        levels[name.strip()] = int(level)
    with make_admin(args) as admin, admin.client:
        admin.update_features(levels, upgrade_type=args.upgrade_type, validate_only=args.validate_only)
    verb = "validated" if args.validate_only else "finalized"
    print(f"{verb} " + ", ".join(f"{n}={v}" for n, v in levels.items()))
    return 0
