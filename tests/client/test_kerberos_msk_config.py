"""GSSAPI and AWS MSK IAM without a broker: the Java property names mapped to the client's arguments, the
errors for the settings that cannot work, the ``gssapi`` extra's install hint, and MSK IAM tokens signed with
fake AWS credentials (their SigV4 signature recomputed here from the secret, their refresh before expiry).
The exchanges themselves run against Apache Kafka and a real KDC in tests/kafka/test_gssapi.py.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import socket
import sys
import urllib.parse

import pytest

from kafkawire._optional import MissingDependencyError
from kafkawire.client import Client
from kafkawire.client.config import ConfigError, config_from_properties
from kafkawire.client.net import oauth
from kafkawire.client.net.kerberos import KerberosLogin, canonical_host
from kafkawire.client.net.oauth import MskIamTokenProvider, msk_region

KRB5 = "com.sun.security.auth.module.Krb5LoginModule"
OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
MSK_HANDLER = "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler"
MSK_BOOTSTRAP = ("b-1.demo.abc123.c2.kafka.eu-west-1.amazonaws.com:9098,"
                 "b-2.demo.abc123.c2.kafka.eu-west-1.amazonaws.com:9098")


# ------------------------------------------------------------------------------------------ GSSAPI
def test_java_keytab_login_maps_to_the_client_arguments():
    kwargs = config_from_properties({
        "security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI", "sasl.kerberos.service.name": "kafka-prod",
        "sasl.jaas.config": f'{KRB5} required useKeyTab=true storeKey=true keyTab="/etc/k/app.keytab" '
                            'principal="app/host1@CORP.EXAMPLE";',
    })
    assert kwargs["sasl_mechanism"] == "GSSAPI"
    assert kwargs["sasl_kerberos_service_name"] == "kafka-prod"
    assert kwargs["sasl_kerberos_principal"] == "app/host1@CORP.EXAMPLE"
    assert kwargs["sasl_kerberos_keytab"] == "/etc/k/app.keytab"
    assert kwargs["sasl_kerberos_ticket_cache"] is None


def test_ticket_cache_service_name_from_jaas_and_librdkafka_names():
    kwargs = config_from_properties({
        "security.protocol": "SASL_PLAINTEXT",  # no sasl.mechanism: the Krb5LoginModule says GSSAPI
        "sasl.jaas.config": f'{KRB5} required useTicketCache=true ticketCache="/tmp/cc" serviceName="kfk";',
    })
    assert (kwargs["sasl_mechanism"], kwargs["sasl_kerberos_service_name"]) == ("GSSAPI", "kfk")
    assert (kwargs["sasl_kerberos_keytab"], kwargs["sasl_kerberos_ticket_cache"]) == (None, "/tmp/cc")
    kwargs = config_from_properties({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "GSSAPI",
                                     "sasl.kerberos.principal": "svc@R", "sasl.kerberos.keytab": "/k/svc.keytab",
                                     "sasl.kerberos.kinit.cmd": "kinit -kt ..."})
    assert (kwargs["sasl_kerberos_principal"], kwargs["sasl_kerberos_keytab"]) == ("svc@R", "/k/svc.keytab")
    assert kwargs["sasl_kerberos_service_name"] == "kafka"


@pytest.mark.parametrize(
    ("props", "named", "says"),
    [
        ({"sasl.jaas.config": f"{KRB5} required useKeyTab=true principal=\"a@R\";"}, "sasl.jaas.config", "keyTab"),
        ({"sasl.jaas.config": f"{KRB5} required useKeyTab=true keyTab=\"/k\";"}, "sasl.jaas.config", "principal"),
        ({"sasl.jaas.config": f"{KRB5} required principal=\"a@R\";"}, "sasl.jaas.config", "useTicketCache=true"),
        ({"sasl.jaas.config": f"{OAUTH} required;"}, "sasl.jaas.config", KRB5),
        ({"sasl.kerberos.keytab": "/k"}, "sasl.kerberos.principal", "sasl.kerberos.keytab"),
        ({"sasl.client.callback.handler.class": "com.example.Handler"}, "sasl.client.callback.handler.class",
         "com.example.Handler"),
    ],
)
def test_kerberos_settings_that_cannot_work_are_named(props, named, says):
    with pytest.raises(ConfigError) as info:
        config_from_properties({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI", **props})
    assert info.value.property == named and says in str(info.value)


def test_login_arguments_are_checked():
    with pytest.raises(ValueError, match="principal"):
        KerberosLogin(keytab="/k.keytab")
    with pytest.raises(ValueError, match="bare service name"):
        KerberosLogin(principal="a@R", keytab="/k", service_name="kafka/host")
    with pytest.raises(TypeError, match="principal must be a str"):
        KerberosLogin(principal=b"a@R")  # type: ignore[arg-type]
    assert "secret" not in repr(KerberosLogin(principal="a@R", keytab="/k.keytab"))


def test_missing_gssapi_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "gssapi", None)  # what an import of an absent package meets
    with pytest.raises(MissingDependencyError, match=r'pip install "kafkawire\[gssapi\]"'):
        Client("127.0.0.1:1", security_protocol="SASL_PLAINTEXT", sasl_mechanism="GSSAPI",
               sasl_kerberos_principal="a@R", sasl_kerberos_keytab="/k.keytab")


def test_service_host_of_an_ip_literal_is_its_reverse_lookup():
    assert canonical_host("broker-7.example") == "broker-7.example"  # names are used as given
    assert canonical_host("127.0.0.1") == socket.gethostbyaddr("127.0.0.1")[0]  # Java's getHostName()


# ------------------------------------------------------------------------------------------ MSK IAM
@pytest.fixture
def fake_aws(monkeypatch, tmp_path):
    # Fake credentials, only in the environment: the signer finds them first and nothing leaves this machine.
    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEKAFKAWIRE001")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake/secret+key/for/kafkawire/tests/0000")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return "AKIAFAKEKAFKAWIRE001", "fake/secret+key/for/kafkawire/tests/0000"


def _sigv4_signature(secret: str, url: str) -> str:
    """The SigV4 query-string signature of a presigned GET ``url`` (AWS's documented algorithm), computed
    independently of the signer under test."""
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    # The signature covers every parameter but itself; the signer adds User-Agent after signing.
    signed = sorted((k, v) for k, v in query if k not in ("X-Amz-Signature", "User-Agent"))
    canonical_query = "&".join(f"{urllib.parse.quote(k, safe='-_.~')}={urllib.parse.quote(v, safe='-_.~')}"
                               for k, v in signed)
    params = dict(query)
    canonical = "\n".join(["GET", parts.path or "/", canonical_query, f"host:{parts.netloc}\n", "host",
                           hashlib.sha256(b"").hexdigest()])
    scope = params["X-Amz-Credential"].split("/", 1)[1]
    to_sign = "\n".join(["AWS4-HMAC-SHA256", params["X-Amz-Date"], scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    date, region, service, _ = scope.split("/")
    key = ("AWS4" + secret).encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def test_msk_token_is_a_signed_connect_request(fake_aws):
    access_key, secret = fake_aws
    provider = MskIamTokenProvider("eu-west-1")
    token = provider()
    assert token and not any(c.isspace() for c in token) and "=" not in token  # base64url, no padding
    url = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    parts = urllib.parse.urlsplit(url)
    params = dict(urllib.parse.parse_qsl(parts.query))
    assert (parts.scheme, parts.netloc) == ("https", "kafka.eu-west-1.amazonaws.com")
    assert params["Action"] == "kafka-cluster:Connect"
    assert params["X-Amz-Algorithm"] == "AWS4-HMAC-SHA256" and params["X-Amz-Expires"] == "900"
    key_id, _date, region, service, terminal = params["X-Amz-Credential"].split("/")
    assert (key_id, region, service, terminal) == (access_key, "eu-west-1", "kafka-cluster", "aws4_request")
    assert params["X-Amz-Signature"] == _sigv4_signature(secret, url)
    assert params["X-Amz-Signature"] != _sigv4_signature(secret + "x", url)  # the check can fail
    assert 0 < provider.expires_at - provider.refresh_at <= 900 * 0.2 + 1


def test_msk_token_is_reused_then_refreshed_before_it_expires(fake_aws, monkeypatch):
    provider = MskIamTokenProvider("us-east-1")
    signed = []
    real = provider._sign
    monkeypatch.setattr(provider, "_sign", lambda: signed.append(1) or real())
    first = provider()
    assert provider() is first and len(signed) == 1  # shared while fresh
    now = oauth.time.time()
    assert provider.refresh_at < provider.expires_at  # refreshed before expiry, not at it
    monkeypatch.setattr(oauth.time, "time", lambda: provider.refresh_at + 0.001)
    provider()
    assert len(signed) == 2 and provider.refresh_at > now  # signed again past 80 % of its lifetime


def test_msk_without_credentials_is_a_clear_error(fake_aws, monkeypatch):
    from kafkawire.client import AuthenticationFailedError

    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(AuthenticationFailedError, match="AWS MSK IAM token for region us-east-1"):
        MskIamTokenProvider("us-east-1", profile="no-such-profile")()


def test_msk_java_properties_as_aws_documents_them(fake_aws, monkeypatch):
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    kwargs = config_from_properties({
        "bootstrap.servers": MSK_BOOTSTRAP, "security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
        "sasl.jaas.config": f"{OAUTH} required;",
        "sasl.login.callback.handler.class": MSK_HANDLER, "sasl.client.callback.handler.class": MSK_HANDLER,
    })
    provider = kwargs["sasl_oauth_token_provider"]
    assert kwargs["sasl_mechanism"] == "OAUTHBEARER" and isinstance(provider, MskIamTokenProvider)
    assert provider.region == "eu-west-1" and provider.profile is None
    # The AWS_MSK_IAM mechanism's settings: the same credentials, sent as OAUTHBEARER.
    kwargs = config_from_properties({
        "bootstrap.servers": MSK_BOOTSTRAP, "security.protocol": "SASL_SSL", "sasl.mechanism": "AWS_MSK_IAM",
        "sasl.jaas.config": 'software.amazon.msk.auth.iam.IAMLoginModule required awsProfileName="analytics";',
        "sasl.client.callback.handler.class": "software.amazon.msk.auth.iam.IAMClientCallbackHandler",
    })
    assert kwargs["sasl_mechanism"] == "OAUTHBEARER"
    assert kwargs["sasl_oauth_token_provider"].profile == "analytics"
    with pytest.raises(ConfigError, match="region"):
        config_from_properties({"bootstrap.servers": "broker:9098", "security.protocol": "SASL_SSL",
                                "sasl.mechanism": "OAUTHBEARER", "sasl.login.callback.handler.class": MSK_HANDLER})


def test_msk_region_from_host_names_then_environment(monkeypatch):
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    assert msk_region(MSK_BOOTSTRAP) == "eu-west-1"
    assert msk_region("boot-abc.c3.kafka-serverless.us-gov-west-1.amazonaws.com:9098") == "us-gov-west-1"
    assert msk_region("broker:9098") is None
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-southeast-2")
    assert msk_region("broker:9098") == "ap-southeast-2"
