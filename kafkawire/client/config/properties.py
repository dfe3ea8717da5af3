"""The client's properties: a ``.properties`` file read, and the Java client's (and librdkafka's) names mapped to
:class:`kafkawire.Client` keyword arguments, TLS and SASL included."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .sasl import sasl_kwargs
from .tls import ssl_context_from_properties
from .values import bool_value, int_value

__all__ = ["CLIENT_PARAMS", "NO_EFFECT", "SECURITY", "UNSUPPORTED", "bootstrap_from_properties",
           "config_from_properties", "load_properties_file", "warn_unknown"]

log = logging.getLogger("kafkawire.config")

# Property -> (Client keyword, converter). Java names first, then librdkafka's where they differ.
CLIENT_PARAMS: dict[str, tuple[str, Callable[[str, Any], Any]]] = {
    "client.id": ("client_id", lambda p, v: str(v)),
    "client.rack": ("client_rack", lambda p, v: str(v)),  # KIP-392: fetch from the nearest replica
    "request.timeout.ms": ("request_timeout_ms", int_value),
    "socket.connection.setup.timeout.ms": ("connect_timeout_ms", int_value),
    "retries": ("retries", int_value),
    "retry.backoff.ms": ("retry_backoff_ms", int_value),
    "retry.backoff.max.ms": ("retry_backoff_max_ms", int_value),
    "metadata.max.age.ms": ("metadata_max_age_ms", int_value),
    "enable.idempotence": ("enable_idempotence", bool_value),
    "max.request.size": ("max_batch_bytes", int_value),
    "max.in.flight.requests.per.connection": ("max_in_flight_requests_per_connection", int_value),
    # librdkafka's name for the largest response accepted.
    "receive.message.max.bytes": ("max_response_bytes", int_value),
    "socket.timeout.ms": ("request_timeout_ms", int_value),
}

# Read by this module to build the TLS context or the SASL credentials.
SECURITY = {
    "security.protocol", "sasl.mechanism", "sasl.mechanisms", "sasl.jaas.config", "sasl.username", "sasl.password",
    "sasl.login.callback.handler.class", "sasl.oauthbearer.token.endpoint.url", "sasl.oauthbearer.scope",
    "sasl.oauthbearer.client.credentials.client.id", "sasl.oauthbearer.client.credentials.client.secret",
    "sasl.oauthbearer.client.id", "sasl.oauthbearer.client.secret", "sasl.oauthbearer.method",
    "sasl.oauthbearer.config", "sasl.oauthbearer.extensions", "sasl.login.read.timeout.ms",
    "sasl.login.connect.timeout.ms", "sasl.kerberos.service.name", "sasl.kerberos.principal", "sasl.kerberos.keytab",
    "sasl.client.callback.handler.class",
    "ssl.truststore.location", "ssl.truststore.type", "ssl.truststore.password", "ssl.truststore.certificates",
    "ssl.keystore.location", "ssl.keystore.type", "ssl.keystore.password", "ssl.key.password",
    "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.endpoint.identification.algorithm",
    "ssl.protocol", "ssl.enabled.protocols", "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm",
    "ssl.ca.location", "ssl.ca.pem", "ssl.certificate.location", "ssl.key.location", "ssl.certificate.pem",
    "ssl.key.pem", "enable.ssl.certificate.verification",
}
# Known to the Java client and harmless to leave out here (no warning).
NO_EFFECT = {"bootstrap.servers", "metadata.broker.list", "sasl.kerberos.min.time.before.relogin",
              "sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter",
              "sasl.login.refresh.min.period.seconds", "sasl.login.refresh.buffer.seconds",
              "sasl.login.retry.backoff.ms", "sasl.login.retry.backoff.max.ms", "ssl.keystore.certificate.chain.type",
              # Kerberos ticket renewal is MIT's library's job here (it refreshes from the keytab itself).
              "sasl.kerberos.ticket.renew.window.factor", "sasl.kerberos.ticket.renew.jitter",
              "sasl.kerberos.kinit.cmd"}
# Known, and refused: kafkawire cannot do what they ask, so going on would connect differently than asked.
UNSUPPORTED = {
    "sasl.login.class": "Java login classes cannot run here",
    "ssl.engine.factory.class": "Java SSL engine factories cannot run here",
    "ssl.provider": "Java security providers cannot run here",
    "security.providers": "Java security providers cannot run here",
    "ssl.cipher.suites": "Java cipher-suite names are not supported; leave it out (OpenSSL's defaults apply)",
    "ssl.secure.random.implementation": "Java SecureRandom implementations cannot run here",
}


def load_properties_file(path: str | Path) -> dict[str, str]:
    """Read a Java ``.properties`` file (``key=value`` or ``key: value``, ``#``/``!`` comments, ``\\``
    continuation lines) as ``kafka-console-producer --command-config`` and ``kcat -F`` do."""
    out: dict[str, str] = {}
    logical = ""
    for raw in Path(path).read_text().splitlines():
        line = raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            logical += line[:-1]
            continue
        logical += line
        sep = min((i for i in (logical.find("="), logical.find(":")) if i >= 0), default=-1)
        key, value = (logical, "") if sep < 0 else (logical[:sep], logical[sep + 1 :])
        out[key.strip()] = value.strip()
        logical = ""
    return out


def bootstrap_from_properties(props: Mapping[str, Any]) -> str:
    """``bootstrap.servers`` (or librdkafka's ``metadata.broker.list``); a :class:`ConfigError` without it."""
    value = props.get("bootstrap.servers") or props.get("metadata.broker.list")
    if not value:
        raise ConfigError("bootstrap.servers", "required (host:port[,host:port...])")
    return str(value)


def config_from_properties(properties: Mapping[str, Any], *, handled: Iterable[str] = (),
                           warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """:class:`kafkawire.Client` keyword arguments (all but the bootstrap servers) from client properties.

    ``handled`` names properties the caller uses itself (no warning for them); every other property kafkawire
    does not know is passed to ``warn`` (default: a logged warning naming it, as the Java client's "supplied
    but isn't a known config"). Raises :class:`ConfigError` naming the property for a bad value or a
    property kafkawire cannot honour.
    """
    props = {str(k).strip(): str(v) for k, v in properties.items() if v is not None}
    skip = set(handled)
    out: dict[str, Any] = {}
    for key, value in props.items():
        if key in UNSUPPORTED:
            raise ConfigError(key, UNSUPPORTED[key])
        if key in CLIENT_PARAMS:
            name, conv = CLIENT_PARAMS[key]
            out[name] = conv(key, value)
        elif key not in SECURITY and key not in NO_EFFECT and key not in skip:
            (warn or warn_unknown)(key)
    if "security.protocol" not in props:
        return out  # the Client's default, PLAINTEXT: ssl.* and sasl.* are unused, as in Java
    protocol = props["security.protocol"].strip().upper()
    if protocol not in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"):
        raise ConfigError("security.protocol", f"expected PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, not {protocol!r}",
                          value=protocol)
    out["security_protocol"] = protocol
    if protocol in ("SSL", "SASL_SSL"):
        out["ssl_context"] = ssl_context_from_properties(props)
    if protocol.startswith("SASL_"):
        out.update(sasl_kwargs(props))
    return out


def warn_unknown(key: str) -> None:
    log.warning("The configuration '%s' was supplied but isn't a known config; kafkawire ignores it.", key)
