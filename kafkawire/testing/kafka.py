"""Apache Kafka itself, in KRaft mode, as an embedded broker: the reference every stand-in is checked against.

``start_broker("kafka")`` resolves the broker's jars from Maven Central once (:mod:`.maven`, cached outside
the repository), formats a KRaft log directory, and runs one JVM that is both broker and controller on two
free loopback ports. It has the same surface as the other kinds (``.bootstrap``, ``.stop()``,
``.restart(graceful=...)`` keeping its log directories, ``.pause()`` / ``.resume()`` (SIGSTOP / SIGCONT: a hung
broker, connections open and nothing answering), context manager, killed with its parent).

Security listeners sit beside the PLAINTEXT one on the same broker: ``tls=True`` adds ``SSL`` (a CA and a
server certificate made at start, :mod:`.tls`; clients trust :attr:`ApacheKafkaBroker.ca_file`), and
``sasl_mechanisms=("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")`` adds ``SASL_PLAINTEXT`` (and ``SASL_SSL``
with ``tls=True``) for the ``users`` given. :meth:`ApacheKafkaBroker.bootstrap_for` names each listener.
``"GSSAPI"`` (Kerberos) starts a test KDC of its own (:mod:`.kdc`) unless one is given (``kdc=``).

The version is pinned here (:data:`DEFAULT_KAFKA_VERSION`) and can be overridden with
``KAFKAWIRE_KAFKA_VERSION`` or ``start_broker("kafka", version=LEGACY_KAFKA_VERSION)`` (3.9.2): Kafka 4
removed message formats v0/v1 and the oldest request versions (KIP-896), so the legacy paths of the codec
and client need a 3.x broker to meet a real peer.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .brokers import BrokerStartError, SubprocessBroker, free_port, java_binary, log_tail
from .maven import MavenError, classpath, resolve

__all__ = [
    "DEFAULT_KAFKA_VERSION",
    "LEGACY_KAFKA_VERSION",
    "OAUTH_AUDIENCE",
    "OAUTH_ISSUER",
    "SASL_MECHANISMS",
    "KERBEROS_CLIENT",
    "KERBEROS_SERVICE_NAME",
    "ApacheKafkaBroker",
    "java_binary",
    "kafka_classpath",
    "kafka_jars",
    "kafka_version",
    "prefetch_jars",
]

#: The Apache Kafka release the tests and benchmarks run against (override: ``KAFKAWIRE_KAFKA_VERSION``).
DEFAULT_KAFKA_VERSION = "4.4.0"

# Kafka 4 logs through log4j2 behind slf4j 1.7; without a binding every log line, including the reason a
# broker refused to start, is dropped.
_LOG4J2_BINDING = "org.apache.logging.log4j:log4j-slf4j-impl:2.25.5"
_LOG4J2_CONFIG = """\
status = error
appender.out.type = Console
appender.out.name = STDOUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = {level}
rootLogger.appenderRef.out.ref = STDOUT
"""
# Kafka 3.x logs through reload4j (log4j 1.x).
_LOG4J1_CONFIG = """\
log4j.rootLogger={level}, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
"""


#: The newest Kafka 3.x on Maven Central: the last line that still accepts message formats v0/v1 and the
#: oldest request versions, which Kafka 4 removed (KIP-896). The legacy tests run against it.
LEGACY_KAFKA_VERSION = "3.9.2"

#: The SASL mechanisms a test broker can enable. OAUTHBEARER tokens are checked by Kafka's unsecured validator
#: (unsigned JWTs), or against ``oauth_jwks_file`` when given (KIP-768). GSSAPI uses a test KDC (:mod:`.kdc`).
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "GSSAPI")

#: The Kerberos service name of a GSSAPI test broker (its principal is ``kafka/<host>@REALM``).
KERBEROS_SERVICE_NAME = "kafka"
#: The client principal a GSSAPI test broker's KDC gets, with a keytab (``broker.kdc.keytab(...)``).
KERBEROS_CLIENT = "kafkawire"

#: The ``aud`` claim a broker with ``oauth_jwks_file`` expects in OAUTHBEARER tokens.
OAUTH_AUDIENCE = "kafkawire-test"
#: The ``iss`` claim it expects.
OAUTH_ISSUER = "https://idp.kafkawire.test"

# KIP-768's validator; in Kafka 4 a JWKS URL must also be listed in this system property (CVE-2025-27817).
_OAUTH_VALIDATOR = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
_OAUTH_ALLOWED_URLS = "org.apache.kafka.sasl.oauthbearer.allowed.urls"

#: The user a SASL broker gets when ``users`` is not given.
DEFAULT_USERS = {"kafkawire": "kafkawire-secret"}


def kafka_version(version: str | None = None) -> str:
    """The Kafka version to use: ``version``, else ``$KAFKAWIRE_KAFKA_VERSION``, else the pinned default."""
    return version or os.environ.get("KAFKAWIRE_KAFKA_VERSION") or DEFAULT_KAFKA_VERSION


def _major(version: str) -> int:
    return int(version.split(".", 1)[0])


def _coordinates(version: str) -> list[str]:
    coords = [f"org.apache.kafka:kafka_2.13:{version}", f"org.apache.kafka:kafka-tools:{version}"]
    if _major(version) >= 4:
        coords.append(_LOG4J2_BINDING)
    return coords


def kafka_jars(version: str | None = None) -> Path:
    """The directory of the broker's jars (and Kafka's tools and Java clients) for ``version``."""
    version = kafka_version(version)
    try:
        return resolve(f"kafka-{version}", _coordinates(version))
    except MavenError as e:
        raise BrokerStartError(f"could not get Apache Kafka {version} from Maven Central: {e}") from e


def prefetch_jars(versions: Sequence[str] | None = None) -> list[str]:
    """Resolve the jars of ``versions`` now (default: the pinned broker and :data:`LEGACY_KAFKA_VERSION`).

    ``./dev setup`` calls it so the first test does not wait for Maven. Returns one line per version
    saying what was done (``"Apache Kafka 4.4.0: resolved in 9.1 s -> <dir>"`` or ``"...: cached in
    <dir>"``); raises :class:`BrokerStartError` when Maven cannot get a version.
    """
    from .maven import is_resolved

    lines = []
    for version in dict.fromkeys(versions or (kafka_version(), LEGACY_KAFKA_VERSION)):
        cached = is_resolved(f"kafka-{version}", _coordinates(version))
        started = time.monotonic()
        directory = kafka_jars(version)
        count = len(list(directory.glob("*.jar")))
        how = "cached in" if cached else f"resolved in {time.monotonic() - started:.1f} s into"
        lines.append(f"Apache Kafka {version}: {count} jars {how} {directory}")
    return lines


def kafka_classpath(version: str | None = None) -> str:
    """A classpath holding the broker, ``kafka-clients`` and ``kafka-tools`` of ``version``."""
    return classpath(kafka_jars(version))


def _metadata_broker_count(host: str, port: int, timeout: float) -> int:
    """Send Metadata v1 (all topics) on a fresh socket and return how many brokers the answer lists.

    Deliberately independent of kafkawire's own client: the fixture that tests the client must not depend
    on it to decide that the broker is up.
    """
    client_id = b"kafkawire-probe"
    body = struct.pack(">hhih", 3, 1, 1, len(client_id)) + client_id + struct.pack(">i", -1)
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.settimeout(timeout)
        s.sendall(struct.pack(">i", len(body)) + body)
        head = b""
        while len(head) < 12:  # size, correlation id, brokers array length
            chunk = s.recv(12 - len(head))
            if not chunk:
                raise ConnectionError("closed")
            head += chunk
        _size, correlation_id, brokers = struct.unpack(">iii", head)
        if correlation_id != 1:
            raise ConnectionError("bad correlation id")
        return int(brokers)


class ApacheKafkaBroker(SubprocessBroker):
    """One Apache Kafka JVM in KRaft combined mode (broker + controller) on loopback.

    Options: ``version`` (default :data:`DEFAULT_KAFKA_VERSION` or ``$KAFKAWIRE_KAFKA_VERSION``),
    ``config`` (extra ``server.properties`` entries, overriding the defaults), ``heap`` (JVM ``-Xmx``,
    default ``512m``), ``log_level`` (root log level of the broker's stdout log, default ``WARN``), plus the
    common ``port``, ``log_dir``, ``startup_timeout``, ``keep_files``.

    Security: ``tls=True`` adds an ``SSL`` listener; ``sasl_mechanisms`` (a subset of
    :data:`SASL_MECHANISMS`) adds ``SASL_PLAINTEXT``, and ``SASL_SSL`` as well with ``tls=True``. ``users``
    (name -> password, default :data:`DEFAULT_USERS`) can log in with every enabled mechanism: PLAIN users
    live in the listener's JAAS configuration, SCRAM credentials are written into the metadata log when
    the storage is formatted (``kafka-storage format --add-scram``, KIP-900), as Kafka documents for KRaft.
    The PLAINTEXT listener always stays: the readiness probe and the controller use it.

    OAUTHBEARER in ``sasl_mechanisms``: unsigned JWTs pass Kafka's unsecured validator, unless
    ``oauth_jwks_file`` (a JWKS file) is given: then the listeners in ``oauth_secured_protocols`` check
    signatures with KIP-768's ``OAuthBearerValidatorCallbackHandler``. ``client_auth=True`` (with ``tls``)
    adds a listener ``MTLS`` (SSL, ``ssl.client.auth=required``, trusting the broker's CA).

    GSSAPI in ``sasl_mechanisms``: the broker logs in as ``kafka/<host>@REALM`` from a keytab (JAAS
    ``Krb5LoginModule``, ``sasl.kerberos.service.name=kafka``) of ``kdc`` (a :class:`~.kdc.KerberosKdc`), or of
    a KDC it starts and stops itself, which also gets the client principal :data:`KERBEROS_CLIENT` with a
    keytab. ``<host>`` is what a client connecting to ``host`` names (:func:`~.kdc.service_host`:
    ``localhost`` for ``127.0.0.1``). :attr:`kdc` is the KDC; its ``env`` is what a client process needs.
    """

    kind = "kafka"
    supports_restart = True
    # SIGTERM is Kafka's controlled shutdown (flushes and closes the logs); SIGKILL is the crash.
    stop_signal, stop_grace = signal.SIGTERM, 30.0

    def __init__(
        self,
        *,
        version: str | None = None,
        config: Mapping[str, Any] | None = None,
        heap: str = "512m",
        log_level: str = "WARN",
        tls: bool = False,
        sasl_mechanisms: Sequence[str] = (),
        users: Mapping[str, str] | None = None,
        oauth_jwks_file: str | Path | None = None,
        oauth_secured_protocols: Sequence[str] = ("SASL_PLAINTEXT", "SASL_SSL"),
        client_auth: bool = False,
        kdc: Any = None,
        startup_timeout: float = 120.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(startup_timeout=startup_timeout, **kwargs)
        #: OAUTHBEARER tokens must be signed by a key of this JWKS file (None: unsigned tokens pass).
        self.oauth_jwks_file = None if oauth_jwks_file is None else Path(oauth_jwks_file).resolve()
        #: The SASL listeners whose OAUTHBEARER tokens are checked against ``oauth_jwks_file``.
        self.oauth_secured_protocols = tuple(p.upper() for p in oauth_secured_protocols)
        if client_auth and not tls:
            raise ValueError("client_auth=True needs tls=True")
        self.version = kafka_version(version)
        self.tls = bool(tls)
        self.sasl_mechanisms = tuple(m.upper() for m in sasl_mechanisms)
        unknown = [m for m in self.sasl_mechanisms if m not in SASL_MECHANISMS]
        if unknown:
            raise ValueError(f"unsupported SASL mechanism(s) {unknown}; choose from {SASL_MECHANISMS}")
        self.users = dict(DEFAULT_USERS if users is None else users)
        if self.sasl_mechanisms:
            _check_users(self.users)
        #: The security protocols this broker listens with, PLAINTEXT first.
        self.security_protocols = ["PLAINTEXT"]
        if self.tls:
            self.security_protocols.append("SSL")
        if self.sasl_mechanisms:
            self.security_protocols.append("SASL_PLAINTEXT")
            if self.tls:
                self.security_protocols.append("SASL_SSL")
        if client_auth:
            # A listener named MTLS speaking SSL that requires a client certificate signed by the test CA
            # (make one with tls.make_client_keystore); bootstrap_for("MTLS") names it.
            self.security_protocols.append("MTLS")
        #: Port of each listener other than PLAINTEXT (which is ``port``).
        self.listener_ports: dict[str, int] = {}
        self._certificates: Any = None
        self.extra_config = {k: str(v) for k, v in (config or {}).items()}
        self.heap = heap
        self.log_level = log_level
        self.data_dir = self.log_dir / "kraft-logs"
        self.controller_port = 0
        self.cluster_id = ""
        self._formatted = False
        self._classpath = ""
        self._not_ready = "no answer"  # why the last readiness probe failed (for the timeout message)
        #: The Kerberos KDC of a GSSAPI broker (:class:`~.kdc.KerberosKdc`), None otherwise.
        self.kdc: Any = kdc
        self._owns_kdc = False
        self._kerberos_principal = ""
        self._kerberos_keytab: Path | None = None

    # configuration ---------------------------------------------------------------------------------
    @property
    def properties_path(self) -> Path:
        return self.log_dir / "server.properties"

    @property
    def ca_file(self) -> Path:
        """The PEM file of the CA that signed the broker's certificate (``tls=True`` only)."""
        if self._certificates is None:
            raise RuntimeError("this broker has no TLS listener (start it with tls=True)")
        return Path(self._certificates.ca_file)

    @property
    def certificates(self) -> Any:
        """The broker's :class:`~.tls.BrokerCertificates` (``tls=True`` only): the CA signs client certificates
        too (:func:`~.tls.make_client_keystore`)."""
        if self._certificates is None:
            raise RuntimeError("this broker has no TLS listener (start it with tls=True)")
        return self._certificates

    def bootstrap_for(self, security_protocol: str) -> str:
        """``host:port`` of the listener speaking ``security_protocol`` (``PLAINTEXT``, ``SSL``, ``SASL_...``)."""
        protocol = security_protocol.upper()
        if protocol not in self.security_protocols:
            raise ValueError(f"this broker has no {protocol} listener; it has {self.security_protocols}")
        if not self.running and not self.bootstrap:
            raise RuntimeError("the broker has not started")
        port = self.port if protocol == "PLAINTEXT" else self.listener_ports[protocol]
        return f"{self.host}:{port}"

    def _listener_properties(self) -> dict[str, str]:
        """Listener names, ports and the TLS / SASL settings of each listener."""
        ports = {"PLAINTEXT": self.port, **self.listener_ports}
        served = ",".join(f"{p}://{self.host}:{ports[p]}" for p in self.security_protocols)
        props = {
            "listeners": f"{served},CONTROLLER://{self.host}:{self.controller_port}",
            "advertised.listeners": served,
            "listener.security.protocol.map": ",".join(
                f"{p}:{'SSL' if p == 'MTLS' else p}" for p in self.security_protocols
            )
            + ",CONTROLLER:PLAINTEXT",
        }
        if self._certificates is not None:
            certs = self._certificates
            # PKCS#12 keystore holding the key and its chain; no client certificates are asked for.
            props.update({
                "ssl.keystore.type": "PKCS12",
                "ssl.keystore.location": str(certs.keystore),
                "ssl.keystore.password": certs.password,
                "ssl.key.password": certs.password,
                "ssl.client.auth": "none",
            })
            if "MTLS" in self.security_protocols:
                props.update({
                    "listener.name.mtls.ssl.client.auth": "required",
                    "listener.name.mtls.ssl.truststore.type": "PEM",
                    "listener.name.mtls.ssl.truststore.location": str(certs.ca_file),
                })
        for protocol in ("SASL_PLAINTEXT", "SASL_SSL"):
            if protocol not in self.security_protocols:
                continue
            prefix = f"listener.name.{protocol.lower()}"
            props[f"{prefix}.sasl.enabled.mechanisms"] = ",".join(self.sasl_mechanisms)
            for mechanism in self.sasl_mechanisms:
                if mechanism == "OAUTHBEARER":
                    # The broker's own login needs a subject; clients' tokens go to the validator.
                    module = ("org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
                              'unsecuredLoginStringClaim_sub="broker";')
                    if self.oauth_jwks_file is not None and protocol in self.oauth_secured_protocols:
                        props[f"{prefix}.oauthbearer.sasl.server.callback.handler.class"] = _OAUTH_VALIDATOR
                        props["sasl.oauthbearer.jwks.endpoint.url"] = self.oauth_jwks_file.as_uri()
                        # Kafka 4.4 refuses to start a validator that would not check "aud" and "iss".
                        props["sasl.oauthbearer.expected.audience"] = OAUTH_AUDIENCE
                        props["sasl.oauthbearer.expected.issuer"] = OAUTH_ISSUER
                elif mechanism == "GSSAPI":
                    props["sasl.kerberos.service.name"] = KERBEROS_SERVICE_NAME
                    module = ("com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true "
                              f'keyTab="{self._kerberos_keytab}" principal="{self._kerberos_principal}";')
                elif mechanism == "PLAIN":
                    # PlainLoginModule's user_<name>="<password>" options are the PLAIN user database.
                    entries = " ".join(f'user_{name}="{pw}"' for name, pw in self.users.items())
                    module = f"org.apache.kafka.common.security.plain.PlainLoginModule required {entries};"
                else:
                    # SCRAM verifies against the credentials stored in the metadata log (see _format_storage).
                    module = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
                props[f"{prefix}.{mechanism.lower()}.sasl.jaas.config"] = module
        return props

    def server_properties(self) -> dict[str, str]:
        """The broker's ``server.properties`` for the current ports (defaults, then ``config``)."""
        props = {
            "node.id": "1",
            "process.roles": "broker,controller",
            **self._listener_properties(),
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            # Static voters work on 3.9 and 4.x alike and need no --standalone at format time.
            "controller.quorum.voters": f"1@{self.host}:{self.controller_port}",
            "log.dirs": str(self.data_dir),
            "num.partitions": "1",
            "default.replication.factor": "1",
            "min.insync.replicas": "1",
            "offsets.topic.replication.factor": "1",
            # Fewer internal partitions: the first group or transaction creates them, 50 each by default.
            "offsets.topic.num.partitions": "4",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "transaction.state.log.num.partitions": "4",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            # A test's first JoinGroup should not wait 3 s for more members (the production default).
            "group.initial.rebalance.delay.ms": "0",
            "auto.create.topics.enable": "true",
            "delete.topic.enable": "true",
            "log.retention.check.interval.ms": "60000",
        }
        props.update(self.extra_config)
        return props

    def _write_config(self) -> None:
        props = self.server_properties()
        self.properties_path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        if _major(self.version) >= 4:
            (self.log_dir / "log4j2.properties").write_text(_LOG4J2_CONFIG.format(level=self.log_level))
        else:
            (self.log_dir / "log4j.properties").write_text(_LOG4J1_CONFIG.format(level=self.log_level))

    def _jvm(self, main: str, *args: str) -> list[str]:
        if _major(self.version) >= 4:
            log = f"-Dlog4j2.configurationFile=file:{self.log_dir / 'log4j2.properties'}"
        else:
            log = f"-Dlog4j.configuration=file:{self.log_dir / 'log4j.properties'}"
        extra = []
        if self.kdc is not None and "GSSAPI" in self.sasl_mechanisms:
            # The JDK's Kerberos reads this krb5.conf (KDC address, realm, TCP), not KRB5_CONFIG.
            extra.append(f"-Djava.security.krb5.conf={self.kdc.krb5_conf}")
        if self.oauth_jwks_file is not None:
            extra.append(f"-D{_OAUTH_ALLOWED_URLS}={self.oauth_jwks_file.as_uri()}")
        return [
            java_binary(),
            *extra,
            f"-Xmx{self.heap}",
            "-Xss1m",
            "-XX:+UseG1GC",
            "-Djava.awt.headless=true",
            log,
            f"-Dkafka.logs.dir={self.log_dir}",
            "-cp",
            self._classpath,
            main,
            *args,
        ]

    def command(self) -> list[str]:
        return self._jvm("kafka.Kafka", str(self.properties_path))

    def _format_storage(self) -> None:
        # A log directory formatted by an earlier broker keeps its cluster id (StorageTool refuses another).
        self.cluster_id = self.cluster_id or _stored_cluster_id(self.data_dir) or _kraft_cluster_id()
        cmd = self._jvm(
            "kafka.tools.StorageTool", "format", "-t", self.cluster_id, "-c", str(self.properties_path),
            "--ignore-formatted",
            *self._scram_arguments(),
        )
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=self.log_dir)
        if res.returncode != 0:
            raise BrokerStartError(
                f"kafka-storage format failed ({res.returncode}):\n{(res.stdout + res.stderr)[-3000:]}"
            )
        self._formatted = True

    def _scram_arguments(self) -> list[str]:
        # KIP-900: in KRaft, SCRAM credentials go into the bootstrap metadata at format time.
        args: list[str] = []
        for mechanism in self.sasl_mechanisms:
            if mechanism.startswith("SCRAM-"):
                for name, password in self.users.items():
                    args += ["--add-scram", f"{mechanism}=[name={name},password={password}]"]
        return args

    def _pick_ports(self) -> None:
        self.port = free_port(self.host)
        self.controller_port = free_port(self.host)
        self.listener_ports = {p: free_port(self.host) for p in self.security_protocols if p != "PLAINTEXT"}

    # lifecycle -------------------------------------------------------------------------------------
    def start(self) -> ApacheKafkaBroker:
        with self._lock:
            if self.running:
                return self
            if not self._classpath:
                self._classpath = kafka_classpath(self.version)
            if "GSSAPI" in self.sasl_mechanisms and not self._kerberos_principal:
                self._set_up_kerberos()
            if self.tls and self._certificates is None:
                from .tls import make_broker_certificates

                self._certificates = make_broker_certificates(self.log_dir / "tls")
            deadline = time.monotonic() + self.startup_timeout
            attempts = 1 if self._fixed_port else 3
            last: Exception | None = None
            for _ in range(attempts):
                if not self._fixed_port:
                    self._pick_ports()
                elif not self.controller_port:  # a caller-chosen port: the others are still free ones
                    self.controller_port = free_port(self.host)
                    self.listener_ports = {
                        p: free_port(self.host) for p in self.security_protocols if p != "PLAINTEXT"
                    }
                self._write_config()
                if not self._formatted:
                    self._format_storage()
                try:
                    self._launch(deadline)
                    break
                except BrokerStartError as e:
                    last = e
                    self.kill_process()
                    if self._fixed_port or time.monotonic() >= deadline:
                        break
            self._started(last)
            return self

    def _set_up_kerberos(self) -> None:
        """The broker's principal and keytab in ``kdc`` (started here when none was given)."""
        from .kdc import service_host, start_kdc

        if self.kdc is None:
            self.kdc = start_kdc(log_dir=self.log_dir / "kdc", host=self.host)
            self._owns_kdc = True
            self.kdc.add_principal(KERBEROS_CLIENT)
        name = f"{KERBEROS_SERVICE_NAME}/{service_host(self.host)}"
        self._kerberos_principal = self.kdc.add_principal(name, keytab=self.log_dir / "broker.keytab")
        self._kerberos_keytab = self.kdc.keytab(name)

    def stop(self) -> None:
        super().stop()
        if self._owns_kdc and self.kdc is not None:
            self.kdc.stop()

    def _ready(self) -> bool:
        """Whether the broker answers Metadata listing itself (the port opens before the broker is ready).

        mirakuru's TCPExecutor only waits for the port: Kafka accepts connections while it still loads its
        metadata and answers with no brokers, so the readiness check is a Metadata request.
        """
        try:
            if _metadata_broker_count(self.host, self.port, 2.0) > 0:
                return True
            self._not_ready = "Metadata listed no brokers yet"
        except (OSError, ConnectionError) as e:
            self._not_ready = str(e) or type(e).__name__
        return False

    def _start_failure(self, exit_status: int | None) -> BrokerStartError:
        if exit_status is not None:
            return BrokerStartError(
                f"Apache Kafka {self.version} exited with status {exit_status} before answering on "
                f"{self.host}:{self.port}; log tail:\n{self.log_tail()}"
            )
        return BrokerStartError(
            f"Apache Kafka {self.version} did not answer Metadata on {self.host}:{self.port} within "
            f"{self.startup_timeout:.0f} s ({self._not_ready}); log tail:\n{self.log_tail()}"
        )

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the broker's log (stdout, where its log4j config sends everything)."""
        return "\n".join(t for t in (log_tail(self.stdout_path, lines), log_tail(self.stderr_path, lines)) if t)

    def restart(self, *, graceful: bool = False) -> None:
        """Stop the broker and start it again on the same ports with the same log directories.

        ``graceful=False`` (the default) is a crash: SIGKILL. Kafka appends a record to its log file
        before it acknowledges it with acks=all, and the page cache survives the process, so nothing
        acknowledged is lost either way; ``graceful=True`` is a controlled shutdown (SIGTERM).
        """
        with self._lock:
            self.kill_process(signal.SIGTERM if graceful else signal.SIGKILL, 30.0)
            self.start()


def _check_users(users: Mapping[str, str]) -> None:
    # The names and passwords go verbatim into a JAAS option ("...") and a kafka-storage --add-scram
    # argument ([name=...,password=...]): refuse the characters either syntax would misread.
    if not users:
        raise ValueError("a SASL broker needs at least one user")
    for name, password in users.items():
        for what, text in (("user name", name), ("password", password)):
            bad = sorted(set(text) & set('",[]=\\ ;'))
            if not text or bad:
                raise ValueError(f"{what} {text!r} is empty or contains {bad}, which the broker config cannot carry")


def _stored_cluster_id(data_dir: Path) -> str:
    """The ``cluster.id`` in ``data_dir/meta.properties`` when the directory was formatted before, else ""."""
    try:
        lines = (data_dir / "meta.properties").read_text().splitlines()
    except OSError:
        return ""
    for line in lines:
        key, sep, value = line.partition("=")
        if sep and key.strip() == "cluster.id":
            return value.strip()
    return ""


def _kraft_cluster_id() -> str:
    # A KRaft cluster id is a base64url (no padding) UUID, what `kafka-storage random-uuid` prints.
    import base64

    # Like Kafka's Uuid.randomUuid(), never one starting with "-": StorageTool's argument parser would
    # read it as an option ("argument --cluster-id/-t: expected one argument", 1 start in 64).
    while True:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cid.startswith("-"):
            return cid

