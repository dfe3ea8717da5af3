"""A client's security settings checked once: ``security_protocol``, the TLS context and the SASL credentials
(PLAIN/SCRAM passwords, an OAUTHBEARER token provider or a GSSAPI login) as the connections use them."""

from __future__ import annotations

import os
import ssl
from collections.abc import Callable
from dataclasses import dataclass

from .sasl import OAuthBearerToken, SaslConfig

__all__ = ["SECURITY_PROTOCOLS", "Security", "security_settings"]

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


@dataclass(frozen=True)
class Security:
    """What a connection needs: the protocol (upper case), the TLS context (None without TLS), the SASL
    credentials (None without SASL)."""

    protocol: str
    ssl_context: ssl.SSLContext | None
    sasl: SaslConfig | None


def security_settings(
    security_protocol: str,
    *,
    ssl_context: ssl.SSLContext | None = None,
    sasl_mechanism: str | None = None,
    sasl_username: str | None = None,
    sasl_password: str | None = None,
    sasl_oauth_token_provider: Callable[[], str | OAuthBearerToken] | None = None,
    sasl_kerberos_service_name: str = "kafka",
    sasl_kerberos_principal: str | None = None,
    sasl_kerberos_keytab: str | os.PathLike[str] | None = None,
    sasl_kerberos_ticket_cache: str | None = None,
) -> Security:
    """:class:`kafkawire.Client`'s security arguments checked and combined; a ``ValueError`` names what is
    missing or given for the wrong protocol. TLS without ``ssl_context`` uses ``ssl.create_default_context()``."""
    protocol = security_protocol.upper()
    if protocol not in SECURITY_PROTOCOLS:
        raise ValueError(f"security_protocol must be one of {SECURITY_PROTOCOLS}, not {security_protocol!r}")
    context: ssl.SSLContext | None = None
    if protocol in ("SSL", "SASL_SSL"):
        context = ssl_context or ssl.create_default_context()
    elif ssl_context is not None:
        raise ValueError(f"ssl_context given but security_protocol is {protocol}")
    sasl: SaslConfig | None = None
    mechanism = (sasl_mechanism or "").upper()
    if protocol.startswith("SASL") and mechanism == "OAUTHBEARER":
        # RFC 7628: a bearer token from the provider instead of a password.
        sasl = SaslConfig("OAUTHBEARER", sasl_username or "<bearer token>", "",
                          token_provider=sasl_oauth_token_provider)
    elif protocol.startswith("SASL") and mechanism == "GSSAPI":
        from .kerberos import KerberosLogin

        login = KerberosLogin(principal=sasl_kerberos_principal, keytab=sasl_kerberos_keytab,
                              ticket_cache=sasl_kerberos_ticket_cache, service_name=sasl_kerberos_service_name)
        sasl = SaslConfig("GSSAPI", sasl_kerberos_principal or "<ticket cache>", "", kerberos=login)
    elif protocol.startswith("SASL"):
        if not sasl_mechanism or sasl_username is None or sasl_password is None:
            raise ValueError(f"{protocol} needs sasl_mechanism, sasl_username and sasl_password")
        sasl = SaslConfig(mechanism, sasl_username, sasl_password)
    elif sasl_mechanism:
        raise ValueError(f"sasl_mechanism given but security_protocol is {protocol}")
    return Security(protocol, context, sasl)
