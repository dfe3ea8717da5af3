"""Argument parsing and dispatch for the ``kafkawire`` command.

Commands: ``produce``, ``consume``, ``topics``, ``groups``, ``share-groups``, ``offsets``, ``broker`` (an
embedded development broker), ``bench`` (throughput on this machine), ``tune`` (settings sweep on a
cluster), ``codec-demo`` and ``demo``. Each command lives in its own module
and is imported only when it runs, so ``kafkawire --help`` stays fast and optional dependencies (pyarrow,
tqdm, matplotlib, the peer clients) are needed only by the commands that use them.

Errors kafkawire raises on purpose (:class:`kafkawire.KafkaWireError`: broker error codes, unreachable
brokers, corrupt data), a missing optional dependency (with its ``pip install`` line) and usage errors are
printed as one line, ``kafkawire: error: ...``, with exit status 1; a traceback means a bug.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# (name, module, help): the modules define add_arguments(parser) and run(args) -> int.
_COMMANDS = (
    ("produce", "produce", "write records from lines, JSON lines or a file"),
    ("consume", "consume", "read records to stdout, JSON lines or Parquet"),
    ("topics", "topics", "list, create, delete, describe topics; their configs, partitions and records"),
    ("groups", "groups", "list, describe or delete consumer groups; reset their offsets"),
    ("share-groups", "share_groups", "list, describe or delete share groups (KIP-932); reset their start offsets"),
    ("offsets", "offsets", "offsets per partition: earliest, latest, at a time; a group's committed offsets and lag"),
    ("acls", "acls", "list, create or delete ACLs (as kafka-acls.sh)"),
    ("transactions", "transactions", "list and describe transactions and producers; abort a hanging transaction"),
    ("cluster", "cluster", "partitions and leader election, reassignments, log dirs, feature levels"),
    ("quotas", "quotas", "describe or alter client quotas of users, client ids and IPs"),
    ("users", "users", "describe, set or delete users' SCRAM credentials"),
    ("broker", "broker", "run an embedded broker on loopback until Ctrl-C: noida-db, Tansu or Apache Kafka (--kind)"),
    ("bench", "bench", "measure decode/encode (and end-to-end produce/consume) throughput against installed peers"),
    ("tune", "tune", "sweep producer and consumer settings on a cluster; recommend properties for a goal"),
)


def version_text() -> str:
    """``kafkawire X.Y.Z (compiled core|pure Python: why), Python X.Y.Z at PATH``: which codec runs, and why
    not the compiled one, matters to a bug report; an unexpected pure codec adds how to fix it."""
    import platform

    from .. import __version__, codec_status

    text = f"kafkawire {__version__} ({codec_status.summary()}), Python {platform.python_version()}"
    text += f"\n  package: {codec_status.package}\n  interpreter: {codec_status.python}"
    if codec_status.unexpected:
        text += "\n  unexpected: " + codec_status.warning_text().split(". Fix: ", 1)[-1]
    return text


class _VersionAction(argparse.Action):
    """``--version`` printed as written (argparse's own action re-wraps it into one paragraph)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest=dest, nargs=0, help="print the version, which codec runs and why")

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        print(version_text())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The ``kafkawire`` argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="kafkawire",
        description="The Apache Kafka wire protocol at compiled speed: a command line over kafkawire's client.",
        epilog="Connection and security options (-b/--bootstrap, --timeout, -X KEY=VALUE, --command-config, "
        "--security-protocol, --sasl-*, --ca-file) go before or after the command: "
        "kafkawire -b HOST:PORT topics list.",
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    for name, module, help_text in _COMMANDS:
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        mod = importlib.import_module(f"{__package__}.{module}")
        mod.add_arguments(cmd)
        cmd.set_defaults(run=mod.run)

    codec = sub.add_parser("codec-demo", help="encode and decode a generated record stream, print throughput")
    codec.add_argument("--records", type=int, default=1_000_000)
    codec.add_argument("--batch-size", type=int, default=1000)
    codec.add_argument("--value-size", type=int, default=100)
    codec.add_argument("--compression", default="none")
    codec.set_defaults(run=_run_codec_demo)

    demo = sub.add_parser("demo", help="clickstream → Kafka → Spark via kafkawire → aggregates → Parquet")
    from .demo import add_arguments

    add_arguments(demo)
    demo.set_defaults(run=_run_demo)
    return parser


def _run_codec_demo(args: argparse.Namespace) -> int:
    from .codec_demo import run

    return run(args.records, args.batch_size, args.value_size, args.compression)


def _run_demo(args: argparse.Namespace) -> int:
    from .demo import run

    return run(args)


def _global_options() -> dict[str, bool]:
    """The connection and security options (``-b``, ``--timeout``, ``-X``, ``--command-config``, ...): option
    string -> whether it takes a value. Kafka's tools and kcat accept them anywhere on the line."""
    from ._common import add_connection_args

    template = argparse.ArgumentParser(add_help=False)
    add_connection_args(template)
    return {s: a.nargs != 0 for a in template._actions for s in a.option_strings}


def hoist_global_options(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    """Move connection options written before the command (``kafkawire -b HOST:PORT topics list``) to
    just after the command and its action (``topics list -b HOST:PORT``), where argparse looks for them.

    Anything else before the command (``--version``, ``-h``, a typo) stays where it is, so argparse
    reports it as usual.
    """
    argv = list(argv)
    known = _global_options()
    hoisted: list[str] = []
    kept: list[str] = []
    i = 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "--":
        token = argv[i]
        name, eq, _ = token.partition("=")
        if name in known:
            takes_value = known[name] and not eq
            hoisted += argv[i : i + 1 + takes_value]
            i += 1 + takes_value
            continue
        short = next((s for s in known if len(s) == 2 and s[1] != "-" and token.startswith(s) and len(token) > 2), None)
        if short is not None and known[short]:  # -bHOST:PORT, -Xkey=value
            hoisted.append(token)
            i += 1
            continue
        kept.append(token)
        i += 1
    # The command and its action, e.g. ``topics list``: the options belong to the innermost parser.
    j, current = i, parser
    while j < len(argv):
        subs = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or argv[j] not in subs[0].choices:
            break
        current = subs[0].choices[argv[j]]
        j += 1
    return kept + argv[i:j] + hoisted + argv[j:]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``kafkawire`` console script: parse ``argv``, run the command, return its exit
    status (1 with a one-line message for kafkawire's own errors, 130 for Ctrl-C)."""
    from .._optional import MissingDependencyError
    from ..client.config.redact import redact_text
    from ..errors import KafkaWireError
    from ._common import CliError, secrets_of

    parser = build_parser()
    args = parser.parse_args(hoist_global_options(parser, sys.argv[1:] if argv is None else argv))
    try:
        return int(args.run(args) or 0)
    except (KafkaWireError, CliError, MissingDependencyError) as e:
        text = str(e) or type(e).__name__
        if isinstance(e, KafkaWireError):
            text = f"{type(e).__name__}: {text}"
        print(f"kafkawire: error: {redact_text(text, secrets_of(args))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("kafkawire: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
