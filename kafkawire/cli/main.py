"""Argument parsing and dispatch for the ``kafkawire`` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kafkawire", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``kafkawire`` console script."""
    args = build_parser().parse_args(argv)
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
