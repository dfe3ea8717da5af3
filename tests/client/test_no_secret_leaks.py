"""No secret in any error, log record, repr() or CLI output (issue 34).

One marker secret is planted in every option that holds one (JAAS passwords of PLAIN, SCRAM and OAUTHBEARER,
``sasl_password``, TLS key and key/trust store passwords, registry basic auth in ``basic.auth.user.info`` and
in the URL's user info, bearer tokens, OAuth client secrets, MSK credentials), then every parse error,
failed authentication (a real Apache Kafka SASL listener), failed TLS connection, failed registry call (a
closed port, and a hostile registry and token endpoint that echo what they were sent) and CLI invocation
with bad credentials is driven; the marker, its URL-quoted and base64 forms, must appear nowhere: not in the
exception text nor its ``__cause__`` / ``__context__`` chain and formatted traceback, the ``repr()`` of the
objects, the log records captured at DEBUG, or a CLI subprocess's stdout and stderr.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import ssl
import subprocess
import sys
import threading
import traceback
import urllib.parse
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from kafkawire.client import AuthenticationFailedError, Client, Consumer, Producer
from kafkawire.client.config import ConfigError, config_from_properties, parse_jaas_config
from kafkawire.client.errors import KafkaWireError
from kafkawire.client.net.oauth import ClientCredentialsTokenProvider, MskIamTokenProvider
from kafkawire.client.net.sasl import SaslConfig
from kafkawire.serde import SchemaRegistry, SchemaRegistryError
from kafkawire.testing import start_broker
from kafkawire.testing.tls import _keytool, make_client_keystore

pytestmark = pytest.mark.broker

MARKER = "S3cr3t-M4rk3r-q9Zx"
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
USERS = {"alice": "alice-right-password"}
CONSOLE_SCRIPT = Path(sys.executable).parent / "kafkawire"


def _forms(marker: str = MARKER) -> list[str]:
    """The marker as it could leak: itself, URL-quoted, and inside a base64 Basic header."""
    out = {marker, urllib.parse.quote(marker), urllib.parse.quote_plus(marker)}
    for user in ("alice", "sr-user", "client-id", ""):
        out.add(base64.b64encode(f"{user}:{marker}".encode()).decode())
    out.add(base64.b64encode(marker.encode()).decode().rstrip("="))
    return sorted(out)


def _texts(obj: Any) -> Iterator[str]:
    """Every text an object shows: str and repr; for an exception, its args, chain and formatted traceback."""
    if isinstance(obj, BaseException):
        seen: set[int] = set()
        e: BaseException | None = obj
        while e is not None and id(e) not in seen:
            seen.add(id(e))
            yield str(e)
            yield repr(e)
            yield from (repr(a) for a in e.args)
            for name in ("reason", "value", "registry", "property"):
                if getattr(e, name, None) is not None:
                    yield repr(getattr(e, name))
            e = e.__cause__ or e.__context__
        yield "".join(traceback.format_exception(obj))
    else:
        yield str(obj)
        yield repr(obj)


def assert_clean(*objects: Any, caplog: pytest.LogCaptureFixture | None = None) -> None:
    texts = [t for o in objects for t in _texts(o)]
    if caplog is not None:
        for record in caplog.records:
            texts.append(record.getMessage())
            texts.append(repr(record.args))
            if record.exc_info and record.exc_info[1] is not None:
                texts.extend(_texts(record.exc_info[1]))
    for text in texts:
        for form in _forms():
            assert form not in text, f"secret leaked ({form!r}) in: {text[:2000]}"


def _raised(call: Callable[[], Any], kind: type[BaseException] = Exception) -> BaseException:
    with pytest.raises(kind) as info:
        call()
    return info.value


@pytest.fixture(autouse=True)
def _debug_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)


# ------------------------------------------------------------------------------------------ parse errors

BAD_JAAS = [
    f'"{PLAIN} required username=\\"alice\\" password=\\"{MARKER}\\";"',  # the whole value quoted
    f"'{PLAIN} required username=alice password={MARKER};'",
    f'{PLAIN} required username="alice" password="{MARKER}',  # unterminated
    f'{PLAIN} required username="alice" password="{MARKER}" ',  # no ';'
    f'{PLAIN} requird username="alice" password="{MARKER}";',  # bad control flag
    f'{PLAIN} required username="alice" password "{MARKER}";',  # missing '='
    f'{PLAIN} required username="alice" password={MARKER} {MARKER};',  # stray word
    f'{PLAIN} required username="alice" "{MARKER}";',  # stray quoted string
    f'{PLAIN} required password="{MARKER}"; {PLAIN} required password="{MARKER}";',  # two modules
    f"{MARKER}",  # the password alone
    f"{MARKER} required;",
    f'{SCRAM} required username="alice" password="{MARKER}" = ;',
    f'{OAUTH} required clientId="c" clientSecret="{MARKER}" =',
]


@pytest.mark.parametrize("jaas", BAD_JAAS)
def test_jaas_parse_errors_hide_the_password(jaas: str, caplog: pytest.LogCaptureFixture) -> None:
    errors = [_raised(lambda: parse_jaas_config(jaas), ConfigError)]
    props = {"bootstrap.servers": "127.0.0.1:9", "security.protocol": "SASL_PLAINTEXT",
             "sasl.mechanism": "PLAIN", "sasl.jaas.config": jaas}
    errors.append(_raised(lambda: config_from_properties(props), ConfigError))
    errors.append(_raised(lambda: Client.from_properties(props), ConfigError))
    errors.append(_raised(lambda: Consumer.from_properties({**props, "group.id": "g"}), ConfigError))
    errors.append(_raised(lambda: Producer.from_properties(props), ConfigError))
    for e in errors:
        assert "sasl.jaas.config" in str(e), e  # the error still names the setting
    assert_clean(*errors, caplog=caplog)


def test_a_quoted_jaas_value_says_what_to_do() -> None:
    e = _raised(lambda: parse_jaas_config(BAD_JAAS[0]), ConfigError)
    assert "remove the quotes" in str(e), e
    e = _raised(lambda: parse_jaas_config(BAD_JAAS[2]), ConfigError)
    assert "unterminated" in str(e) and "never closed" in str(e), e


def test_parsed_jaas_and_sasl_config_reprs(caplog: pytest.LogCaptureFixture) -> None:
    module = parse_jaas_config(f'{PLAIN} required username="alice" password="{MARKER}";')
    assert module.options["password"] == MARKER  # parsed right, only not shown
    oauth = parse_jaas_config(f'{OAUTH} required clientId="c" clientSecret="{MARKER}";')
    assert "alice" in repr(module) and "clientId" in repr(oauth)
    sasl = SaslConfig("SCRAM-SHA-512", "alice", MARKER)
    kwargs = config_from_properties({"bootstrap.servers": "127.0.0.1:9", "security.protocol": "SASL_PLAINTEXT",
                                     "sasl.jaas.config": f'{PLAIN} required username="a" password="{MARKER}";'})
    assert kwargs["sasl_password"] == MARKER
    assert_clean(module, oauth, sasl, caplog=caplog)


def test_spark_options_reprs(caplog: pytest.LogCaptureFixture) -> None:
    """Spark's parsed options carry the kafka.* parameters (a Task-not-serializable error or a log line
    prints them): shown without the JAAS string."""
    from kafkawire.spark.options import parse_sink_options, parse_source_options

    kafka = {"kafka.bootstrap.servers": "127.0.0.1:9", "kafka.security.protocol": "SASL_SSL",
             "kafka.sasl.mechanism": "PLAIN",
             "kafka.sasl.jaas.config": f'{PLAIN} required username="alice" password="{MARKER}";',
             "kafka.ssl.truststore.password": MARKER}
    source = parse_source_options({**kafka, "subscribe": "t"}, streaming=False)
    sink = parse_sink_options({**kafka, "topic": "t"})
    assert MARKER in source.kafka_params["sasl.jaas.config"]  # kept for the client, only not shown
    assert_clean(source, sink, caplog=caplog)


def test_oauth_and_registry_config_errors(caplog: pytest.LogCaptureFixture) -> None:
    errors = [
        _raised(lambda: ClientCredentialsTokenProvider(f"ftp://id:{MARKER}@idp.example/token", "id", MARKER)),
        _raised(lambda: config_from_properties({
            "bootstrap.servers": "h:9", "security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": f'{OAUTH} required clientId="c" clientSecret="{MARKER}";',
            "sasl.oauthbearer.token.endpoint.url": f"gopher://c:{MARKER}@idp/token"})),
        _raised(lambda: SchemaRegistry(f"ftp://sr-user:{MARKER}@127.0.0.1:1")),
        _raised(lambda: SchemaRegistry(f"http://sr-user:{MARKER}@127.0.0.1:1", basic_auth=("u", MARKER))),
        _raised(lambda: SchemaRegistry(f"http://sr-user:{MARKER}@127.0.0.1:1,http://other:x@127.0.0.1:2")),
        _raised(lambda: SchemaRegistry("http://127.0.0.1:1", basic_auth=MARKER)),
        _raised(lambda: SchemaRegistry.from_properties({"url": "http://127.0.0.1:1",
                                                        "basic.auth.user.info": f"sr-user:{MARKER}",
                                                        "bearer.auth.token": MARKER})),
        _raised(lambda: SchemaRegistry.from_properties({"url": "http://127.0.0.1:1",
                                                        "basic.auth.credentials.source": "SASL_INHERIT",
                                                        "basic.auth.user.info": f"sr-user:{MARKER}"})),
        _raised(lambda: SchemaRegistry.from_properties({"url": f"http://sr-user:{MARKER}@127.0.0.1:1",
                                                        "bogus.option": MARKER})),
    ]
    assert_clean(*errors, caplog=caplog)


def test_registry_url_user_info_is_basic_auth(caplog: pytest.LogCaptureFixture) -> None:
    for registry in (SchemaRegistry(f"http://sr-user:{MARKER}@127.0.0.1:1/"),
                     SchemaRegistry.from_properties({"schema.registry.url": f"http://sr-user:{MARKER}@127.0.0.1:1"}),
                     SchemaRegistry.from_properties({"url": "http://127.0.0.1:1",
                                                     "basic.auth.user.info": f"sr-user:{MARKER}"})):
        assert registry.urls == ["http://127.0.0.1:1"]  # not a host named "sr-user:...@127.0.0.1"
        expected = "Basic " + base64.b64encode(f"sr-user:{MARKER}".encode()).decode()
        assert registry._headers["Authorization"] == expected
        assert_clean(registry, caplog=caplog)
    quoted = SchemaRegistry(f"http://sr%40user:{urllib.parse.quote(MARKER + '/:@', safe='')}@127.0.0.1:1")
    assert quoted._headers["Authorization"] == "Basic " + base64.b64encode(
        f"sr@user:{MARKER}/:@".encode()).decode()


def test_msk_and_token_provider_reprs(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLEKEYID")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", MARKER)
    monkeypatch.setenv("AWS_SESSION_TOKEN", MARKER + "-session")
    msk = MskIamTokenProvider("us-east-1")
    assert msk()  # a signed URL (carrying the session token by design: it is what MSK checks), logged nowhere
    provider = ClientCredentialsTokenProvider(f"http://id:{MARKER}@127.0.0.1:1/token", "client-id", MARKER)
    assert_clean(msk, provider, caplog=caplog)


# ------------------------------------------------------------------------------------ a real SASL broker

@pytest.fixture(scope="module")
def secured() -> Iterator[Any]:
    broker = start_broker("kafka", tls=True, sasl_mechanisms=("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512",
                                                              "OAUTHBEARER"), users=USERS)
    yield broker
    broker.stop()


@pytest.fixture(scope="module")
def stores(secured: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """Key and trust stores whose passwords are the marker (made by keytool and openssl, never kafkawire)."""
    d = tmp_path_factory.mktemp("stores")

    def run(*args: str) -> None:
        res = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
        assert res.returncode == 0, res.stdout + res.stderr

    ca = str(secured.ca_file)
    run(_keytool(), "-importcert", "-noprompt", "-alias", "ca", "-file", ca, "-keystore", str(d / "trust.jks"),
        "-storetype", "JKS", "-storepass", MARKER)
    run(_keytool(), "-importcert", "-noprompt", "-alias", "ca", "-file", ca, "-keystore", str(d / "trust.p12"),
        "-storetype", "PKCS12", "-storepass", MARKER)
    p12, _ = make_client_keystore(secured.certificates, d / "client.p12", name="c", password=MARKER)
    run("openssl", "pkcs12", "-in", str(p12), "-passin", f"pass:{MARKER}", "-nocerts", "-out", str(d / "key.pem"),
        "-passout", f"pass:{MARKER}")
    run("openssl", "pkcs12", "-in", str(p12), "-passin", f"pass:{MARKER}", "-nokeys", "-out", str(d / "chain.pem"))
    (d / "client.pem").write_text((d / "key.pem").read_text() + (d / "chain.pem").read_text())
    return {
        "trust:JKS": {"ssl.truststore.location": str(d / "trust.jks"), "ssl.truststore.type": "JKS",
                      "ssl.truststore.password": MARKER},
        "trust:PKCS12": {"ssl.truststore.location": str(d / "trust.p12"), "ssl.truststore.type": "PKCS12",
                         "ssl.truststore.password": MARKER},
        "key:PKCS12": {"ssl.keystore.location": str(p12), "ssl.keystore.type": "PKCS12",
                       "ssl.keystore.password": MARKER},
        "key:PEM": {"ssl.keystore.location": str(d / "client.pem"), "ssl.keystore.type": "PEM",
                    "ssl.key.password": MARKER},
        "key:PEM inline": {"ssl.keystore.type": "PEM", "ssl.keystore.key": (d / "key.pem").read_text(),
                           "ssl.keystore.certificate.chain": (d / "chain.pem").read_text(),
                           "ssl.key.password": MARKER},
    }


def _wrong(value: str) -> str:
    """A wrong password that still carries the marker (so a leak of the wrong value shows too)."""
    return MARKER + "-wrong"


@pytest.mark.parametrize("name", ["trust:JKS", "trust:PKCS12", "key:PKCS12", "key:PEM", "key:PEM inline"])
def test_store_password_errors(secured: Any, stores: dict[str, dict[str, str]], name: str,
                               caplog: pytest.LogCaptureFixture) -> None:
    base = {"bootstrap.servers": secured.bootstrap_for("SSL"), "security.protocol": "SSL"}
    if name.startswith("key:"):
        base.update(stores["trust:PKCS12"])
    good = {**base, **stores[name]}
    # The right passwords work (the stores are real), and a wrong one fails without showing either.
    with Client.from_properties(good) as client:
        assert client.metadata().brokers
        assert_clean(client, caplog=caplog)
    for key in [k for k in stores[name] if k.endswith("password")]:
        bad = {**good, key: _wrong(good[key])}
        err = _raised(lambda: config_from_properties(bad), (ConfigError, ValueError))  # noqa: B023
        assert key.split(".")[1] in str(err) or "password" in str(err), err
        assert_clean(err, caplog=caplog)


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
@pytest.mark.parametrize("protocol", ["SASL_PLAINTEXT", "SASL_SSL"])
def test_failed_authentication(secured: Any, mechanism: str, protocol: str,
                               caplog: pytest.LogCaptureFixture) -> None:
    context = ssl.create_default_context(cafile=str(secured.ca_file)) if protocol == "SASL_SSL" else None
    bootstrap = secured.bootstrap_for(protocol)
    direct = Client(bootstrap, security_protocol=protocol, ssl_context=context, sasl_mechanism=mechanism,
                    sasl_username="alice", sasl_password=MARKER, retry_timeout_ms=20_000)
    errors = [_raised(direct.metadata, AuthenticationFailedError)]
    assert "alice" in str(errors[0]) and mechanism in str(errors[0]), errors[0]
    module = PLAIN if mechanism == "PLAIN" else SCRAM
    props = {"bootstrap.servers": bootstrap, "security.protocol": protocol, "sasl.mechanism": mechanism,
             "sasl.jaas.config": f'{module} required username="alice" password="{MARKER}";',
             **({"ssl.truststore.location": str(secured.ca_file), "ssl.truststore.type": "PEM"} if context else {})}
    via_props = Client.from_properties(props, retry_timeout_ms=20_000)
    errors.append(_raised(via_props.metadata, AuthenticationFailedError))
    producer = Producer.from_properties({**props, "delivery.timeout.ms": "20000"})
    errors.append(_raised(lambda: producer.send("t", b"v").result(20), KafkaWireError))
    assert_clean(*errors, direct, via_props, producer, caplog=caplog)
    direct.close()
    via_props.close()
    # The producer's close reports the failed write again (its flush): that text is clean too.
    errors.append(_raised(producer.close, KafkaWireError))
    assert_clean(*errors, caplog=caplog)


def test_failed_tls_connection_with_secrets_set(secured: Any, stores: dict[str, dict[str, str]],
                                                caplog: pytest.LogCaptureFixture) -> None:
    """A SASL_SSL client whose every secret is the marker, refused at the TLS layer (the broker's certificate
    is signed by a CA the client does not trust, and a TLS client on the plaintext port)."""
    props = {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
             "sasl.jaas.config": f'{SCRAM} required username="alice" password="{MARKER}";',
             **stores["key:PKCS12"]}
    errors = []
    for bootstrap in (secured.bootstrap_for("SASL_SSL"), secured.bootstrap):
        with Client.from_properties({**props, "bootstrap.servers": bootstrap}, retry_timeout_ms=10_000) as client:
            errors.append(_raised(client.metadata, KafkaWireError))
            assert_clean(client, caplog=caplog)
    assert "certificate" in str(errors[0]), errors[0]
    assert_clean(*errors, caplog=caplog)


# ------------------------------------------------------------------------ hostile HTTP peers, closed ports

class _Echo(BaseHTTPRequestHandler):
    """Answers every request with an error whose body repeats what it was sent (headers and body)."""

    def _echo(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace")
        auth = self.headers.get("Authorization", "")
        decoded = ""
        if auth.startswith("Basic "):
            decoded = base64.b64decode(auth[6:]).decode("utf-8", "replace")
        status = 401 if "token" in self.path else 403
        message = f"denied {auth} ({decoded}) for {body} {urllib.parse.unquote_plus(body)}"
        payload = json.dumps({"error_code": 40301, "message": message, "error": message}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _echo  # noqa: N815

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def echo_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_failed_registry_calls(echo_server: str, caplog: pytest.LogCaptureFixture) -> None:
    closed = f"127.0.0.1:{_closed_port()}"
    registries = [
        SchemaRegistry(f"http://sr-user:{MARKER}@{closed}", timeout=2),
        SchemaRegistry(f"http://sr-user:{MARKER}@{echo_server}", timeout=5),
        SchemaRegistry.from_properties({"url": f"http://{echo_server}", "basic.auth.user.info": f"sr-user:{MARKER}"}),
        SchemaRegistry.from_properties({"url": f"http://{echo_server}", "bearer.auth.token": MARKER}),
        SchemaRegistry(f"http://{echo_server}", bearer_token=lambda: MARKER),
    ]
    errors = [_raised(lambda r=r: r.get_schema(1), SchemaRegistryError) for r in registries]
    assert "no answer within" in str(errors[0]) and closed in str(errors[0]), errors[0]
    assert all(e.status == 403 for e in errors[1:]), errors  # type: ignore[attr-defined]
    oauth = SchemaRegistry.from_properties({"url": f"http://{echo_server}",
                                            "bearer.auth.credentials.source": "OAUTHBEARER",
                                            "bearer.auth.issuer.endpoint.url": f"http://{echo_server}/token",
                                            "bearer.auth.client.id": "client-id",
                                            "bearer.auth.client.secret": MARKER})
    errors.append(_raised(lambda: oauth.get_schema(1), AuthenticationFailedError))
    assert "HTTP 401" in str(errors[-1]), errors[-1]
    assert_clean(*errors, *registries, oauth, caplog=caplog)


def test_failed_oauth_token_endpoint_on_a_kafka_listener(secured: Any, echo_server: str,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    closed = f"127.0.0.1:{_closed_port()}"
    errors = []
    for endpoint in (f"http://{echo_server}/token", f"http://client-id:{MARKER}@{closed}/token"):
        props = {"bootstrap.servers": secured.bootstrap_for("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
                 "sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url": endpoint,
                 "sasl.jaas.config": f'{OAUTH} required clientId="client-id" clientSecret="{MARKER}";',
                 "sasl.login.read.timeout.ms": "3000"}
        with Client.from_properties(props, retry_timeout_ms=10_000) as client:
            errors.append(_raised(client.metadata, KafkaWireError))
            assert_clean(client, caplog=caplog)
    assert_clean(*errors, caplog=caplog)


# ------------------------------------------------------------------------------------------------- CLI

def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "KAFKAWIRE_BOOTSTRAP"}
    return subprocess.run([str(CONSOLE_SCRIPT), *args], capture_output=True, text=True, env=env, timeout=180,
                          check=False)


def test_cli_with_bad_credentials(secured: Any, tmp_path: Path) -> None:
    sasl = secured.bootstrap_for("SASL_PLAINTEXT")
    config = tmp_path / "client.properties"
    config.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
                      f'sasl.jaas.config={SCRAM} required username="alice" password="{MARKER}";\n')
    runs = [
        _cli("topics", "list", "-b", sasl, "--timeout", "20", "--security-protocol", "SASL_PLAINTEXT",
             "--sasl-mechanism", "SCRAM-SHA-512", "--sasl-username", "alice", "--sasl-password", MARKER),
        _cli("topics", "list", "-b", sasl, "--timeout", "20", "--command-config", str(config)),
        _cli("topics", "list", "-b", sasl, "--timeout", "20", "-X", "security.protocol=SASL_PLAINTEXT",
             "-X", f'sasl.jaas.config={PLAIN} required username="alice" password="{MARKER}"'),  # no ';'
        _cli("topics", "list", "-b", sasl, "--timeout", "20", "-X", MARKER),
        _cli("consume", "t", "-b", secured.bootstrap, "--timeout", "5", "--value-format", "avro",
             "--schema-registry", f"http://sr-user:{MARKER}@127.0.0.1:{_closed_port()}"),
    ]
    for proc in runs:
        assert proc.returncode != 0, (proc.args, proc.stdout, proc.stderr)
        assert "kafkawire: error:" in proc.stderr, proc.stderr
        for form in _forms():
            assert form not in proc.stdout and form not in proc.stderr, (proc.args, proc.stdout, proc.stderr)
    assert "AuthenticationFailedError" in runs[0].stderr and "alice" in runs[0].stderr, runs[0].stderr
    assert "sasl.jaas.config" in runs[2].stderr, runs[2].stderr
