"""The machinery every test broker shares: :class:`Broker` (``.bootstrap``, ``.kind``, ``.stop()``, a
context manager), :class:`SubprocessBroker` (a broker process run and watched from here), free ports,
waiting for a port, and finding a broker executable inside its wheel.

The brokers themselves: :mod:`.kafka` (Apache Kafka, the reference), :mod:`.noida`, :mod:`.tansu` and
:mod:`.mock` (stand-ins from PyPI wheels, no JVM); :func:`kafkawire.testing.start_broker` starts any of them.

Every broker has ``.bootstrap`` (``"127.0.0.1:PORT"``), ``.kind``, ``.stop()`` and is a context
manager. Broker processes are run by `mirakuru <https://github.com/dbfixtures/mirakuru>`_ executors (the
``brokers`` extra): started in their own session, waited for until they serve, stopped with a signal and
then SIGKILL. They are stopped when the interpreter exits (``atexit``, then mirakuru's own handler) and,
on Linux, killed by the kernel when the process that started them dies (``PR_SET_PDEATHSIG``), so a
crashed test run leaves nothing listening.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import ctypes
import ctypes.util
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "Broker",
    "BrokerStartError",
    "SubprocessBroker",
    "free_port",
    "java_binary",
    "wait_for_port",
]

LOOPBACK = "127.0.0.1"


class BrokerStartError(RuntimeError):
    """A broker did not come up (it exited, or its port did not accept connections in time)."""


# --------------------------------------------------------------------------------------------- helpers


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port on ``host`` that nothing listens on right now (the kernel's pick for port 0).

    There is an unavoidable window between this call and the broker binding the port; the subprocess
    brokers retry with a fresh port when their first choice turns out to be taken.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def log_tail(path: Path | None, lines: int = 30) -> str:
    """The last ``lines`` lines of a broker's log file ("" when there is none): for start errors."""
    if path is None or not path.exists():
        return ""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - 16384))
        data = f.read().decode("utf-8", "replace")
    return "\n".join(data.splitlines()[-lines:])


def wait_for_port(host: str, port: int, timeout: float = 15.0, *, what: str = "broker") -> None:
    """Block until ``host:port`` accepts a TCP connection, or raise :class:`BrokerStartError`.

    For listeners without a process of their own (the in-process mock cluster); broker processes are
    watched by mirakuru (:class:`_BrokerProcess`), which also notices when the process exits.
    """
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            pass
        if time.monotonic() >= deadline:
            raise BrokerStartError(f"{what} did not accept connections on {host}:{port} within {timeout:g}s")
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


def _port_accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _new_session_dying_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    # What mirakuru's own preexec_fn does (os.setsid: its stop() signals the whole process group, and a
    # Ctrl-C in the terminal must not reach the broker first), plus PR_SET_PDEATHSIG (1): the kernel sends
    # SIGKILL to the broker when the thread that forked it dies (see _Spawner), so a test run killed with
    # SIGKILL, which runs no atexit handler (neither ours nor mirakuru's), does not leave brokers behind.
    os.setsid()
    try:
        libc = ctypes.CDLL(None)
        libc.prctl(1, signal.SIGKILL)
    except Exception:
        pass


class _Spawner:
    """Starts every broker process from one long-lived daemon thread.

    PR_SET_PDEATHSIG fires when the *thread* that forked the child exits, not the process: a broker
    restarted from a short-lived test thread would be killed as soon as that thread ended. Forking from a
    thread that lives as long as the interpreter keeps the signal tied to the process's lifetime.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.Queue[tuple[Any, concurrent.futures.Future[Any]]] = queue.Queue()
        self._thread: threading.Thread | None = None

    def _run(self) -> None:
        while True:
            fn, fut = self._jobs.get()
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(fn())
                except BaseException as e:
                    fut.set_exception(e)

    def call(self, fn: Any) -> Any:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="kafkawire-broker-spawner", daemon=True)
                self._thread.start()
        fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._jobs.put((fn, fut))
        return fut.result()


_SPAWNER = _Spawner()
#: Every broker started and not yet stopped (stopped at interpreter exit).
LIVE_BROKERS: weakref.WeakSet[Broker] = weakref.WeakSet()


def _stop_all() -> None:
    for broker in list(LIVE_BROKERS):
        with contextlib.suppress(Exception):
            broker.stop()


atexit.register(_stop_all)


def _mirakuru() -> Any:
    """Import mirakuru (the ``brokers`` extra), keeping :func:`_stop_all` ahead of mirakuru's exit handler.

    mirakuru registers an atexit handler when it is imported that SIGKILLs every process it started.
    atexit runs handlers last-registered first, and mirakuru is imported lazily (``kafkawire.testing`` is
    also imported for its Maven resolver, without the extra), so ours is registered again after it: the
    brokers get their graceful stop (Kafka's controlled shutdown) and their temporary directories are
    removed before mirakuru kills whatever is left.
    """
    global _MIRAKURU
    if _MIRAKURU is None:
        from .._optional import require

        _MIRAKURU = require("mirakuru", "kafkawire.testing's broker processes")
        atexit.unregister(_stop_all)
        atexit.register(_stop_all)
    return _MIRAKURU


_MIRAKURU: Any = None


# ---------------------------------------------------------------------------------------------- base


class Broker:
    """A running Kafka-compatible broker. Use :func:`start_broker` to make one.

    Attributes: ``kind`` (``"noida"``, ``"tansu"``, ``"mock"``), ``host``, ``port`` and ``bootstrap``
    (``"host:port"``, comma-separated when a cluster has several brokers).
    """

    kind: str = ""
    host: str = LOOPBACK
    port: int = 0
    bootstrap: str = ""
    #: Whether :meth:`restart` is available.
    supports_restart: bool = False

    def start(self) -> Broker:
        """Start the broker (no-op when running) and return ``self``."""
        raise NotImplementedError

    def stop(self) -> None:
        """Stop the broker and delete the temporary files it owns. Safe to call twice."""
        raise NotImplementedError

    def restart(self) -> None:
        """Kill the broker abruptly and start it again on the same address (not every kind can)."""
        raise NotImplementedError(f"{self.kind} brokers cannot be restarted")

    def pause(self) -> None:
        """Freeze the broker (SIGSTOP): its connections stay open and nothing answers, as in a long GC pause
        or a frozen VM (Trogdor's ``ProcessStopFault``). :meth:`resume` thaws it."""
        raise NotImplementedError(f"{self.kind} brokers cannot be paused")

    def resume(self) -> None:
        """Thaw a broker frozen by :meth:`pause` (SIGCONT); a no-op for one that is not paused."""
        raise NotImplementedError(f"{self.kind} brokers cannot be paused")

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1) -> None:
        """Create a topic through a side channel (only brokers without CreateTopics need this)."""
        raise NotImplementedError(f"create topics on {self.kind} with CreateTopics (kafkawire.Client)")

    @property
    def running(self) -> bool:
        raise NotImplementedError

    def __enter__(self) -> Broker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<{type(self).__name__} {self.kind} {self.bootstrap or '-'} {state}>"


def _broker_process(
    command: list[str],
    *,
    busy: Callable[[], bool],
    ready: Callable[[], bool],
    cwd: Path,
    env: Mapping[str, str] | None,
    stdout: Any,
    stderr: Any,
    timeout: float,
) -> Any:
    """A mirakuru executor for one broker process: ``start()`` returns once ``ready()`` is true.

    ``busy()`` is asked first: a port that already accepts connections belongs to someone else, and
    ``ready()`` would take that for the new broker. mirakuru does the process plumbing: the ``Popen`` in
    a new session, polling ``ready`` until the deadline while failing as soon as the process exits with
    an error, SIGKILL on a timeout, and stopping with a signal, a grace period, then SIGKILL for the
    whole process group.
    """
    mirakuru = _mirakuru()

    class _BrokerProcess(mirakuru.Executor):  # type: ignore[misc, name-defined]
        def pre_start_check(self) -> bool:
            return busy()

        def after_start_check(self) -> bool:
            return ready()

        @property
        def _popen_kwargs(self) -> dict[str, Any]:
            kwargs = dict(super()._popen_kwargs)
            kwargs["universal_newlines"] = False  # output goes to log files, never through pipes
            if sys.platform.startswith("linux"):
                kwargs["preexec_fn"] = _new_session_dying_with_parent
            return kwargs

        def start(self) -> Any:
            # As mirakuru.Executor.start, except that the Popen runs on the long-lived spawner thread, so
            # that PR_SET_PDEATHSIG follows the process and not the (possibly short-lived) calling thread.
            if self.pre_start_check():
                raise mirakuru.AlreadyRunning(self)
            _SPAWNER.call(lambda: mirakuru.SimpleExecutor.start(self))
            self.wait_for(self.check_subprocess)
            return self

        def stop_within(self, sig: int, grace: float) -> None:
            """Send ``sig`` to the process group, wait up to ``grace`` s for the exit, then SIGKILL."""
            # mirakuru waits its one `timeout` for a start and for a stop alike: a broker has a long
            # start-up budget (Kafka 120 s) but a short stop grace (Tansu 1 s), so set it for this stop.
            self._timeout = grace
            try:
                self.stop(stop_signal=sig)
            except mirakuru.ProcessExitedWithError:  # mirakuru.exceptions.ProcessFinishedWithError
                pass  # the JVM exits 143 on SIGTERM, noida-db 130 on SIGINT: any exit status will do

    return _BrokerProcess(
        command,
        cwd=str(cwd),
        envvars=dict(env) if env is not None else None,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        timeout=timeout,
        sleep=0.02,
    )


class SubprocessBroker(Broker):
    """A broker that runs as a child process listening on one loopback port (a mirakuru executor)."""

    #: How :meth:`kill_process` stops the broker: this signal to its process group, then SIGKILL if it
    #: has not exited after ``stop_grace`` seconds.
    stop_signal: int = signal.SIGKILL
    stop_grace: float = 10.0

    def __init__(
        self,
        *,
        port: int | None = None,
        host: str = LOOPBACK,
        log_dir: str | os.PathLike[str] | None = None,
        startup_timeout: float = 20.0,
        keep_files: bool = False,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """``env``: variables added to this process's environment for the broker."""
        self.host = host
        self._fixed_port = port is not None
        self.port = port or 0
        self.startup_timeout = startup_timeout
        self.keep_files = keep_files
        self._owned_dirs: list[Path] = []
        if log_dir is None:
            log_dir = tempfile.mkdtemp(prefix=f"kafkawire-{self.kind}-")
            self._owned_dirs.append(Path(log_dir))
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.stdout_path = self.log_dir / "stdout.log"
        self.stderr_path = self.log_dir / "stderr.log"
        self._env = dict(env) if env is not None else None
        self._process: Any = None  # the mirakuru executor while the broker runs
        self._restartable = False  # True once it has run: a restart may wait for its port to free up
        self._lock = threading.RLock()
        #: True between :meth:`pause` and :meth:`resume`.
        self.paused = False

    # subclasses -----------------------------------------------------------------------------------
    def command(self) -> list[str]:
        """The argv that starts the broker on ``self.host:self.port``."""
        raise NotImplementedError

    def _ready(self) -> bool:
        """Whether the started broker serves: its port accepts connections (Kafka asks for more)."""
        return _port_accepts(self.host, self.port)

    def _start_failure(self, exit_status: int | None) -> BrokerStartError:
        what = f"{self.kind} broker"
        if exit_status is not None:
            return BrokerStartError(
                f"{what} exited with status {exit_status} before listening on {self.host}:{self.port}; "
                f"stderr tail:\n{self.stderr_tail()}"
            )
        return BrokerStartError(
            f"{what} did not accept connections on {self.host}:{self.port} within "
            f"{self.startup_timeout:g}s; stderr tail:\n{self.stderr_tail()}"
        )

    def _after_start(self) -> None:
        """Hook run once the port accepts connections."""

    # lifecycle ------------------------------------------------------------------------------------
    @property
    def _proc(self) -> subprocess.Popen[bytes] | None:
        """The broker's ``Popen`` while one was started and not yet reaped."""
        return None if self._process is None else self._process.process

    @property
    def pid(self) -> int | None:
        """The broker process id while it runs."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    @property
    def running(self) -> bool:
        proc = self._proc
        return proc is not None and proc.poll() is None

    def _launch(self, deadline: float) -> None:
        """Start the process and wait until :meth:`_ready`, or raise :class:`BrokerStartError`."""
        mirakuru = _mirakuru()
        out = open(self.stdout_path, "ab")
        err = open(self.stderr_path, "ab")
        process = None

        def ready() -> bool:
            # A broker that exits with status 0 (or is killed) is not an error to mirakuru: catch it here.
            status = None if process is None or process.process is None else process.process.poll()
            if status is not None:
                raise self._start_failure(status)
            return self._ready()

        try:
            process = _broker_process(
                self.command(),
                busy=lambda: _port_accepts(self.host, self.port),
                ready=ready,
                cwd=self.log_dir,
                env=self._env,
                stdout=out,
                stderr=err,
                timeout=max(0.5, deadline - time.monotonic()),
            )
            self._process = process
            process.start()
        except mirakuru.ProcessExitedWithError as e:
            self._process = None
            raise self._start_failure(e.exit_code) from None
        except mirakuru.TimeoutExpired:
            self._process = None  # mirakuru killed it
            raise self._start_failure(None) from None
        except mirakuru.AlreadyRunning:
            self._process = None  # nothing was started
            raise BrokerStartError(
                f"{self.kind} broker cannot listen on {self.host}:{self.port}: something else accepts connections there"
            ) from None
        except BaseException:
            self.kill_process()
            raise
        finally:
            out.close()  # the child holds its own descriptors
            err.close()

    def start(self) -> SubprocessBroker:
        with self._lock:
            if self.running:
                return self
            attempts = 1 if self._fixed_port else 3
            # A restart reuses the port; right after a SIGKILL the kernel may still hold it briefly, so
            # the same port is tried until the deadline. A port the caller chose is tried once.
            deadline = time.monotonic() + self.startup_timeout
            last: BrokerStartError | None = None
            for _ in range(attempts):
                if not self._fixed_port:
                    self.port = free_port(self.host)
                while True:
                    try:
                        self._launch(deadline)
                        break
                    except BrokerStartError as e:
                        self.kill_process()
                        last = e
                        if self._restartable and time.monotonic() < deadline and "exited" in str(e):
                            time.sleep(0.2)  # port still held: try the same port again
                            continue
                        break
                if self.running:
                    break
            self._started(last)
            return self

    def _started(self, last: BaseException | None) -> None:
        """After the start attempts: raise the last one's error unless the broker runs; else record its
        address and run :meth:`_after_start`."""
        if not self.running:
            assert last is not None
            raise last
        self.bootstrap = f"{self.host}:{self.port}"
        # From now on restarts must come back on the same port: clients hold this address.
        self._fixed_port = True
        self._restartable = True
        LIVE_BROKERS.add(self)
        self._after_start()

    def kill_process(self, sig: int | None = None, grace: float | None = None) -> None:
        """Stop the broker process, leaving its files in place.

        ``sig`` (default :attr:`stop_signal`) goes to the broker's process group; after ``grace`` seconds
        (default :attr:`stop_grace`) without an exit, SIGKILL. Also reaps a process that died on its own.
        """
        with self._lock:
            if self.paused:
                self.resume()  # a stopped process acts on SIGTERM only once continued
            process, self._process = self._process, None
            if process is None:
                return
            process.stop_within(self.stop_signal if sig is None else sig, self.stop_grace if grace is None else grace)

    def pause(self) -> None:
        """Freeze the broker's process group with SIGSTOP (see :meth:`Broker.pause`)."""
        self._signal_group(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        """Thaw the broker's process group with SIGCONT (see :meth:`Broker.resume`)."""
        if self.running:
            self._signal_group(signal.SIGCONT)
        self.paused = False

    def _signal_group(self, sig: int) -> None:
        # The broker leads its own session (_new_session_dying_with_parent): a JVM's threads and any
        # helper processes are frozen and thawed together.
        with self._lock:
            pid = self.pid
            if pid is None:
                raise RuntimeError(f"{self.kind} broker on {self.host}:{self.port} is not running")
            os.killpg(pid, sig)

    def stop(self) -> None:
        with self._lock:
            self.kill_process()
            LIVE_BROKERS.discard(self)
            if not self.keep_files:
                for d in self._owned_dirs:
                    shutil.rmtree(d, ignore_errors=True)
                self._owned_dirs.clear()

    def stderr_tail(self, lines: int = 30) -> str:
        """The last lines the broker wrote to stderr (for error messages)."""
        return log_tail(self.stderr_path, lines)


# --------------------------------------------------------------------------------------------- noida


def package_file(package: str, *parts: str) -> Path:
    """An executable shipped inside an installed wheel (made executable when the wheel lost the bit)."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        from .._optional import DEPENDENCIES, install_hint

        raise BrokerStartError(f"{DEPENDENCIES[package][0]} is not installed: {install_hint(DEPENDENCIES[package][1])}")
    path = Path(list(spec.submodule_search_locations)[0]).joinpath(*parts)
    if not path.is_file():
        raise BrokerStartError(f"{path} not found in the {package!r} package")
    if not os.access(path, os.X_OK):
        # Wheels do not always keep the executable bit of package data (noida-db's own launcher chmods).
        with contextlib.suppress(OSError):
            path.chmod(path.stat().st_mode | 0o111)
    return path


# ---------------------------------------------------------------------------------------------- java


def jdk_tool(name: str) -> str | None:
    """The JDK's ``name`` (``java``, ``javac``): ``$JAVA_HOME/bin/<name>``, else the one on PATH, else None."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / name).exists():
        return str(Path(home) / "bin" / name)
    return shutil.which(name)


def java_binary() -> str:
    """The ``java`` launcher (``$JAVA_HOME/bin/java``, else the one on PATH)."""
    found = jdk_tool("java")
    if found is None:
        raise BrokerStartError("java is not installed: Apache Kafka needs Java 17 (Debian: openjdk-17-jre-headless)")
    return found
