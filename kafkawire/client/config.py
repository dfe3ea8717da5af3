"""The Java client's configuration properties, turned into :class:`kafkawire.Client` keyword arguments.

Users of secured clusters already hold a ``client.properties`` file or Spark's ``kafka.*`` options written
for the Java client: ``security.protocol``, ``sasl.mechanism``, ``sasl.jaas.config`` (a JAAS string such
as ``org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";``),
``ssl.truststore.location/.type/.password`` (JKS, PKCS12, PEM), ``ssl.keystore.*``, the OAUTHBEARER
client-credentials settings (KIP-768). :func:`config_from_properties` accepts those names, and librdkafka's
(``sasl.mechanisms``, ``sasl.username``, ``ssl.ca.location``, ...) that ``kcat -X`` users type, and
returns the keyword arguments of :class:`~kafkawire.client.Client` (an :class:`ssl.SSLContext`, the SASL
credentials or an OAUTHBEARER token provider, timeouts).

Kerberos: ``sasl.mechanism=GSSAPI`` with ``sasl.kerberos.service.name`` and a JAAS
``com.sun.security.auth.module.Krb5LoginModule`` (``useKeyTab``/``keyTab``/``principal``, or
``useTicketCache``/``ticketCache``), or librdkafka's ``sasl.kerberos.principal``/``sasl.kerberos.keytab``.
AWS MSK IAM: ``OAUTHBEARER`` with AWS's ``IAMOAuthBearerLoginCallbackHandler`` (and ``sasl.mechanism=AWS_MSK_IAM``
with AWS's ``IAMLoginModule``, sent as OAUTHBEARER, which MSK's IAM listeners accept too) gets tokens from
:class:`~kafkawire.client.net.oauth.MskIamTokenProvider`.

Like the Java client, an unknown property is reported (a warning naming it) and otherwise ignored; a
property kafkawire knows but cannot honour (a Java callback class, Java cipher-suite names) or a
bad value raises :class:`ConfigError`, whose message names the property.
"""

from __future__ import annotations

import logging
import os
import ssl
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .net.sasl import OAuthBearerToken

__all__ = [
    "CONSUMER_PARAMS",
    "PRODUCER_PARAMS",
    "ConfigError",
    "JaasLoginModule",
    "bootstrap_from_properties",
    "client_kwargs_from_properties",
    "config_from_properties",
    "consumer_kwargs_from_properties",
    "load_properties_file",
    "parse_jaas_config",
    "producer_kwargs_from_properties",
    "ssl_context_from_properties",
]

log = logging.getLogger("kafkawire.config")

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
KRB5_MODULE = "com.sun.security.auth.module.Krb5LoginModule"
# AWS's aws-msk-iam-auth library: its OAUTHBEARER login callback handler, and the AWS_MSK_IAM mechanism's parts.
MSK_OAUTH_HANDLER = "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler"
MSK_IAM_MODULE = "software.amazon.msk.auth.iam.IAMLoginModule"
MSK_IAM_CLIENT_HANDLER = "software.amazon.msk.auth.iam.IAMClientCallbackHandler"
# The login callback handlers that mean "client-credentials flow" (KIP-768; moved out of .secured in 3.4).
_OAUTH_LOGIN_HANDLERS = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
)


def _int(prop: str, value: Any) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        raise ConfigError(prop, f"expected an integer, not {value!r}", value=str(value)) from None


def _bool(prop: str, value: Any) -> bool:
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ConfigError(prop, f"expected true or false, not {value!r}", value=str(value))
    return text == "true"


# Property -> (Client keyword, converter). Java names first, then librdkafka's where they differ.
_CLIENT_PARAMS: dict[str, tuple[str, Callable[[str, Any], Any]]] = {
    "client.id": ("client_id", lambda p, v: str(v)),
    "client.rack": ("client_rack", lambda p, v: str(v)),  # KIP-392: fetch from the nearest replica
    "request.timeout.ms": ("request_timeout_ms", _int),
    "socket.connection.setup.timeout.ms": ("connect_timeout_ms", _int),
    "retries": ("retries", _int),
    "retry.backoff.ms": ("retry_backoff_ms", _int),
    "retry.backoff.max.ms": ("retry_backoff_max_ms", _int),
    "metadata.max.age.ms": ("metadata_max_age_ms", _int),
    "enable.idempotence": ("enable_idempotence", _bool),
    "max.request.size": ("max_batch_bytes", _int),
    "max.in.flight.requests.per.connection": ("max_in_flight_requests_per_connection", _int),
    # librdkafka's name for the largest response accepted.
    "receive.message.max.bytes": ("max_response_bytes", _int),
    "socket.timeout.ms": ("request_timeout_ms", _int),
}

# Read by this module to build the TLS context or the SASL credentials.
_SECURITY = {
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
_NO_EFFECT = {"bootstrap.servers", "metadata.broker.list", "sasl.kerberos.min.time.before.relogin",
              "sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter",
              "sasl.login.refresh.min.period.seconds", "sasl.login.refresh.buffer.seconds",
              "sasl.login.retry.backoff.ms", "sasl.login.retry.backoff.max.ms", "ssl.keystore.certificate.chain.type",
              # Kerberos ticket renewal is MIT's library's job here (it refreshes from the keytab itself).
              "sasl.kerberos.ticket.renew.window.factor", "sasl.kerberos.ticket.renew.jitter",
              "sasl.kerberos.kinit.cmd"}
# Known, and refused: kafkawire cannot do what they ask, so going on would connect differently than asked.
_UNSUPPORTED = {
    "sasl.login.class": "Java login classes cannot run here",
    "ssl.engine.factory.class": "Java SSL engine factories cannot run here",
    "ssl.provider": "Java security providers cannot run here",
    "security.providers": "Java security providers cannot run here",
    "ssl.cipher.suites": "Java cipher-suite names are not supported; leave it out (OpenSSL's defaults apply)",
    "ssl.secure.random.implementation": "Java SecureRandom implementations cannot run here",
}
_TLS_VERSIONS = {"TLSV1.2": ssl.TLSVersion.TLSv1_2, "TLSV1.3": ssl.TLSVersion.TLSv1_3, "TLS": None}


# ------------------------------------------------------------------------------------------- JAAS
@dataclass(frozen=True)
class JaasLoginModule:
    """One entry of ``sasl.jaas.config``: ``<class> <flag> key=value ...;``."""

    class_name: str
    flag: str
    options: dict[str, str] = field(default_factory=dict)


def _jaas_tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) tokens: ``word``, ``string`` (quoted, escapes resolved), or the punctuation ``=`` / ``;``.

    Kafka's JaasConfig reads the string with java.io.StreamTokenizer: words, "..." or '...' strings with
    backslash escapes, and // or /* */ comments.
    """
    out: list[tuple[str, str]] = []
    i, n = 0, len(text)
    escapes = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c in "=;":
            out.append((c, c))
            i += 1
        elif c in "\"'":
            buf, i = [], i + 1
            while i < n and text[i] != c:
                if text[i] == "\\" and i + 1 < n:
                    buf.append(escapes.get(text[i + 1], text[i + 1]))
                    i += 2
                else:
                    buf.append(text[i])
                    i += 1
            if i >= n:
                raise ConfigError("sasl.jaas.config", f"unterminated quoted value {''.join(buf)[:20]!r}...")
            out.append(("string", "".join(buf)))
            i += 1
        else:
            start = i
            while i < n and not text[i].isspace() and text[i] not in "=;\"'":
                i += 1
            out.append(("word", text[start:i]))
    return out


def parse_jaas_config(text: str) -> JaasLoginModule:
    """Parse a client's ``sasl.jaas.config``: exactly one login module, as Kafka requires of a client."""
    tokens = _jaas_tokens(text)
    modules: list[JaasLoginModule] = []
    pos = 0
    while pos < len(tokens):
        if pos + 1 >= len(tokens) or tokens[pos][0] != "word" or tokens[pos + 1][0] != "word":
            raise ConfigError("sasl.jaas.config", f"expected '<LoginModule class> required ...;', got {text!r}")
        name, flag = tokens[pos][1], tokens[pos + 1][1]
        if flag.lower() not in ("required", "requisite", "sufficient", "optional"):
            raise ConfigError("sasl.jaas.config", f"invalid control flag {flag!r} after {name}")
        pos += 2
        options: dict[str, str] = {}
        while pos < len(tokens) and tokens[pos][0] != ";":
            if pos + 2 >= len(tokens) or tokens[pos][0] != "word" or tokens[pos + 1][0] != "=" or \
                    tokens[pos + 2][0] not in ("word", "string"):
                raise ConfigError("sasl.jaas.config", f"expected key=value options after {name}, got "
                                  f"{tokens[pos][1]!r}")
            options[tokens[pos][1]] = tokens[pos + 2][1]
            pos += 3
        if pos >= len(tokens):
            raise ConfigError("sasl.jaas.config", "the login module entry must end with ';'")
        pos += 1
        modules.append(JaasLoginModule(name, flag.lower(), options))
    if len(modules) != 1:
        raise ConfigError("sasl.jaas.config", f"JAAS config property contains {len(modules)} login modules, "
                          "should be 1 module")
    return modules[0]


# -------------------------------------------------------------------------------------------- SASL
def _sasl_kwargs(props: Mapping[str, str]) -> dict[str, Any]:
    mechanism = (props.get("sasl.mechanism") or props.get("sasl.mechanisms") or "").strip().upper()
    jaas = parse_jaas_config(props["sasl.jaas.config"]) if props.get("sasl.jaas.config") else None
    if not mechanism and jaas is not None:
        # Java's default is GSSAPI, which nobody means when they wrote a PLAIN or OAUTHBEARER module.
        inferred = {PLAIN_MODULE: "PLAIN", OAUTH_MODULE: "OAUTHBEARER", KRB5_MODULE: "GSSAPI",
                    MSK_IAM_MODULE: "AWS_MSK_IAM"}.get(jaas.class_name)
        if inferred is None:
            raise ConfigError("sasl.mechanism", f"not set; say which mechanism {jaas.class_name} is for "
                              "(SCRAM-SHA-256 or SCRAM-SHA-512)")
        mechanism = inferred
    if not mechanism:
        raise ConfigError("sasl.mechanism", "not set (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER or GSSAPI)")
    if mechanism not in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "GSSAPI", "AWS_MSK_IAM"):
        raise ConfigError("sasl.mechanism", f"unknown mechanism {mechanism!r}")
    handler = props.get("sasl.client.callback.handler.class")
    if handler and handler not in (MSK_OAUTH_HANDLER, MSK_IAM_CLIENT_HANDLER):
        raise ConfigError("sasl.client.callback.handler.class", f"{handler} is a Java callback class kafkawire "
                          "cannot run; pass sasl_oauth_token_provider (a Python callable) to kafkawire.Client instead")
    if mechanism == "GSSAPI":
        return _kerberos_kwargs(props, jaas)
    if mechanism == "AWS_MSK_IAM":
        return {"sasl_mechanism": "OAUTHBEARER", "sasl_oauth_token_provider": _msk_provider(props, jaas)}
    if mechanism == "OAUTHBEARER":
        return {"sasl_mechanism": mechanism, "sasl_oauth_token_provider": _oauth_provider(props, jaas)}
    if jaas is not None:
        if jaas.class_name not in (PLAIN_MODULE, SCRAM_MODULE):
            raise ConfigError("sasl.jaas.config", f"{jaas.class_name} gives no user name and password for "
                              f"{mechanism}; use {PLAIN_MODULE} or {SCRAM_MODULE}")
        if jaas.options.get("tokenauth", "false").lower() == "true":
            raise ConfigError("sasl.jaas.config", "delegation tokens (tokenauth=true) are not supported")
        username, password = jaas.options.get("username"), jaas.options.get("password")
        where = "sasl.jaas.config"
    else:
        username, password = props.get("sasl.username"), props.get("sasl.password")
        where = "sasl.jaas.config (or sasl.username / sasl.password)"
    if username is None or password is None:
        raise ConfigError(where, f"{mechanism} needs a username and a password")
    return {"sasl_mechanism": mechanism, "sasl_username": username, "sasl_password": password}


def _kerberos_kwargs(props: Mapping[str, str], jaas: JaasLoginModule | None) -> dict[str, Any]:
    """GSSAPI: the JAAS Krb5LoginModule's options (Java), or librdkafka's sasl.kerberos.* properties."""
    options: dict[str, str] = {}
    if jaas is not None:
        if jaas.class_name != KRB5_MODULE:
            raise ConfigError("sasl.jaas.config", f"GSSAPI needs {KRB5_MODULE}, not {jaas.class_name}")
        options = jaas.options
    # Java takes the service name from the property, else from the JAAS option serviceName (and has no
    # default); librdkafka defaults to "kafka", which kafkawire keeps.
    service = props.get("sasl.kerberos.service.name") or options.get("serviceName") or "kafka"
    use_keytab = _bool("sasl.jaas.config", options.get("useKeyTab", "false"))
    principal = options.get("principal") or props.get("sasl.kerberos.principal") or None
    keytab = options.get("keyTab") if use_keytab else None
    if jaas is None and props.get("sasl.kerberos.keytab"):  # librdkafka: a keytab means "log in with it"
        keytab = props["sasl.kerberos.keytab"]
    ticket_cache = options.get("ticketCache") or None
    if jaas is not None:
        if use_keytab and not keytab:
            raise ConfigError("sasl.jaas.config", f"{KRB5_MODULE} useKeyTab=true needs keyTab=\"<path>\"")
        if keytab and not principal:
            raise ConfigError("sasl.jaas.config", f"{KRB5_MODULE} with keyTab={keytab!r} needs principal=\"...\"")
        if not use_keytab and not _bool("sasl.jaas.config", options.get("useTicketCache", "false")):
            # Java would prompt for a password through a callback Kafka does not provide.
            raise ConfigError("sasl.jaas.config", f"{KRB5_MODULE} needs useKeyTab=true (keyTab, principal) or "
                              "useTicketCache=true (a ticket cache filled by kinit)")
    elif keytab and not principal:
        raise ConfigError("sasl.kerberos.principal", f"needed with sasl.kerberos.keytab={keytab!r}")
    return {"sasl_mechanism": "GSSAPI", "sasl_kerberos_service_name": service, "sasl_kerberos_principal": principal,
            "sasl_kerberos_keytab": keytab, "sasl_kerberos_ticket_cache": ticket_cache}


def _msk_provider(props: Mapping[str, str], jaas: JaasLoginModule | None) -> Callable[[], str | OAuthBearerToken]:
    """AWS MSK IAM: the region comes from the brokers' names (b-1.x.kafka.<region>.amazonaws.com) or the
    AWS environment; awsProfileName / awsRoleArn / awsRoleSessionName from the JAAS options, as AWS's library."""
    from .net.oauth import MskIamTokenProvider, msk_region

    options = jaas.options if jaas is not None else {}
    if jaas is not None and jaas.class_name not in (OAUTH_MODULE, MSK_IAM_MODULE):
        raise ConfigError("sasl.jaas.config", f"AWS MSK IAM needs {OAUTH_MODULE} or {MSK_IAM_MODULE}, "
                          f"not {jaas.class_name}")
    servers = props.get("bootstrap.servers") or props.get("metadata.broker.list") or ""
    region = options.get("awsRegion") or msk_region(servers)
    if not region:
        raise ConfigError("sasl.login.callback.handler.class", "AWS MSK IAM needs the cluster's region: none in the "
                          "bootstrap servers' names nor in AWS_REGION / AWS_DEFAULT_REGION")
    try:
        return MskIamTokenProvider(region, profile=options.get("awsProfileName") or None,
                                   role_arn=options.get("awsRoleArn") or None,
                                   role_session_name=options.get("awsRoleSessionName") or None)
    except ImportError as e:
        raise ConfigError("sasl.login.callback.handler.class", str(e)) from None


def _oauth_provider(props: Mapping[str, str], jaas: JaasLoginModule | None) -> Callable[[], str | OAuthBearerToken]:
    from .net.oauth import ClientCredentialsTokenProvider, unsecured_token

    if props.get("sasl.login.callback.handler.class") == MSK_OAUTH_HANDLER:
        return _msk_provider(props, jaas)
    if jaas is not None and jaas.class_name != OAUTH_MODULE:
        raise ConfigError("sasl.jaas.config", f"OAUTHBEARER needs {OAUTH_MODULE}, not {jaas.class_name}")
    options = jaas.options if jaas is not None else {}
    extensions = {k[len("extension_"):]: v for k, v in options.items() if k.startswith("extension_")}
    for pair in filter(None, (props.get("sasl.oauthbearer.extensions") or "").split(",")):  # librdkafka
        key, _, value = pair.partition("=")
        extensions[key.strip()] = value.strip()
    handler = props.get("sasl.login.callback.handler.class")
    if handler and handler not in _OAUTH_LOGIN_HANDLERS:
        raise ConfigError("sasl.login.callback.handler.class", f"{handler} is a Java class kafkawire cannot run; "
                          "use sasl.oauthbearer.token.endpoint.url, or pass sasl_oauth_token_provider=callable")
    url = props.get("sasl.oauthbearer.token.endpoint.url")
    provider: Callable[[], str]
    if url:
        client_id = (props.get("sasl.oauthbearer.client.credentials.client.id")
                     or props.get("sasl.oauthbearer.client.id") or options.get("clientId"))
        secret = (props.get("sasl.oauthbearer.client.credentials.client.secret")
                  or props.get("sasl.oauthbearer.client.secret") or options.get("clientSecret"))
        scope = props.get("sasl.oauthbearer.scope") or options.get("scope")
        timeout_ms = _int("sasl.login.read.timeout.ms", props.get("sasl.login.read.timeout.ms") or 10_000)
        try:
            provider = ClientCredentialsTokenProvider(url, client_id, secret, scope=scope, timeout_s=timeout_ms / 1000)
        except ValueError as e:
            raise ConfigError("sasl.oauthbearer.token.endpoint.url", str(e)) from None
    elif "unsecuredLoginStringClaim_sub" in options:
        subject = options["unsecuredLoginStringClaim_sub"]
        lifetime = float(options.get("unsecuredLoginLifetimeSeconds", "3600"))
        scope_claim = options.get("unsecuredLoginListClaim_scope")
        scopes = scope_claim[1:].split(scope_claim[0]) if scope_claim and len(scope_claim) > 1 else None

        def provider() -> str:
            return unsecured_token(subject, lifetime_s=lifetime, scope=scopes)
    else:
        raise ConfigError("sasl.oauthbearer.token.endpoint.url", "OAUTHBEARER needs a token: set this (with the "
                          "client id and secret), or unsecuredLoginStringClaim_sub in sasl.jaas.config, or pass "
                          "sasl_oauth_token_provider to kafkawire.Client")
    if not extensions:
        return provider
    frozen = dict(extensions)
    return lambda: OAuthBearerToken(provider(), frozen)


# --------------------------------------------------------------------------------------------- TLS
def _read_text(prop: str, location: str) -> str:
    try:
        return Path(location).read_text()
    except OSError as e:
        raise ConfigError(prop, f"cannot read {location}: {e.strerror or e}") from None


def _looks_like_pem(location: str) -> bool:
    from .net.keystores import store_format

    try:
        with open(location, "rb") as f:
            return store_format(f.read(4096)) == "PEM"
    except OSError:
        return False  # reported by the reader, with the property's name


def _load_chain(context: ssl.SSLContext, chain_pem: str, key_pem: str, password: str | None, prop: str) -> None:
    """load_cert_chain only reads files: write the PEM to a private temporary file and remove it at once."""
    fd, path = tempfile.mkstemp(prefix="kafkawire-key-", suffix=".pem")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(key_pem if key_pem.endswith("\n") else key_pem + "\n")
            f.write(chain_pem)
        context.load_cert_chain(path, password=password)
    except ssl.SSLError as e:
        raise ConfigError(prop, f"the private key and certificate do not load ({e.reason or e})") from None
    finally:
        os.unlink(path)


def ssl_context_from_properties(props: Mapping[str, str]) -> ssl.SSLContext:
    """An :class:`ssl.SSLContext` from ``ssl.*`` properties (Java's, and librdkafka's ``ssl.ca.location`` etc.).

    No trust store means the system's CAs, as the JDK's ``cacerts``; ``ssl.endpoint.identification.algorithm``
    empty turns the host-name check off (the certificate chain is still verified).
    """
    from .net.keystores import KeyStoreError, read_store

    for prop, accepted in (("ssl.keymanager.algorithm", ("SunX509", "PKIX")),
                           ("ssl.trustmanager.algorithm", ("PKIX", "SunX509"))):
        if props.get(prop) and props[prop] not in accepted:
            raise ConfigError(prop, f"{props[prop]!r} is a Java algorithm kafkawire does not have (only {accepted})")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    identification = props.get("ssl.endpoint.identification.algorithm", "https").strip().lower()
    if identification not in ("https", "", "none"):
        raise ConfigError("ssl.endpoint.identification.algorithm", f"expected https or empty, not {identification!r}")
    context.check_hostname = identification == "https"
    if "enable.ssl.certificate.verification" in props and \
            not _bool("enable.ssl.certificate.verification", props["enable.ssl.certificate.verification"]):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    _set_protocols(context, props)

    # Trust.
    trusted = False
    location = props.get("ssl.truststore.location") or ""
    store_type = (props.get("ssl.truststore.type") or "JKS").upper()
    if store_type not in ("JKS", "PKCS12", "PEM"):
        raise ConfigError("ssl.truststore.type", f"expected JKS, PKCS12 or PEM, not {store_type!r}")
    try:
        if props.get("ssl.truststore.certificates"):
            if location:
                raise ConfigError("ssl.truststore.certificates", "give either this or ssl.truststore.location")
            if store_type != "PEM":
                raise ConfigError("ssl.truststore.type", "must be PEM with ssl.truststore.certificates")
            context.load_verify_locations(cadata=props["ssl.truststore.certificates"])
            trusted = True
        elif location:
            if "ssl.truststore.type" not in props and _looks_like_pem(location):
                store_type = "PEM"  # Java would insist on ssl.truststore.type=PEM; the file says what it is
            if store_type == "PEM":
                context.load_verify_locations(cadata=_read_text("ssl.truststore.location", location))
            else:
                contents = read_store(location, store_type, props.get("ssl.truststore.password") or None,
                                      what="ssl.truststore.location")
                if not contents.certificates:
                    raise ConfigError("ssl.truststore.location", f"{location} holds no certificate")
                context.load_verify_locations(cadata=contents.certificates_pem())
            trusted = True
        for prop in ("ssl.ca.location", "ssl.ca.pem"):  # librdkafka
            if props.get(prop):
                pem = _read_text(prop, props[prop]) if prop == "ssl.ca.location" else props[prop]
                context.load_verify_locations(cadata=pem)
                trusted = True
    except ssl.SSLError as e:
        raise ConfigError("ssl.truststore.location", f"no usable certificate ({e.reason or e})") from None
    except KeyStoreError as e:
        prop = "ssl.truststore.password" if "password" in str(e) else "ssl.truststore.location"
        raise ConfigError(prop, str(e).partition(": ")[2] or str(e)) from None
    if not trusted:
        context.load_default_certs(ssl.Purpose.SERVER_AUTH)

    # Identity (mutual TLS).
    key_password = props.get("ssl.key.password") or None
    ks_location = props.get("ssl.keystore.location") or ""
    ks_type = (props.get("ssl.keystore.type") or "JKS").upper()
    if ks_type not in ("JKS", "PKCS12", "PEM"):
        raise ConfigError("ssl.keystore.type", f"expected JKS, PKCS12 or PEM, not {ks_type!r}")
    if props.get("ssl.keystore.key") or props.get("ssl.keystore.certificate.chain"):
        if not (props.get("ssl.keystore.key") and props.get("ssl.keystore.certificate.chain")):
            missing = "ssl.keystore.key" if not props.get("ssl.keystore.key") else "ssl.keystore.certificate.chain"
            raise ConfigError(missing, "needed with the other of ssl.keystore.key / ssl.keystore.certificate.chain")
        _load_chain(context, props["ssl.keystore.certificate.chain"], props["ssl.keystore.key"], key_password,
                    "ssl.keystore.key")
    elif ks_location:
        if "ssl.keystore.type" not in props and _looks_like_pem(ks_location):
            ks_type = "PEM"
        if ks_type == "PEM":
            try:
                context.load_cert_chain(ks_location, password=key_password)
            except (ssl.SSLError, OSError) as e:
                raise ConfigError("ssl.keystore.location", f"{ks_location} holds no usable key and certificate "
                                  f"({getattr(e, 'reason', None) or e})") from None
        else:
            try:
                store = read_store(ks_location, ks_type, props.get("ssl.keystore.password") or None,
                                   key_password=key_password or props.get("ssl.keystore.password") or None,
                                   what="ssl.keystore.location")
            except KeyStoreError as e:
                prop = ("ssl.key.password" if "ssl.key.password" in str(e)
                        else "ssl.keystore.password" if "password" in str(e) else "ssl.keystore.location")
                raise ConfigError(prop, str(e).partition(": ")[2] or str(e)) from None
            if len(store.keys) != 1:
                raise ConfigError("ssl.keystore.location", f"{ks_location} holds {len(store.keys)} private keys; "
                                  "kafkawire needs exactly one")
            entry = store.keys[0]
            _load_chain(context, entry.chain_pem(), entry.key_pem(), None, "ssl.keystore.location")
    elif props.get("ssl.certificate.location") and props.get("ssl.key.location"):  # librdkafka
        try:
            context.load_cert_chain(props["ssl.certificate.location"], props["ssl.key.location"], key_password)
        except (ssl.SSLError, OSError) as e:
            raise ConfigError("ssl.key.location", f"no usable key and certificate ({e})") from None
    return context


def _set_protocols(context: ssl.SSLContext, props: Mapping[str, str]) -> None:
    names = [p.strip() for p in (props.get("ssl.enabled.protocols") or "").split(",") if p.strip()]
    prop = "ssl.enabled.protocols"
    if not names and props.get("ssl.protocol"):
        names, prop = [props["ssl.protocol"].strip()], "ssl.protocol"
    versions: list[ssl.TLSVersion] = []
    for name in names:
        if name.upper() not in _TLS_VERSIONS:
            raise ConfigError(prop, f"{name!r} is not TLSv1.2 or TLSv1.3")
        version = _TLS_VERSIONS[name.upper()]
        if version is not None:
            versions.append(version)
    if versions and prop == "ssl.enabled.protocols":
        context.minimum_version, context.maximum_version = min(versions), max(versions)
    elif versions:
        # ssl.protocol names the newest version to offer; older ones stay allowed, as in Java.
        context.maximum_version = versions[0]


# ----------------------------------------------------------------------------------------- the whole
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
        if key in _UNSUPPORTED:
            raise ConfigError(key, _UNSUPPORTED[key])
        if key in _CLIENT_PARAMS:
            name, conv = _CLIENT_PARAMS[key]
            out[name] = conv(key, value)
        elif key not in _SECURITY and key not in _NO_EFFECT and key not in skip:
            (warn or _warn_unknown)(key)
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
        out.update(_sasl_kwargs(props))
    return out


def _warn_unknown(key: str) -> None:
    log.warning("The configuration '%s' was supplied but isn't a known config; kafkawire ignores it.", key)


# ------------------------------------------------------------------------------ consumer and producer
def _str(prop: str, value: Any) -> str:
    return str(value).strip()


def _choice(*accepted: str, aliases: Mapping[str, str] | None = None) -> Callable[[str, Any], str]:
    def convert(prop: str, value: Any) -> str:
        text = str(value).strip().lower()
        text = (aliases or {}).get(text, text)
        if text not in accepted:
            raise ConfigError(prop, f"expected one of {', '.join(accepted)}, not {value!r}", value=str(value))
        return text

    return convert


#: The Java client's assignor classes (and their short names) -> kafkawire's assignor names.
JAVA_ASSIGNORS = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.StickyAssignor": "sticky",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
}
_ASSIGNOR_NAMES = {
    **JAVA_ASSIGNORS,
    **{cls.rsplit(".", 1)[1]: short for cls, short in JAVA_ASSIGNORS.items()},
    **{short: short for short in JAVA_ASSIGNORS.values()},
}


def _assignors(prop: str, value: Any) -> tuple[str, ...]:
    """``partition.assignment.strategy``: a comma-separated list of Java class names, their simple names or
    kafkawire's (librdkafka's) short names, in order of preference."""
    names = [n.strip() for n in str(value).split(",") if n.strip()]
    if not names:
        raise ConfigError(prop, "expected one or more assignors", value=str(value))
    out = []
    for name in names:
        if name not in _ASSIGNOR_NAMES:
            raise ConfigError(prop, f"unknown assignor {name!r} (kafkawire has {', '.join(JAVA_ASSIGNORS)} and "
                              f"their short names {', '.join(sorted(set(JAVA_ASSIGNORS.values())))})", value=name)
        out.append(_ASSIGNOR_NAMES[name])
    return tuple(out)


def _acks(prop: str, value: Any) -> int:
    text = str(value).strip().lower()
    if text in ("all", "-1"):
        return -1
    if text in ("0", "1"):
        return int(text)
    raise ConfigError(prop, f"expected all, -1, 0 or 1, not {value!r}", value=str(value))


def _compression(prop: str, value: Any) -> str | None:
    text = _choice("none", "gzip", "snappy", "lz4", "zstd")(prop, value)
    return None if text == "none" else text


def _offset_reset(prop: str, value: Any) -> str:
    text = str(value).strip().lower()
    # librdkafka's synonyms too; "none" fails without a committed offset and raises LogTruncationError (KIP-320).
    return _choice("earliest", "latest", "none", aliases={"smallest": "earliest", "beginning": "earliest",
                                                  "largest": "latest", "end": "latest"})(prop, text)


#: Consumer properties -> :class:`kafkawire.Consumer` keyword and converter.
CONSUMER_PARAMS: dict[str, tuple[str, Callable[[str, Any], Any]]] = {
    "group.id": ("group_id", _str),
    "group.instance.id": ("group_instance_id", _str),
    "group.protocol": ("group_protocol", _choice("classic", "consumer")),
    "group.remote.assignor": ("group_remote_assignor", _str),
    "partition.assignment.strategy": ("partition_assignment_strategy", _assignors),
    "session.timeout.ms": ("session_timeout_ms", _int),
    "heartbeat.interval.ms": ("heartbeat_interval_ms", _int),
    # KIP-62: the poll timer of the background heartbeat thread, also sent as the rebalance timeout.
    "max.poll.interval.ms": ("max_poll_interval_ms", _int),
    "enable.auto.commit": ("enable_auto_commit", _bool),
    "auto.commit.interval.ms": ("auto_commit_interval_ms", _int),
    "auto.offset.reset": ("auto_offset_reset", _offset_reset),
    "isolation.level": ("isolation", _choice("read_uncommitted", "read_committed")),
    "fetch.max.bytes": ("max_bytes", _int),
    "max.partition.fetch.bytes": ("partition_max_bytes", _int),
    "fetch.max.wait.ms": ("max_wait_ms", _int),
    "fetch.wait.max.ms": ("max_wait_ms", _int),  # librdkafka
    "exclude.internal.topics": ("exclude_internal_topics", _bool),
}

#: Producer properties -> :class:`kafkawire.Producer` keyword and converter.
PRODUCER_PARAMS: dict[str, tuple[str, Callable[[str, Any], Any]]] = {
    "acks": ("acks", _acks),
    "request.required.acks": ("acks", _acks),  # librdkafka
    "linger.ms": ("linger_ms", _int),
    "queue.buffering.max.ms": ("linger_ms", _int),  # librdkafka
    # Java's batch.size caps one partition's batch; kafkawire writes a topic's buffer once it holds this much.
    "batch.size": ("batch_bytes", _int),
    "batch.num.messages": ("batch_records", _int),  # librdkafka
    "compression.type": ("compression", _compression),
    "compression.codec": ("compression", _compression),  # librdkafka
    "delivery.timeout.ms": ("delivery_timeout_ms", _int),
    "message.timeout.ms": ("delivery_timeout_ms", _int),  # librdkafka
    "transactional.id": ("transactional_id", _str),
    "transaction.timeout.ms": ("transaction_timeout_ms", _int),
}

# Java client properties with no kafkawire equivalent: a warning naming the property says it is ignored.
_IGNORED_COMMON = {
    "client.dns.lookup", "connections.max.idle.ms", "metadata.recovery.strategy",
    "metadata.recovery.rebootstrap.trigger.ms", "metric.reporters", "metrics.num.samples", "metrics.recording.level",
    "metrics.sample.window.ms", "auto.include.jmx.reporter", "receive.buffer.bytes", "send.buffer.bytes",
    "reconnect.backoff.ms", "reconnect.backoff.max.ms", "socket.connection.setup.timeout.max.ms",
    "enable.metrics.push", "default.api.timeout.ms", "interceptor.classes",
}
_IGNORED_CONSUMER = _IGNORED_COMMON | {
    "max.poll.records",  # poll() returns what one fetch brought, as columns (no per-record cap)
    "fetch.min.bytes",  # the consumer's fetches ask for at least one byte
    "check.crcs", "key.deserializer", "value.deserializer", "allow.auto.create.topics",
    "internal.leave.group.on.close", "internal.throw.on.fetch.stable.offset.unsupported",
}
_IGNORED_PRODUCER = _IGNORED_COMMON | {
    "buffer.memory", "max.block.ms", "key.serializer", "value.serializer", "partitioner.class",
    "partitioner.ignore.keys", "partitioner.adaptive.partitioning.enable", "partitioner.availability.timeout.ms",
    "compression.gzip.level", "compression.lz4.level", "compression.zstd.level", "metadata.max.idle.ms",
}


def _role_kwargs(properties: Mapping[str, Any] | str | os.PathLike[str], role: str,
                 params: Mapping[str, tuple[str, Callable[[str, Any], Any]]], ignored: set[str],
                 others: Iterable[str], warn: Callable[[str], None] | None) -> dict[str, Any]:
    import difflib

    if isinstance(properties, (str, os.PathLike)):
        properties = load_properties_file(Path(properties))
    props = {str(k).strip(): str(v) for k, v in properties.items() if v is not None}
    out: dict[str, Any] = {"bootstrap_servers": bootstrap_from_properties(props)}
    for key, value in props.items():
        if key in params:
            name, conv = params[key]
            out[name] = conv(key, value)
    unknown: list[str] = []
    out.update(config_from_properties(props, handled=(*params, *ignored), warn=unknown.append))
    known = [*params, *_CLIENT_PARAMS, *_SECURITY, *_NO_EFFECT, *_UNSUPPORTED, *ignored]
    other = set(others)
    for key in props:
        if key in ignored:
            if warn is not None:
                warn(key)
            else:
                log.warning("The configuration '%s' of the Java %s has no kafkawire equivalent; ignored.", key, role)
    report = warn or _warn_unknown
    for key in unknown:
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.85)
        if key not in other and close:
            raise ConfigError(key, f"not a {role} property; did you mean {close[0]!r}?")
        report(key)
    return out


def client_kwargs_from_properties(properties: Mapping[str, Any] | str | os.PathLike[str], *,
                                  warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """:class:`kafkawire.Client` keyword arguments (``bootstrap_servers`` included) from the Java client's
    properties (a mapping or a ``.properties`` file), through the same mapping as the consumer's and the
    producer's: a name close to a known one (``securty.protocol``) raises :class:`ConfigError` with a
    suggestion; a consumer's or producer's property, or one kafkawire does not know, goes to ``warn``
    (default: a logged warning naming it) and is ignored."""
    return _role_kwargs(properties, "client", {}, set(_IGNORED_COMMON),
                        (*CONSUMER_PARAMS, *PRODUCER_PARAMS, *_IGNORED_CONSUMER, *_IGNORED_PRODUCER), warn)


def consumer_kwargs_from_properties(properties: Mapping[str, Any] | str | os.PathLike[str], *,
                                    warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """:class:`kafkawire.Consumer` keyword arguments (``bootstrap_servers`` included) from the Java consumer's
    properties (a mapping or a ``.properties`` file): :data:`CONSUMER_PARAMS` (``group.id``,
    ``group.protocol``, ``partition.assignment.strategy`` with Java class names, ``isolation.level``, ...) and
    everything :func:`config_from_properties` knows. A Java consumer property kafkawire has no equivalent for
    (``max.poll.records``, ``fetch.min.bytes``, deserializers, ...) and a producer's property are reported to
    ``warn`` (default: a logged warning naming it) and ignored; an unknown name close to a known one (a typo)
    raises :class:`ConfigError` naming it."""
    return _role_kwargs(properties, "consumer", CONSUMER_PARAMS, _IGNORED_CONSUMER,
                        (*PRODUCER_PARAMS, *_IGNORED_PRODUCER), warn)


def producer_kwargs_from_properties(properties: Mapping[str, Any] | str | os.PathLike[str], *,
                                    warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """:class:`kafkawire.Producer` keyword arguments (``bootstrap_servers`` included) from the Java producer's
    properties (a mapping or a ``.properties`` file): :data:`PRODUCER_PARAMS` (``acks``, ``linger.ms``,
    ``compression.type``, ``transactional.id``, ...), ``enable.idempotence`` and everything
    :func:`config_from_properties` knows; unknown and ignored properties as in
    :func:`consumer_kwargs_from_properties`."""
    return _role_kwargs(properties, "producer", PRODUCER_PARAMS, _IGNORED_PRODUCER,
                        (*CONSUMER_PARAMS, *_IGNORED_CONSUMER), warn)
