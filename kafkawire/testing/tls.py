"""Throw-away TLS material for a test broker: a CA and a server certificate for 127.0.0.1 / localhost.

Made with ``keytool``, which ships with the JDK every Apache Kafka broker needs anyway, so no Python
package or ``openssl`` binary is required. The broker reads the PKCS#12 keystore; clients trust
``ca.pem`` (``ssl.create_default_context(cafile=...)``).
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .brokers import BrokerStartError, java_binary

__all__ = ["BrokerCertificates", "make_broker_certificates", "make_client_keystore"]


@dataclass(frozen=True)
class BrokerCertificates:
    """Where the files are: ``ca_file`` (PEM, for clients), ``keystore`` (PKCS#12, for the broker)."""

    ca_file: Path
    keystore: Path
    password: str


def _keytool() -> str:
    java = Path(java_binary()).resolve()
    sibling = java.parent / "keytool"
    found = str(sibling) if sibling.exists() else shutil.which("keytool")
    if found is None:
        raise BrokerStartError("keytool not found (it comes with the JDK): it makes the test broker's certificates")
    return found


def make_broker_certificates(directory: Path, *, days: int = 7) -> BrokerCertificates:
    """Create a CA and a CA-signed server certificate (SAN ``IP:127.0.0.1``, ``DNS:localhost``) in ``directory``.

    Reuses the files when ``directory`` already holds them (a restarted broker keeps its certificate,
    so a client's trust store stays valid).
    """
    directory.mkdir(parents=True, exist_ok=True)
    ca_file, keystore, pw_file = directory / "ca.pem", directory / "server.p12", directory / "password"
    if ca_file.exists() and keystore.exists() and pw_file.exists():
        return BrokerCertificates(ca_file, keystore, pw_file.read_text())
    password = secrets.token_hex(12)
    ca_store = directory / "ca.p12"
    tool = _keytool()
    common = ["-storetype", "PKCS12", "-storepass", password, "-keypass", password]
    # EC keys: generating them is instant, where RSA key generation costs a noticeable part of a start.
    key = ["-keyalg", "EC", "-groupname", "secp256r1", "-validity", str(days)]
    steps = [
        # The CA: basicConstraints CA:true and keyCertSign, which strict verifiers (Python 3.13's
        # VERIFY_X509_STRICT) require of an issuer.
        ["-genkeypair", "-alias", "ca", "-dname", "CN=kafkawire test CA", *key, "-keystore", str(ca_store),
         "-ext", "bc:c", "-ext", "KU=keyCertSign,cRLSign"],
        ["-exportcert", "-rfc", "-alias", "ca", "-keystore", str(ca_store), "-file", str(ca_file)],
        ["-genkeypair", "-alias", "broker", "-dname", "CN=localhost", *key, "-keystore", str(keystore)],
        ["-certreq", "-alias", "broker", "-keystore", str(keystore), "-file", str(directory / "server.csr")],
        ["-gencert", "-alias", "ca", "-keystore", str(ca_store), "-infile", str(directory / "server.csr"),
         "-outfile", str(directory / "server.pem"), "-rfc", "-validity", str(days),
         "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-ext", "KU=digitalSignature,keyAgreement",
         "-ext", "EKU=serverAuth"],
        # The chain (CA, then the signed certificate) replaces the self-signed one under the key's alias.
        ["-importcert", "-noprompt", "-alias", "ca", "-keystore", str(keystore), "-file", str(ca_file)],
        ["-importcert", "-noprompt", "-alias", "broker", "-keystore", str(keystore),
         "-file", str(directory / "server.pem")],
    ]
    for step in steps:
        res = subprocess.run([tool, *step, *common], capture_output=True, text=True, timeout=120)
        if res.returncode != 0:
            raise BrokerStartError(f"keytool {step[0]} failed ({res.returncode}): {(res.stdout + res.stderr)[-2000:]}")
    pw_file.write_text(password)
    return BrokerCertificates(ca_file, keystore, password)


def make_client_keystore(certificates: BrokerCertificates, path: Path, *, name: str = "client",
                         password: str | None = None, days: int = 7) -> tuple[Path, str]:
    """A PKCS#12 keystore at ``path`` with a key and a certificate ``CN=<name>`` signed by the broker's CA.

    For a broker started with ``client_auth=True`` (its ``MTLS`` listener requires a client certificate).
    Returns ``(path, password)``.
    """
    password = password or secrets.token_hex(12)
    ca_store = Path(certificates.keystore).parent / "ca.p12"
    csr, signed = path.with_suffix(".csr"), path.with_suffix(".signed.pem")
    tool = _keytool()
    mine = ["-keystore", str(path), "-storetype", "PKCS12", "-storepass", password, "-keypass", password]
    ca = ["-keystore", str(ca_store), "-storetype", "PKCS12", "-storepass", certificates.password]
    steps = [
        ["-genkeypair", "-alias", name, "-dname", f"CN={name}", "-keyalg", "EC", "-groupname", "secp256r1",
         "-validity", str(days), *mine],
        ["-certreq", "-alias", name, "-file", str(csr), *mine],
        ["-gencert", "-alias", "ca", "-infile", str(csr), "-outfile", str(signed), "-rfc", "-validity", str(days),
         "-ext", "KU=digitalSignature", "-ext", "EKU=clientAuth", *ca],
        ["-importcert", "-noprompt", "-alias", "ca", "-file", str(certificates.ca_file), *mine],
        ["-importcert", "-noprompt", "-alias", name, "-file", str(signed), *mine],
    ]
    for step in steps:
        res = subprocess.run([tool, *step], capture_output=True, text=True, timeout=120)
        if res.returncode != 0:
            raise BrokerStartError(f"keytool {step[0]} failed ({res.returncode}): {(res.stdout + res.stderr)[-2000:]}")
    return path, password
