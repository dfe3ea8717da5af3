"""The GSSAPI mechanism's exchange against MIT Kerberos's own acceptor, with a real KDC and no broker.

The acceptor side (what Kafka's broker does through the JDK) is played by the ``gssapi`` package with the
service's keytab, so each step of RFC 4752 is checked byte for byte: the security-layer offer the client
unwraps, the "no security layer" reply it wraps with its principal as authorization identity, and a broker
that offers no acceptable layer or a malformed offer. Then a login whose tickets expire: the next connection
still authenticates, because the keytab login gets new tickets by itself (a long-running consumer outlives
its TGT).
"""

from __future__ import annotations

import struct
import time

import gssapi
import pytest

from kafkawire.client import AuthenticationFailedError
from kafkawire.client.net.deadline import Deadline
from kafkawire.client.net.kerberos import GssapiMechanism, KerberosLogin, keytab_principals
from kafkawire.testing.kdc import start_kdc


@pytest.fixture(scope="module")
def kdc():
    with start_kdc() as k:
        k.add_principal("kafka/localhost")
        k.add_principal("app")
        k.add_principal("shortlived")
        # The shortest tickets the test can wait out: the KDC caps every ticket of this principal to 8 s.
        k.kadmin(f'modprinc -maxlife "8 seconds" {k.principal("shortlived")}')
        yield k


@pytest.fixture
def realm_env(kdc, monkeypatch):
    for key, value in kdc.env.items():
        monkeypatch.setenv(key, value)
    return kdc


def _acceptor(kdc):
    creds = gssapi.Credentials(usage="accept", store={"keytab": str(kdc.keytab("kafka/localhost"))})
    return gssapi.SecurityContext(creds=creds, usage="accept")


def _authenticate(kdc, login: KerberosLogin, offer: bytes = b"\x07\x00\x10\x00") -> tuple[bytes, object]:
    """Run the whole exchange; returns what the acceptor unwrapped from the client's last message."""
    mech = GssapiMechanism(login, "localhost", Deadline(60))
    server = _acceptor(kdc)
    token = mech.first_message()
    assert token  # an AP-REQ
    reply = server.step(token)
    assert server.complete and reply  # mutual authentication: an AP-REP
    assert mech.step(reply) == b""  # established, nothing more to send: an empty token, as Java's client
    wrapped = mech.step(server.wrap(offer, False).message)
    assert wrapped is not None and not mech.complete
    unwrapped = server.unwrap(wrapped).message
    assert mech.step(b"") is None and mech.complete
    return unwrapped, server


def test_exchange_with_mit_acceptor(realm_env):
    kdc = realm_env
    login = KerberosLogin(principal=kdc.principal("app"), keytab=kdc.keytab("app"))
    unwrapped, server = _authenticate(kdc, login)
    # RFC 4752 3.1: layer 1 ("none"), a maximum size of 0 without a layer, then the authorization identity.
    assert unwrapped == b"\x01\x00\x00\x00" + kdc.principal("app").encode()
    assert str(server.initiator_name) == kdc.principal("app")


@pytest.mark.parametrize(("offer", "says"), [
    (b"\x04\x00\x10\x00", "does not offer 'no security layer'"),  # confidentiality only
    (b"\x01\x00\x10", "has 3 bytes, not 4"),
])
def test_a_security_layer_offer_the_client_cannot_take(realm_env, offer, says):
    kdc = realm_env
    login = KerberosLogin(principal=kdc.principal("app"), keytab=kdc.keytab("app"))
    mech = GssapiMechanism(login, "localhost", Deadline(60))
    server = _acceptor(kdc)
    assert mech.step(server.step(mech.first_message())) == b""
    with pytest.raises(AuthenticationFailedError, match=says):
        mech.step(server.wrap(offer, False).message)


def test_a_forged_security_layer_message_is_refused(realm_env):
    kdc = realm_env
    login = KerberosLogin(principal=kdc.principal("app"), keytab=kdc.keytab("app"))
    mech = GssapiMechanism(login, "localhost", Deadline(60))
    server = _acceptor(kdc)
    assert mech.step(server.step(mech.first_message())) == b""
    genuine = bytearray(server.wrap(b"\x07\x00\x10\x00", False).message)
    genuine[-1] ^= 0x01  # its integrity check no longer holds
    with pytest.raises(AuthenticationFailedError, match="broker's token was refused"):
        mech.step(bytes(genuine))


def test_keytab_login_outlives_its_tickets(realm_env):
    kdc = realm_env
    login = KerberosLogin(principal=kdc.principal("shortlived"), keytab=kdc.keytab("shortlived"))
    _authenticate(kdc, login)
    first = login.credentials().lifetime
    assert first is not None and 0 < first <= 8  # the KDC's cap: these tickets really expire
    time.sleep(first + 2)
    # Past the TGT's end: the same login authenticates a new connection, with a TGT the library got anew.
    unwrapped, _ = _authenticate(kdc, login)
    assert unwrapped.endswith(kdc.principal("shortlived").encode())
    assert login.credentials().lifetime > 0


def test_keytab_principals_reads_what_kadmin_wrote(kdc, tmp_path):
    assert keytab_principals(str(kdc.keytab("kafka/localhost"))) == [kdc.principal("kafka/localhost")]
    assert keytab_principals(str(tmp_path / "missing")) == []
    garbage = tmp_path / "garbage.keytab"
    garbage.write_bytes(b"\x05\x02" + struct.pack(">i", 1000) + b"\x00\x05")  # an entry cut short
    assert keytab_principals(str(garbage)) == []
