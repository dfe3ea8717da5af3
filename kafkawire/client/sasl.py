"""SASL mechanisms for Kafka: PLAIN (RFC 4616) and SCRAM-SHA-256/512 (RFC 5802, RFC 7677).

The exchange itself (SaslHandshake v1, then SaslAuthenticate carrying these tokens, KIP-152) is driven by
:class:`kafkawire.client.connection.BrokerConnection`; this module only builds and checks the tokens.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass, field

from .errors import AuthenticationFailedError

__all__ = ["SaslConfig", "PlainMechanism", "ScramMechanism", "mechanism_for", "MECHANISMS"]

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")

# Kafka's broker refuses fewer iterations than this (ScramMechanism.minIterations); refusing them here
# too stops a fake server from making us hand over a cheaply brute-forced proof.
MIN_SCRAM_ITERATIONS = 4096


@dataclass(frozen=True)
class SaslConfig:
    """Credentials for SASL: ``mechanism`` is ``"PLAIN"``, ``"SCRAM-SHA-256"`` or ``"SCRAM-SHA-512"``."""

    mechanism: str
    username: str
    password: str = field(repr=False)

    def __post_init__(self) -> None:
        if self.mechanism.upper() not in MECHANISMS:
            raise ValueError(f"unsupported SASL mechanism {self.mechanism!r}; expected one of {MECHANISMS}")


class PlainMechanism:
    """SASL PLAIN: one message ``authzid NUL authcid NUL passwd`` (authzid left empty)."""

    name = "PLAIN"

    def __init__(self, username: str, password: str) -> None:
        self.username = username
        self.password = password
        self.complete = False

    def first_message(self) -> bytes:
        return b"\x00" + self.username.encode("utf-8") + b"\x00" + self.password.encode("utf-8")

    def step(self, challenge: bytes) -> bytes | None:
        # The broker answers PLAIN with an empty token; anything else needs no reply.
        self.complete = True
        return None


def _escape_username(name: str) -> str:
    # RFC 5802 section 5.1: "=" and "," in the saslname are written as "=3D" and "=2C".
    return name.replace("=", "=3D").replace(",", "=2C")


def _parse_attributes(message: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in message.split(","):
        if len(part) < 2 or part[1] != "=":
            raise AuthenticationFailedError(f"malformed SCRAM message: {message!r}")
        out.setdefault(part[0], part[2:])
    return out


class ScramMechanism:
    """SCRAM-SHA-256 / SCRAM-SHA-512 client (no channel binding: GS2 header ``n,,``).

    The password is used as UTF-8 bytes without SASLprep, as Kafka's Java client and broker do
    (``ScramFormatter``); credentials created by Kafka tools therefore match.
    """

    def __init__(self, mechanism: str, username: str, password: str, *, nonce: str | None = None) -> None:
        mechanism = mechanism.upper()
        if mechanism == "SCRAM-SHA-256":
            self.hash_name = "sha256"
        elif mechanism == "SCRAM-SHA-512":
            self.hash_name = "sha512"
        else:
            raise ValueError(f"not a SCRAM mechanism: {mechanism!r}")
        self.name = mechanism
        self.username = username
        self.password = password.encode("utf-8")
        # 24 random bytes, base64: printable and free of ","; a fixed nonce is for test vectors only.
        self.client_nonce = nonce or base64.b64encode(secrets.token_bytes(24)).decode("ascii")
        self.client_first_bare = f"n={_escape_username(username)},r={self.client_nonce}"
        self._server_signature: bytes | None = None
        self.complete = False

    def _hmac(self, key: bytes, msg: bytes) -> bytes:
        return hmac.new(key, msg, self.hash_name).digest()

    def first_message(self) -> bytes:
        return ("n,," + self.client_first_bare).encode("utf-8")

    def step(self, challenge: bytes) -> bytes | None:
        """Answer the server's message; returns the next token, or None when the exchange is over."""
        text = challenge.decode("utf-8", "replace")
        if self._server_signature is None:
            return self._client_final(text)
        self._verify_server_final(text)
        return None

    def _client_final(self, server_first: str) -> bytes:
        attrs = _parse_attributes(server_first)
        if "e" in attrs:
            raise AuthenticationFailedError(f"SCRAM server error: {attrs['e']}")
        try:
            nonce, salt_b64, iterations_s = attrs["r"], attrs["s"], attrs["i"]
            salt = base64.b64decode(salt_b64, validate=True)
            iterations = int(iterations_s)
        except (KeyError, ValueError) as e:
            raise AuthenticationFailedError(f"malformed SCRAM server-first message: {server_first!r}") from e
        if not nonce.startswith(self.client_nonce) or len(nonce) == len(self.client_nonce):
            raise AuthenticationFailedError("SCRAM server nonce does not extend the client nonce")
        if iterations < MIN_SCRAM_ITERATIONS:
            raise AuthenticationFailedError(f"SCRAM iteration count {iterations} below {MIN_SCRAM_ITERATIONS}")
        salted = hashlib.pbkdf2_hmac(self.hash_name, self.password, salt, iterations)
        client_key = self._hmac(salted, b"Client Key")
        stored_key = hashlib.new(self.hash_name, client_key).digest()
        final_without_proof = f"c=biws,r={nonce}"  # "biws" = base64("n,,")
        auth_message = f"{self.client_first_bare},{server_first},{final_without_proof}".encode()
        client_signature = self._hmac(stored_key, auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, client_signature))
        server_key = self._hmac(salted, b"Server Key")
        self._server_signature = self._hmac(server_key, auth_message)
        return f"{final_without_proof},p={base64.b64encode(proof).decode('ascii')}".encode()

    def _verify_server_final(self, server_final: str) -> None:
        attrs = _parse_attributes(server_final)
        if "e" in attrs:
            raise AuthenticationFailedError(f"SCRAM server error: {attrs['e']}")
        try:
            signature = base64.b64decode(attrs["v"], validate=True)
        except (KeyError, ValueError) as e:
            raise AuthenticationFailedError(f"malformed SCRAM server-final message: {server_final!r}") from e
        assert self._server_signature is not None
        # The server proves it knows the password too; a mismatch means we talked to an impostor.
        if not hmac.compare_digest(signature, self._server_signature):
            raise AuthenticationFailedError("SCRAM server signature does not match: server not authenticated")
        self.complete = True


def mechanism_for(config: SaslConfig) -> PlainMechanism | ScramMechanism:
    """A fresh mechanism state machine for one authentication."""
    name = config.mechanism.upper()
    if name == "PLAIN":
        return PlainMechanism(config.username, config.password)
    return ScramMechanism(name, config.username, config.password)
