"""Java client properties without a broker: OAUTHBEARER messages (RFC 7628), the token cache of the
client-credentials flow, properties files and librdkafka's names. The broker-backed evidence for every
mechanism and store type is tests/kafka/test_secured_entry_points.py."""

from __future__ import annotations

import base64
import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from kafkawire.client import Client
from kafkawire.client.config import ConfigError, config_from_properties, load_properties_file
from kafkawire.client.net.oauth import ClientCredentialsTokenProvider, unsecured_token
from kafkawire.client.net.sasl import OAuthBearerMechanism, OAuthBearerToken, SaslConfig, mechanism_for


def test_oauthbearer_first_message_and_error_challenge():
    mech = OAuthBearerMechanism(OAuthBearerToken("abc.def.ghi", {"logicalCluster": "lkc-1"}))
    assert mech.first_message() == b"n,,\x01auth=Bearer abc.def.ghi\x01logicalCluster=lkc-1\x01\x01"
    # RFC 7628 3.2.2: the server's JSON error is answered with a lone %x01, and the exchange is not complete.
    assert mech.step(b'{"status":"invalid_token"}') == b"\x01"
    assert mech.step(b"") is None and not mech.complete and mech.error == '{"status":"invalid_token"}'
    ok = OAuthBearerMechanism("tok")
    assert ok.first_message() == b"n,,\x01auth=Bearer tok\x01\x01"
    assert ok.step(b"") is None and ok.complete
    with pytest.raises(ValueError, match="auth"):
        OAuthBearerMechanism(OAuthBearerToken("t", {"auth": "x"}))


def test_oauthbearer_needs_a_token_provider_and_calls_it_per_authentication():
    with pytest.raises(ValueError, match="token_provider"):
        SaslConfig("OAUTHBEARER", "", "")
    tokens = iter(["first", "second"])
    config = SaslConfig("OAUTHBEARER", "", "", token_provider=lambda: next(tokens))
    assert b"Bearer first" in mechanism_for(config).first_message()
    assert b"Bearer second" in mechanism_for(config).first_message()
    with pytest.raises(ValueError, match="token_provider"):
        Client("h:1", security_protocol="SASL_PLAINTEXT", sasl_mechanism="OAUTHBEARER")


def test_unsecured_token_is_what_kafka_expects():
    header, payload, signature = unsecured_token("dev", lifetime_s=60, scope=["a"]).split(".")
    pad = lambda s: s + "=" * (-len(s) % 4)  # noqa: E731
    assert json.loads(base64.urlsafe_b64decode(pad(header))) == {"alg": "none"} and signature == ""
    claims = json.loads(base64.urlsafe_b64decode(pad(payload)))
    assert claims["sub"] == "dev" and claims["exp"] - claims["iat"] == 60 and claims["scope"] == ["a"]


@pytest.fixture
def token_endpoint():
    issued: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            issued.append(1)
            body = json.dumps({"access_token": f"token-{len(issued)}", "expires_in": self.server.lifetime}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.lifetime = 3600  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server, f"http://127.0.0.1:{server.server_address[1]}/token", issued
    server.shutdown()
    server.server_close()


def test_client_credentials_token_is_cached_until_80_percent_of_its_lifetime(token_endpoint):
    server, url, issued = token_endpoint
    provider = ClientCredentialsTokenProvider(url, "id", "secret")
    assert provider() == provider() == "token-1" and len(issued) == 1
    server.lifetime = 0  # an expired token is fetched again at the next connection
    provider._refresh_at = 0.0
    assert provider() == "token-2" and provider() == "token-3"


def test_properties_file_and_librdkafka_names(tmp_path):
    path = tmp_path / "client.properties"
    path.write_text("# comment\n! also a comment\nbootstrap.servers = h:1\nsasl.jaas.config=a \\\n  b;\nx: y\n")
    assert load_properties_file(path) == {"bootstrap.servers": "h:1", "sasl.jaas.config": "a b;", "x": "y"}
    got = config_from_properties({"security.protocol": "sasl_ssl", "sasl.mechanisms": "SCRAM-SHA-256",
                                  "sasl.username": "u", "sasl.password": "p",
                                  "ssl.endpoint.identification.algorithm": ""})
    assert got["sasl_mechanism"] == "SCRAM-SHA-256" and got["security_protocol"] == "SASL_SSL"
    context = got["ssl_context"]
    assert isinstance(context, ssl.SSLContext) and not context.check_hostname
    assert context.verify_mode == ssl.CERT_REQUIRED  # no host-name check, the chain is still verified
    assert config_from_properties({}) == {}


def test_a_pem_truststore_without_a_type_is_read_as_pem(tmp_path):
    # Java's default type is JKS; a file that is plainly PEM is taken as PEM when no type was declared, and
    # named as PEM when another type was.
    pem = ssl.DER_cert_to_PEM_cert(_self_signed_der())
    path = tmp_path / "ca.pem"
    path.write_text(pem)
    context = config_from_properties({"security.protocol": "SSL", "ssl.truststore.location": str(path)})["ssl_context"]
    assert context.cert_store_stats()["x509"] == 1
    with pytest.raises(ConfigError, match="^ssl.truststore.location: .* is a PEM file, not a JKS store"):
        config_from_properties({"security.protocol": "SSL", "ssl.truststore.location": str(path),
                                "ssl.truststore.type": "JKS"})


def _self_signed_der() -> bytes:
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.DER)
    with pytest.raises(ConfigError, match="^ssl.keystore.key: needed"):
        config_from_properties({"security.protocol": "SSL", "ssl.keystore.certificate.chain": "x"})
