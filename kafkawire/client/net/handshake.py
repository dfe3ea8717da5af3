"""Opening a broker connection: the TCP connect and TLS handshake, the ApiVersions negotiation (KIP-35/KIP-511)
and SASL authentication (SaslHandshake v1 + SaslAuthenticate, KIP-152), each bounded by the connect's deadline.
:meth:`BrokerConnection.connect <kafkawire.client.net.connection.BrokerConnection.connect>` runs them in turn; the
exchanges use only the connection's public request methods."""

from __future__ import annotations

import logging
import socket
import ssl
import threading
import time
from typing import TYPE_CHECKING, Any

from ...errors import ProtocolError
from ..cluster.quirks import apiversions_retry_v0_on_garbled_answer
from ..errors import AuthenticationFailedError, KafkaConnectionError, KafkaTimeoutError, ListenerMismatchError
from .deadline import Deadline
from .sasl import SaslConfig, mechanism_for

if TYPE_CHECKING:
    from .connection import BrokerConnection

__all__ = ["authenticate", "hung_up_after_handshake", "negotiate_versions", "open_socket"]

log = logging.getLogger("kafkawire.client.connection")


def open_socket(host: str, port: int, limit: Deadline, budget: float, ssl_context: ssl.SSLContext | None,
                server_hostname: str | None) -> socket.socket:
    """A TCP socket to ``host:port`` (connected within ``budget`` seconds), TLS-wrapped when ``ssl_context`` is
    given (the handshake within what is left of ``limit``); the errors name the cause (timeout, refused, a
    rejected certificate, a plaintext listener)."""
    try:
        sock = socket.create_connection((host, port), timeout=budget)
    except TimeoutError as e:
        log.debug("connect to %s:%s timed out after %.3f s", host, port, budget)
        raise KafkaTimeoutError(f"connect to {host}:{port} timed out after {budget:.3g} s") from e
    except OSError as e:
        log.debug("connect to %s:%s failed: %s", host, port, e)
        raise KafkaConnectionError(f"cannot connect to {host}:{port}: {e}") from e
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if ssl_context is not None:
            sock.settimeout(max(0.001, limit.remaining()))
            sock = ssl_context.wrap_socket(sock, server_hostname=server_hostname or host)
    except ssl.SSLCertVerificationError as e:
        # Not retriable (Java's SslAuthenticationException): the certificate will not change.
        sock.close()
        raise AuthenticationFailedError(f"TLS certificate of {host}:{port} rejected: {e.verify_message}") from e
    except (OSError, ssl.SSLError) as e:
        sock.close()
        if "WRONG_VERSION_NUMBER" in str(e) or "record layer failure" in str(e):
            # The peer's first bytes are not a TLS record: a plaintext listener (or not Kafka).
            raise ListenerMismatchError(
                f"{host}:{port} did not answer the TLS handshake with TLS ({e}): it looks like "
                "a plaintext listener; set security.protocol=PLAINTEXT or SASL_PLAINTEXT for it, or "
                "use the cluster's TLS port"
            ) from e
        hint = ""
        if "UNEXPECTED_EOF" in str(e) or isinstance(e, ConnectionResetError):
            # A Kafka plaintext listener reads the ClientHello as an oversized request and hangs up.
            hint = (" (the peer hung up during the TLS handshake: if it is a plaintext listener, set "
                    "security.protocol=PLAINTEXT or SASL_PLAINTEXT for it, or use the cluster's TLS port)")
        raise KafkaConnectionError(f"TLS handshake with {host}:{port} failed: {e}{hint}") from e
    return sock


def negotiate_versions(conn: BrokerConnection, deadline: Deadline) -> Any:
    """ApiVersions with the broker of ``conn``: the ``NegotiatedVersions`` (:mod:`kafkawire.protocol.negotiation`)
    the connection then uses."""
    from ...protocol.negotiation import ApiVersionsExchange

    exchange = ApiVersionsExchange(client_id=conn.client_id)
    for _ in range(4):  # newest version, then the broker's suggestion, then v0 (KIP-511)
        cid = conn.next_correlation_id()
        conn.send_frame(exchange.request_frame(correlation_id=cid), cid, deadline=deadline)
        frame = conn.receive(cid, deadline=deadline)
        try:
            result = exchange.handle_response(frame)
        except ProtocolError:
            if not apiversions_retry_v0_on_garbled_answer(exchange.version):
                raise
            exchange = ApiVersionsExchange(client_id=conn.client_id, max_version=0)
            continue
        if result is not None:
            return result
    raise ProtocolError(f"ApiVersions negotiation with {conn.host}:{conn.port} did not converge")


def authenticate(conn: BrokerConnection, config: SaslConfig, deadline: Deadline) -> None:
    """SASL authentication of ``conn`` with ``config`` (after the version negotiation); a refused mechanism or
    failed exchange is an :class:`AuthenticationFailedError` naming the broker and the mechanism."""
    from ...protocol import SaslAuthenticateRequest, SaslHandshakeRequest

    mech = mechanism_for(config, conn.host, deadline)
    hs_version = conn.version_for(SaslHandshakeRequest)
    if hs_version < 1:
        # v0 sends the tokens as bare size-prefixed frames instead of SaslAuthenticate (pre-KIP-152).
        raise AuthenticationFailedError(f"{conn.host}:{conn.port} only speaks SaslHandshake v0")
    hs = conn.request(SaslHandshakeRequest(mechanism=mech.name), hs_version, deadline=deadline)
    if hs.error_code != 0:
        raise AuthenticationFailedError(
            f"{conn.host}:{conn.port} refused SASL mechanism {mech.name} (error {hs.error_code}); "
            f"it offers {list(hs.mechanisms or [])}"
        )
    token: bytes | None = mech.first_message()
    while token is not None:
        resp = conn.request(SaslAuthenticateRequest(auth_bytes=token), deadline=deadline)
        if resp.error_code != 0:
            raise AuthenticationFailedError(
                f"SASL {mech.name} authentication of {config.username!r} with {conn.host}:{conn.port} "
                f"failed (error {resp.error_code}): {resp.error_message}"
            )
        token = mech.step(bytes(resp.auth_bytes or b""))
    if not mech.complete:
        raise AuthenticationFailedError(f"SASL {mech.name} exchange ended early")


def hung_up_after_handshake(conn: BrokerConnection, error: BaseException, at: float) -> ListenerMismatchError | None:
    """For a connection without SASL whose broker hung up on the first request after ApiVersions: the error
    naming the setting to change, when the listener is a SASL one. Kafka's SASL listeners answer ApiVersions
    before authentication (KIP-43, KIP-35) and close the connection on any other request, which no retry can
    change (issue 34). A hang-up there can also be a fault (a connection cut before the answer), so a new
    connection asks Metadata again: a SASL listener hangs up again (and a third asks SaslHandshake for the
    mechanisms, to name them). None when ``error`` is not a close while awaiting an answer, or the second
    look was answered; ``at`` (``time.monotonic()``) bounds the looks."""
    if not getattr(error, "awaiting", False) or getattr(_probing, "active", False):
        return None
    # Once more on a new connection: a SASL listener hangs up on a Metadata request every time.
    if not getattr(_probe(conn, at, _metadata_request()), "awaiting", False):
        return None
    answer = _probe(conn, at, _handshake_request())
    # NONE or UNSUPPORTED_SASL_MECHANISM: the mechanisms of a SASL listener (ILLEGAL_SASL_STATE: none).
    mechanisms = list(answer.mechanisms or []) if getattr(answer, "error_code", None) in (0, 33) else []
    protocol = "SASL_SSL" if conn.ssl_context is not None else "SASL_PLAINTEXT"
    offers = f" (it offers SASL {', '.join(mechanisms)})" if mechanisms else ""
    return ListenerMismatchError(
        f"{conn.host}:{conn.port}: the broker closed the connection after ApiVersions: is the listener "
        f"{protocol}{offers}? Set security_protocol={protocol} (security.protocol) with sasl_mechanism and the "
        "credentials (sasl.mechanism, sasl.jaas.config)"
    )


_probing = threading.local()  # set while a probe runs: its own hang-up is not probed again


def _metadata_request() -> Any:
    from ...protocol import MetadataRequest

    return MetadataRequest(topics=[], allow_auto_topic_creation=False)


def _handshake_request() -> Any:
    from ...protocol import SaslHandshakeRequest

    return SaslHandshakeRequest(mechanism="PLAIN")


def _probe(conn: BrokerConnection, at: float, request: Any) -> Any:
    """``request`` on a new connection like ``conn`` (no SASL), within ``at``: the answer, or the error."""
    from .connection import BrokerConnection

    remaining = min(at - time.monotonic(), conn.connect_timeout_ms / 1000)
    if remaining <= 0.01:
        return KafkaTimeoutError.nothing_left(f"no time left to ask {conn.host}:{conn.port} again")
    limit = Deadline(remaining)
    probe = BrokerConnection(conn.host, conn.port, client_id=conn.client_id, connect_timeout_ms=remaining * 1000,
                             request_timeout_ms=remaining * 1000, ssl_context=conn.ssl_context,
                             server_hostname=conn.server_hostname, max_versions=conn.max_versions)
    _probing.active = True
    try:
        probe.connect(deadline=limit)
        return probe.request(request, probe.version_for(type(request)), deadline=limit)
    except Exception as e:
        log.debug("second look at %s:%s: %s", conn.host, conn.port, e)
        return e
    finally:
        _probing.active = False
        probe.close()
