"""``sasl.*`` properties (Java's and librdkafka's) -> :class:`kafkawire.Client`'s SASL keyword arguments:
PLAIN and SCRAM credentials, an OAUTHBEARER token provider (KIP-768 client credentials, unsecured tokens, AWS
MSK IAM), or the GSSAPI (Kerberos) options."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ConfigError
from ..net.sasl import OAuthBearerToken
from .jaas import (
    KRB5_MODULE,
    MSK_IAM_CLIENT_HANDLER,
    MSK_IAM_MODULE,
    MSK_OAUTH_HANDLER,
    OAUTH_LOGIN_HANDLERS,
    OAUTH_MODULE,
    PLAIN_MODULE,
    SCRAM_MODULE,
    JaasLoginModule,
    parse_jaas_config,
)
from .values import bool_value, int_value

__all__ = ["sasl_kwargs"]


def sasl_kwargs(props: Mapping[str, str]) -> dict[str, Any]:
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
    use_keytab = bool_value("sasl.jaas.config", options.get("useKeyTab", "false"))
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
        if not use_keytab and not bool_value("sasl.jaas.config", options.get("useTicketCache", "false")):
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
    from ..net.oauth import MskIamTokenProvider, msk_region

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
    from ..net.oauth import ClientCredentialsTokenProvider, unsecured_token

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
    if handler and handler not in OAUTH_LOGIN_HANDLERS:
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
        timeout_ms = int_value("sasl.login.read.timeout.ms", props.get("sasl.login.read.timeout.ms") or 10_000)
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
