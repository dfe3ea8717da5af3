"""Keeping secrets out of the texts users see: exception messages, log records, ``repr()`` and CLI output.

The one home for what counts as a secret (a property or option named like a password, secret, token or key
material) and for the redactions applied where such texts are built: a JAAS string with its option values
hidden, a URL without its user info, a mapping of properties with the secret ones masked. Issue 34: such
errors land in Spark driver logs and CI output, so a password must never be echoed, not even in part.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["REDACTED", "is_secret_name", "redact_jaas", "redact_mapping", "redact_text", "redact_url"]

#: What stands in for a hidden value.
REDACTED = "[redacted]"

# Java's client marks these as ConfigDef.Type.PASSWORD (ssl.key.password, ssl.keystore.password,
# ssl.truststore.password, sasl.jaas.config, sasl.oauthbearer.client.credentials.client.secret, ...);
# librdkafka's sasl.password, Confluent's basic.auth.user.info and bearer.auth.token, PEM key material
# (ssl.keystore.key, ssl.key.pem), and the JAAS options password / clientSecret / secretKey.
_SECRET_WORDS = re.compile(r"(?i)(password|passwd|secret|token|credential|jaas|user[._]?info|private|"
                           r"(^|[._])key$|keystore\.key|key\.pem|accesskey|secretkey|sessiontoken)")
# Names that contain one of the words above but hold no secret (a path, a flag, a URL, a length of time).
_NOT_SECRET = re.compile(r"(?i)(\.location$|\.type$|\.source$|endpoint\.url$|\.ms$|\.sec$|\.lifetime|"
                         r"usekeytab|keytab$|tokenauth|token\.endpoint|\.url$)")


def is_secret_name(name: str) -> bool:
    """True for a property or option whose value is a secret (``ssl.key.password``, ``sasl.jaas.config``,
    ``basic.auth.user.info``, JAAS ``password`` / ``clientSecret``); False for paths and flags next to them
    (``ssl.keystore.location``, ``useKeyTab``)."""
    return bool(_SECRET_WORDS.search(name)) and not _NOT_SECRET.search(name)


def redact_url(url: str) -> str:
    """``url`` without its user info (``http://user:secret@host:8081/x`` -> ``http://host:8081/x``); several
    comma-separated URLs each lose theirs."""
    return ",".join(_one_url(u) for u in url.split(","))


def _one_url(url: str) -> str:
    try:
        parts = urllib.parse.urlsplit(url.strip())
    except ValueError:
        return REDACTED if "@" in url else url
    if "@" not in parts.netloc:
        return url
    netloc = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


# key = "quoted" | 'quoted' | bare word (a quote left open runs to the end of the text).
_JAAS_OPTION = re.compile(r"""([A-Za-z0-9_.\-]+)(\s*=\s*)("(?:[^"\\]|\\.)*("|$)|'(?:[^'\\]|\\.)*('|$)|[^\s;"']+)""",
                          re.DOTALL)


def redact_jaas(text: str) -> str:
    """A ``sasl.jaas.config`` string fit to show: every option's value hidden (``password="..."`` ->
    ``password=[redacted]``), and a quoted string that is no option's value (or left open) hidden too.
    Only class names, control flags and option names remain."""
    out = _JAAS_OPTION.sub(lambda m: f"{m.group(1)}={_HIDE}", text)
    # A stray quoted string (no key before it) may still be a password typed in the wrong place.
    out = re.sub(r""""(?:[^"\\]|\\.)*("|$)|'(?:[^'\\]|\\.)*('|$)""", _HIDE, out, flags=re.DOTALL)
    # So may a bare word that is no class name, control flag or option name (one followed by "=").
    out = re.sub(r"(?<![^\s;=\x00])[^\s;=\x00]+(?![^\s;=\x00])(?!\s*=)", _bare_word, out)
    return out.replace(_HIDE, REDACTED)


_HIDE = "\x00"
_SHOWN_WORDS = re.compile(r"(?i)required|requisite|sufficient|optional|[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)+")


def _bare_word(m: re.Match[str]) -> str:
    return m.group(0) if _SHOWN_WORDS.fullmatch(m.group(0)) else _HIDE


def redact_mapping(props: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``props`` with every secret-named value replaced by :data:`REDACTED` (and URLs' user info
    dropped), for a ``repr()`` or a log line."""
    out: dict[str, Any] = {}
    for key, value in props.items():
        if isinstance(key, str) and is_secret_name(key) and value is not None:
            out[key] = REDACTED
        elif isinstance(value, str) and "://" in value:
            out[key] = redact_url(value)
        else:
            out[key] = value
    return out


def redact_text(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every occurrence of the given secret values replaced (for a text built from parts a
    peer chose, e.g. a server's error message that may echo the credentials it was sent)."""
    for secret in secrets:
        if secret and len(secret) >= 3:
            text = text.replace(secret, REDACTED)
    return text
