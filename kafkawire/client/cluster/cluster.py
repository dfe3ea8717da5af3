"""The client's view of a cluster: connections, metadata, coordinators, and the one retry loop.

:class:`Cluster` owns everything that outlives a single call: one :class:`BrokerConnection` per broker
(and per bootstrap address), the cached topic metadata, the group coordinators, and the traffic
counters. :meth:`Cluster.call` is the only retry loop of the client: it runs one attempt of an
operation, and when that fails with an error Kafka marks retriable (or a broken connection or a
timeout) it refreshes the metadata, waits an exponential backoff with jitter (KIP-580) and tries again,
until the call's :class:`~kafkawire.client.net.deadline.Deadline`. Every connect, request and sleep below it
gets what is left of that deadline, so a call returns (or raises) within its timeout whatever the
broker does. The operations (:mod:`.topics`, :mod:`kafkawire.client.producer.produce`,
:mod:`kafkawire.client.consumer.fetch`, :mod:`kafkawire.client.consumer.offsets`, :mod:`kafkawire.admin`) are
written on top of it.
"""

from __future__ import annotations

import logging
import ssl
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any, TypeVar

from ...protocol import FindCoordinatorRequest, MetadataRequest
from ...protocol.errors import (
    BrokerError,
    CoordinatorNotAvailableError,
    LeaderNotAvailableError,
    NotCoordinatorError,
    UnknownTopicOrPartitionError,
    broker_error,
    raise_broker_error,
)
from ..errors import KafkaConnectionError, KafkaTimeoutError, NoBrokersAvailableError
from ..net.connection import BrokerConnection
from ..net.deadline import Deadline
from ..net.metrics import ClientMetrics
from ..net.sasl import SaslConfig
from ..types import BrokerMetadata, ClusterMetadata, PartitionMetadata, TopicMetadata
from .read_replicas import ReadReplicas
from .retry import RetryPolicy, is_retriable

__all__ = ["Cluster", "GROUP", "TRANSACTION", "ZERO_UUID", "coordinator_moved", "parse_bootstrap"]

log = logging.getLogger("kafkawire.client.cluster")
retry_log = logging.getLogger("kafkawire.client.retry")

ZERO_UUID = uuid.UUID(int=0)
#: FindCoordinator key types (KIP-98): the coordinator of a consumer group, of a transactional id.
GROUP = 0
TRANSACTION = 1
T = TypeVar("T")


def coordinator_moved(error: BaseException) -> bool:
    """Whether a failed coordinator request means the coordinator must be looked up again: it said
    NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE, or its connection broke or timed out. Any other answer
    (COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS, ...) came from the right broker: ask it again."""
    if isinstance(error, BrokerError):
        return isinstance(error, (NotCoordinatorError, CoordinatorNotAvailableError))
    return is_retriable(error)


def parse_bootstrap(servers: str | Sequence[str]) -> list[tuple[str, int]]:
    """``"h1:9092,h2"`` or a list of such strings -> ``[("h1", 9092), ("h2", 9092)]``."""
    items = servers.split(",") if isinstance(servers, str) else list(servers)
    out = []
    for item in items:
        item = item.strip()
        if not item:
            continue
        if "://" in item:
            item = item.split("://", 1)[1]
        host, sep, port = item.rpartition(":")
        if not sep:
            host, port = item, "9092"
        host = host.strip("[]")  # IPv6 literals: [::1]:9092
        out.append((host, int(port)))
    if not out:
        raise ValueError("bootstrap_servers is empty")
    return out


class Cluster:
    """Connections, metadata and coordinators of one cluster, and :meth:`call`, the retry loop.

    Not thread-safe on its own: callers hold :attr:`lock` (the :class:`~kafkawire.client.Client`
    facade does, for the whole of each call), taken through :meth:`held`, which waits for it no longer
    than the caller's deadline: a call another thread holds the lock across a network wait for (a broker
    that stopped answering) ends on time instead of queueing behind it (issue 34).
    """

    def __init__(
        self,
        bootstrap_servers: list[tuple[str, int]],
        *,
        client_id: str,
        request_timeout_ms: float,
        connect_timeout_ms: float,
        retry_policy: RetryPolicy,
        metadata_max_age_ms: float,
        ssl_context: ssl.SSLContext | None,
        sasl: SaslConfig | None,
        max_response_bytes: int,
        api_version_caps: dict[int, int],
        client_rack: str | None = None,
    ) -> None:
        self.bootstrap_servers = bootstrap_servers
        #: KIP-392: the rack sent in Fetch requests, and the preferred read replicas brokers named for it.
        self.client_rack = client_rack or ""
        self.read_replicas = ReadReplicas(metadata_max_age_ms)
        self.client_id = client_id
        self.request_timeout_ms = request_timeout_ms
        self.connect_timeout_ms = connect_timeout_ms
        self.retry_policy = retry_policy
        self.metadata_max_age_ms = metadata_max_age_ms
        self.ssl_context = ssl_context
        self.sasl = sasl
        self.max_response_bytes = max_response_bytes
        self.api_version_caps = api_version_caps
        self.metrics = ClientMetrics()
        self.lock = threading.RLock()
        self.closed = False
        self.bootstrap_conns: dict[tuple[str, int], BrokerConnection] = {}
        self.conns: dict[int, BrokerConnection] = {}
        self.brokers: dict[int, BrokerMetadata] = {}
        self.topics: dict[str, TopicMetadata] = {}
        self.topic_at: dict[str, float] = {}
        self.cluster_id: str | None = None
        self.controller_id = -1
        self.coordinators: dict[tuple[int, str], int] = {}  # (key type, key) -> node id

    @contextmanager
    def held(self, deadline: Deadline, what: str = "the call") -> Iterator[None]:
        """Hold :attr:`lock` for a call bounded by ``deadline``: waits for it at most what is left, then
        raises a (retriable) :class:`KafkaTimeoutError` saying another thread of this client held it."""
        wait = min(deadline.remaining(), threading.TIMEOUT_MAX)
        if not self.lock.acquire(timeout=wait):
            err = KafkaTimeoutError(
                f"{what}: the client was busy in another thread for the whole {wait:.3g} s left "
                "(a call waiting on a broker that does not answer)"
            )
            err.no_time_left = True  # nothing was tried: the error before it says more about the cluster
            raise err
        try:
            yield
        finally:
            self.lock.release()

    # ------------------------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Close every connection; the cluster cannot be used afterwards."""
        with self.lock:
            self.closed = True
            for conn in list(self.conns.values()) + list(self.bootstrap_conns.values()):
                conn.close()
            self.conns.clear()
            self.bootstrap_conns.clear()

    # ------------------------------------------------------------------------------------ the retry loop
    def call(
        self,
        deadline: Deadline,
        attempt: Callable[[Deadline], T],
        *,
        what: str,
        topics: Iterable[str] | None = (),
        before_retry: Callable[[Deadline, BaseException], None] | None = None,
        backoff: Callable[[int, BaseException], float | None] | None = None,
    ) -> T:
        """Run ``attempt(deadline)`` until it returns, retrying what is retriable until ``deadline``.

        ``backoff(attempt, error)`` may give the wait in seconds before the next attempt for an error that
        calls for its own (None: the policy's backoff).

        Errors that are not retriable are raised at once. Before each retry the metadata of ``topics``
        is refreshed (the leader or coordinator may have moved; ``topics=None``: all topics), or
        ``before_retry(deadline, error)`` runs instead when given. When the deadline passes, raises
        :class:`KafkaTimeoutError` naming ``what``, the timeout and the last error (also its
        ``__cause__`` and ``last_error``); when the policy's optional ``retries`` cap is reached, the
        last error itself.
        """
        topic_list = None if topics is None else list(topics)
        n = 0
        last: BaseException | None = None
        while True:
            n += 1
            try:
                return attempt(deadline)
            except Exception as e:
                if not is_retriable(e):
                    raise
                # An attempt that found no time left says nothing about the cluster: keep the cause before it.
                if last is None or not getattr(e, "no_time_left", False):
                    last = e
            if self.retry_policy.out_of_attempts(n):
                raise last
            special = None if backoff is None else backoff(n, last)
            delay = self.retry_policy.backoff(n) if special is None else special
            if deadline.remaining() <= 0:
                raise self.timeout_error(what, deadline, last) from last
            retry_log.info("%s: attempt %d failed (%s); retrying in %.0f ms", what, n, last, delay * 1000)
            self.metrics.record_retry()
            deadline.sleep(delay)
            if deadline.expired():
                raise self.timeout_error(what, deadline, last) from last
            try:
                if before_retry is not None:
                    before_retry(deadline, last)
                else:
                    self.refresh_after_error(topic_list, deadline)
            except Exception as e:
                if not is_retriable(e):
                    raise
                if not getattr(e, "no_time_left", False):
                    last = e
                if deadline.expired():
                    raise self.timeout_error(what, deadline, last) from last

    @staticmethod
    def timeout_error(what: str, deadline: Deadline, last: BaseException | None) -> KafkaTimeoutError:
        """The error of a call whose deadline passed: what, after how long, and the last cause."""
        took = "" if deadline.timeout is None else f" after {deadline.timeout:.1f} s"
        cause = f"; last error: {last}" if last is not None else ""
        err = KafkaTimeoutError(f"{what} did not complete{took}{cause}")
        err.last_error = last
        return err

    def refresh_after_error(self, topics: list[str] | None, deadline: Deadline) -> None:
        """Refresh the metadata of ``topics`` after a failed attempt (retriable errors propagate to
        :meth:`call`, which keeps them as the last error and tries again)."""
        try:
            self.fetch_metadata(topics, deadline)
        except Exception as e:
            log.debug("metadata refresh after an error failed: %s", e)
            raise

    # ---------------------------------------------------------------------------------- connections
    def new_connection(self, host: str, port: int, node_id: int) -> BrokerConnection:
        return BrokerConnection(
            host,
            port,
            node_id=node_id,
            client_id=self.client_id,
            connect_timeout_ms=self.connect_timeout_ms,
            request_timeout_ms=self.request_timeout_ms,
            max_response_bytes=self.max_response_bytes,
            ssl_context=self.ssl_context,
            sasl=self.sasl,
            max_versions=self.api_version_caps,
            metrics=self.metrics,
        )

    def connection(self, node_id: int, deadline: Deadline) -> BrokerConnection:
        """The (connected) connection to ``node_id``; raises a retriable error when it is unreachable."""
        if self.closed:
            raise KafkaConnectionError("client is closed")
        broker = self.brokers.get(node_id)
        if broker is None:
            raise LeaderNotAvailableError(f"broker {node_id} is not in the metadata")
        conn = self.conns.get(node_id)
        if conn is None or (conn.host, conn.port) != (broker.host, broker.port):
            if conn is not None:
                conn.close()
            conn = self.new_connection(broker.host, broker.port, node_id)
            self.conns[node_id] = conn
        return conn.connect(deadline=deadline)

    def any_connection(self, deadline: Deadline) -> BrokerConnection:
        """A connection to any broker: known brokers first, then the bootstrap servers in turn."""
        if self.closed:
            raise KafkaConnectionError("client is closed")
        errors: list[str] = []
        failures: list[BaseException] = []
        refused: list[bool] = []
        for conn in list(self.conns.values()):
            if conn.connected:
                return conn
        timed_out = False
        for connect in self._candidates(deadline):
            try:
                return connect()
            except KafkaConnectionError as e:
                errors.append(str(e))
                refused.append(isinstance(e.__cause__, ConnectionRefusedError))
            except KafkaTimeoutError as e:
                errors.append(str(e))
                failures.append(e)
                timed_out = True
        if timed_out:
            text = "no broker answered in time: " + "; ".join(errors)
            if all(getattr(e, "no_time_left", False) for e in failures):
                raise KafkaTimeoutError.nothing_left(text)
            raise KafkaTimeoutError(text)
        servers = ",".join(f"{h}:{p}" for h, p in self.bootstrap_servers)
        if refused and all(refused):
            # Said plainly (issue 34): a wrong port or a broker not started, not a network fault.
            raise NoBrokersAvailableError(f"nothing listens on the bootstrap servers {servers} ({'; '.join(errors)}):"
                                          " is the broker running, and is bootstrap_servers right?")
        raise NoBrokersAvailableError(f"no broker reachable (bootstrap servers {servers}): " + "; ".join(errors))

    def _candidates(self, deadline: Deadline) -> Iterator[Callable[[], BrokerConnection]]:
        """What :meth:`any_connection` tries, in order: the known brokers, then the bootstrap servers."""
        for node_id in list(self.brokers):
            yield partial(self.connection, node_id, deadline)
        for host, port in self.bootstrap_servers:
            yield partial(self._connect_bootstrap, host, port, deadline)

    def _connect_bootstrap(self, host: str, port: int, deadline: Deadline) -> BrokerConnection:
        known = self.bootstrap_conns.get((host, port))
        if known is None:
            known = self.bootstrap_conns[(host, port)] = self.new_connection(host, port, -1)
        return known.connect(deadline=deadline)

    def controller_connection(self, deadline: Deadline) -> BrokerConnection:
        """A connection to the controller (any broker when the controller is unknown: KRaft brokers
        forward admin requests to it, KIP-590)."""
        if self.controller_id < 0 or self.controller_id not in self.brokers:
            self.fetch_metadata([], deadline)
        if self.controller_id in self.brokers:
            return self.connection(self.controller_id, deadline)
        return self.any_connection(deadline)

    # ------------------------------------------------------------------------------------- metadata
    def fetch_metadata(
        self, topics: Sequence[str] | None, deadline: Deadline, allow_auto_create: bool = False
    ) -> ClusterMetadata:
        """One Metadata request (``topics=None``: all topics); updates the cache and returns the answer."""
        conn = self.any_connection(deadline)
        req_topics = None if topics is None else [MetadataRequest.MetadataRequestTopic(name=t) for t in topics]
        resp = conn.request(
            MetadataRequest(topics=req_topics, allow_auto_topic_creation=allow_auto_create), deadline=deadline
        )
        self.metrics.record_metadata_refresh()
        brokers = {b.node_id: BrokerMetadata(b.node_id, b.host, b.port, b.rack) for b in resp.brokers}
        out_topics: dict[str, TopicMetadata] = {}
        for t in resp.topics:
            parts = {}
            for p in t.partitions:
                parts[p.partition_index] = PartitionMetadata(
                    partition=p.partition_index,
                    leader=p.leader_id,
                    leader_epoch=p.leader_epoch,
                    replicas=tuple(p.replica_nodes or ()),
                    isr=tuple(p.isr_nodes or ()),
                    offline_replicas=tuple(p.offline_replicas or ()),
                    error=broker_error(p.error_code),
                )
            tid = getattr(t, "topic_id", None)
            out_topics[t.name] = TopicMetadata(
                name=t.name,
                partitions=dict(sorted(parts.items())),
                topic_id=None if tid in (None, ZERO_UUID) else tid,
                is_internal=bool(t.is_internal),
                error=broker_error(t.error_code, None, f"topic {t.name!r}"),
            )
        meta = ClusterMetadata(brokers, out_topics, resp.cluster_id, resp.controller_id)
        log.debug(
            "metadata from %s:%s: %d broker(s), topics %s",
            conn.host,
            conn.port,
            len(brokers),
            "all" if topics is None else list(topics),
        )
        # Update the cache: brokers are replaced wholesale, topics merged (a partial request says nothing
        # about the topics it did not name).
        if brokers:
            self.brokers = brokers
            for node_id in [n for n in self.conns if n not in brokers]:
                self.conns.pop(node_id).close()
        self.cluster_id = resp.cluster_id
        self.controller_id = resp.controller_id
        now = time.monotonic()
        for name, tm in out_topics.items():
            if tm.error is None and tm.partitions:
                self.topics[name] = tm
                self.topic_at[name] = now
            else:
                self.topics.pop(name, None)
        if topics is None:
            for name in [n for n in self.topics if n not in out_topics]:
                del self.topics[name]
        return meta

    def topic(self, topic: str, deadline: Deadline, *, refresh: bool = False) -> TopicMetadata:
        """Cached metadata of a topic, fetched when unknown, stale or ``refresh``; raises the topic's error."""
        tm = self.topics.get(topic)
        if tm is None or refresh or self._metadata_age_ms(topic) > self.metadata_max_age_ms:
            meta = self.fetch_metadata([topic], deadline)
            t = meta.topics.get(topic)
            if t is None:
                raise UnknownTopicOrPartitionError(f"topic {topic!r} not in metadata")
            if t.error is not None:
                raise t.error
            tm = t
        return tm

    def leader(self, topic: str, partition: int, deadline: Deadline) -> int:
        """The node id of the leader of ``topic``/``partition`` (retriable errors when unknown)."""
        tm = self.topic(topic, deadline)
        pm = tm.partitions.get(partition)
        if pm is None:
            # The partition may be new (CreatePartitions): look again before giving up.
            tm = self.topic(topic, deadline, refresh=True)
            pm = tm.partitions.get(partition)
            if pm is None:
                raise UnknownTopicOrPartitionError(f"{topic!r} has no partition {partition}")
        if pm.leader < 0 and self._metadata_age_ms(topic) >= self.retry_policy.backoff_ms:
            # Leaderless in the cache (a topic just created, an election under way): the election may
            # be over, so look again, at most once per backoff. Without this a caller that only asks for
            # the leader (the share fetcher) kept the stale answer until metadata_max_age_ms, 5 minutes.
            tm = self.topic(topic, deadline, refresh=True)
            pm = tm.partitions.get(partition, pm)
        if pm.leader < 0:
            raise LeaderNotAvailableError(f"{topic}/{partition} has no leader")
        return pm.leader

    def _metadata_age_ms(self, topic: str) -> float:
        return (time.monotonic() - self.topic_at.get(topic, 0.0)) * 1000

    # ---------------------------------------------------------------------------------- coordinators
    def coordinator(
        self, key: str, deadline: Deadline, *, refresh: bool = False, key_type: int = GROUP
    ) -> BrokerConnection:
        """A connection to the coordinator of ``key``, a consumer group (``key_type`` :data:`GROUP`) or a
        transactional id (:data:`TRANSACTION`), found with FindCoordinator when unknown or ``refresh``."""
        node = None if refresh else self.coordinators.get((key_type, key))
        if node is None or node not in self.brokers:
            node = self.find_coordinator(key, key_type, deadline)
            self.coordinators[(key_type, key)] = node
        try:
            return self.connection(node, deadline)
        except Exception:
            self.coordinators.pop((key_type, key), None)
            raise

    def coordinator_call(
        self,
        deadline: Deadline,
        key: str,
        attempt: Callable[[Deadline, BrokerConnection], T],
        *,
        what: str,
        key_type: int = GROUP,
    ) -> T:
        """:meth:`call` for a coordinator request: ``attempt(deadline, conn)`` on the coordinator of ``key``;
        before a retry, the coordinator is forgotten (looked up again) when the error says it moved."""

        def run(d: Deadline) -> T:
            return attempt(d, self.coordinator(key, d, key_type=key_type))

        def before_retry(d: Deadline, error: BaseException) -> None:
            if coordinator_moved(error):
                self.forget_coordinator(key, key_type)

        return self.call(deadline, run, what=what, before_retry=before_retry)

    def find_coordinator(self, key: str, key_type: int, deadline: Deadline) -> int:
        """The node id of the coordinator of ``key``: a consumer group (``key_type`` 0) or a transactional
        id (1, KIP-98), asked with FindCoordinator; the broker's address joins the known brokers."""
        node, host, port = self.ask_coordinator(self.any_connection(deadline), key, key_type, deadline)
        if node not in self.brokers:
            self.brokers[node] = BrokerMetadata(node, host, port)
        return node

    def coordinator_address(
        self, key: str, deadline: Deadline, *, refresh: bool = False, key_type: int = GROUP
    ) -> BrokerMetadata:
        """Where the coordinator of ``key`` is, for a thread with connections of its own (the heartbeat
        thread): the cached answer, else FindCoordinator on a short-lived connection of its own. :attr:`lock`
        is held only to read and record, never across the network: a hung broker holds this caller alone
        up, not the calls of the thread that polls (issue 34)."""
        with self.held(deadline, f"find coordinator of {key!r}"):
            node = None if refresh else self.coordinators.get((key_type, key))
            if node is not None and node in self.brokers:
                return self.brokers[node]
            if self.closed:
                raise KafkaConnectionError("client is closed")
            candidates = [(b.host, b.port, b.node_id) for b in self.brokers.values()]
            candidates += [(h, p, -1) for h, p in self.bootstrap_servers]
        last: BaseException | None = None
        for host, port, node_id in candidates:
            conn = self.new_connection(host, port, node_id)
            try:
                conn.connect(deadline=deadline)
                node, host, port = self.ask_coordinator(conn, key, key_type, deadline)
            except Exception as e:
                if not is_retriable(e):
                    raise
                last = e
                if deadline.expired():
                    break
                continue
            finally:
                conn.close()
            found = BrokerMetadata(node, host, port)
            with self.held(deadline, f"find coordinator of {key!r}"):
                self.coordinators[(key_type, key)] = node
                self.brokers.setdefault(node, found)
            return found
        if last is None:
            raise NoBrokersAvailableError(f"no broker to ask for the coordinator of {key!r}")
        raise last

    def ask_coordinator(
        self, conn: BrokerConnection, key: str, key_type: int, deadline: Deadline
    ) -> tuple[int, str, int]:
        """One FindCoordinator for ``key`` on ``conn``: the coordinator's node id, host and port."""
        what = "group" if key_type == 0 else "transactional id"
        version = conn.version_for(FindCoordinatorRequest, 1 if key_type else 0)
        if version >= 4:  # KIP-699: batched keys
            req = FindCoordinatorRequest(key_type=key_type, coordinator_keys=[key])
        else:
            req = FindCoordinatorRequest(key=key, key_type=key_type)
        resp = conn.request(req, version, deadline=deadline)
        if version >= 4:
            c = resp.coordinators[0]
            code, msg, node, host, port = c.error_code, c.error_message, c.node_id, c.host, c.port
        else:
            code, msg = resp.error_code, getattr(resp, "error_message", None)
            node, host, port = resp.node_id, resp.host, resp.port
        raise_broker_error(code, msg, f"find coordinator of {what} {key!r}")
        log.debug("coordinator of %s %r is node %s (%s:%s)", what, key, node, host, port)
        return int(node), str(host), int(port)

    def forget_coordinator(self, key: str, key_type: int = GROUP) -> None:
        """Drop the cached coordinator of ``key`` (after NOT_COORDINATOR or a broken connection)."""
        self.coordinators.pop((key_type, key), None)

    # ------------------------------------------------------------------------------------- requests
    def request(self, conn: BrokerConnection, request: Any, version: int | None, deadline: Deadline) -> Any:
        """``conn.request`` bounded by ``deadline`` (a helper for the operation modules)."""
        return conn.request(request, version, deadline=deadline)

    def __repr__(self) -> str:
        servers = ",".join(f"{h}:{p}" for h, p in self.bootstrap_servers)
        return f"<Cluster {servers} brokers={sorted(self.brokers)}>"
