"""``kafkawire broker``: run an embedded development broker on loopback until Ctrl-C or SIGTERM.

The brokers come from PyPI wheels (see :mod:`kafkawire.testing.brokers`): ``noida`` (noida-db, keeps its
data in ``--data-dir`` across runs) and ``tansu`` (memory only). The command prints the broker's
address as the first line on stdout (``127.0.0.1:PORT``), so a script can read it, then waits.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any

from ._common import CliError

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``kafkawire broker``."""
    parser.add_argument(
        "--kind",
        choices=("noida", "tansu"),
        default="noida",
        help="noida: noida-db (persistent with --data-dir); tansu: Tansu, in memory (default: noida)",
    )
    parser.add_argument("--port", type=int, help="listen on this loopback port (default: a free one)")
    parser.add_argument(
        "--data-dir", metavar="DIR", help="noida: keep the data in DIR across runs (default: a temporary directory)"
    )
    parser.add_argument("--startup-timeout", type=float, default=30.0, metavar="SECONDS")


def run(args: argparse.Namespace) -> int:
    """Start the broker, print its address, wait for SIGINT/SIGTERM, stop it."""
    from ..testing.brokers import BrokerStartError, start_broker

    options: dict[str, Any] = {"startup_timeout": args.startup_timeout}
    if args.port is not None:
        if not 0 < args.port < 65536:
            raise CliError(f"bad --port {args.port}")
        options["port"] = args.port
    if args.data_dir is not None:
        if args.kind != "noida":
            raise CliError("--data-dir needs --kind noida (Tansu here keeps its data in memory only)")
        options["data_dir"] = args.data_dir

    stop = threading.Event()
    received: list[int] = []

    def on_signal(signum: int, frame: Any) -> None:
        received.append(signum)
        stop.set()

    # Handlers go in before the broker starts, so a signal during start-up still stops it cleanly.
    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            broker = start_broker(args.kind, **options)
        except (BrokerStartError, OSError, ValueError) as e:
            raise CliError(f"{args.kind} broker did not start: {e}") from None
        try:
            print(broker.bootstrap, flush=True)
            where = f", data in {args.data_dir}" if args.data_dir else ""
            print(
                f"kafkawire: {args.kind} broker listening on {broker.bootstrap}{where} (pid {broker.pid}); "
                f"Ctrl-C to stop. export KAFKAWIRE_BOOTSTRAP={broker.bootstrap}",
                file=sys.stderr,
                flush=True,
            )
            while not stop.wait(0.5):
                if not broker.running:
                    tail = broker.stderr_tail(10)
                    raise CliError(f"{args.kind} broker exited unexpectedly" + (f":\n{tail}" if tail else ""))
        finally:
            if args.kind == "noida" and broker.running:
                broker.shutdown()  # SIGINT: noida-db writes its data out before exiting
            broker.stop()
        name = signal.Signals(received[0]).name if received else "signal"
        print(f"kafkawire: {name}: broker stopped", file=sys.stderr)
        return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
