"""Java key and trust stores read without a JDK: JKS (parsed here), PKCS#12 (``cryptography``) and PEM.

The Java client's ``ssl.truststore.*`` / ``ssl.keystore.*`` properties point at these files; Python's
:mod:`ssl` only loads PEM, so each store is turned into PEM text here. JKS is Sun's own format
(``sun.security.provider.JavaKeyStore``): a SHA-1 integrity digest keyed by the password and private keys
protected by Sun's SHA-1 keystream (``KeyProtector``), both simple enough to read with :mod:`hashlib`.
PKCS#12 needs real ciphers (keytool writes PBES2/AES-256 since JDK 12), so it goes through
``cryptography`` (``pip install "kafkawire[tls]"``).

As the JDK does (``keystore.type.compat``), a store declared ``JKS`` that is really PKCS#12 (or the other
way round) is read by what its first bytes say.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import struct
from dataclasses import dataclass
from pathlib import Path

from ..errors import KeyStoreError

__all__ = ["KeyStoreError", "PrivateKeyEntry", "StoreContents", "read_store", "store_format"]

_JKS_MAGIC = 0xFEEDFEED
_JCEKS_MAGIC = 0xCECECECE
# Sun's KeyProtector algorithm OID (1.3.6.1.4.1.42.2.17.1.1), DER-encoded.
_SUN_KEY_PROTECTOR_OID = bytes.fromhex("060a2b060104012a02110101")


@dataclass(frozen=True)
class PrivateKeyEntry:
    """A private key (PKCS#8 DER) and its certificate chain (DER, the key's own certificate first)."""

    alias: str
    key_der: bytes
    chain: tuple[bytes, ...]

    def key_pem(self) -> str:
        return _pem("PRIVATE KEY", self.key_der)

    def chain_pem(self) -> str:
        return "".join(_pem("CERTIFICATE", c) for c in self.chain)


@dataclass(frozen=True)
class StoreContents:
    """Every certificate of a store (trusted entries and key chains, DER) and its private keys."""

    certificates: tuple[bytes, ...]
    keys: tuple[PrivateKeyEntry, ...]

    def certificates_pem(self) -> str:
        return "".join(_pem("CERTIFICATE", c) for c in self.certificates)


def _pem(label: str, der: bytes) -> str:
    b64 = base64.b64encode(der).decode("ascii")
    lines = "\n".join(b64[i : i + 64] for i in range(0, len(b64), 64))
    return f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----\n"


def store_format(data: bytes) -> str:
    """``"JKS"``, ``"JCEKS"``, ``"PKCS12"`` (a DER SEQUENCE) or ``"PEM"`` from the first bytes of a store."""
    if len(data) >= 4 and struct.unpack(">I", data[:4])[0] == _JKS_MAGIC:
        return "JKS"
    if len(data) >= 4 and struct.unpack(">I", data[:4])[0] == _JCEKS_MAGIC:
        return "JCEKS"
    if data[:1] == b"\x30":
        return "PKCS12"
    if b"-----BEGIN " in data[:4096]:
        return "PEM"
    return "unknown"


def read_store(path: str | Path, store_type: str, password: str | None, *, key_password: str | None = None,
               what: str = "store") -> StoreContents:
    """Read a JKS or PKCS#12 store (``store_type`` as declared; the file's own format wins between the two).

    ``password`` checks a JKS file's integrity (skipped when None, as Java does for trust stores) and
    decrypts PKCS#12; ``key_password`` (default ``password``) decrypts JKS private keys. ``what`` names
    the property in error messages.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise KeyStoreError(f"{what}: cannot read {path}: {e.strerror or e}") from None
    found = store_format(data)
    declared = store_type.upper()
    if found == "JCEKS":
        raise KeyStoreError(f"{what}: {path} is a JCEKS store, which kafkawire does not read; convert it with "
                            "keytool -importkeystore -deststoretype PKCS12")
    if found == "JKS":
        return _read_jks(data, password, key_password if key_password is not None else password, what, path)
    if found == "PKCS12":
        return _read_pkcs12(data, password, what, path)
    if found == "PEM":
        raise KeyStoreError(f"{what}: {path} is a PEM file, not a {declared} store: declare its type PEM")
    raise KeyStoreError(f"{what}: {path} is not a {declared} store (its first bytes match no JKS or PKCS#12 file)")


# -------------------------------------------------------------------------------------------- JKS
class _Reader:
    def __init__(self, data: bytes, what: str) -> None:
        self.data, self.pos, self.what = data, 0, what

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise KeyStoreError(f"{self.what}: the JKS file is truncated")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def u16(self) -> int:
        return int(struct.unpack(">H", self.take(2))[0])

    def u32(self) -> int:
        return int(struct.unpack(">I", self.take(4))[0])

    def utf(self) -> str:
        # Java's modified UTF-8 equals UTF-8 for the aliases and type names keytool writes.
        return self.take(self.u16()).decode("utf-8", "replace")

    def blob(self) -> bytes:
        return self.take(self.u32())


def _java_password(password: str) -> bytes:
    # Java hashes a char[] password as big-endian UTF-16 code units.
    return password.encode("utf-16-be")


def _read_jks(data: bytes, password: str | None, key_password: str | None, what: str, path: object) -> StoreContents:
    r = _Reader(data, what)
    r.take(4)
    version = r.u32()
    if version not in (1, 2):
        raise KeyStoreError(f"{what}: {path} has JKS version {version}, expected 1 or 2")
    certificates: list[bytes] = []
    keys: list[PrivateKeyEntry] = []
    protected: list[tuple[str, bytes, tuple[bytes, ...]]] = []
    for _ in range(r.u32()):
        tag = r.u32()
        alias = r.utf()
        r.take(8)  # creation time
        if tag == 1:
            protected_key = r.blob()
            chain: list[bytes] = []
            for _ in range(r.u32()):
                if version == 2:
                    r.utf()  # certificate type, "X.509"
                chain.append(r.blob())
            protected.append((alias, protected_key, tuple(chain)))
            certificates.extend(chain)
        elif tag == 2:
            if version == 2:
                r.utf()
            certificates.append(r.blob())
        else:
            raise KeyStoreError(f"{what}: {path} holds a JKS entry of kind {tag} ({alias!r}), which is not a key or "
                                "certificate")
    body_end = r.pos
    digest = r.take(20)
    if password is not None:
        # sun.security.provider.JavaKeyStore: SHA-1(password, "Mighty Aphrodite", the whole store).
        expected = hashlib.sha1(_java_password(password) + b"Mighty Aphrodite" + data[:body_end]).digest()
        if not hmac.compare_digest(digest, expected):
            raise KeyStoreError(f"{what}: wrong password for {path} (the JKS integrity check failed)")
    for alias, protected_key, key_chain in protected:
        if key_password is None:
            raise KeyStoreError(f"{what}: {path} holds the private key {alias!r}; its password is needed")
        keys.append(PrivateKeyEntry(alias, _jks_unprotect(protected_key, key_password, what, alias), key_chain))
    return StoreContents(tuple(certificates), tuple(keys))


def _der_item(data: bytes, pos: int) -> tuple[int, int, int]:
    """(tag, start of content, end of content) of the DER item at ``pos``."""
    tag, length = data[pos], data[pos + 1]
    pos += 2
    if length & 0x80:
        n = length & 0x7F
        length = int.from_bytes(data[pos : pos + n], "big")
        pos += n
    return tag, pos, pos + length


def _jks_unprotect(blob: bytes, password: str, what: str, alias: str) -> bytes:
    """Decrypt a JKS private key: EncryptedPrivateKeyInfo with Sun's KeyProtector (sun.security.provider)."""
    try:
        tag, start, end = _der_item(blob, 0)  # EncryptedPrivateKeyInfo SEQUENCE
        atag, astart, aend = _der_item(blob, start)  # AlgorithmIdentifier
        if tag != 0x30 or atag != 0x30 or not blob[astart:aend].startswith(_SUN_KEY_PROTECTOR_OID):
            raise KeyStoreError(f"{what}: key {alias!r} is not protected with Sun's JKS algorithm")
        otag, ostart, oend = _der_item(blob, aend)
        if otag != 0x04:
            raise IndexError
    except IndexError:
        raise KeyStoreError(f"{what}: key {alias!r} is damaged") from None
    encrypted = blob[ostart:oend]
    salt, cipher, check = encrypted[:20], encrypted[20:-20], encrypted[-20:]
    pw = _java_password(password)
    # The keystream is SHA-1(password || previous block), starting from the salt; XOR with it decrypts.
    stream = bytearray()
    block = salt
    while len(stream) < len(cipher):
        block = hashlib.sha1(pw + block).digest()
        stream += block
    plain = bytes(a ^ b for a, b in zip(cipher, stream))
    if not hmac.compare_digest(hashlib.sha1(pw + plain).digest(), check):
        raise KeyStoreError(f"{what}: wrong key password for {alias!r} (ssl.key.password)")
    return plain


# ----------------------------------------------------------------------------------------- PKCS#12
def _read_pkcs12(data: bytes, password: str | None, what: str, path: object) -> StoreContents:
    from ..._optional import require

    require("cryptography", f"reading the PKCS#12 store {what}")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    try:
        loaded = pkcs12.load_pkcs12(data, None if password is None else password.encode("utf-8"))
    except ValueError as e:
        hint = "no password given" if password is None else "wrong password or damaged file"
        raise KeyStoreError(f"{what}: cannot read PKCS#12 {path} ({hint}: {e})") from None
    der = serialization.Encoding.DER
    chain = [c.certificate.public_bytes(der) for c in ([loaded.cert] if loaded.cert else [])]
    others = [c.certificate.public_bytes(der) for c in loaded.additional_certs]
    keys: tuple[PrivateKeyEntry, ...] = ()
    if loaded.key is not None:
        key_der = loaded.key.private_bytes(der, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        keys = (PrivateKeyEntry("", key_der, tuple(chain + others)),)
    return StoreContents(tuple(chain + others), keys)
