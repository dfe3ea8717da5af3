"""SASL token construction: RFC 7677 / RFC 5802 vectors and refusal of forged server messages."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from kafkawire.client.errors import AuthenticationFailedError
from kafkawire.client.net.sasl import PlainMechanism, SaslConfig, ScramMechanism, mechanism_for

# RFC 7677 section 3 (SCRAM-SHA-256), user "user", password "pencil".
CLIENT_NONCE = "rOprNGfwEbeRWgbNEkqO"
SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
CLIENT_FINAL = (
    b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
)
SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def test_scram_sha256_rfc7677_vector():
    m = ScramMechanism("SCRAM-SHA-256", "user", "pencil", nonce=CLIENT_NONCE)
    assert m.first_message() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    assert m.step(SERVER_FIRST) == CLIENT_FINAL
    assert not m.complete
    assert m.step(SERVER_FINAL) is None
    assert m.complete


def test_scram_rejects_a_forged_server_signature():
    m = ScramMechanism("SCRAM-SHA-256", "user", "pencil", nonce=CLIENT_NONCE)
    m.step(SERVER_FIRST)
    forged = b"v=" + base64.b64encode(b"\0" * 32)
    with pytest.raises(AuthenticationFailedError, match="signature"):
        m.step(forged)


def test_scram_rejects_nonce_that_does_not_extend_ours():
    m = ScramMechanism("SCRAM-SHA-256", "user", "pencil", nonce=CLIENT_NONCE)
    with pytest.raises(AuthenticationFailedError, match="nonce"):
        m.step(b"r=somebodyelse,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")


def test_scram_rejects_low_iteration_count():
    m = ScramMechanism("SCRAM-SHA-256", "user", "pencil", nonce=CLIENT_NONCE)
    with pytest.raises(AuthenticationFailedError, match="iteration"):
        m.step(b"r=" + CLIENT_NONCE.encode() + b"xyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=1")


def test_scram_server_error_attribute():
    m = ScramMechanism("SCRAM-SHA-512", "user", "pencil")
    with pytest.raises(AuthenticationFailedError, match="unknown-user"):
        m.step(b"e=unknown-user")


def test_scram_sha512_proof_is_what_the_rfc_formulas_give():
    # Independent recomputation of RFC 5802 section 3 for SHA-512 with our own server nonce and salt.
    m = ScramMechanism("SCRAM-SHA-512", "us=er,x", "pässword", nonce="abc")
    assert m.first_message() == b"n,,n=us=3Der=2Cx,r=abc"
    salt = b"saltsalt"
    server_first = f"r=abcdef,s={base64.b64encode(salt).decode()},i=4096"
    final = m.step(server_first.encode()).decode()
    without_proof, proof_b64 = final.rsplit(",p=", 1)
    salted = hashlib.pbkdf2_hmac("sha512", "pässword".encode(), salt, 4096)
    client_key = hmac.new(salted, b"Client Key", "sha512").digest()
    auth = f"n=us=3Der=2Cx,r=abc,{server_first},{without_proof}".encode()
    sig = hmac.new(hashlib.sha512(client_key).digest(), auth, "sha512").digest()
    assert base64.b64decode(proof_b64) == bytes(a ^ b for a, b in zip(client_key, sig))
    server_sig = hmac.new(hmac.new(salted, b"Server Key", "sha512").digest(), auth, "sha512").digest()
    assert m.step(b"v=" + base64.b64encode(server_sig)) is None and m.complete


def test_plain_token():
    m = PlainMechanism("alice", "s3cret")
    assert m.first_message() == b"\0alice\0s3cret"
    assert m.step(b"") is None and m.complete


def test_config_validation_and_factory():
    with pytest.raises(ValueError):
        SaslConfig("GSSAPI", "u", "p")
    assert isinstance(mechanism_for(SaslConfig("plain", "u", "p")), PlainMechanism)
    assert mechanism_for(SaslConfig("SCRAM-SHA-512", "u", "p")).hash_name == "sha512"
    assert "hunter2" not in repr(SaslConfig("PLAIN", "u", "hunter2"))
