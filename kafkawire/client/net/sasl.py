"""SASL mechanisms for Kafka: PLAIN (RFC 4616), SCRAM-SHA-256/512 (RFC 5802, RFC 7677), OAUTHBEARER (RFC 7628),
and GSSAPI (Kerberos, RFC 4752), whose mechanism lives in :mod:`.kerberos` (it needs the ``gssapi`` package).

The exchange itself (SaslHandshake v1, then SaslAuthenticate carrying these tokens, KIP-152) is driven by
:class:`kafkawire.client.net.connection.BrokerConnection`; this module only builds and checks the tokens.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import AuthenticationFailedError

if TYPE_CHECKING:
    from .deadline import Deadline
    from .kerberos import GssapiMechanism, KerberosLogin

__all__ = [
    "MECHANISMS",
    "OAuthBearerMechanism",
    "OAuthBearerToken",
    "PlainMechanism",
    "SaslConfig",
    "ScramMechanism",
    "mechanism_for",
]

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "GSSAPI")


@dataclass(frozen=True)
class OAuthBearerToken:
    """What an OAUTHBEARER token provider may return instead of a bare token string: the token (a JWT,
    sent as is) and SASL extensions (KIP-342, e.g. ``{"logicalCluster": "lkc-1"}``) for the first message."""

    value: str = field(repr=False)
    extensions: Mapping[str, str] = field(default_factory=dict)

# Kafka's broker refuses fewer iterations than this (ScramMechanism.minIterations); refusing them here
# too stops a fake server from making us hand over a cheaply brute-forced proof.
MIN_SCRAM_ITERATIONS = 4096


@dataclass(frozen=True)
class SaslConfig:
    """Credentials for SASL: ``mechanism`` is ``"PLAIN"``, ``"SCRAM-SHA-256"``, ``"SCRAM-SHA-512"``,
    ``"OAUTHBEARER"`` or ``"GSSAPI"``.

    OAUTHBEARER takes ``token_provider`` instead of a password: a callable returning the bearer token
    (a ``str`` or an :class:`OAuthBearerToken`), called for every new connection so it can refresh an
    expired token (the Java client's login callback handler). ``username`` then only labels errors.

    GSSAPI takes ``kerberos`` (a :class:`~.kerberos.KerberosLogin`: principal, keytab or ticket cache, service
    name) instead of a password; ``username`` labels errors.
    """

    mechanism: str
    username: str
    password: str = field(repr=False)
    token_provider: Callable[[], str | OAuthBearerToken] | None = field(default=None, repr=False, compare=False)
    kerberos: KerberosLogin | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.mechanism.upper() not in MECHANISMS:
            raise ValueError(f"unsupported SASL mechanism {self.mechanism!r}; expected one of {MECHANISMS}")
        if self.mechanism.upper() == "OAUTHBEARER" and self.token_provider is None:
            raise ValueError("SASL mechanism OAUTHBEARER needs a token_provider (a callable returning the token)")
        if self.mechanism.upper() == "GSSAPI" and self.kerberos is None:
            raise ValueError("SASL mechanism GSSAPI needs kerberos (a KerberosLogin: principal, keytab, service name)")


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

    # Why not the maintained ``scramp`` package: its ScramClient always applies SASLprep (RFC 4013) to the
    # user name and password, which Kafka does not. A password that SASLprep changes (NFKC-normalised
    # characters such as "\ufb01", non-ASCII spaces mapped to " ", soft hyphens removed) or refuses (control
    # characters) would then fail against a Kafka broker that stored its UTF-8 bytes as given.

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


# RFC 7628 section 3.1: a key is ALPHA+, a value is printable ASCII, space, tab, CR or LF. Kafka also
# reserves the key "auth" (OAuthBearerClientInitialResponse.EXTENSION_KEY_PATTERN / VALUE_PATTERN).
_EXTENSION_KEY = re.compile(r"[A-Za-z]+")
_EXTENSION_VALUE = re.compile(r"[\x21-\x7E \t\r\n]+")


class OAuthBearerMechanism:
    """SASL OAUTHBEARER client (RFC 7628, KIP-255): one message carrying the bearer token.

    The first message is ``n,,\\x01auth=Bearer <token>\\x01[key=value\\x01...]\\x01``. A broker that
    refuses the token answers with a JSON error challenge (RFC 7628 section 3.2.2); the client must then
    send a single ``\\x01`` and the broker fails the exchange, which is how Kafka reports the reason.
    """

    name = "OAUTHBEARER"

    def __init__(self, token: str | OAuthBearerToken) -> None:
        if isinstance(token, OAuthBearerToken):
            self.token, self.extensions = token.value, dict(token.extensions)
        else:
            self.token, self.extensions = token, {}
        if not isinstance(self.token, str) or not self.token or any(c.isspace() for c in self.token):
            raise AuthenticationFailedError("the OAUTHBEARER token provider returned an empty or malformed token")
        for key, value in self.extensions.items():
            if key == "auth" or not _EXTENSION_KEY.fullmatch(key) or not _EXTENSION_VALUE.fullmatch(value):
                raise ValueError(f"invalid OAUTHBEARER SASL extension {key!r}={value!r} (RFC 7628 section 3.1)")
        self.complete = False
        #: The broker's JSON error challenge, when it refused the token.
        self.error: str | None = None

    def first_message(self) -> bytes:
        extras = "".join(f"{k}={v}\x01" for k, v in self.extensions.items())
        return f"n,,\x01auth=Bearer {self.token}\x01{extras}\x01".encode()

    def step(self, challenge: bytes) -> bytes | None:
        if challenge and self.error is None:
            # An error challenge: acknowledge with %x01; the broker then fails SaslAuthenticate.
            self.error = challenge.decode("utf-8", "replace")
            return b"\x01"
        self.complete = self.error is None
        return None


def mechanism_for(
    config: SaslConfig, host: str = "", deadline: Deadline | None = None
) -> PlainMechanism | ScramMechanism | OAuthBearerMechanism | GssapiMechanism:
    """A fresh mechanism state machine for one authentication with the broker ``host`` (GSSAPI names the
    broker's service principal after it, and bounds its Kerberos library calls by ``deadline``)."""
    name = config.mechanism.upper()
    if name == "GSSAPI":
        from .kerberos import GssapiMechanism

        assert config.kerberos is not None
        return GssapiMechanism(config.kerberos, host, deadline)
    if name == "OAUTHBEARER":
        assert config.token_provider is not None
        return OAuthBearerMechanism(config.token_provider())
    if name == "PLAIN":
        return PlainMechanism(config.username, config.password)
    return ScramMechanism(name, config.username, config.password)
