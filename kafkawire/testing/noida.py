"""noida-db as a test broker (:class:`NoidaBroker`).

The ``noida-db`` binary shipped in the ``noida-db`` wheel, run in the foreground with only its Kafka
service. It keeps its data in a directory across restarts, which makes :meth:`NoidaBroker.restart`
(SIGKILL, then start again on the same port and directory) a realistic crash test. It ignores
SIGTERM, so it is stopped with SIGKILL, or SIGINT for a clean shutdown. It acknowledges writes
before they reach the directory (a snapshot about once a second), so a SIGKILL loses the last
second of acknowledged records. ``restart(graceful=True)`` narrows that but does not close it:
noida-db keeps acknowledging for ~100 ms after SIGINT and loses those records too. Use Apache Kafka
(``"kafka"``) where a test must show that nothing acknowledged is lost.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from .brokers import (
    SubprocessBroker,
    package_file,
)

__all__ = ["NoidaBroker", "noida_binary"]


def noida_binary() -> Path:
    """Path of the ``noida-db`` executable inside the ``noida-db`` wheel."""
    return package_file("noida_db", "noida-db.exe" if os.name == "nt" else "noida-db")


class NoidaBroker(SubprocessBroker):
    """noida-db with only its Kafka service, data in ``data_dir`` (a temporary directory by default).

    noida-db ignores SIGTERM, so :meth:`stop` and :meth:`restart` use SIGKILL; SIGINT is its clean
    shutdown. Quirk: it acknowledges a produce (even with acks=-1) before the data is on disk; its
    snapshot of ``data_dir`` runs about once a second, so a SIGKILL loses up to ~1 s of acknowledged
    records. ``restart(graceful=True)`` and :meth:`shutdown` save what was acknowledged before the
    signal, but noida-db acknowledges for ~100 ms after SIGINT and loses those records.
    """

    kind = "noida"
    supports_restart = True
    stop_signal = signal.SIGKILL

    def __init__(self, *, data_dir: str | os.PathLike[str] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if data_dir is None:
            data_dir = self.log_dir / "data"
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)

    def command(self) -> list[str]:
        return [
            str(noida_binary()),
            "start",
            "--only",
            "kafka",
            "--kafka-port",
            str(self.port),
            "--host",
            self.host,
            "--data-dir",
            str(self.data_dir),
        ]

    def restart(self, *, graceful: bool = False) -> None:
        """Stop the broker and start it again on the same port with the same data directory.

        By default it is killed with SIGKILL (a crash). noida-db acknowledges produce requests before
        its data reaches ``data_dir`` (it writes a snapshot about once a second), so a crash loses
        the last second of acknowledged records; ``graceful=True`` stops it with SIGINT (its Ctrl-C
        shutdown, which saves everything) instead.
        """
        with self._lock:
            self.kill_process(signal.SIGINT if graceful else signal.SIGKILL, 15.0)
            self.start()

    def shutdown(self) -> None:
        """Stop with SIGINT (noida-db's clean shutdown: data saved), keeping ``data_dir``; ``start()`` resumes."""
        with self._lock:
            self.kill_process(signal.SIGINT, 15.0)
