"""The blocking Kafka client: metadata, admin, produce, fetch, offsets.

:class:`Client` is a thin facade. The state it keeps between calls (connections, metadata,
coordinators, traffic counters) and the one retry loop live in :class:`~.cluster.cluster.Cluster`; each kind
of operation is a module on top of it (:mod:`.cluster.topics`, :mod:`.producer.produce`,
:mod:`.consumer.fetch`, :mod:`.consumer.offsets`); the metadata and topic calls and the deadline every call starts
from are inherited from :class:`~.cluster.calls.ClusterCalls`, the security arguments are checked by
:func:`.net.security.security_settings`.

Every public method is one blocking call with one deadline: ``timeout_ms=`` (or ``deadline=``, a
:class:`~kafkawire.client.net.deadline.Deadline` a caller such as the consumer already holds) bounds the
whole call, retries included. Errors a broker marks retriable, broken connections and timeouts refresh
the metadata and are retried after an exponential backoff with jitter (KIP-580) until that deadline;
then :class:`~kafkawire.client.errors.KafkaTimeoutError` says what timed out, after how long, and the
last error. Errors that waiting cannot cure are raised at once as :mod:`kafkawire.protocol.errors`
classes.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..columns import RecordColumns
from .cluster.calls import ClusterCalls
from .cluster.cluster import Cluster, parse_bootstrap
from .cluster.quirks import DEFAULT_MAX_RESPONSE_BYTES
from .cluster.retry import DEFAULT_API_TIMEOUT_MS, DEFAULT_DELIVERY_TIMEOUT_MS, DEFAULT_MAX_BLOCK_MS, RetryPolicy
from .consumer import fetch as _fetch
from .consumer import offsets as _offsets
from .consumer.fetch_session import FetchSessions
from .consumer.offsets import EARLIEST, LATEST
from .consumer.prefetch import Prefetcher
from .errors import KafkaTimeoutError
from .net.connection import BrokerConnection
from .net.deadline import Deadline
from .net.sasl import OAuthBearerToken, SaslConfig
from .net.security import security_settings
from .producer.partitioner import Partitioner, partition_records
from .producer.produce import ProducerState, metadata_timeout, not_sent, produce_arguments, send_records
from .types import (
    CommittedOffset,
    FetchResult,
    ListedOffset,
    ProduceResult,
)

__all__ = ["Client", "EARLIEST", "LATEST"]

class Client(ClusterCalls):
    """A blocking client for Kafka-protocol brokers.

    ``bootstrap_servers``: ``"host:port,host:port"`` or a list; tried in turn until one answers.
    ``security_protocol``: ``PLAINTEXT``, ``SSL``, ``SASL_PLAINTEXT`` or ``SASL_SSL``; TLS uses
    ``ssl_context`` (default: ``ssl.create_default_context()``); SASL uses ``sasl_mechanism``
    (``PLAIN``, ``SCRAM-SHA-256``, ``SCRAM-SHA-512``) with ``sasl_username`` / ``sasl_password``, or
    ``OAUTHBEARER`` with ``sasl_oauth_token_provider`` (a callable returning the token, called per
    connection), or ``GSSAPI`` (Kerberos; the ``gssapi`` extra) with ``sasl_kerberos_principal`` and
    ``sasl_kerberos_keytab`` (else the ticket cache, ``sasl_kerberos_ticket_cache`` or ``$KRB5CCNAME``) and
    ``sasl_kerberos_service_name`` (default ``kafka``). The Java client's property names
    (``sasl.jaas.config``, ``ssl.truststore.*``, ...)
    go through :meth:`from_properties` (:mod:`kafkawire.client.config`).

    Time limits: ``request_timeout_ms`` bounds each request (one attempt); ``connect_timeout_ms`` each
    connection handshake; ``retry_timeout_ms`` is the default deadline of a whole call, retries
    included. Left unset it is 60 s, the Java client's ``default.api.timeout.ms`` (so :meth:`metadata` on a
    port where nothing listens fails after 60 s, naming the bootstrap servers), and 120 s for
    :meth:`produce`, the Java producer's ``delivery.timeout.ms``; set, it bounds every call. :meth:`fetch` /
    :meth:`fetch_many` default to one request's worth (``request_timeout_ms`` + ``max_wait_ms``).
    Every call also takes ``timeout_ms=`` (its own deadline) or ``deadline=``. Retries wait
    ``retry_backoff_ms`` doubling to ``retry_backoff_max_ms`` (±20% jitter); ``retries`` (default
    None) optionally caps their number as well.

    ``max_response_bytes`` caps one response (checked from its size prefix before the body is read).
    ``enable_idempotence`` makes ``acks=-1`` produce calls idempotent; an idempotent produce call keeps up
    to ``max_in_flight_requests_per_connection`` (Java's name, default 5, at most 5) requests in flight per
    broker, each carrying the next batch of every partition, in sequence order (a non-idempotent one
    keeps one, so a retried batch cannot overtake the next). ``api_version_caps`` maps API
    keys to a highest version to use (to route around a broker that advertises a version it does not
    implement). ``check_crcs`` verifies every fetched batch's CRC-32C (Java's ``check.crcs``).
    ``fetch_sessions`` (default True) keeps an incremental fetch session per broker (KIP-227): a Fetch
    lists only the partitions whose offset changed; False sends every partition every time.
    ``client_rack`` (Java's ``client.rack``, KIP-392): the rack sent with every Fetch; a leader whose broker
    runs a rack-aware replica selector names a replica in that rack, and fetches go there (back to the
    leader when it fails; asked again every ``metadata_max_age_ms``: :mod:`.cluster.read_replicas`).

    Logging goes to ``kafkawire.client.*`` (connections, retries with their cause, metadata refreshes);
    :meth:`metrics` returns request counts, bytes and latencies per API.

    Thread-safe: calls are serialised. Use as a context manager or call :meth:`close`.
    """

    def __init__(
        self,
        bootstrap_servers: str | Sequence[str],
        *,
        client_id: str = "kafkawire",
        request_timeout_ms: float = 30_000,
        connect_timeout_ms: float = 10_000,
        retries: int | None = None,
        retry_backoff_ms: float = 100,
        retry_backoff_max_ms: float = 1_000,
        retry_timeout_ms: float | None = None,
        metadata_max_age_ms: float = 300_000,
        security_protocol: str = "PLAINTEXT",
        sasl_mechanism: str | None = None,
        sasl_username: str | None = None,
        sasl_password: str | None = None,
        ssl_context: ssl.SSLContext | None = None,
        sasl_oauth_token_provider: Callable[[], str | OAuthBearerToken] | None = None,
        sasl_kerberos_service_name: str = "kafka",
        sasl_kerberos_principal: str | None = None,
        sasl_kerberos_keytab: str | os.PathLike[str] | None = None,
        sasl_kerberos_ticket_cache: str | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        enable_idempotence: bool = True,
        max_batch_bytes: int = 1_000_000,
        max_in_flight_requests_per_connection: int = 5,
        api_version_caps: Mapping[int, int] | None = None,
        check_crcs: bool = True,
        fetch_sessions: bool = True,
        client_rack: str | None = None,
    ) -> None:
        bootstrap = parse_bootstrap(bootstrap_servers)
        self.client_id = client_id
        self.request_timeout_ms = request_timeout_ms
        self.connect_timeout_ms = connect_timeout_ms
        # Java's defaults when unset: default.api.timeout.ms (60 s) for calls, delivery.timeout.ms (120 s)
        # for writes (issue 34: a closed port kept metadata() waiting 120 s).
        api_timeout_ms = DEFAULT_API_TIMEOUT_MS if retry_timeout_ms is None else retry_timeout_ms
        self.retry_policy = RetryPolicy(retries=retries, backoff_ms=retry_backoff_ms,
                                        backoff_max_ms=retry_backoff_max_ms, timeout_ms=api_timeout_ms)
        self.delivery_timeout_ms = DEFAULT_DELIVERY_TIMEOUT_MS if retry_timeout_ms is None else retry_timeout_ms
        self.metadata_max_age_ms = metadata_max_age_ms
        security = security_settings(
            security_protocol, ssl_context=ssl_context, sasl_mechanism=sasl_mechanism, sasl_username=sasl_username,
            sasl_password=sasl_password, sasl_oauth_token_provider=sasl_oauth_token_provider,
            sasl_kerberos_service_name=sasl_kerberos_service_name, sasl_kerberos_principal=sasl_kerberos_principal,
            sasl_kerberos_keytab=sasl_kerberos_keytab, sasl_kerberos_ticket_cache=sasl_kerberos_ticket_cache,
        )
        self.security_protocol = security.protocol
        self.ssl_context: ssl.SSLContext | None = security.ssl_context
        self.sasl: SaslConfig | None = security.sasl
        self.max_response_bytes = max_response_bytes
        self.enable_idempotence = enable_idempotence
        self.max_batch_bytes = max_batch_bytes
        if not 1 <= max_in_flight_requests_per_connection <= (5 if enable_idempotence else 1 << 20):
            # The broker keeps the last 5 batches of a producer per partition to recognise a duplicate.
            raise ValueError(f"max_in_flight_requests_per_connection must be 1-5 with idempotence, not "
                             f"{max_in_flight_requests_per_connection!r}")
        self.max_in_flight_requests_per_connection = max_in_flight_requests_per_connection
        self.api_version_caps = dict(api_version_caps or {})
        self.check_crcs = check_crcs
        #: Incremental fetch sessions per broker (KIP-227); ``fetch_sessions=False`` sends full Fetches.
        self.fetch_sessions = FetchSessions(fetch_sessions)
        #: Connections, metadata, coordinators and the retry loop (:class:`~.cluster.cluster.Cluster`).
        self.cluster = Cluster(
            bootstrap, client_id=client_id, request_timeout_ms=request_timeout_ms,
            connect_timeout_ms=connect_timeout_ms, retry_policy=self.retry_policy,
            metadata_max_age_ms=metadata_max_age_ms, ssl_context=self.ssl_context, sasl=self.sasl,
            max_response_bytes=max_response_bytes, api_version_caps=self.api_version_caps, client_rack=client_rack,
        )
        self.client_rack = client_rack
        self._partitioner = Partitioner()
        self._producer = ProducerState()

    @classmethod
    def from_properties(
        cls, properties: Mapping[str, Any] | str | os.PathLike[str], **overrides: Any
    ) -> Client:
        """A client configured with the Java client's property names (``bootstrap.servers``,
        ``security.protocol``, ``sasl.jaas.config``, ``ssl.truststore.location``, ...), given as a mapping or
        the path of a ``client.properties`` file (as :meth:`Consumer.from_properties` and
        :meth:`Producer.from_properties`); see :func:`kafkawire.client.config.client_kwargs_from_properties`
        (a misspelt name is a :class:`~kafkawire.client.config.ConfigError` with a suggestion).
        ``overrides`` are keyword arguments that win."""
        from .config import client_kwargs_from_properties

        if not isinstance(properties, (Mapping, str, os.PathLike)):
            raise TypeError(f"properties must be a mapping or a file path, not {type(properties).__name__}")
        kwargs = client_kwargs_from_properties(properties)
        return cls(kwargs.pop("bootstrap_servers"), **{**kwargs, **overrides})

    # ------------------------------------------------------------------------------------ lifecycle
    @property
    def bootstrap_servers(self) -> list[tuple[str, int]]:
        return self.cluster.bootstrap_servers

    def close(self) -> None:
        """Close every connection. The client cannot be used afterwards."""
        self.cluster.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        servers = ",".join(f"{h}:{p}" for h, p in self.bootstrap_servers)
        return f"<kafkawire.Client {servers} brokers={sorted(self.cluster.brokers)}>"

    def metrics(self) -> dict[str, Any]:
        """Traffic counters since the client was created: ``requests``, ``bytes_sent``,
        ``bytes_received``, ``retries``, ``metadata_refreshes`` and per API (``"Fetch"``, ...)
        requests, responses, errors, bytes and latency (``latency_avg_ms``, ``latency_max_ms``)."""
        return self.cluster.metrics.snapshot()

    # ---------------------------------------------------------------- public pieces for the consumer
    def coordinator(self, group: str, *, refresh: bool = False, deadline: Deadline | None = None) -> BrokerConnection:
        """A connected :class:`BrokerConnection` to the coordinator of consumer ``group`` (found with
        FindCoordinator when unknown or ``refresh``). One attempt: the caller retries."""
        d = self.deadline(None, deadline)
        with self.cluster.held(d, f"coordinator of group {group!r}"):
            return self.cluster.coordinator(group, d, refresh=refresh)

    def forget_coordinator(self, group: str) -> None:
        """Drop the cached coordinator of ``group`` (after NOT_COORDINATOR or a broken connection)."""
        with self.cluster.lock:
            self.cluster.forget_coordinator(group)

    @property
    def lock(self) -> Any:
        """The lock serialising calls; hold it while using a connection from :meth:`coordinator`."""
        return self.cluster.lock

    # ---------------------------------------------------------------------------------------- admin
    def admin(self) -> Any:
        """A :class:`kafkawire.admin.Admin` sharing this client's connections and retry policy (describe
        cluster/topics/configs, alter configs, create partitions, delete records, consumer groups).
        Closing it leaves this client open."""
        from ..admin import Admin

        return Admin(client=self)

    # -------------------------------------------------------------------------------------- produce
    def produce(
        self,
        topic: str,
        values: Any,
        keys: Any = None,
        *,
        partition: int | None = None,
        headers: Sequence[Sequence[tuple[str | bytes, bytes | None]] | None] | None = None,
        timestamps: Any = None,
        acks: int = -1,
        compression: str | int | None = None,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
        producer_state: ProducerState | None = None,
        max_block_ms: float | None = None,
    ) -> ProduceResult:
        """Write records to ``topic`` and return where they went.

        ``values`` / ``keys``: sequences of bytes/None (``str`` elements are written as UTF-8),
        :class:`kafkawire.BinaryColumn` or pyarrow binary arrays; a bare ``bytes``/``str`` or an
        element of another type is a ``TypeError``. Records go to ``partition`` when given, else keyed
        records to the murmur2 partition of their key (the Java client's choice) and keyless ones to
        one rotating partition per call. ``headers``: per record a list of ``(key, value)`` pairs or
        None. ``timestamps``: int64 ms per record (default: now). ``acks``: -1 (all in-sync replicas;
        idempotent when ``enable_idempotence``), 1 (leader only) or 0 (no acknowledgement: offsets
        are -1). ``compression``: ``None``, ``"gzip"``, ``"snappy"``, ``"lz4"`` or ``"zstd"``.
        ``timeout_ms`` (default ``retry_timeout_ms``, else 120 s) bounds the whole call: retries go on until then.

        Raises :class:`~kafkawire.client.errors.ProduceFailedError` when some records could not be
        written: ``.errors`` per partition, ``.result`` showing what *was* acknowledged, and
        ``.unacknowledged`` handing back the values, keys, headers and timestamps that were not.

        ``producer_state``: the producer identity to write with instead of the client's own (a
        transactional :class:`~kafkawire.Producer` passes its transaction manager; always idempotent).

        ``max_block_ms`` (default 60 s, the Java producer's ``max.block.ms``) bounds the wait for the topic's
        metadata: a topic that does not exist (and is not auto-created) fails the call after it with a
        :class:`~kafkawire.client.errors.ProduceFailedError` whose cause names the topic and the setting.
        """
        vcol, kcol, ts, result = produce_arguments(topic, values, keys, headers, timestamps, acks)
        if len(vcol) == 0:
            return result
        d = self.deadline(self.delivery_timeout_ms if timeout_ms is None else timeout_ms, deadline)
        state = self._producer if producer_state is None else producer_state
        with self.cluster.held(d, f"produce to {topic!r}"):
            block_ms = DEFAULT_MAX_BLOCK_MS if max_block_ms is None else max_block_ms
            try:
                parts = partition_records(self.cluster, self._partitioner, d.sooner(block_ms / 1000), topic,
                                          partition, kcol, len(vcol))
            except KafkaTimeoutError as e:
                cause = metadata_timeout(topic, e, d, block_ms)
                raise not_sent(topic, result, vcol, kcol, ts, headers, partition, cause) from e
            result.partition[:] = parts
            send_records(
                self.cluster, state, d, topic=topic, parts=parts, vcol=vcol, kcol=kcol, ts=ts, headers=headers,
                acks=acks, compression=compression,
                idempotent=(self.enable_idempotence or state.transactional_id is not None) and acks == -1,
                max_batch_bytes=self.max_batch_bytes, result=result,
                max_in_flight=self.max_in_flight_requests_per_connection,
            )
        return result

    # ---------------------------------------------------------------------------------------- fetch
    def fetch(
        self,
        topic: str,
        partition: int,
        offset: int,
        *,
        max_bytes: int = 1 << 20,
        max_wait_ms: int = 500,
        min_bytes: int = 1,
        isolation: str = "read_uncommitted",
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> RecordColumns:
        """Records of ``topic``/``partition`` from ``offset`` on, as :class:`kafkawire.RecordColumns`.

        Waits up to ``max_wait_ms`` for at least ``min_bytes``; returns empty columns (``next_offset`` =
        ``offset``) when there is nothing new. ``isolation="read_committed"`` stops at the last stable
        offset and drops aborted transactions. ``max_bytes`` is a hint (Kafka returns at least one whole
        batch; some brokers ignore it: the response-size cap still applies). ``timeout_ms`` bounds the
        whole call (default ``request_timeout_ms`` + ``max_wait_ms``).
        Raises ``OffsetOutOfRangeError`` for an offset outside the log.
        """
        res = self.fetch_many(
            {(topic, partition): offset},
            max_bytes=max_bytes,
            max_wait_ms=max_wait_ms,
            min_bytes=min_bytes,
            isolation=isolation,
            timeout_ms=timeout_ms,
            deadline=deadline,
        )[(topic, partition)]
        if res.error is not None:
            raise res.error
        return res.records

    def fetch_many(
        self,
        offsets: Mapping[tuple[str, int], int],
        *,
        max_bytes: int = 1 << 20,
        partition_max_bytes: int | None = None,
        max_wait_ms: int = 500,
        min_bytes: int = 1,
        isolation: str = "read_uncommitted",
        raise_errors: bool = True,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
        prefetch: Prefetcher | None = None,
    ) -> dict[tuple[str, int], FetchResult]:
        """Fetch several partitions at once: one request per leader, all leaders in flight together.

        ``offsets`` maps ``(topic, partition)`` to the offset to read from. Returns a
        :class:`~kafkawire.client.types.FetchResult` per partition. Retriable errors are retried until
        the deadline (``timeout_ms``, default ``request_timeout_ms`` + ``max_wait_ms``); with
        ``raise_errors`` False, non-retriable ones are reported in ``FetchResult.error`` instead of
        raised.

        ``prefetch``: a :class:`~kafkawire.client.consumer.prefetch.Prefetcher` kept by a reader across its
        calls: each broker's next Fetch (the same partitions at the offsets that follow) is sent before this
        answer is decoded, and used by the next call when it asks exactly that; at most one Fetch per
        broker is ahead (``max_bytes`` each).
        """
        if isolation not in ("read_uncommitted", "read_committed"):
            raise ValueError(f"isolation must be 'read_uncommitted' or 'read_committed', not {isolation!r}")
        if timeout_ms is None and deadline is None:
            timeout_ms = min(self.retry_policy.timeout_ms, self.request_timeout_ms + max_wait_ms)
        d = self.deadline(timeout_ms, deadline)
        with self.cluster.held(d, "fetch"):
            return _fetch.fetch_many(
                self.cluster,
                d,
                offsets,
                max_bytes=max_bytes,
                partition_max_bytes=int(partition_max_bytes or max_bytes),
                max_wait_ms=max_wait_ms,
                min_bytes=min_bytes,
                level=1 if isolation == "read_committed" else 0,
                isolation=isolation,
                raise_errors=raise_errors,
                check_crcs=self.check_crcs,
                sessions=self.fetch_sessions,
                prefetch=prefetch,
            )

    # -------------------------------------------------------------------------------------- offsets
    def list_offsets(
        self,
        topic: str,
        partitions: Iterable[int] | None = None,
        *,
        timestamp: int | str = "latest",
        isolation: str = "read_uncommitted",
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[int, ListedOffset]:
        """Offsets of ``topic``'s partitions (all when None): ``timestamp="latest"`` (the end of the
        log: the next offset to be written), ``"earliest"`` (the first offset kept), or a time in ms
        since the epoch (the first offset whose timestamp is at or after it; -1 when there is none).
        """
        ts = _offsets.timestamp_spec(timestamp)
        level = 1 if isolation == "read_committed" else 0
        d = self.deadline(timeout_ms, deadline)
        with self.cluster.held(d, f"list_offsets of {topic!r}"):
            return _offsets.list_offsets(self.cluster, d, topic, partitions, ts, level)

    def commit_offsets(
        self,
        group: str,
        offsets: Mapping[tuple[str, int], _offsets.OffsetSpec],
        *,
        generation_id: int = -1,
        member_id: str = "",
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        """Commit ``{(topic, partition): offset}`` (or ``(offset, metadata)``, or ``(offset, metadata,
        leader_epoch)`` as the Java client's ``OffsetAndMetadata`` carries it, KIP-320) for consumer ``group``.

        The default ``generation_id=-1`` / ``member_id=""`` commits outside any group membership
        (what a consumer with manual assignment does).
        """
        d = self.deadline(timeout_ms, deadline)
        with self.cluster.held(d, f"commit of group {group!r}"):
            _offsets.commit_offsets(self.cluster, d, group, offsets, generation_id=generation_id, member_id=member_id)

    def committed(
        self,
        group: str,
        partitions: Iterable[tuple[str, int]],
        *,
        timeout_ms: float | None = None,
        deadline: Deadline | None = None,
    ) -> dict[tuple[str, int], CommittedOffset]:
        """Committed offsets of consumer ``group`` for ``[(topic, partition), ...]`` (-1: none)."""
        d = self.deadline(timeout_ms, deadline)
        with self.cluster.held(d, f"committed offsets of group {group!r}"):
            return _offsets.committed(self.cluster, d, group, list(partitions))


def resolve_client(
    bootstrap_servers: str | Sequence[str] | None, client: Client | None, client_options: Mapping[str, Any]
) -> tuple[Client, bool]:
    """The client a consumer or producer uses, and whether it owns it (and closes it): ``client`` when given
    (then no client options may be), else a new one for ``bootstrap_servers`` with ``client_options``."""
    if client is not None:
        if client_options:
            raise ValueError("client options given together with a client")
        return client, False
    if bootstrap_servers is None:
        raise ValueError("give bootstrap_servers or client")
    return Client(bootstrap_servers, **client_options), True
