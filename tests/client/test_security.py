"""TLS and SASL corner cases that Apache Kafka cannot be made to show, against a scripted broker.

The evidence that kafkawire's SSL, SASL_PLAINTEXT and SASL_SSL work (every mechanism, wrong passwords,
unknown users, an untrusted CA) is tests/kafka/test_security_kafka.py, against Apache Kafka itself. What
stays here needs a server that misbehaves or is configured in a way a test broker is not: a certificate
for another host name, a broker offering only another mechanism, and counting that a refused password is
not retried. The scripted broker's server side of SCRAM (RFC 5802) is written independently of
kafkawire's client side. The stand-ins' own SASL behaviour is checked too:
- noida-db speaks SASL PLAIN but accepts any password, so it only proves the PLAIN exchange works.
- Tansu 0.6 with ``--authentication`` speaks SCRAM-SHA-256, but its users can only be created through an
  authenticated broker connection and its storage is in memory, so no user can ever exist: it proves
  the SCRAM exchange up to the server's ``e=unknown-user``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import ssl
import subprocess
import threading
import uuid

import pytest
from client_fakes import FakeKafkaBroker

from kafkawire.client import AuthenticationFailedError, Client
from kafkawire.protocol import MetadataResponse, SaslAuthenticateResponse, SaslHandshakeResponse

pytestmark = pytest.mark.broker

VERSIONS = {3: (1, 12), 17: (0, 1), 18: (0, 3), 36: (0, 2)}


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1 (and one for another name, to be refused)."""
    d = tmp_path_factory.mktemp("tls")
    for name, san in (("good", "IP:127.0.0.1,DNS:localhost"), ("wrong", "DNS:elsewhere.example")):
        subprocess.run(
            [
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                "/CN=test",
                "-keyout",
                str(d / f"{name}.key"),
                "-out",
                str(d / f"{name}.pem"),
                "-addext",
                f"subjectAltName={san}",
            ],
            check=True,
            capture_output=True,
        )
    return d


def server_context(tls_files, name: str = "good") -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tls_files / f"{name}.pem", tls_files / f"{name}.key")
    return ctx


class ScramServer:
    """Server side of SCRAM (RFC 5802 section 3), one instance per connection."""

    def __init__(self, mechanism: str, users: dict[str, str]) -> None:
        self.hash = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}[mechanism]
        self.users = users
        self.salt = os.urandom(16)
        self.iterations = 4096
        self.state = "first"

    def _h(self, key: bytes, msg: bytes) -> bytes:
        return hmac.new(key, msg, self.hash).digest()

    def step(self, token: bytes) -> tuple[int, str | None, bytes]:
        text = token.decode()
        if self.state == "first":
            assert text.startswith("n,,")
            self.client_first_bare = text[3:]
            attrs = dict(kv.split("=", 1) for kv in self.client_first_bare.split(","))
            self.user = attrs["n"].replace("=2C", ",").replace("=3D", "=")
            self.nonce = attrs["r"] + base64.b64encode(os.urandom(12)).decode()
            self.server_first = f"r={self.nonce},s={base64.b64encode(self.salt).decode()},i={self.iterations}"
            self.state = "final"
            return 0, None, self.server_first.encode()
        without_proof, proof_b64 = text.rsplit(",p=", 1)
        assert without_proof == f"c=biws,r={self.nonce}"
        password = self.users.get(self.user)
        if password is None:
            return 58, "unknown user", b""
        salted = hashlib.pbkdf2_hmac(self.hash, password.encode(), self.salt, self.iterations)
        stored_key = hashlib.new(self.hash, self._h(salted, b"Client Key")).digest()
        auth = f"{self.client_first_bare},{self.server_first},{without_proof}".encode()
        client_key = bytes(a ^ b for a, b in zip(base64.b64decode(proof_b64), self._h(stored_key, auth)))
        if hashlib.new(self.hash, client_key).digest() != stored_key:
            return 58, "Authentication failed: invalid credentials", b""
        self.authenticated = True
        server_sig = self._h(self._h(salted, b"Server Key"), auth)
        return 0, None, b"v=" + base64.b64encode(server_sig)


def scram_broker(mechanism: str, users: dict[str, str], ssl_context=None) -> FakeKafkaBroker:
    sessions: dict[int, ScramServer] = {}

    def respond(header, request):
        me = threading.get_ident()
        if header.api_key == 17:
            ok = request.mechanism == mechanism
            if ok:
                sessions[me] = ScramServer(mechanism, users)
            return SaslHandshakeResponse(error_code=0 if ok else 33, mechanisms=[mechanism])
        if header.api_key == 36:
            code, message, data = sessions[me].step(bytes(request.auth_bytes))
            return SaslAuthenticateResponse(error_code=code, error_message=message, auth_bytes=data)
        assert getattr(sessions.get(me), "authenticated", False), "request before authentication"
        return MetadataResponse(
            brokers=[MetadataResponse.MetadataResponseBroker(node_id=7, host="127.0.0.1", port=server.port)],
            cluster_id="scram",
            controller_id=7,
            topics=[
                MetadataResponse.MetadataResponseTopic(error_code=0, name="t", topic_id=uuid.UUID(int=0), partitions=[])
            ],
        )

    server = FakeKafkaBroker(respond, VERSIONS, ssl_context)
    return server


def test_scram_wrong_password_is_refused_without_retrying():
    with scram_broker("SCRAM-SHA-256", {"alice": "right"}) as server:
        with Client(
            server.address,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="SCRAM-SHA-256",
            sasl_username="alice",
            sasl_password="wrong",
            retries=5,
            retry_backoff_ms=10,
        ) as c:
            with pytest.raises(AuthenticationFailedError, match="invalid credentials"):
                c.metadata()
    assert [k for k, _ in server.requests].count(17) == 1


def test_mechanism_the_broker_does_not_offer():
    with scram_broker("SCRAM-SHA-512", {}) as server:
        with Client(
            server.address,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="SCRAM-SHA-256",
            sasl_username="a",
            sasl_password="b",
        ) as c:
            with pytest.raises(AuthenticationFailedError, match="SCRAM-SHA-512"):
                c.metadata()


def test_tls_certificate_for_another_host_is_refused(tls_files):
    client_ctx = ssl.create_default_context(cafile=str(tls_files / "wrong.pem"))
    with scram_broker("SCRAM-SHA-256", {}, server_context(tls_files, "wrong")) as server:
        with Client(server.address, security_protocol="SSL", ssl_context=client_ctx, retries=5) as c:
            with pytest.raises(AuthenticationFailedError, match="certificate"):
                c.metadata()


def test_noida_sasl_plain(noida, topic_name):
    # noida-db accepts any PLAIN credentials: this shows the PLAIN exchange, not password checking.
    topic = topic_name()
    with Client(
        noida.bootstrap,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_username="alice",
        sasl_password="secret",
    ) as c:
        c.create_topics([topic])
        c.produce(topic, [b"over sasl"], partition=0)
        assert [r.value for r in c.fetch(topic, 0, 0).to_records()] == [b"over sasl"]


def test_tansu_scram_exchange_reaches_the_server_verdict(broker_factory):
    broker = broker_factory("tansu", authentication=True)
    with Client(
        broker.bootstrap,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-256",
        sasl_username="nobody",
        sasl_password="x",
    ) as c:
        with pytest.raises(AuthenticationFailedError, match="unknown-user"):
            c.metadata()


def test_tansu_without_authentication_refuses_sasl(tansu):
    with Client(
        tansu.bootstrap,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-256",
        sasl_username="a",
        sasl_password="b",
    ) as c:
        with pytest.raises(AuthenticationFailedError, match="refused SASL mechanism"):
            c.metadata()


def test_configuration_errors():
    with pytest.raises(ValueError, match="security_protocol"):
        Client("127.0.0.1:1", security_protocol="TLS")
    with pytest.raises(ValueError, match="sasl_mechanism"):
        Client("127.0.0.1:1", security_protocol="SASL_SSL")
    with pytest.raises(ValueError, match="ssl_context"):
        Client("127.0.0.1:1", ssl_context=ssl.create_default_context())
