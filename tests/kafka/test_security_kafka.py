"""TLS and SASL against Apache Kafka: the evidence that kafkawire's SSL, SASL_PLAINTEXT and SASL_SSL work.

One broker carries every listener (``start_broker("kafka", tls=True, sasl_mechanisms=...)``): its
certificate is signed by a CA made at start, PLAIN users live in the listeners' JAAS configuration and
SCRAM credentials were written at format time (``kafka-storage format --add-scram``), as Kafka documents
for KRaft. Kafka checks the passwords here, which no stand-in broker does (noida accepts any PLAIN
password, Tansu's SCRAM can hold no user).
"""

from __future__ import annotations

import ssl

import pytest

from kafkawire.client import AuthenticationFailedError, Client, NoBrokersAvailableError
from kafkawire.testing import start_broker

pytestmark = pytest.mark.broker

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
USERS = {"alice": "alice-secret", "bob": "s3cr3t-with-symbols:/!?"}


@pytest.fixture(scope="module")
def secure_broker():
    broker = start_broker("kafka", tls=True, sasl_mechanisms=MECHANISMS, users=USERS)
    yield broker
    broker.stop()


@pytest.fixture(scope="module")
def trusted(secure_broker) -> ssl.SSLContext:
    """A client context that trusts only the broker's CA (host names are checked)."""
    return ssl.create_default_context(cafile=str(secure_broker.ca_file))


def client_for(broker, protocol: str, context: ssl.SSLContext | None = None, mechanism: str | None = None,
               user: str = "alice", password: str | None = None, **options) -> Client:
    sasl = {}
    if mechanism is not None:
        sasl = dict(sasl_mechanism=mechanism, sasl_username=user,
                    sasl_password=USERS[user] if password is None else password)
    return Client(broker.bootstrap_for(protocol), security_protocol=protocol, ssl_context=context, **sasl, **options)


def round_trip(client: Client, topic: str, label: bytes) -> None:
    """Create ``topic``, produce two records and fetch them back through ``client``."""
    client.create_topics([topic])
    values = [label + b" 1", label + b" 2"]
    result = client.produce(topic, values, keys=[b"k", None], partition=0)
    assert result.offset.tolist() == [0, 1]
    records = client.fetch(topic, 0, 0).to_records()
    assert [(r.key, r.value) for r in records] == [(b"k", values[0]), (None, values[1])]


def test_the_broker_has_every_listener(secure_broker):
    assert secure_broker.security_protocols == ["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
    ports = {secure_broker.bootstrap_for(p) for p in secure_broker.security_protocols}
    assert len(ports) == 4
    assert secure_broker.ca_file.read_text().startswith("-----BEGIN CERTIFICATE-----")


def test_ssl_produce_and_fetch(secure_broker, trusted, topic_name):
    with client_for(secure_broker, "SSL", trusted) as client:
        round_trip(client, topic_name(), b"over TLS")
        # Metadata read over the SSL listener advertises the SSL listener: later connections stay on TLS.
        meta = client.metadata()
        assert [f"{b.host}:{b.port}" for b in meta.brokers.values()] == [secure_broker.bootstrap_for("SSL")]


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("protocol", ["SASL_PLAINTEXT", "SASL_SSL"])
def test_sasl_produce_and_fetch(secure_broker, trusted, topic_name, protocol, mechanism):
    context = trusted if protocol == "SASL_SSL" else None
    for user in USERS:
        with client_for(secure_broker, protocol, context, mechanism, user=user) as client:
            round_trip(client, topic_name(), f"{protocol} {mechanism} {user}".encode())


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("protocol", ["SASL_PLAINTEXT", "SASL_SSL"])
def test_wrong_password_is_refused(secure_broker, trusted, protocol, mechanism):
    context = trusted if protocol == "SASL_SSL" else None
    with client_for(secure_broker, protocol, context, mechanism, password="not-the-password") as client:
        # error 58: SASL_AUTHENTICATION_FAILED, with Kafka's own reason after it.
        with pytest.raises(AuthenticationFailedError, match=r"\(error 58\): Authentication failed"):
            client.metadata()


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_unknown_user_is_refused(secure_broker, mechanism):
    with Client(
        secure_broker.bootstrap_for("SASL_PLAINTEXT"),
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism=mechanism,
        sasl_username="mallory",
        sasl_password="alice-secret",
    ) as client:
        with pytest.raises(AuthenticationFailedError, match="(?i)authentication failed"):
            client.metadata()


def test_a_user_with_a_password_of_another_user_is_refused(secure_broker):
    with client_for(secure_broker, "SASL_PLAINTEXT", None, "SCRAM-SHA-512", user="bob",
                    password=USERS["alice"]) as client:
        with pytest.raises(AuthenticationFailedError):
            client.metadata()


@pytest.mark.parametrize("protocol", ["SSL", "SASL_SSL"])
def test_untrusted_ca_is_refused_with_the_reason(secure_broker, protocol):
    # The system's CAs only: the broker's test CA is unknown to them.
    mechanism = "SCRAM-SHA-256" if protocol == "SASL_SSL" else None
    with client_for(secure_broker, protocol, ssl.create_default_context(), mechanism, retries=3) as client:
        with pytest.raises(AuthenticationFailedError) as info:
            client.metadata()
    message = str(info.value)
    assert "certificate" in message and secure_broker.bootstrap_for(protocol) in message
    # OpenSSL's own verdict: the chain ends in a CA nobody here trusts.
    assert "self-signed certificate in certificate chain" in message or "unable to get local issuer" in message


def test_tls_client_on_a_plaintext_listener_fails_in_the_handshake(secure_broker, trusted):
    with Client(secure_broker.bootstrap, security_protocol="SSL", ssl_context=trusted, retries=1) as client:
        with pytest.raises(NoBrokersAvailableError, match="TLS handshake with " + secure_broker.bootstrap):
            client.metadata()


def test_sasl_client_on_a_listener_without_sasl_is_refused(secure_broker):
    # Kafka answers SaslHandshake on a PLAINTEXT listener with ILLEGAL_SASL_STATE (34) and no mechanisms.
    with Client(secure_broker.bootstrap, security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                sasl_username="alice", sasl_password=USERS["alice"]) as client:
        refused = r"refused SASL mechanism PLAIN \(error 34\); it offers \[\]$"
        with pytest.raises(AuthenticationFailedError, match=refused):
            client.metadata()


def test_a_crash_keeps_the_certificate_and_the_scram_users(secure_broker, trusted, topic_name):
    # Last in the file: it restarts the shared broker (SIGKILL). The SCRAM credentials live in the metadata
    # log and the certificate in the log directory, so a client configured before the crash still logs in.
    ca = secure_broker.ca_file.read_bytes()
    secure_broker.restart(graceful=False)
    assert secure_broker.ca_file.read_bytes() == ca
    with client_for(secure_broker, "SASL_SSL", trusted, "SCRAM-SHA-512", user="bob") as client:
        round_trip(client, topic_name(), b"after the crash")
    with client_for(secure_broker, "SASL_SSL", trusted, "SCRAM-SHA-512", password="wrong") as client:
        with pytest.raises(AuthenticationFailedError, match=r"\(error 58\)"):
            client.metadata()
