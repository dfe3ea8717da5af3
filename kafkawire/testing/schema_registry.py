"""A real Schema Registry on loopback for tests and demos: Apicurio Registry, Confluent-compatible API.

Confluent's own registry is not published to Maven Central; Apicurio Registry is, as a ready-to-run
distribution (``io.apicurio:apicurio-registry-app:3.0.9``, classifier ``all``, a zip of a Quarkus app).
It keeps schemas in memory and serves the Confluent Schema Registry REST API under ``/apis/ccompat/v7``,
which confluent-kafka's ``SchemaRegistryClient`` and :class:`kafkawire.serde.SchemaRegistry` speak::

    from kafkawire.testing import start_schema_registry

    with start_schema_registry() as registry:
        print(registry.url)          # http://127.0.0.1:PORT/apis/ccompat/v7

The zip is fetched once with ``mvn dependency:get`` and unpacked into ``$KAFKAWIRE_CACHE/apicurio-<version>``
(default ``~/.cache/kafkawire``), beside Kafka's jars; a file lock keeps two processes from unpacking at
once. Differences from Confluent's registry seen with 3.0.9: schema ids start at 1 on every start (storage
is in memory), the default compatibility level is NONE (Confluent: BACKWARD), and ``/mode`` and
``/schemas`` answer 404.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

from .brokers import BrokerStartError, SubprocessBroker
from .maven import MavenError, cache_root, locked

__all__ = ["APICURIO_VERSION", "SchemaRegistryServer", "apicurio_home", "start_schema_registry"]

#: The Apicurio Registry release started by :func:`start_schema_registry`.
APICURIO_VERSION = "3.0.9"

# Apicurio's poms name repositories besides Central that cannot be reached from every machine; Maven would
# wait on each of them. Mirroring every repository to Central keeps the one download on the one server.
_SETTINGS = """<settings><mirrors><mirror><id>central-only</id><mirrorOf>*</mirrorOf>
<url>https://repo.maven.apache.org/maven2</url></mirror></mirrors></settings>
"""


def apicurio_home(version: str = APICURIO_VERSION, *, timeout: float = 900.0) -> Path:
    """The unpacked Apicurio Registry distribution (downloading it from Maven Central the first time)."""
    target = cache_root() / f"apicurio-registry-{version}"
    runner = target / f"apicurio-registry-app-{version}-runner.jar"
    marker = target / ".complete"
    if marker.exists():
        return target
    with locked(target.with_name(f".{target.name}.lock")):
        if marker.exists():
            return target
        mvn = shutil.which("mvn")
        if mvn is None:
            raise MavenError("Maven (mvn) is not installed: it fetches Apicurio Registry from Maven Central")
        work = Path(tempfile.mkdtemp(prefix="kafkawire-apicurio-"))
        try:
            settings = work / "settings.xml"
            settings.write_text(_SETTINGS)
            # dependency:get, not copy: maven-dependency-plugin 3.x's copy goal needs the artifact's parent
            # pom, which Central does not serve for 3.0.9. get only needs the zip itself.
            repo = work / "repo"
            proc = subprocess.run(
                [mvn, "-B", "-q", "-Dstyle.color=never", "-s", str(settings), f"-Dmaven.repo.local={repo}",
                 "dependency:get", f"-Dartifact=io.apicurio:apicurio-registry-app:{version}:zip:all",
                 "-Dtransitive=false"],
                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout,
            )
            zips = list(repo.glob(f"io/apicurio/apicurio-registry-app/{version}/*-all.zip"))
            if proc.returncode != 0 or not zips:
                raise MavenError(
                    f"mvn could not fetch io.apicurio:apicurio-registry-app:{version} (exit {proc.returncode}): "
                    + (proc.stdout + proc.stderr).strip()[-2000:]
                )
            shutil.rmtree(target, ignore_errors=True)
            unpack = target.with_name(target.name + ".work")
            shutil.rmtree(unpack, ignore_errors=True)
            with zipfile.ZipFile(zips[0]) as z:
                for member in z.namelist():
                    # The archive comes from outside: refuse entries that would land outside the directory.
                    if member.startswith("/") or ".." in Path(member).parts:
                        raise MavenError(f"Apicurio archive entry {member!r} escapes its directory")
                z.extractall(unpack)
            unpack.rename(target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        if not runner.exists():
            raise MavenError(f"{runner.name} missing from the Apicurio Registry {version} distribution")
        marker.write_text(version + "\n")
    return target


class SchemaRegistryServer(SubprocessBroker):
    """Apicurio Registry in one JVM on a free loopback port; ``.url`` is its Confluent-compatible API.

    Options: ``version`` (default :data:`APICURIO_VERSION`), ``heap`` (``-Xmx``, default ``256m``), plus the
    common ``port``, ``log_dir``, ``startup_timeout`` and ``keep_files`` of the broker processes. Stopped at
    interpreter exit like the brokers.
    """

    kind = "apicurio"
    stop_signal, stop_grace = signal.SIGTERM, 15.0

    def __init__(self, *, version: str = APICURIO_VERSION, heap: str = "256m", startup_timeout: float = 120.0,
                 **kwargs: Any) -> None:
        super().__init__(startup_timeout=startup_timeout, **kwargs)
        self.version = version
        self.heap = heap
        self.home = apicurio_home(version)

    @property
    def base_url(self) -> str:
        """The server's root URL (``http://127.0.0.1:PORT``)."""
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """The Confluent Schema Registry API of this server (what ``schema.registry.url`` takes)."""
        return f"{self.base_url}/apis/ccompat/v7"

    def command(self) -> list[str]:
        java = shutil.which("java")
        if java is None:
            raise BrokerStartError("java is not installed: Apicurio Registry needs Java 17 or later")
        return [
            java, f"-Xmx{self.heap}", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            f"-Dquarkus.http.host={self.host}", f"-Dquarkus.http.port={self.port}",
            # Quarkus writes a banner and INFO lines for every request otherwise.
            "-Dquarkus.log.level=WARN", "-Dquarkus.banner.enabled=false",
            "-jar", str(self.home / f"apicurio-registry-app-{self.version}-runner.jar"),
        ]

    def _ready(self) -> bool:
        # The port opens before the storage is ready; Quarkus's readiness check says when requests succeed.
        try:
            with urllib.request.urlopen(f"{self.base_url}/health/ready", timeout=2.0) as resp:
                return bool(resp.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def __enter__(self) -> SchemaRegistryServer:
        self.start()
        return self

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<SchemaRegistryServer apicurio {self.version} {self.url if self.port else '-'} {state}>"


def start_schema_registry(**options: Any) -> SchemaRegistryServer:
    """Start Apicurio Registry on a free loopback port and return it (a context manager; ``.url``, ``.stop()``).

    ``options`` go to :class:`SchemaRegistryServer`. ``KAFKAWIRE_APICURIO_VERSION`` overrides the version.
    """
    options.setdefault("version", os.environ.get("KAFKAWIRE_APICURIO_VERSION") or APICURIO_VERSION)
    server = SchemaRegistryServer(**options)
    server.start()
    return server
