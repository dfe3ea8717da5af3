"""``kafkawire tune``: sweep producer and consumer settings on a cluster and recommend properties.

Runs :func:`kafkawire.bench.tune` against ``--bootstrap`` (security from ``-X`` / ``--command-config`` as
every command), with a progress bar on stderr; prints the table of trials and the recommended properties
(Java client names, for ``Producer.from_properties`` / ``Consumer.from_properties``) for ``--goal``, and
writes ``PREFIX.json`` and a chart ``PREFIX.png`` (``PREFIX.svg`` without matplotlib). The sweep's topics
are created and deleted by it (on Ctrl-C and errors too); ``--topic NAME`` runs on that topic instead, an
existing one only with ``--allow-existing``.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import IO

from ..bench.trial import Trial

__all__ = ["Progress", "add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``kafkawire tune``."""
    from ._common import add_connection_args

    parser.add_argument("--goal", choices=("throughput", "latency"), default="throughput",
                        help="what the recommendation optimises: records/s, or the p99 latency (default: throughput)")
    parser.add_argument("--quick", action="store_true",
                        help="a short sweep: fewer settings and 20,000 / 50,000 records per trial (about a minute)")
    parser.add_argument("--only", choices=("producer", "consumer"), help="sweep one client only")
    parser.add_argument("--records", type=int, help="records per producer trial (default 200000; quick 20000)")
    parser.add_argument("--consumer-records", type=int,
                        help="records per consumer trial (default 500000; quick 50000)")
    parser.add_argument("--record-size", type=int, default=100, help="value bytes per record (default: 100)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs per trial, the median kept (default: 1; 3 on a busy machine, 3x the time)")
    parser.add_argument("--sweep", action="append", default=[], metavar="PROPERTY=V1,V2,...",
                        help="values to try for a setting instead of the default ones, e.g. --sweep linger.ms=0,10 "
                        "(Java property names; partitions, or producer:partitions / consumer:partitions)")
    parser.add_argument("--topic", help="run every trial on this topic (created and deleted when missing)")
    parser.add_argument("--allow-existing", action="store_true",
                        help="with --topic: write to the topic even though it exists (it is not deleted)")
    parser.add_argument("--replication-factor", type=int, default=-1,
                        help="of the topics the sweep creates (default: the cluster's default.replication.factor)")
    parser.add_argument("--output", "-o", default="kafkawire-tune", metavar="PREFIX",
                        help="write PREFIX.json and the chart PREFIX.png (PREFIX.svg without matplotlib)")
    parser.add_argument("--no-chart", action="store_true", help="write no chart")
    add_connection_args(parser)


class Progress:
    """A progress bar on ``stream`` (redrawn in place on a terminal, one line per trial otherwise)."""

    def __init__(self, stream: IO[str] | None = None, width: int = 24) -> None:
        self.stream = stream or sys.stderr
        self.width = width
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()

    def __call__(self, done: int, total: int, trial: Trial) -> None:
        filled = int(self.width * done / max(total, 1))
        bar = "#" * filled + "-" * (self.width - filled)
        what = "failed" if trial.error else f"{trial.records_per_s:,.0f} records/s"
        text = (f"[{bar}] {done}/{total} {time.monotonic() - self.started:5.0f} s  "
                f"{trial.role} {trial.label()}: {what}")
        if self.tty:
            self.stream.write("\r\033[K" + text + ("\n" if done >= total else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


def _sweeps(items: list[str]) -> dict[str, list[str]]:
    from ._common import CliError

    out: dict[str, list[str]] = {}
    for item in items:
        key, sep, values = item.partition("=")
        vals = [v.strip() for v in values.split(",") if v.strip()]
        if not sep or not key.strip() or not vals:
            raise CliError(f"bad --sweep {item!r}: expected PROPERTY=V1,V2,...")
        out[key.strip()] = vals
    return out


def run(args: argparse.Namespace) -> int:
    """Run the sweep, print the table and the recommendation, write the JSON and the chart."""
    from ..bench import report as rep
    from ..bench.tune import tune
    from ._common import CliError, bootstrap_of, client_settings

    if args.allow_existing and not args.topic:
        raise CliError("--allow-existing needs --topic")
    for opt in ("records", "consumer_records", "repeat"):
        if getattr(args, opt) is not None and getattr(args, opt) < 1:
            raise CliError(f"--{opt.replace('_', '-')} must be >= 1")
    timeout_ms = max(1.0, float(args.timeout)) * 1000
    config, _ = client_settings(args)
    options = {"retry_timeout_ms": max(timeout_ms, 30_000), "connect_timeout_ms": min(timeout_ms, 10_000), **config}
    bootstrap = bootstrap_of(args)
    print(f"kafkawire tune: {bootstrap}, goal {args.goal}{' (quick)' if args.quick else ''}", file=sys.stderr)
    try:
        report = tune(
            bootstrap, goal=args.goal, quick=args.quick, records=args.records, consumer_records=args.consumer_records,
            record_size=args.record_size, roles=(args.only,) if args.only else ("producer", "consumer"),
            overrides=_sweeps(args.sweep), client_options=options, topic=args.topic,
            allow_existing=args.allow_existing, replication_factor=args.replication_factor, repeat=args.repeat,
            progress=Progress(),
        )
    except ValueError as e:
        raise CliError(str(e)) from None
    except RuntimeError as e:
        raise CliError(f"tune: {e}") from None
    print(f"kafkawire tune: {len(report.trials)} trials in {report.seconds:.0f} s on {bootstrap}, "
          f"{args.record_size} B values + 16 B keys; * = best for --goal {args.goal}")
    print(rep.format_table(report))
    print()
    print(rep.format_recommendation(report))
    print()
    rep.write_json(report, f"{args.output}.json")
    print(f"json: {args.output}.json")
    if not args.no_chart:
        print(f"chart: {rep.write_chart(report, args.output)}")
    deleted = ", ".join(report.topics_deleted) or "none"
    print(f"topics created and deleted: {deleted}", file=sys.stderr)
    return 0
