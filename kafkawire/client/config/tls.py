"""``ssl.*`` properties (Java's trust and key stores, PEM, librdkafka's ``ssl.ca.location`` etc.) -> an
:class:`ssl.SSLContext`."""

from __future__ import annotations

import os
import ssl
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ..errors import ConfigError
from .values import bool_value

__all__ = ["ssl_context_from_properties"]

_TLS_VERSIONS = {"TLSV1.2": ssl.TLSVersion.TLSv1_2, "TLSV1.3": ssl.TLSVersion.TLSv1_3, "TLS": None}


def _read_text(prop: str, location: str) -> str:
    try:
        return Path(location).read_text()
    except OSError as e:
        raise ConfigError(prop, f"cannot read {location}: {e.strerror or e}") from None


def _looks_like_pem(location: str) -> bool:
    from ..net.keystores import store_format

    try:
        with open(location, "rb") as f:
            return store_format(f.read(4096)) == "PEM"
    except OSError:
        return False  # reported by the reader, with the property's name


def _load_chain(context: ssl.SSLContext, chain_pem: str, key_pem: str, password: str | None, prop: str) -> None:
    """load_cert_chain only reads files: write the PEM to a private temporary file and remove it at once."""
    fd, path = tempfile.mkstemp(prefix="kafkawire-key-", suffix=".pem")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(key_pem if key_pem.endswith("\n") else key_pem + "\n")
            f.write(chain_pem)
        context.load_cert_chain(path, password=password)
    except ssl.SSLError as e:
        raise ConfigError(prop, f"the private key and certificate do not load ({e.reason or e})") from None
    finally:
        os.unlink(path)


def ssl_context_from_properties(props: Mapping[str, str]) -> ssl.SSLContext:
    """An :class:`ssl.SSLContext` from ``ssl.*`` properties (Java's, and librdkafka's ``ssl.ca.location`` etc.).

    No trust store means the system's CAs, as the JDK's ``cacerts``; ``ssl.endpoint.identification.algorithm``
    empty turns the host-name check off (the certificate chain is still verified).
    """
    for prop, accepted in (("ssl.keymanager.algorithm", ("SunX509", "PKIX")),
                           ("ssl.trustmanager.algorithm", ("PKIX", "SunX509"))):
        if props.get(prop) and props[prop] not in accepted:
            raise ConfigError(prop, f"{props[prop]!r} is a Java algorithm kafkawire does not have (only {accepted})")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    identification = props.get("ssl.endpoint.identification.algorithm", "https").strip().lower()
    if identification not in ("https", "", "none"):
        raise ConfigError("ssl.endpoint.identification.algorithm", f"expected https or empty, not {identification!r}")
    context.check_hostname = identification == "https"
    if "enable.ssl.certificate.verification" in props and \
            not bool_value("enable.ssl.certificate.verification", props["enable.ssl.certificate.verification"]):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    _set_protocols(context, props)
    _load_trust(context, props)
    _load_identity(context, props)
    return context


def _load_trust(context: ssl.SSLContext, props: Mapping[str, str]) -> None:
    """The certificates to trust: a trust store (JKS, PKCS12, PEM), inline PEM or librdkafka's CA file; with none of
    them, the system's."""
    from ..net.keystores import KeyStoreError, read_store

    trusted = False
    location = props.get("ssl.truststore.location") or ""
    store_type = (props.get("ssl.truststore.type") or "JKS").upper()
    if store_type not in ("JKS", "PKCS12", "PEM"):
        raise ConfigError("ssl.truststore.type", f"expected JKS, PKCS12 or PEM, not {store_type!r}")
    try:
        if props.get("ssl.truststore.certificates"):
            if location:
                raise ConfigError("ssl.truststore.certificates", "give either this or ssl.truststore.location")
            if store_type != "PEM":
                raise ConfigError("ssl.truststore.type", "must be PEM with ssl.truststore.certificates")
            context.load_verify_locations(cadata=props["ssl.truststore.certificates"])
            trusted = True
        elif location:
            if "ssl.truststore.type" not in props and _looks_like_pem(location):
                store_type = "PEM"  # Java would insist on ssl.truststore.type=PEM; the file says what it is
            if store_type == "PEM":
                context.load_verify_locations(cadata=_read_text("ssl.truststore.location", location))
            else:
                contents = read_store(location, store_type, props.get("ssl.truststore.password") or None,
                                      what="ssl.truststore.location")
                if not contents.certificates:
                    raise ConfigError("ssl.truststore.location", f"{location} holds no certificate")
                context.load_verify_locations(cadata=contents.certificates_pem())
            trusted = True
        for prop in ("ssl.ca.location", "ssl.ca.pem"):  # librdkafka
            if props.get(prop):
                pem = _read_text(prop, props[prop]) if prop == "ssl.ca.location" else props[prop]
                context.load_verify_locations(cadata=pem)
                trusted = True
    except ssl.SSLError as e:
        raise ConfigError("ssl.truststore.location", f"no usable certificate ({e.reason or e})") from None
    except KeyStoreError as e:
        prop = "ssl.truststore.password" if "password" in str(e) else "ssl.truststore.location"
        raise ConfigError(prop, str(e).partition(": ")[2] or str(e)) from None
    if not trusted:
        context.load_default_certs(ssl.Purpose.SERVER_AUTH)


def _load_identity(context: ssl.SSLContext, props: Mapping[str, str]) -> None:
    """The client's own key and certificate chain (mutual TLS): a key store, inline PEM or librdkafka's files."""
    from ..net.keystores import KeyStoreError, read_store

    key_password = props.get("ssl.key.password") or None
    ks_location = props.get("ssl.keystore.location") or ""
    ks_type = (props.get("ssl.keystore.type") or "JKS").upper()
    if ks_type not in ("JKS", "PKCS12", "PEM"):
        raise ConfigError("ssl.keystore.type", f"expected JKS, PKCS12 or PEM, not {ks_type!r}")
    if props.get("ssl.keystore.key") or props.get("ssl.keystore.certificate.chain"):
        if not (props.get("ssl.keystore.key") and props.get("ssl.keystore.certificate.chain")):
            missing = "ssl.keystore.key" if not props.get("ssl.keystore.key") else "ssl.keystore.certificate.chain"
            raise ConfigError(missing, "needed with the other of ssl.keystore.key / ssl.keystore.certificate.chain")
        _load_chain(context, props["ssl.keystore.certificate.chain"], props["ssl.keystore.key"], key_password,
                    "ssl.keystore.key")
    elif ks_location:
        if "ssl.keystore.type" not in props and _looks_like_pem(ks_location):
            ks_type = "PEM"
        if ks_type == "PEM":
            try:
                context.load_cert_chain(ks_location, password=key_password)
            except (ssl.SSLError, OSError) as e:
                raise ConfigError("ssl.keystore.location", f"{ks_location} holds no usable key and certificate "
                                  f"({getattr(e, 'reason', None) or e})") from None
        else:
            try:
                store = read_store(ks_location, ks_type, props.get("ssl.keystore.password") or None,
                                   key_password=key_password or props.get("ssl.keystore.password") or None,
                                   what="ssl.keystore.location")
            except KeyStoreError as e:
                prop = ("ssl.key.password" if "ssl.key.password" in str(e)
                        else "ssl.keystore.password" if "password" in str(e) else "ssl.keystore.location")
                raise ConfigError(prop, str(e).partition(": ")[2] or str(e)) from None
            if len(store.keys) != 1:
                raise ConfigError("ssl.keystore.location", f"{ks_location} holds {len(store.keys)} private keys; "
                                  "kafkawire needs exactly one")
            entry = store.keys[0]
            _load_chain(context, entry.chain_pem(), entry.key_pem(), None, "ssl.keystore.location")
    elif props.get("ssl.certificate.location") and props.get("ssl.key.location"):  # librdkafka
        try:
            context.load_cert_chain(props["ssl.certificate.location"], props["ssl.key.location"], key_password)
        except (ssl.SSLError, OSError) as e:
            raise ConfigError("ssl.key.location", f"no usable key and certificate ({e})") from None


def _set_protocols(context: ssl.SSLContext, props: Mapping[str, str]) -> None:
    names = [p.strip() for p in (props.get("ssl.enabled.protocols") or "").split(",") if p.strip()]
    prop = "ssl.enabled.protocols"
    if not names and props.get("ssl.protocol"):
        names, prop = [props["ssl.protocol"].strip()], "ssl.protocol"
    versions: list[ssl.TLSVersion] = []
    for name in names:
        if name.upper() not in _TLS_VERSIONS:
            raise ConfigError(prop, f"{name!r} is not TLSv1.2 or TLSv1.3")
        version = _TLS_VERSIONS[name.upper()]
        if version is not None:
            versions.append(version)
    if versions and prop == "ssl.enabled.protocols":
        context.minimum_version, context.maximum_version = min(versions), max(versions)
    elif versions:
        # ssl.protocol names the newest version to offer; older ones stay allowed, as in Java.
        context.maximum_version = versions[0]
