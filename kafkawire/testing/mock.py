"""librdkafka's mock cluster as a test broker (:class:`MockCluster`).

librdkafka's mock cluster, created through ctypes in the bundled librdkafka of the ``confluent-kafka``
wheel. It lives inside the current process (its broker threads stop when it is stopped or the process
exits) and has no CreateTopics API, so topics are created with :meth:`MockCluster.create_topic`.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import glob
import threading
from collections.abc import Sequence
from pathlib import Path

from .brokers import (
    LIVE_BROKERS,
    Broker,
    BrokerStartError,
    wait_for_port,
)

__all__ = ["MockCluster"]


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
        return str(_librdkafka().rd_kafka_version_str().decode())

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
            LIVE_BROKERS.add(self)
            return self

    def stop(self) -> None:
        with self._lock:
            mc, rk = self._mc, self._rk
            self._mc = self._rk = None
            LIVE_BROKERS.discard(self)
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
