"""``kafkawire broker``: run an embedded development broker on loopback until Ctrl-C or SIGTERM.

``kafka`` is Apache Kafka itself (KRaft, one JVM; its jars come from Maven Central on first use and need
Java 17, see :mod:`kafkawire.testing.kafka`): the reference broker, keeping its logs in ``--data-dir``
across runs. ``noida`` (noida-db, also keeps its data in ``--data-dir``) and ``tansu`` (memory only) come
from PyPI wheels (see :mod:`kafkawire.testing`) and start in milliseconds, but depart from Kafka
in ways ``docs/BROKERS.md`` lists. The command prints the broker's address as the first line on stdout
(``127.0.0.1:PORT``), so a script can read it, then waits.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any

from ._common import CliError

__all__ = ["add_arguments", "run"]

_DEFAULT_STARTUP_TIMEOUT = 30.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``kafkawire broker``."""
    parser.add_argument(
        "--kind",
        choices=("noida", "tansu", "kafka"),
        default="noida",
        help="noida: noida-db (persistent with --data-dir); tansu: Tansu, in memory; kafka: Apache Kafka "
        "(needs Java 17; persistent with --data-dir) (default: noida)",
    )
    parser.add_argument("--port", type=int, help="listen on this loopback port (default: a free one)")
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        help="noida, kafka: keep the data in DIR across runs (default: a temporary directory)",
    )
    parser.add_argument(
        "--startup-timeout",
        type=float,
        default=_DEFAULT_STARTUP_TIMEOUT,
        metavar="SECONDS",
        help="give up if the broker is not serving after this long (default: 30; 120 for kafka)",
    )


def run(args: argparse.Namespace) -> int:
    """Start the broker, print its address, wait for SIGINT/SIGTERM, stop it."""
    from ..testing import BrokerStartError, start_broker

    options: dict[str, Any] = {"startup_timeout": args.startup_timeout}
    if args.port is not None:
        if not 0 < args.port < 65536:
            raise CliError(f"bad --port {args.port}")
        options["port"] = args.port
    if args.startup_timeout == _DEFAULT_STARTUP_TIMEOUT and args.kind == "kafka":
        options["startup_timeout"] = 120.0  # a JVM, and the jars resolved from Maven Central the first time
    if args.data_dir is not None:
        if args.kind == "tansu":
            raise CliError("--data-dir needs --kind noida or kafka (Tansu here keeps its data in memory only)")
        if args.kind == "kafka":
            # Kafka's log directories (and its config) live under the broker's directory; keep them.
            options.update(log_dir=args.data_dir, keep_files=True)
        else:
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
            broker: Any = start_broker(args.kind, **options)  # pid, stderr_tail, shutdown: subprocess kinds
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
