"""Pieces shared by the ``kafkawire`` subcommands: the ``--bootstrap`` option, client construction,
``key=value`` parsing, start positions and small output helpers."""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import IO, Any

__all__ = [
    "DEFAULT_BOOTSTRAP",
    "CliError",
    "add_connection_args",
    "make_admin",
    "make_client",
    "parse_pairs",
    "parse_start",
    "partitions_of",
    "print_table",
]

#: Used when neither ``--bootstrap`` nor ``KAFKAWIRE_BOOTSTRAP`` is given (Kafka's default listener).
DEFAULT_BOOTSTRAP = "127.0.0.1:9092"


class CliError(Exception):
    """A user-facing error: printed as ``kafkawire: error: <message>`` with exit status 1, no traceback."""


def add_action(
    sub: Any,
    name: str,
    run: Callable[[argparse.Namespace], int] | None = None,
    *,
    help: str,
    json_help: str | None = None,
    **kwargs: Any,
) -> argparse.ArgumentParser:
    """One action of a command (``kafkawire topics list``): its parser, with the connection options every
    action takes, ``--json`` when ``json_help`` says what it prints instead of a table, and ``run``, the
    function that :func:`run_action` calls when the action is chosen."""
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help, **kwargs)
    if run is not None:
        parser.set_defaults(action_run=run)
    add_connection_args(parser)
    if json_help is not None:
        parser.add_argument("--json", action="store_true", help=json_help)
    return parser


def run_action(args: argparse.Namespace) -> int:
    """Run the action chosen on the command line (the ``run`` given to :func:`add_action`)."""
    return int(args.action_run(args))


def add_connection_args(parser: argparse.ArgumentParser) -> None:
    """``--bootstrap`` (default ``$KAFKAWIRE_BOOTSTRAP``, else 127.0.0.1:9092), ``--timeout`` and the
    security options: ``-X key=value`` (the Java client's property names, as kcat), ``--command-config FILE``
    (a ``client.properties`` file, as Kafka's console tools), ``--security-protocol``, ``--sasl-*``, ``--ca-file``."""
    _add_bootstrap_args(parser)
    add_security_args(parser)


def _add_bootstrap_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bootstrap",
        "-b",
        default=None,
        metavar="HOST:PORT[,...]",
        help=f"bootstrap servers (default: $KAFKAWIRE_BOOTSTRAP, else {DEFAULT_BOOTSTRAP})",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="give up on an unreachable or failing broker after this long (default: 30)",
    )


def add_security_args(parser: argparse.ArgumentParser) -> None:
    """The security options alone (``-X``, ``--command-config``, ``--security-protocol``, ``--sasl-*``,
    ``--ca-file``), for commands that name their broker their own way (``bench``)."""
    security = parser.add_argument_group("security (Java client property names: kafkawire.client.config)")
    security.add_argument("-X", dest="properties", action="append", default=[], metavar="KEY=VALUE",
                          help="a client property, e.g. -X sasl.mechanism=SCRAM-SHA-512 (repeatable; beats the file)")
    security.add_argument("--command-config", "--config-file", dest="properties_file", metavar="FILE",
                          help="client properties file (security.protocol, sasl.jaas.config, ssl.truststore.*, ...)")
    security.add_argument("--security-protocol", choices=("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"),
                          type=str.upper, help="= -X security.protocol=...")
    security.add_argument("--sasl-mechanism", type=str.upper,
                          help="PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER or GSSAPI (its keytab etc.: -X)")
    security.add_argument("--sasl-username", help="SASL user (PLAIN, SCRAM)")
    security.add_argument("--sasl-password", help="SASL password (default: $KAFKAWIRE_SASL_PASSWORD)")
    security.add_argument("--ca-file", metavar="PEM", help="trust only these CA certificates (PEM)")


def client_properties(args: argparse.Namespace) -> dict[str, str]:
    """The client properties of ``--command-config``, then ``-X``, then the named flags (later ones win)."""
    from ..client.config import load_properties_file

    props: dict[str, str] = {}
    if getattr(args, "properties_file", None):
        try:
            props.update(load_properties_file(args.properties_file))
        except OSError as e:
            raise CliError(f"cannot read --command-config {args.properties_file}: {e.strerror or e}") from None
    for n, item in enumerate(getattr(args, "properties", None) or (), 1):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            # Not echoed: a bare value may be a password typed without its key (issue 34).
            raise CliError(f"bad -X (the {_ordinal(n)} one): expected KEY=VALUE")
        props[key.strip()] = value
    flags = {
        "security.protocol": getattr(args, "security_protocol", None),
        "sasl.mechanism": getattr(args, "sasl_mechanism", None),
        "sasl.username": getattr(args, "sasl_username", None),
        "sasl.password": getattr(args, "sasl_password", None)
        or (os.environ.get("KAFKAWIRE_SASL_PASSWORD") if getattr(args, "sasl_username", None) else None),
    }
    props.update({k: v for k, v in flags.items() if v is not None})
    if getattr(args, "ca_file", None):
        props.update({"ssl.truststore.location": args.ca_file, "ssl.truststore.type": "PEM"})
    return props


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def secrets_of(args: argparse.Namespace) -> list[str]:
    """The secret values ``args`` carries (``--sasl-password``, secret ``-X`` / ``--command-config``
    properties, a registry URL's password): the CLI scrubs them from anything it prints, behind the
    redaction done where each message is built (issue 34)."""
    from ..client.config.redact import is_secret_name

    out: list[str] = []
    try:
        props = client_properties(args)
    except CliError:
        props = {}
    out += [v for k, v in props.items() if is_secret_name(k) and v]
    for item in getattr(args, "properties", None) or ():
        key, sep, value = item.partition("=")
        out.append(value if sep and is_secret_name(key) else item if not sep else "")
    url = getattr(args, "schema_registry", None)
    if isinstance(url, str) and "@" in url:
        out += [p.rpartition("@")[0].partition("://")[2].partition(":")[2] for p in url.split(",")]
    return [s for s in out if s]


def bootstrap_of(args: argparse.Namespace) -> str:
    """The bootstrap servers the user asked for, with the documented fallbacks (``bootstrap.servers`` of
    ``-X`` / ``--command-config`` comes after ``--bootstrap`` and before the environment)."""
    from_props = client_properties(args).get("bootstrap.servers") if hasattr(args, "properties") else None
    return args.bootstrap or from_props or os.environ.get("KAFKAWIRE_BOOTSTRAP") or DEFAULT_BOOTSTRAP


def client_settings(args: argparse.Namespace, role: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(client keyword arguments, role keyword arguments)`` from the client properties of ``args``
    (``--command-config``, ``-X``, the security flags), read through kafkawire's one mapping of the Java
    client's names (:mod:`kafkawire.client.config`).

    ``role`` is ``"producer"`` (``acks``, ``compression.type``, ``linger.ms``, ... become
    :class:`kafkawire.Producer` keywords), ``"consumer"`` (``group.id``, ``auto.offset.reset``,
    ``isolation.level``, ... become :class:`kafkawire.Consumer` keywords) or None (commands that only
    administer: producer and consumer properties are reported as unused). A name close to a known one
    (``securty.protocol``) is an error with a suggestion; a known property this command has no use for is
    a warning on stderr.
    """
    from ..client import config as cfg

    props = {**client_properties(args), "bootstrap.servers": bootstrap_of(args)}
    command = " ".join(x for x in (getattr(args, "command", None), getattr(args, "action", None)) if x)

    def warn(key: str) -> None:
        print(f"kafkawire: warning: property {key!r} is not used by `kafkawire {command}`; ignored", file=sys.stderr)

    try:
        if role == "producer":
            settings = cfg.producer_kwargs_from_properties(props, warn=warn)
            names = {name for name, _ in cfg.PRODUCER_PARAMS.values()}
        elif role == "consumer":
            settings = cfg.consumer_kwargs_from_properties(props, warn=warn)
            names = {name for name, _ in cfg.CONSUMER_PARAMS.values()}
        else:
            # Any client: the common mapping, producer and consumer names reported as unused here.
            settings = cfg.client_kwargs_from_properties(props, warn=warn)
            names = set()
    except cfg.ConfigError as e:
        raise CliError(f"bad client property {e}") from None
    settings.pop("bootstrap_servers", None)
    role_settings = {k: settings.pop(k) for k in list(settings) if k in names}
    return settings, role_settings


def make_client(args: argparse.Namespace, role: str | None = None, **options: Any) -> Any:
    """A :class:`kafkawire.client.Client` for ``args.bootstrap`` whose retries stop after ``--timeout``.

    The library's default retry budget (60 s, 120 s for writes) suits services; a command line should fail fast
    with a clear message when the address is wrong, so the budget follows ``--timeout``. The role's
    settings (:func:`client_settings`) are left in ``args.role_settings`` for the command.
    """
    from ..client import Client

    timeout_ms = max(1.0, float(args.timeout)) * 1000
    config, args.role_settings = client_settings(args, role)
    settings = {
        "client_id": "kafkawire-cli",
        "retry_timeout_ms": timeout_ms,
        "request_timeout_ms": max(timeout_ms, 5_000),
        "connect_timeout_ms": min(timeout_ms, 10_000),
        **config,
        **options,
    }
    try:
        return Client(bootstrap_of(args), **settings)
    except ValueError as e:  # malformed bootstrap string, or SASL settings that do not fit together
        raise CliError(f"bad --bootstrap {bootstrap_of(args)!r} or security options: {e}") from None


def make_admin(args: argparse.Namespace) -> Any:
    """A :class:`kafkawire.admin.Admin` on :func:`make_client`'s client: ``with make_admin(args) as admin,
    admin.client:`` closes both."""
    from ..admin import Admin

    return Admin(client=make_client(args))


def partitions_of(client: Any, topic: str) -> list[int]:
    """The partition ids of ``topic``; a topic the cluster does not have is an error at once.

    The client retries UNKNOWN_TOPIC_OR_PARTITION until its deadline, because right after CreateTopics a
    broker may not know the topic yet. A command line asked about a misspelt topic should say so without
    waiting out ``--timeout``: one Metadata request decides, and only other errors (a leader election, a
    topic still being created) go through the client's retries.
    """
    from ..protocol.errors import UnknownTopicOrPartitionError

    tm = client.metadata([topic]).topics.get(topic)
    if tm is None:
        raise UnknownTopicOrPartitionError(f"topic {topic!r} does not exist")
    if isinstance(tm.error, UnknownTopicOrPartitionError):
        raise tm.error
    if tm.error is None and tm.partitions:
        return sorted(tm.partitions)
    return sorted(client.partitions_for(topic))


def parse_pairs(items: Iterable[str] | None, what: str) -> list[tuple[str, str]]:
    """``["a=1,b=2", "c=3"]`` -> ``[("a", "1"), ("b", "2"), ("c", "3")]`` (order and duplicates kept).

    Commas separate pairs inside one argument; repeat the option for a value that contains a comma.
    """
    out: list[tuple[str, str]] = []
    for item in items or ():
        parts = [item] if item.count("=") == 1 else item.split(",")
        for part in parts:
            if not part:
                continue
            key, sep, value = part.partition("=")
            if not sep or not key:
                raise CliError(f"bad {what} {part!r}: expected KEY=VALUE")
            out.append((key, value))
    return out


def parse_time_ms(text: str) -> int:
    """A time as ms since the epoch: ``@1700000000000`` (ms), or ISO 8601 (naive times are UTC)."""
    if text.startswith("@"):
        try:
            return int(text[1:])
        except ValueError:
            raise CliError(f"bad time {text!r}: expected @MILLISECONDS or an ISO 8601 date-time") from None
    try:
        when = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise CliError(f"bad time {text!r}: expected @MILLISECONDS or an ISO 8601 date-time") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    return int(when.timestamp() * 1000)


def parse_start(text: str) -> tuple[str, int]:
    """Parse ``--from``: ``earliest``, ``latest``, ``committed``, an offset (``42``), or a time
    (``@MILLISECONDS`` or ISO 8601) -> ``(kind, value)`` with kind in earliest/latest/committed/offset/time."""
    low = text.strip().lower()
    if low in ("earliest", "beginning", "latest", "end", "committed"):
        return {"beginning": "earliest", "end": "latest"}.get(low, low), 0
    if low.lstrip("-").isdigit():
        off = int(low)
        if off < 0:
            raise CliError(f"bad --from {text!r}: offsets are >= 0")
        return "offset", off
    return "time", parse_time_ms(text)


def add_reset_target(parser: argparse.ArgumentParser) -> Any:
    """The ``--to-*`` options of a ``reset-offsets`` action (one required); returns their group, to add more."""
    to = parser.add_mutually_exclusive_group(required=True)
    to.add_argument("--to-earliest", action="store_true")
    to.add_argument("--to-latest", action="store_true")
    to.add_argument("--to-offset", type=int, metavar="OFFSET", help="outside the log: its nearer end")
    to.add_argument("--to-datetime", metavar="TIME", help="ISO 8601 (naive = UTC) or @MILLISECONDS")
    return to


def reset_target(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of ``Admin.reset_*_offsets`` that the ``--to-*`` (or ``--shift-by``) option chose."""
    if args.to_earliest:
        return {"to": "earliest"}
    if args.to_latest:
        return {"to": "latest"}
    if args.to_offset is not None:
        return {"to": args.to_offset}
    if args.to_datetime is not None:
        return {"to_timestamp": parse_time_ms(args.to_datetime)}
    return {"shift_by": args.shift_by}


def print_reset_plan(args: argparse.Namespace, plan: Mapping[tuple[str, int], int], not_done: str) -> None:
    """A ``reset-offsets`` plan (new offset per partition of ``args.group``) as a table or ``--json``; on a dry
    run, a note on stderr that nothing was ``not_done``."""
    if args.json:
        print(json.dumps({"group": args.group, "executed": args.execute,
                          "offsets": [{"topic": t, "partition": p, "offset": o} for (t, p), o in plan.items()]}))
        return
    rows = [(args.group, t, p, o) for (t, p), o in plan.items()]
    print_table(rows, ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"))
    if not args.execute:
        print(f"dry run: nothing {not_done} (add --execute)", file=sys.stderr)


def print_described(out: Sequence[Any], as_json: bool, show: Callable[[Any], None]) -> None:
    """What a ``describe`` action found (a JSON-able dict per topic or group): with ``--json`` one JSON list,
    else each item printed by ``show``, a blank line between them."""
    if as_json:
        print(json.dumps(out))
        return
    for i, item in enumerate(out):
        if i:
            print()
        show(item)


def assignment_text(assignment: Mapping[str, Iterable[int]]) -> str:
    """A member's partitions as one table cell: ``t1:0,1;t2:3`` (``-`` for none)."""
    return ";".join(f"{t}:{','.join(map(str, ps))}" for t, ps in assignment.items()) or "-"


def print_rows(rows: Sequence[Sequence[Any]], header: Sequence[str], as_json: bool) -> None:
    """``rows`` as a table under ``header``, or with ``--json`` as a JSON list of objects keyed by the header
    names in snake_case (``LEADER-EPOCH`` -> ``leader_epoch``)."""
    if as_json:
        keys = [h.lower().replace("-", "_") for h in header]
        print(json.dumps([dict(zip(keys, r)) for r in rows]))
    else:
        print_table(rows, header)


def print_table(rows: Sequence[Sequence[Any]], header: Sequence[str], out: IO[str] | None = None) -> None:
    """Print ``rows`` as aligned columns (numbers right-aligned) under ``header``."""
    # Hand-written rather than rich (issue 15 asked for it): a rich Table with this layout prints the same
    # bytes to a pipe but costs ~70x the CPU (0.39 s instead of 6 ms for 1,000 rows, 1.9 s for 5,000;
    # `kafkawire offsets` prints a row per partition: benchmarks/cli_tables.py), and it would make every
    # table command need an extra.
    out = out or sys.stdout
    cells = [[str(h) for h in header]] + [["" if c is None else str(c) for c in row] for row in rows]
    numeric = [all(_is_number(r[i]) for r in rows) if rows else False for i in range(len(header))]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for r in cells:
        line = "  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in zip(r, widths, numeric))
        out.write(line.rstrip() + "\n")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
