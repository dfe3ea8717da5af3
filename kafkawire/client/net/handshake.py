"""Opening a broker connection: the TCP connect and TLS handshake, the ApiVersions negotiation (KIP-35/KIP-511)
and SASL authentication (SaslHandshake v1 + SaslAuthenticate, KIP-152), each bounded by the connect's deadline.
:meth:`BrokerConnection.connect <kafkawire.client.net.connection.BrokerConnection.connect>` runs them in turn; the
exchanges use only the connection's public request methods."""

from __future__ import annotations

import logging
import socket
import ssl
from typing import TYPE_CHECKING, Any

from ...errors import ProtocolError
from ..cluster.quirks import apiversions_retry_v0_on_garbled_answer
from ..errors import AuthenticationFailedError, KafkaConnectionError, KafkaTimeoutError, ListenerMismatchError
from .deadline import Deadline
from .sasl import SaslConfig, mechanism_for

if TYPE_CHECKING:
    from .connection import BrokerConnection

__all__ = ["authenticate", "negotiate_versions", "open_socket"]

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
