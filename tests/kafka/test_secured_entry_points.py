"""Secured clusters from every entry point, with the Java client's property names, against Apache Kafka.

One broker carries every listener: SSL, SASL_PLAINTEXT and SASL_SSL (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER)
and MTLS (SSL requiring a client certificate). OAUTHBEARER tokens on SASL_SSL are checked by KIP-768's
validator against the JWKS of a small identity provider run here (RS256 keys, an HTTP token endpoint for the
client-credentials grant); SASL_PLAINTEXT keeps Kafka's unsecured validator for unsigned development tokens.
Each store type (JKS, PKCS12, PEM file, PEM inline) is tried as trust store and as client key store, through
:meth:`kafkawire.Client.from_properties`, the CLI (``-X`` and ``--command-config``) and one Spark batch read.
"""

from __future__ import annotations

import base64
import json
import logging
import ssl
import subprocess
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from kafkawire.cli.main import main
from kafkawire.client import AuthenticationFailedError, Client
from kafkawire.client.config import ConfigError, config_from_properties, parse_jaas_config
from kafkawire.client.net.keystores import read_store
from kafkawire.testing import start_broker
from kafkawire.testing.kafka import OAUTH_AUDIENCE, OAUTH_ISSUER
from kafkawire.testing.tls import _keytool, make_client_keystore

pytestmark = pytest.mark.broker

USERS = {"alice": "alice-secret", "bob": "s3cr3t-with-symbols:/!?"}
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
CLIENT_ID, CLIENT_SECRET = "spark-job", "idp-secret with spaces&symbols"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class IdentityProvider:
    """An RSA key published as a JWKS file, and an OAuth token endpoint (client-credentials grant) signing
    RS256 JWTs with it for one registered client."""

    def __init__(self, directory: Path) -> None:
        from cryptography.hazmat.primitives.asymmetric import rsa

        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        numbers = self.key.public_key().public_numbers()
        jwk = {"kty": "RSA", "kid": "test-key", "use": "sig", "alg": "RS256",
               "n": _b64(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")),
               "e": _b64(numbers.e.to_bytes(3, "big"))}
        self.jwks_file = directory / "jwks.json"
        self.jwks_file.write_text(json.dumps({"keys": [jwk]}))
        self.requests: list[dict[str, str]] = []
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
                form = dict(urllib.parse.parse_qsl(body))
                scheme, _, creds = (self.headers.get("Authorization") or "").partition(" ")
                user, _, secret = base64.b64decode(creds or "").decode().partition(":")
                user, secret = urllib.parse.unquote(user), urllib.parse.unquote(secret)
                provider.requests.append({**form, "client_id": user})
                if scheme != "Basic" or (user, secret) != (CLIENT_ID, CLIENT_SECRET):
                    self._answer(401, {"error": "invalid_client"})
                elif form.get("grant_type") != "client_credentials":
                    self._answer(400, {"error": "unsupported_grant_type"})
                else:
                    token = provider.token(user, scope=form.get("scope", ""))
                    self._answer(200, {"access_token": token, "token_type": "Bearer", "expires_in": 300})

            def _answer(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/oauth2/token"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def token(self, subject: str, *, scope: str = "", audience: str = OAUTH_AUDIENCE) -> str:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        now = int(time.time())
        header = _b64(json.dumps({"alg": "RS256", "typ": "JWT", "kid": "test-key"}).encode())
        claims = {"iss": OAUTH_ISSUER, "aud": audience, "sub": subject, "iat": now, "exp": now + 300}
        if scope:
            claims["scope"] = scope
        payload = _b64(json.dumps(claims).encode())
        signature = self.key.sign(f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{header}.{payload}.{_b64(signature)}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def idp(tmp_path_factory):
    provider = IdentityProvider(tmp_path_factory.mktemp("idp"))
    yield provider
    provider.close()


@pytest.fixture(scope="module")
def broker(idp):
    b = start_broker("kafka", tls=True, sasl_mechanisms=(*MECHANISMS, "OAUTHBEARER"), users=USERS,
                     oauth_jwks_file=idp.jwks_file, oauth_secured_protocols=("SASL_SSL",), client_auth=True)
    yield b
    b.stop()


def _run(*args: str) -> None:
    res = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.fixture(scope="module")
def stores(broker, tmp_path_factory) -> dict[str, dict[str, str]]:
    """Trust stores holding the broker's CA and client key stores signed by it, one per type, made by the JDK's
    keytool and by openssl (never by kafkawire), as Java users have them."""
    d = tmp_path_factory.mktemp("stores")
    keytool, ca = _keytool(), str(broker.ca_file)
    _run(keytool, "-importcert", "-noprompt", "-alias", "ca", "-file", ca, "-keystore", str(d / "trust.jks"),
         "-storetype", "JKS", "-storepass", "trust-pw")
    _run(keytool, "-importcert", "-noprompt", "-alias", "ca", "-file", ca, "-keystore", str(d / "trust.p12"),
         "-storetype", "PKCS12", "-storepass", "trust-pw")
    p12, pw = make_client_keystore(broker.certificates, d / "client.p12", name="mtls-client", password="key-pw")
    _run(keytool, "-importkeystore", "-srckeystore", str(p12), "-srcstoretype", "PKCS12", "-srcstorepass", pw,
         "-destkeystore", str(d / "client.jks"), "-deststoretype", "JKS", "-deststorepass", "jks-pw",
         "-destkeypass", "jks-key-pw", "-srcalias", "mtls-client", "-destalias", "mtls-client")
    # PEM: the key encrypted with a password (ssl.key.password), then the chain, as Kafka's PEM key stores.
    _run("openssl", "pkcs12", "-in", str(p12), "-passin", f"pass:{pw}", "-nocerts", "-out", str(d / "key.pem"),
         "-passout", "pass:pem-key-pw")
    _run("openssl", "pkcs12", "-in", str(p12), "-passin", f"pass:{pw}", "-nokeys", "-out", str(d / "chain.pem"))
    key_pem, chain_pem = (d / "key.pem").read_text(), (d / "chain.pem").read_text()
    (d / "client.pem").write_text(key_pem + chain_pem)
    return {
        "trust:JKS": {"ssl.truststore.location": str(d / "trust.jks"), "ssl.truststore.type": "JKS",
                      "ssl.truststore.password": "trust-pw"},
        "trust:PKCS12": {"ssl.truststore.location": str(d / "trust.p12"), "ssl.truststore.type": "PKCS12",
                         "ssl.truststore.password": "trust-pw"},
        "trust:PEM": {"ssl.truststore.location": ca, "ssl.truststore.type": "PEM"},
        "trust:PEM inline": {"ssl.truststore.certificates": broker.ca_file.read_text(), "ssl.truststore.type": "PEM"},
        "key:PKCS12": {"ssl.keystore.location": str(p12), "ssl.keystore.type": "PKCS12", "ssl.keystore.password": pw},
        "key:JKS": {"ssl.keystore.location": str(d / "client.jks"), "ssl.keystore.type": "JKS",
                    "ssl.keystore.password": "jks-pw", "ssl.key.password": "jks-key-pw"},
        "key:PEM": {"ssl.keystore.location": str(d / "client.pem"), "ssl.keystore.type": "PEM",
                    "ssl.key.password": "pem-key-pw"},
        "key:PEM inline": {"ssl.keystore.type": "PEM", "ssl.keystore.key": key_pem,
                           "ssl.keystore.certificate.chain": chain_pem, "ssl.key.password": "pem-key-pw"},
    }


def jaas(module: str, **options: str) -> str:
    quoted = " ".join(f'{k}="{v}"' for k, v in options.items())
    return f"{module} required {quoted};"


def round_trip(client: Client, topic: str, label: bytes) -> None:
    client.create_topics([topic])
    assert client.produce(topic, [label], partition=0).offset.tolist() == [0]
    assert [r.value for r in client.fetch(topic, 0, 0).to_records()] == [label]


# ------------------------------------------------------------------------------------ Client properties
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_each_mechanism_from_a_jaas_config(broker, stores, topic_name, mechanism):
    module = PLAIN if mechanism == "PLAIN" else SCRAM
    for user, password in USERS.items():
        props = {"bootstrap.servers": broker.bootstrap_for("SASL_SSL"), "security.protocol": "SASL_SSL",
                 "sasl.mechanism": mechanism, "sasl.jaas.config": jaas(module, username=user, password=password),
                 **stores["trust:JKS"]}
        with Client.from_properties(props) as client:
            round_trip(client, topic_name(), f"{mechanism} {user}".encode())
    wrong = {**props, "sasl.jaas.config": jaas(module, username="alice", password="nope")}
    with Client.from_properties(wrong, retries=0) as client:
        with pytest.raises(AuthenticationFailedError, match=r"\(error 58\)"):
            client.metadata()


@pytest.mark.parametrize("store", ["JKS", "PKCS12", "PEM", "PEM inline"])
def test_each_truststore_type(broker, stores, topic_name, store):
    props = {"bootstrap.servers": broker.bootstrap_for("SSL"), "security.protocol": "SSL",
             **stores[f"trust:{store}"]}
    with Client.from_properties(props) as client:
        round_trip(client, topic_name(), f"trusted by {store}".encode())


@pytest.mark.parametrize("store", ["PKCS12", "JKS", "PEM", "PEM inline"])
def test_each_keystore_type_for_mutual_tls(broker, stores, topic_name, store):
    props = {"bootstrap.servers": broker.bootstrap_for("MTLS"), "security.protocol": "SSL",
             **stores["trust:PEM"], **stores[f"key:{store}"]}
    with Client.from_properties(props) as client:
        round_trip(client, topic_name(), f"client certificate from {store}".encode())


def test_mutual_tls_without_a_client_certificate_is_refused(broker, stores):
    props = {"bootstrap.servers": broker.bootstrap_for("MTLS"), "security.protocol": "SSL", **stores["trust:PEM"]}
    with Client.from_properties(props, retries=1, retry_timeout_ms=5_000) as client:
        with pytest.raises(Exception, match="(?i)certificate|handshake|closed|reset"):
            client.metadata()


def test_jks_is_read_without_a_jdk_like_keytool_lists_it(stores):
    # The JKS reader against keytool's own listing of the same store (certificate fingerprints).
    import hashlib

    store = stores["key:JKS"]
    contents = read_store(store["ssl.keystore.location"], "JKS", store["ssl.keystore.password"],
                          key_password=store["ssl.key.password"])
    listing = subprocess.run([_keytool(), "-list", "-v", "-keystore", store["ssl.keystore.location"],
                              "-storepass", store["ssl.keystore.password"]], capture_output=True, text=True).stdout
    fingerprints = [line.split("SHA256:", 1)[1].strip() for line in listing.splitlines() if "SHA256:" in line]
    assert [hashlib.sha256(c).hexdigest().upper() for c in contents.keys[0].chain] == \
        [f.replace(":", "") for f in fingerprints]
    with pytest.raises(ConfigError, match="^ssl.keystore.password: wrong password"):
        config_from_properties({"security.protocol": "SSL", **store, "ssl.keystore.password": "wrong"})
    with pytest.raises(ConfigError, match="^ssl.key.password: wrong key password"):
        config_from_properties({"security.protocol": "SSL", **store, "ssl.key.password": "wrong"})


# ------------------------------------------------------------------------------------------ OAUTHBEARER
def test_oauthbearer_with_a_token_callback(broker, stores, idp, topic_name):
    calls = []

    def token() -> str:
        calls.append(1)
        return idp.token("callback-user")

    trusted = ssl.create_default_context(cafile=str(broker.ca_file))
    with Client(broker.bootstrap_for("SASL_SSL"), security_protocol="SASL_SSL", ssl_context=trusted,
                sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=token) as client:
        round_trip(client, topic_name(), b"signed token from a callback")
    assert calls  # asked for each new connection
    # A token for another audience, or an unsigned one, is refused by the validator with Kafka's reason.
    unsigned = "eyJhbGciOiJub25lIn0." + _b64(b'{"sub":"x","exp":9999999999}') + "."
    for bad in (lambda: idp.token("x", audience="someone-else"), lambda: unsigned):
        with Client(broker.bootstrap_for("SASL_SSL"), security_protocol="SASL_SSL", retries=0, ssl_context=trusted,
                    sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=bad) as client:
            with pytest.raises(AuthenticationFailedError, match=r"\(error 58\).*invalid_token"):
                client.metadata()


def test_oauthbearer_client_credentials_flow(broker, stores, idp, topic_name):
    before = len(idp.requests)
    props = {
        "bootstrap.servers": broker.bootstrap_for("SASL_SSL"),
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.login.callback.handler.class":
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
        "sasl.oauthbearer.token.endpoint.url": idp.url,
        "sasl.jaas.config": jaas(OAUTH, clientId=CLIENT_ID, clientSecret=CLIENT_SECRET, scope="kafka.read"),
        **stores["trust:PKCS12"],
    }
    with Client.from_properties(props) as client:
        round_trip(client, topic_name(), b"client credentials")
    assert idp.requests[before:][0] == {"grant_type": "client_credentials", "scope": "kafka.read",
                                         "client_id": CLIENT_ID}
    # Kafka 4.1's property names (KIP-1139) instead of the JAAS options; a wrong secret names the endpoint.
    props = {k: v for k, v in props.items() if k != "sasl.jaas.config"}
    props.update({"sasl.oauthbearer.client.credentials.client.id": CLIENT_ID,
                  "sasl.oauthbearer.client.credentials.client.secret": "wrong"})
    with Client.from_properties(props, retries=0) as client:
        with pytest.raises(AuthenticationFailedError, match=r"token endpoint .* answered HTTP 401"):
            client.metadata()


def test_oauthbearer_unsecured_jaas_login(broker, topic_name):
    # Kafka's development default: an unsigned token from unsecuredLoginStringClaim_sub, accepted by a
    # listener without KIP-768 validation (SASL_PLAINTEXT here).
    props = {"bootstrap.servers": broker.bootstrap_for("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
             "sasl.mechanism": "OAUTHBEARER", "sasl.jaas.config": jaas(OAUTH, unsecuredLoginStringClaim_sub="dev")}
    with Client.from_properties(props) as client:
        round_trip(client, topic_name(), b"unsecured token")


# ------------------------------------------------------------------------------------------------- CLI
def test_cli_with_x_properties_and_a_command_config_file(broker, stores, tmp_path, capsys):
    topic = f"cli-secured-{time.monotonic_ns()}"
    src = tmp_path / "in.txt"
    src.write_text("one\ntwo\n")
    x = ["-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanism=SCRAM-SHA-512",
         "-X", f"sasl.jaas.config={jaas(SCRAM, username='bob', password=USERS['bob'])}"]
    x += [a for k, v in stores["trust:JKS"].items() for a in ("-X", f"{k}={v}")]
    assert main(["topics", "create", topic, "-b", broker.bootstrap_for("SASL_SSL"), *x]) == 0
    assert main(["produce", topic, "-b", broker.bootstrap_for("SASL_SSL"), "--input", str(src), *x]) == 0
    config = tmp_path / "client.properties"
    p12 = stores["trust:PKCS12"]
    config.write_text(
        "# as for kafka-console-consumer --command-config\n"
        f"bootstrap.servers={broker.bootstrap_for('SASL_SSL')}\n"
        "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"
        f"sasl.jaas.config={PLAIN} required \\\n    username=\"alice\" password=\"{USERS['alice']}\";\n"
        f"ssl.truststore.location={p12['ssl.truststore.location']}\nssl.truststore.type=PKCS12\n"
        f"ssl.truststore.password={p12['ssl.truststore.password']}\n"
    )
    out = tmp_path / "out.txt"
    capsys.readouterr()
    assert main(["consume", topic, "--command-config", str(config), "--format", "values", "-o", str(out),
                 "--max-records", "2"]) == 0
    assert out.read_text().split() == ["one", "two"]
    # The named flags: --security-protocol, --sasl-*, --ca-file.
    flags = ["-b", broker.bootstrap_for("SASL_SSL"), "--security-protocol", "SASL_SSL", "--sasl-mechanism",
             "SCRAM-SHA-256", "--sasl-username", "alice", "--sasl-password", USERS["alice"],
             "--ca-file", str(broker.ca_file)]
    assert main(["consume", topic, *flags, "--format", "values", "-o", str(out), "--max-records", "1"]) == 0
    assert out.read_text().split() == ["one"]


def test_cli_names_the_bad_property(broker, capsys):
    code = main(["topics", "list", "-b", broker.bootstrap_for("SASL_SSL"), "-X", "security.protocol=SASL_SSL",
                 "-X", f"sasl.jaas.config={jaas(SCRAM, username='alice', password='x')}"])
    err = capsys.readouterr().err
    assert code != 0 and "sasl.mechanism" in err and "SCRAM-SHA-256 or SCRAM-SHA-512" in err
    code = main(["topics", "list", "-b", broker.bootstrap_for("SSL"), "-X", "security.protocol=SSL",
                 "-X", "ssl.truststore.location=/nonexistent/trust.jks"])
    err = capsys.readouterr().err
    assert code != 0 and "ssl.truststore.location" in err and "/nonexistent/trust.jks" in err


# ---------------------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("props", "named"),
    [
        ({"security.protocol": "SASL_SSL", "sasl.mechanism": "DIGEST-MD5"}, "sasl.mechanism"),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.jaas.config": f"{SCRAM} required username=\"a\";"},
         "sasl.mechanism"),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
          "sasl.jaas.config": f"{PLAIN} required username=\"a\" password=\"unterminated;"}, "sasl.jaas.config"),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
          "sasl.jaas.config": f"{PLAIN} required username=\"a\";"}, "sasl.jaas.config"),
        ({"security.protocol": "SSL", "ssl.truststore.type": "JCEKS"}, "ssl.truststore.type"),
        ({"security.protocol": "SSL", "ssl.cipher.suites": "TLS_AES_128_GCM_SHA256"}, "ssl.cipher.suites"),
        ({"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "ldap"},
         "ssl.endpoint.identification.algorithm"),
        ({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
          "sasl.login.callback.handler.class": "com.example.MyHandler"}, "sasl.login.callback.handler.class"),
        ({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}, "sasl.oauthbearer.token.endpoint.url"),
        ({"security.protocol": "TLS"}, "security.protocol"),
        ({"request.timeout.ms": "soon"}, "request.timeout.ms"),
    ],
)
def test_a_wrong_or_missing_option_is_named(props, named):
    with pytest.raises(ConfigError) as info:
        config_from_properties(props)
    assert info.value.property == named and str(info.value).startswith(named + ": ")


def test_wrong_truststore_password_and_unknown_properties(stores, caplog):
    with pytest.raises(ConfigError, match="^ssl.truststore.password: "):
        config_from_properties({"security.protocol": "SSL", **stores["trust:JKS"], "ssl.truststore.password": "x"})
    with caplog.at_level(logging.WARNING, logger="kafkawire.config"):
        config_from_properties({"linger.ms": "5", "client.id": "me"})
    assert "'linger.ms' was supplied but isn't a known config" in caplog.text and "client.id" not in caplog.text


def test_jaas_quoting():
    module = parse_jaas_config(
        f"{SCRAM} required /* a comment */ username='o\\'brien' password=\"p;a=s \\\"s\" tokenauth=false;")
    assert module.class_name == SCRAM and module.flag == "required"
    assert module.options == {"username": "o'brien", "password": 'p;a=s "s', "tokenauth": "false"}
    with pytest.raises(ConfigError, match="contains 2 login modules"):
        parse_jaas_config(f"{PLAIN} required; {PLAIN} required;")


# ----------------------------------------------------------------------------------------------- Spark
def test_spark_batch_read_with_java_client_options(broker, stores, topic_name):
    from kafkawire.spark import session

    topic = topic_name()
    props = {"bootstrap.servers": broker.bootstrap_for("SASL_SSL"), "security.protocol": "SASL_SSL",
             "sasl.mechanism": "SCRAM-SHA-256",
             "sasl.jaas.config": jaas(SCRAM, username="alice", password=USERS["alice"]), **stores["trust:JKS"]}
    with Client.from_properties(props) as client:
        client.create_topics([topic])
        client.produce(topic, [b"a", b"b", b"c"], partition=0)
    from pyspark.sql import SparkSession

    from kafkawire.spark.kafka_jar import spark_jars_config

    # Get or create: in a run with the Spark suite its session-wide session is reused, and left running.
    # The first session of a test process launches the one driver JVM of the process, and jars can only
    # reach the driver's class path at that launch: carry Spark's own Kafka source here too, or the
    # parity suite that runs later in the same process cannot find format("kafka").
    existing = SparkSession.getActiveSession() or SparkSession._instantiatedSession
    spark = session("local[1]", app_name="kafkawire-secured", config=spark_jars_config())
    try:
        reader = spark.read.format("kafkawire").option("subscribe", topic)
        for key, value in props.items():
            reader = reader.option(f"kafka.{key}", value)
        assert sorted(bytes(r.value) for r in reader.load().collect()) == [b"a", b"b", b"c"]
        bad = spark.read.format("kafkawire").option("subscribe", topic)
        for key, value in {**props, "sasl.mechanism": "DIGEST-MD5"}.items():
            bad = bad.option(f"kafka.{key}", value)
        with pytest.raises(Exception, match="kafka.sasl.mechanism"):
            bad.load().collect()
    finally:
        if existing is None:
            spark.stop()
