"""Small Java programs against Kafka's own client jars: the Java client as the other side of the wire.

:func:`compile_java` compiles one ``.java`` file with ``javac`` against :func:`~.kafka.kafka_classpath`
into a cache directory outside the checkout, keyed by a hash of the source and of the classpath (a second
call, from any process, reuses the classes). :func:`java_command` builds the ``java`` command line that
runs it, :func:`run_java` runs it to completion, and :func:`json_lines` parses what such a program prints:
one JSON object per line on stdout (anything else, e.g. a stray log line, is ignored).

The JVM logs through log4j2 at WARN to stderr (a generated config file next to the classes), so stdout
carries only the program's own output.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .brokers import jdk_tool
from .kafka import java_binary, kafka_classpath, kafka_version
from .maven import cache_root

__all__ = ["JavaError", "compile_java", "java_command", "javac_binary", "json_lines", "run_java"]

_LOG4J2_STDERR = """\
status = error
appender.err.type = Console
appender.err.name = STDERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = STDERR
"""


class JavaError(RuntimeError):
    """``javac`` is missing or failed, or a Java program exited with an error."""


def javac_binary() -> str:
    """The ``javac`` compiler (``$JAVA_HOME/bin/javac``, else the one on PATH)."""
    found = jdk_tool("javac")
    if found is None:
        raise JavaError("javac is not installed: the Java interop tests need JDK 17 (Debian: openjdk-17-jdk-headless)")
    return found


def compile_java(source: str | Path, *, version: str | None = None) -> Path:
    """Compile ``source`` (one ``.java`` file) against Kafka ``version``'s jars; return the classes directory.

    The directory is ``<cache>/java/<stem>-<hash>`` where the hash covers the source text, the classpath
    and the Kafka version, so an edited source or another Kafka version compiles afresh.
    """
    source = Path(source)
    text = source.read_bytes()
    classpath = kafka_classpath(version)
    key = hashlib.sha256(text + b"\0" + classpath.encode() + b"\0" + kafka_version(version).encode()).hexdigest()
    out = cache_root() / "java" / f"{source.stem}-{key[:16]}"
    done = out / ".complete"
    if done.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    # A lock per output directory: two test processes compiling the same source must not interleave.
    with open(out.parent / f".{out.name}.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return out
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        res = subprocess.run(
            [javac_binary(), "-nowarn", "-encoding", "UTF-8", "-cp", classpath, "-d", str(out), str(source)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if res.returncode != 0:
            raise JavaError(f"javac {source.name} failed ({res.returncode}):\n{(res.stdout + res.stderr)[-4000:]}")
        (out / "log4j2.properties").write_text(_LOG4J2_STDERR)
        done.write_text(key)
    return out


def java_command(
    source: str | Path,
    *args: str,
    main: str | None = None,
    version: str | None = None,
    heap: str = "256m",
    jvm_options: Sequence[str] = (),
) -> list[str]:
    """The command line running ``main`` (default: the source's class) of the compiled ``source``.

    ``main`` may also name a class from Kafka's jars (e.g. ``org.apache.kafka.tools.ConsumerPerformance``):
    the program's classes directory and the Kafka classpath are both on the classpath.
    """
    classes = compile_java(source, version=version)
    return [
        java_binary(),
        f"-Xmx{heap}",
        "-XX:+UseG1GC",
        "-Djava.awt.headless=true",
        f"-Dlog4j2.configurationFile=file:{classes / 'log4j2.properties'}",
        *jvm_options,
        "-cp",
        f"{classes}{os.pathsep}{kafka_classpath(version)}",
        main or Path(source).stem,
        *args,
    ]


def run_java(
    source: str | Path,
    *args: str,
    input: str | None = None,
    timeout: float = 300.0,
    main: str | None = None,
    version: str | None = None,
    heap: str = "256m",
) -> subprocess.CompletedProcess[str]:
    """Run the compiled ``source`` (or ``main``) with ``args``, feeding it ``input``; raise on failure.

    Raises :class:`JavaError` with the tail of stderr when the program exits non-zero.
    """
    cmd = java_command(source, *args, main=main, version=version, heap=heap)
    res = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout)
    if res.returncode != 0:
        raise JavaError(
            f"{cmd[-len(args) - 1] if args else cmd[-1]} {' '.join(args)} exited {res.returncode}:\n"
            f"{res.stderr[-4000:]}"
        )
    return res


def json_lines(text: str | Iterable[str]) -> list[dict[str, Any]]:
    """The JSON objects of ``text``, one per line that starts with ``{`` (other lines are ignored)."""
    lines = text.splitlines() if isinstance(text, str) else text
    return [json.loads(line) for line in lines if line.lstrip().startswith("{")]
