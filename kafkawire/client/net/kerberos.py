"""SASL GSSAPI (Kerberos V5, RFC 4752) for Kafka, on the ``gssapi`` package (``pip install "kafkawire[gssapi]"``).

:class:`KerberosLogin` is what the Java client's JAAS ``com.sun.security.auth.module.Krb5LoginModule`` does:
credentials for a principal from a keytab (``useKeyTab=true keyTab=... principal=...``) or from the ticket
cache (``useTicketCache=true``). With a keytab they live in a private in-memory credential cache, which
MIT's library refills from the keytab when the tickets expire (its ``client_keytab`` credential store), so
neither the user's ticket cache nor ``kinit`` is involved.

:class:`GssapiMechanism` is one authentication, carried by SaslHandshake/SaslAuthenticate like the other
mechanisms (:mod:`.sasl`). The exchange, as Kafka's Java client (the JDK's ``GssKrb5Client``) has it:

1. the client sends ``GSS_Init_sec_context`` tokens for ``<service>@<broker host>`` (mutual authentication)
   and passes each answer back in until the context is established; when the last call produces no token
   the client sends an empty one;
2. the broker then sends a wrapped 4-byte message: a bit mask of the security layers it offers and its
   largest message size (RFC 4752 section 3.1);
3. the client answers with a wrapped ``0x01`` ("no security layer", the only one Kafka uses), a maximum
   size of 0 and its principal as the authorization identity; the broker's empty answer ends it.

The broker's host name is the one the client connected to; for an IP literal its reverse lookup, as the
Java client (``InetAddress.getHostName()``) does.

Every call into the Kerberos library (it may talk to a KDC) runs on a helper thread and is waited for only
until the connection's deadline: an unreachable KDC cannot hang a connect past it.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import socket
import struct
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import AuthenticationFailedError, KafkaTimeoutError
from .deadline import Deadline

__all__ = ["GssapiMechanism", "KerberosLogin", "canonical_host", "keytab_principals"]

_T = TypeVar("_T")

# RFC 4752 section 3.1: the security layer bit masks. Kafka never negotiates integrity or confidentiality
# layers (SASL_SSL is how it encrypts), so only "no security layer" is chosen.
_NO_SECURITY_LAYER = 0x01
# Credentials with less than this left are acquired again before a new connection uses them.
_RENEW_MARGIN_S = 30.0


def _gssapi() -> Any:
    from ..._optional import require

    return require("gssapi", "SASL GSSAPI (Kerberos)")


def canonical_host(host: str) -> str:
    """The host name for a broker's service principal: ``host`` itself, or for an IP literal its reverse
    lookup (Java's ``InetAddress.getHostName()``), falling back to the literal when nothing resolves."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return host
    try:
        return socket.gethostbyaddr(host)[0]
    except OSError:
        return host


def _gss_cause(error: BaseException) -> str:
    # gssapi's GSSError carries the major and minor (Kerberos) messages; the minor one names the cause
    # ("Client 'x@R' not found in Kerberos database", "Server kafka/h@R not found ...", "No key table entry").
    text = " ".join(str(error).split())
    return text or type(error).__name__


def keytab_principals(path: str) -> list[str]:
    """The principals a keytab file holds (the keytab format version 0x0502 that MIT and Java write), to
    explain a failed login; [] when the file cannot be read or is another format."""
    try:
        with open(path, "rb") as f:
            data = f.read(1 << 20)
    except OSError:
        return []
    if data[:2] != b"\x05\x02":
        return []
    out: list[str] = []
    pos = 2
    try:
        while pos + 4 <= len(data):
            (size,) = struct.unpack_from(">i", data, pos)
            pos += 4
            if size <= 0:  # a hole left by a removed entry
                pos += -size
                continue
            entry, pos = data[pos:pos + size], pos + size
            (count,) = struct.unpack_from(">H", entry, 0)
            at, parts = 2, []
            for _ in range(count + 1):  # the realm, then the components
                (length,) = struct.unpack_from(">H", entry, at)
                parts.append(entry[at + 2:at + 2 + length].decode("utf-8", "replace"))
                at += 2 + length
            name = f"{'/'.join(parts[1:])}@{parts[0]}"
            if name not in out:
                out.append(name)
    except struct.error:
        pass  # a truncated entry: what was read so far
    return out


def _bounded(fn: Callable[[], _T], deadline: Deadline, what: str) -> _T:
    """Run ``fn`` (a blocking Kerberos library call) on a daemon thread and wait for it until ``deadline``.

    The library has its own KDC timeouts (``kdc_timeout``, retries over every KDC) that know nothing of the
    caller's deadline; on expiry the call is abandoned (it finishes on its own) and the connect fails.
    """
    result: list[Any] = []
    done = threading.Event()

    def run() -> None:
        try:
            result.append((True, fn()))
        except BaseException as e:  # handed to the caller's thread
            result.append((False, e))
        finally:
            done.set()

    threading.Thread(target=run, name="kafkawire-gssapi", daemon=True).start()
    remaining = deadline.remaining()
    if not done.wait(None if remaining == float("inf") else remaining):
        raise KafkaTimeoutError(f"{what} did not finish before the deadline (is the KDC reachable?)")
    ok, value = result[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


class KerberosLogin:
    """Kerberos credentials for a client principal, shared by every connection of one client.

    ``keytab``: read the principal's key from this keytab (JAAS ``useKeyTab=true keyTab=...``); None: use the
    ticket cache (``ticket_cache``, else the default one, ``$KRB5CCNAME``), filled by ``kinit``.
    ``principal``: the client principal (``user@REALM`` or ``user``, the default realm then); needed with a
    keytab, optional with a ticket cache (its owner). ``service_name``: the first part of the brokers'
    principal (``sasl.kerberos.service.name``, ``kafka`` for ``kafka/host@REALM``).
    """

    def __init__(self, *, principal: str | None = None, keytab: str | os.PathLike[str] | None = None,
                 ticket_cache: str | None = None, service_name: str = "kafka") -> None:
        for label, value in (("principal", principal), ("ticket_cache", ticket_cache)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{label} must be a str, not {type(value).__name__}")
        if not isinstance(service_name, str) or not service_name or "/" in service_name or "@" in service_name:
            raise ValueError(f"sasl.kerberos.service.name must be a bare service name such as 'kafka', "
                             f"not {service_name!r}")
        if keytab is not None and not principal:
            raise ValueError("a keytab needs the principal whose key it holds (JAAS principal=...)")
        _gssapi()  # a missing package is an error now, naming its extra, not at the first connection
        self.principal = principal
        self.keytab = None if keytab is None else os.fspath(keytab)
        self.ticket_cache = ticket_cache
        self.service_name = service_name
        self._lock = threading.Lock()
        self._credentials: Any = None
        # A private cache for the tickets got with the keytab: the user's default cache stays untouched.
        self._ccache = f"MEMORY:kafkawire-{secrets.token_hex(8)}"

    def __repr__(self) -> str:
        source = f"keytab={self.keytab!r}" if self.keytab else f"ticket_cache={self.ticket_cache or 'default'!r}"
        return f"KerberosLogin(principal={self.principal!r}, {source}, service_name={self.service_name!r})"

    @staticmethod
    def _lifetime(creds: Any) -> float:
        """Seconds the credentials still hold (0 once expired; inf when the library does not say)."""
        try:
            remaining = creds.lifetime
        except Exception:  # gssapi's ExpiredCredentialsError and kin
            return 0.0
        return float("inf") if remaining is None else float(remaining)

    def describe(self) -> str:
        """Who logs in and how, for error messages."""
        who = self.principal or "the ticket cache's principal"
        if self.keytab:
            return f"principal {who} with keytab {self.keytab}"
        return f"{who} from ticket cache {self.ticket_cache or os.environ.get('KRB5CCNAME') or '(default)'}"

    def credentials(self) -> Any:
        """The initiator credentials (``gssapi.Credentials``): acquired on first use, and again once their
        tickets have less than 30 s left."""
        gssapi = _gssapi()
        with self._lock:
            if self._credentials is not None and self._lifetime(self._credentials) > _RENEW_MARGIN_S:
                return self._credentials
            # First use, or tickets about to end: acquire again. With a keytab, MIT's library then gets a new
            # TGT into the private cache (a held credential handle does not renew itself: found by
            # tests/client/test_kerberos_exchange.py); with a ticket cache, it sees what kinit -R left there.
            store: dict[str, str] = {}
            if self.keytab:
                if not os.path.isfile(self.keytab) or not os.access(self.keytab, os.R_OK):
                    raise AuthenticationFailedError(
                        f"Kerberos keytab {self.keytab} for {self.principal} does not exist or cannot be read"
                    )
                store = {"client_keytab": self.keytab, "ccache": self._ccache}
            elif self.ticket_cache:
                store = {"ccache": self.ticket_cache}
            name = None
            if self.principal:
                name = gssapi.Name(self.principal, gssapi.NameType.kerberos_principal)
            try:
                creds = gssapi.Credentials(name=name, usage="initiate", store=store or None)
                if self.keytab:
                    # The keytab is read lazily by the library: ask now whether it can log this principal in
                    # (a principal missing from the keytab fails here, not in the middle of a handshake).
                    creds.inquire(name=True, lifetime=True)
            except gssapi.exceptions.GSSError as e:
                hint = ""
                if self.keytab and self.principal:
                    held = keytab_principals(self.keytab)
                    wanted = self.principal if "@" in self.principal else f"{self.principal}@"
                    if held and not any(p == wanted or p.startswith(wanted) for p in held):
                        hint = f"; the keytab holds no key for {self.principal}, only for {', '.join(held)}"
                raise AuthenticationFailedError(
                    f"Kerberos credentials for {self.describe()} cannot be acquired{hint}: {_gss_cause(e)}"
                ) from None
            self._credentials = creds
            return creds


class GssapiMechanism:
    """SASL GSSAPI client for one connection to ``host`` (see the module docstring for the exchange)."""

    name = "GSSAPI"

    def __init__(self, login: KerberosLogin, host: str, deadline: Deadline | None = None) -> None:
        self.login = login
        self.host = host
        self.deadline = deadline or Deadline(30.0)
        self.service = ""  # service@host, once the host is resolved (first_message, under the deadline)
        self._service_host = host
        self.complete = False
        self._context: Any = None
        self._layer_sent = False

    def _fail(self, what: str, error: BaseException) -> AuthenticationFailedError:
        return AuthenticationFailedError(
            f"SASL GSSAPI with {self.host} (service principal {self.login.service_name}/{self._service_host}, "
            f"sasl.kerberos.service.name={self.login.service_name!r}) for {self.login.describe()}: {what}: "
            f"{_gss_cause(error)}"
        )

    def first_message(self) -> bytes:
        gssapi = _gssapi()
        # A reverse lookup (an IP literal) can block on DNS: it is bounded by the deadline as the KDC calls.
        self._service_host = _bounded(lambda: canonical_host(self.host), self.deadline,
                                      f"reverse lookup of {self.host}")
        self.service = f"{self.login.service_name}@{self._service_host}"
        creds = _bounded(self.login.credentials, self.deadline, f"Kerberos login of {self.login.describe()}")
        target = gssapi.Name(self.service, gssapi.NameType.hostbased_service)
        flags = gssapi.RequirementFlag
        self._context = gssapi.SecurityContext(
            name=target, creds=creds, usage="initiate",
            flags=flags.mutual_authentication | flags.integrity | flags.out_of_sequence_detection,
        )
        try:
            token = _bounded(lambda: self._context.step(None), self.deadline,
                             f"Kerberos service ticket for {self.service}")
        except gssapi.exceptions.GSSError as e:
            raise self._fail("no service ticket", e) from None
        return bytes(token or b"")

    def step(self, challenge: bytes) -> bytes | None:
        gssapi = _gssapi()
        context = self._context
        if context is None:
            raise AuthenticationFailedError("SASL GSSAPI: step() before first_message()")
        try:
            if not context.complete:
                # The broker's AP-REP (mutual authentication); no token out means "send an empty one".
                token = _bounded(lambda: context.step(challenge), self.deadline, "Kerberos mutual authentication")
                return bytes(token or b"")
            if not self._layer_sent:
                offer = context.unwrap(challenge).message
                if len(offer) != 4:
                    raise AuthenticationFailedError(
                        f"SASL GSSAPI: the broker's security-layer message has {len(offer)} bytes, not 4")
                if not offer[0] & _NO_SECURITY_LAYER:
                    raise AuthenticationFailedError(
                        f"SASL GSSAPI: the broker does not offer 'no security layer' (mask {offer[0]:#04x}); "
                        "Kafka clients only speak that one")
                authzid = str(context.initiator_name).encode("utf-8")
                # RFC 4752 section 3.1: the chosen layer, then a maximum size that is 0 without a layer.
                reply = bytes([_NO_SECURITY_LAYER, 0, 0, 0]) + authzid
                self._layer_sent = True
                return bytes(context.wrap(reply, False).message)
        except gssapi.exceptions.GSSError as e:
            raise self._fail("the broker's token was refused", e) from None
        # The broker's (empty) answer to the security-layer reply: authenticated.
        self.complete = True
        return None
