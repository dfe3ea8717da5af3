"""A real MIT Kerberos KDC on loopback, with its own realm, for the SASL GSSAPI tests.

``start_kdc()`` writes a ``krb5.conf`` and a ``kdc.conf`` into a temporary directory, creates the realm's
database with ``kdb5_util``, and runs ``krb5kdc`` in the foreground on a free loopback port (TCP: the
``krb5.conf`` sets ``udp_preference_limit = 1``, and no DNS: ``rdns``/``dns_canonicalize_hostname`` are
off, so ``kafka/localhost`` stays ``kafka/localhost``). Principals and their keytabs are made with
``kadmin.local`` (:meth:`KerberosKdc.add_principal`). Nothing outside that directory is touched: every
MIT tool run here gets ``KRB5_CONFIG`` / ``KRB5_KDC_PROFILE`` pointing into it, and :attr:`KerberosKdc.env`
gives a client process the same view (the Java broker gets ``-Djava.security.krb5.conf``).

The programs come from Debian's ``krb5-kdc``, ``krb5-admin-server`` and ``krb5-user`` packages (``./dev``
installs them). The KDC runs like the brokers (:class:`~.brokers.SubprocessBroker`): killed with the process
that started it, its directory removed on :meth:`~KerberosKdc.stop`.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
from pathlib import Path
from typing import Any

from .brokers import BrokerStartError, SubprocessBroker, free_port

__all__ = ["DEFAULT_REALM", "KerberosKdc", "KerberosKdcError", "service_host", "start_kdc"]

#: The realm of a test KDC unless told otherwise.
DEFAULT_REALM = "KAFKAWIRE.TEST"

_TOOLS = {"krb5kdc": "krb5-kdc", "kdb5_util": "krb5-kdc", "kadmin.local": "krb5-admin-server"}
# A principal or realm goes into kadmin.local's command line and the config files: keep to plain names.
_NAME = re.compile(r"[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)?")
_REALM = re.compile(r"[A-Z0-9.-]+")
# How kadmin.local reports a failed query (it still exits 0): "<function>: <message> while <doing> ...".
_KADMIN_ERROR = re.compile(r"^[a-z_]+: .+ while ", re.MULTILINE)


class KerberosKdcError(BrokerStartError):
    """The KDC could not be set up or a ``kadmin.local`` command failed (the message has its output)."""


def _tool(name: str) -> str:
    for directory in ("", "/usr/sbin", "/usr/local/sbin", "/sbin"):
        path = shutil.which(name) if not directory else str(Path(directory) / name)
        if path and os.access(path, os.X_OK):
            return path
    raise KerberosKdcError(f"{name} is not installed: the test KDC needs MIT Kerberos "
                           f"(Debian: apt-get install {_TOOLS.get(name, 'krb5-kdc')})")


def service_host(host: str) -> str:
    """The host name a Kerberos client puts in a broker's service principal when it connects to ``host``.

    Kafka's Java client uses the socket address's host name, which for an IP literal is its reverse lookup
    (``127.0.0.1`` -> ``localhost``); kafkawire's GSSAPI mechanism does the same, so a test broker on
    ``127.0.0.1`` needs the principal ``kafka/<this>``.
    """
    from ..client.net.kerberos import canonical_host

    return canonical_host(host)


class KerberosKdc(SubprocessBroker):
    """An MIT ``krb5kdc`` for one realm on ``host:port`` (TCP), with its files in :attr:`log_dir`.

    Attributes: ``realm``, ``krb5_conf`` (the client configuration: ``KRB5_CONFIG`` for MIT's library,
    ``-Djava.security.krb5.conf`` for Java), ``env`` (the variables a client process needs). Principals:
    :meth:`add_principal` (random key, exported to a keytab, or a password), :meth:`keytab`.
    """

    kind = "kdc"

    def __init__(self, *, realm: str = DEFAULT_REALM, startup_timeout: float = 30.0, **kwargs: Any) -> None:
        super().__init__(startup_timeout=startup_timeout, **kwargs)
        if not _REALM.fullmatch(realm):
            raise ValueError(f"realm {realm!r}: use upper-case letters, digits, '.' and '-'")
        self.realm = realm
        self.krb5_conf = self.log_dir / "krb5.conf"
        self.kdc_conf = self.log_dir / "kdc.conf"
        self._database = self.log_dir / "principal"
        self._keytabs: dict[str, Path] = {}
        self._created = False
        self._env = {**self.env, **(self._env or {})}

    @property
    def env(self) -> dict[str, str]:
        """What a process using this realm needs in its environment: ``KRB5_CONFIG`` (and the KDC's own
        profile, and a credential cache in this directory so no user's default cache is touched)."""
        return {
            "KRB5_CONFIG": str(self.krb5_conf),
            "KRB5_KDC_PROFILE": str(self.kdc_conf),
            "KRB5CCNAME": f"FILE:{self.log_dir / 'ccache'}",
        }

    def principal(self, name: str) -> str:
        """``name@REALM`` (``name`` as given when it already has a realm)."""
        return name if "@" in name else f"{name}@{self.realm}"

    # configuration ---------------------------------------------------------------------------------
    def _write_config(self) -> None:
        realm, where = self.realm, f"{self.host}:{self.port}"
        self.krb5_conf.write_text(f"""\
[libdefaults]
    default_realm = {realm}
    dns_lookup_realm = false
    dns_lookup_kdc = false
    dns_canonicalize_hostname = false
    rdns = false
    # TCP only: one connection per exchange, no UDP retransmission timers on a loaded machine.
    udp_preference_limit = 1
    ticket_lifetime = 24h
    renew_lifetime = 7d
    forwardable = true
    kdc_timeout = 5s

[realms]
    {realm} = {{
        kdc = {where}
    }}

[domain_realm]
    localhost = {realm}
    .localhost = {realm}
""")
        self.kdc_conf.write_text(f"""\
[kdcdefaults]
    kdc_listen = {where}
    kdc_tcp_listen = {where}

[realms]
    {realm} = {{
        database_name = {self._database}
        key_stash_file = {self.log_dir / 'stash'}
        acl_file = {self.log_dir / 'kadm5.acl'}
        kdc_listen = {where}
        kdc_tcp_listen = {where}
        max_life = 24h
        max_renewable_life = 7d
        # Both sides (MIT's library and Java 17) have these.
        supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
        default_principal_flags = +preauth
    }}

[logging]
    kdc = FILE:{self.log_dir / 'kdc.log'}
    admin_server = FILE:{self.log_dir / 'kadmin.log'}
""")
        (self.log_dir / "kadm5.acl").write_text("")

    def _run(self, *argv: str, what: str) -> str:
        env = {**os.environ, **self.env}
        try:
            res = subprocess.run(list(argv), capture_output=True, text=True, env=env, timeout=60,
                                 stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise KerberosKdcError(f"{what} did not finish within 60 s") from None
        if res.returncode != 0:
            raise KerberosKdcError(f"{what} failed ({res.returncode}): {(res.stdout + res.stderr).strip()[-2000:]}")
        return res.stdout + res.stderr

    def _create_database(self) -> None:
        # -s: a stash file, so krb5kdc starts without asking for the master password.
        self._run(_tool("kdb5_util"), "create", "-s", "-r", self.realm, "-P", secrets.token_hex(16),
                  what="kdb5_util create")
        self._created = True

    # principals ------------------------------------------------------------------------------------
    def kadmin(self, query: str, *, check: bool = True) -> str:
        """Run one ``kadmin.local`` query on this realm's database and return its output.

        kadmin.local exits 0 when the query fails; its error line (``add_principal: Principal or policy
        already exists while creating ...``) is what says so: with ``check``, such a line raises.
        """
        out = self._run(_tool("kadmin.local"), "-r", self.realm, "-q", query, what=f"kadmin.local {query!r}")
        failed = [line for line in out.splitlines() if _KADMIN_ERROR.match(line)]
        if check and failed:
            raise KerberosKdcError(f"kadmin.local {query!r} failed: {' '.join(failed)}")
        return out

    def has_principal(self, name: str) -> bool:
        """Whether the realm's database holds ``name``."""
        return not _KADMIN_ERROR.search(self.kadmin(f"getprinc {self.principal(name)}", check=False))

    def add_principal(self, name: str, *, password: str | None = None, keytab: bool | str | Path = True) -> str:
        """Create ``name`` (``user`` or ``service/host``) in the realm and return ``name@REALM``.

        With ``password`` it gets that password; otherwise a random key, exported to a keytab (``keytab``:
        ``True`` for a file in this KDC's directory, or a path) that :meth:`keytab` returns. A principal
        that exists already (two brokers on one host share ``kafka/localhost``) keeps its key: the new keytab
        gets a copy, and earlier keytabs stay valid.
        """
        if not _NAME.fullmatch(name.split("@")[0]):
            raise ValueError(f"principal {name!r}: use letters, digits, '.', '_', '-' and one '/'")
        principal = self.principal(name)
        existed = self.has_principal(principal)
        if existed:
            if password is not None:
                raise KerberosKdcError(f"{principal} exists already")
        elif password is not None:
            if any(c in password for c in "\"'\n\\"):
                raise ValueError("the password cannot carry quotes, backslashes or new lines")
            self.kadmin(f'addprinc -pw "{password}" {principal}')
        else:
            self.kadmin(f"addprinc -randkey {principal}")
        if keytab is not False and password is None:
            path = (self.log_dir / (re.sub(r"[^A-Za-z0-9.-]", "_", name.split("@")[0]) + ".keytab")
                    if keytab is True else Path(keytab))
            # ktadd gives the principal a fresh random key and writes it: the keytab is its only copy. For a
            # principal that has a keytab already, -norandkey exports the key it has.
            self.kadmin(f"ktadd -k {path} {'-norandkey ' if existed else ''}{principal}")
            self._keytabs[principal] = path
        return principal

    def keytab(self, name: str) -> Path:
        """The keytab :meth:`add_principal` wrote for ``name``."""
        try:
            return self._keytabs[self.principal(name)]
        except KeyError:
            raise KeyError(f"no keytab was made for {self.principal(name)}; known: {sorted(self._keytabs)}") from None

    # lifecycle -------------------------------------------------------------------------------------
    def command(self) -> list[str]:
        # -n: stay in the foreground (the process handling needs the KDC itself as its child).
        return [_tool("krb5kdc"), "-n", "-r", self.realm]

    def start(self) -> KerberosKdc:
        with self._lock:
            if self.running:
                return self
            if not self._created:
                if not self._fixed_port:
                    self.port = free_port(self.host)
                    self._fixed_port = True  # the database and krb5.conf are made for this port
                self._write_config()
                self._create_database()
            self._env = {**self.env, **(self._env or {})}
            super().start()
            return self

    def _start_failure(self, exit_status: int | None) -> BrokerStartError:
        error = super()._start_failure(exit_status)
        log = self.log_dir / "kdc.log"
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:]) if log.exists() else ""
        return KerberosKdcError(f"{error}\nkdc.log:\n{tail}" if tail else str(error))


def start_kdc(*, realm: str = DEFAULT_REALM, **options: Any) -> KerberosKdc:
    """Start a :class:`KerberosKdc` (``realm``; ``host``, ``port``, ``log_dir``, ``keep_files`` as for the
    brokers) and return it; stop it with :meth:`~KerberosKdc.stop` or use it as a context manager."""
    kdc = KerberosKdc(realm=realm, **options)
    try:
        return kdc.start()
    except BaseException:
        kdc.stop()
        raise

