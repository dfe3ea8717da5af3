"""Resolve Java artifacts from Maven Central into a cache outside the repository.

The Apache Kafka broker, Kafka's own Java tools and Spark's ``spark-sql-kafka`` package are all plain jars
on Maven Central. :func:`resolve` writes a throw-away pom listing the artifacts, runs
``mvn dependency:copy-dependencies`` once, and keeps the jars in
``$KAFKAWIRE_CACHE/maven/<name>/`` (default ``~/.cache/kafkawire``). Later calls, from any process, find a
``.complete`` marker and return at once; a file lock keeps two test processes from resolving the same set
at the same moment. No jar is ever written inside the checkout.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = ["MavenError", "cache_root", "classpath", "is_resolved", "resolve"]


class MavenError(RuntimeError):
    """Maven is missing, or could not resolve the requested artifacts."""


def cache_root() -> Path:
    """Where kafkawire keeps downloaded jars (``$KAFKAWIRE_CACHE`` or ``~/.cache/kafkawire``)."""
    root = os.environ.get("KAFKAWIRE_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "kafkawire"


def _pom(coordinates: Sequence[str]) -> str:
    deps = []
    for coord in coordinates:
        parts = coord.split(":")
        if len(parts) != 3:
            raise ValueError(f"artifact {coord!r} is not group:artifact:version")
        group, artifact, version = parts
        deps.append(
            f"<dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
            f"<version>{version}</version></dependency>"
        )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        "<groupId>kafkawire.cache</groupId><artifactId>jars</artifactId><version>1</version>"
        f"<dependencies>{''.join(deps)}</dependencies></project>\n"
    )


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive file lock on ``path`` (so that two processes do not unpack into one cache)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _target(name: str, coordinates: Sequence[str]) -> Path:
    digest = hashlib.sha256("\n".join(coordinates).encode()).hexdigest()[:10]
    return cache_root() / "maven" / f"{name}-{digest}"


def is_resolved(name: str, coordinates: Sequence[str]) -> bool:
    """Whether :func:`resolve` would return at once (the set is complete in the cache)."""
    return (_target(name, coordinates) / ".complete").exists()


def resolve(name: str, coordinates: Sequence[str], *, timeout: float = 900.0) -> Path:
    """The directory holding ``coordinates`` (``group:artifact:version``) and all their dependencies.

    ``name`` labels the set in the cache (``kafka-4.4.0``); the directory name also carries a hash of the
    coordinates, so changing the list resolves a fresh set. Raises :class:`MavenError` with Maven's own
    output when resolution fails (no network, an unknown version).
    """
    target = _target(name, coordinates)
    marker = target / ".complete"
    if marker.exists():
        return target
    with locked(target.with_name(f".{target.name}.lock")):
        if marker.exists():  # another process finished while this one waited
            return target
        mvn = shutil.which("mvn")
        if mvn is None:
            raise MavenError(
                "Maven (mvn) is not installed: it resolves Apache Kafka's jars from Maven Central. "
                "Install it (Debian: apt-get install maven) or run ./dev setup."
            )
        if target.exists():
            shutil.rmtree(target)
        work = target.with_name(target.name + ".work")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        (work / "pom.xml").write_text(_pom(coordinates))
        jars = work / "jars"
        proc = subprocess.run(
            # -U: re-ask Central about artifacts an earlier failed attempt (say, offline) marked missing;
            # without it Maven repeats the cached failure for a day. style.color: plain text for errors.
            [mvn, "-q", "-B", "-U", "-Dstyle.color=never", "-f", str(work / "pom.xml"),
             "dependency:copy-dependencies", f"-DoutputDirectory={jars}"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if proc.returncode != 0:
            raise MavenError(
                f"mvn could not resolve {', '.join(coordinates)} (exit {proc.returncode}): "
                + _maven_reason(proc.stdout + proc.stderr)
            )
        jars.rename(target)
        shutil.rmtree(work, ignore_errors=True)
        marker.write_text("\n".join(coordinates) + "\n")
        return target


def _maven_reason(output: str) -> str:
    """Maven's error lines without colour codes and without its generic "re-run with -X" advice."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", output)
    errors = [
        line.removeprefix("[ERROR]").strip()
        for line in text.splitlines()
        if line.startswith("[ERROR]") and line.strip() != "[ERROR]"
    ]
    advice = ("To see the full", "Re-run Maven", "For more information", "[Help")
    useful = [e for e in errors if not e.startswith(advice)]
    return "\n".join(useful[:10]) if useful else "\n".join(text.strip().splitlines()[-25:])


def classpath(directory: Path) -> str:
    """A Java classpath of every jar in ``directory`` (sorted, so it is the same in every run)."""
    return os.pathsep.join(str(p) for p in sorted(directory.glob("*.jar")))
