"""``sasl.jaas.config``: the JAAS login-module string the Java client takes, and the login modules it names."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import ConfigError
from .redact import REDACTED, is_secret_name, redact_jaas

__all__ = ["KRB5_MODULE", "MSK_IAM_CLIENT_HANDLER", "MSK_IAM_MODULE", "MSK_OAUTH_HANDLER", "OAUTH_LOGIN_HANDLERS",
           "OAUTH_MODULE", "PLAIN_MODULE", "SCRAM_MODULE", "JaasLoginModule", "parse_jaas_config"]

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
KRB5_MODULE = "com.sun.security.auth.module.Krb5LoginModule"
# AWS's aws-msk-iam-auth library: its OAUTHBEARER login callback handler, and the AWS_MSK_IAM mechanism's parts.
MSK_OAUTH_HANDLER = "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler"
MSK_IAM_MODULE = "software.amazon.msk.auth.iam.IAMLoginModule"
MSK_IAM_CLIENT_HANDLER = "software.amazon.msk.auth.iam.IAMClientCallbackHandler"
# The login callback handlers that mean "client-credentials flow" (KIP-768; moved out of .secured in 3.4).
OAUTH_LOGIN_HANDLERS = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
)


@dataclass(frozen=True)
class JaasLoginModule:
    """One entry of ``sasl.jaas.config``: ``<class> <flag> key=value ...;``."""

    class_name: str
    flag: str
    options: dict[str, str] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        # The options hold the password (issue 34): only non-secret values are shown.
        shown = {k: (REDACTED if is_secret_name(k) else v) for k, v in self.options.items()}
        return f"JaasLoginModule(class_name={self.class_name!r}, flag={self.flag!r}, options={shown!r})"


def _jaas_tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) tokens: ``word``, ``string`` (quoted, escapes resolved), or the punctuation ``=`` / ``;``.

    Kafka's JaasConfig reads the string with java.io.StreamTokenizer: words, "..." or '...' strings with
    backslash escapes, and // or /* */ comments.
    """
    out: list[tuple[str, str]] = []
    i, n = 0, len(text)
    escapes = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c in "=;":
            out.append((c, c))
            i += 1
        elif c in "\"'":
            opened, buf, i = i, [], i + 1
            while i < n and text[i] != c:
                if text[i] == "\\" and i + 1 < n:
                    buf.append(escapes.get(text[i + 1], text[i + 1]))
                    i += 2
                else:
                    buf.append(text[i])
                    i += 1
            if i >= n:
                # Not a character of the value: it is likely a password (issue 34).
                raise ConfigError("sasl.jaas.config", f"unterminated quoted value (the {c} opened at "
                                  f"character {opened} is never closed)")
            out.append(("string", "".join(buf)))
            i += 1
        else:
            start = i
            while i < n and not text[i].isspace() and text[i] not in "=;\"'":
                i += 1
            out.append(("word", text[start:i]))
    return out


def _class_shown(word: str) -> str:
    """A login module class name fit to show: a dotted Java name; any other word may be a misplaced password."""
    return word if _JAVA_CLASS.fullmatch(word) else REDACTED


_JAVA_CLASS = re.compile(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)+")


def parse_jaas_config(text: str) -> JaasLoginModule:
    """Parse a client's ``sasl.jaas.config``: exactly one login module, as Kafka requires of a client."""
    tokens = _jaas_tokens(text)
    if len(tokens) == 1 and tokens[0][0] == "string":
        raise ConfigError("sasl.jaas.config", "the whole value is one quoted string: remove the quotes around it "
                          "(a .properties file and Spark's kafka.sasl.jaas.config take it unquoted)")
    modules: list[JaasLoginModule] = []
    pos = 0
    while pos < len(tokens):
        if pos + 1 >= len(tokens) or tokens[pos][0] != "word" or tokens[pos + 1][0] != "word":
            # The text is shown with every option value hidden (issue 34: it holds the password).
            raise ConfigError("sasl.jaas.config", "expected '<LoginModule class> required key=\"value\" ...;', "
                              f"got {redact_jaas(text)!r}")
        name, flag = tokens[pos][1], tokens[pos + 1][1]
        if not _JAVA_CLASS.fullmatch(name):
            raise ConfigError("sasl.jaas.config", "expected a login module class name (such as "
                              f"{PLAIN_MODULE}) first, got {redact_jaas(text)!r}")
        if flag.lower() not in ("required", "requisite", "sufficient", "optional"):
            raise ConfigError("sasl.jaas.config", f"invalid control flag after {_class_shown(name)} (expected "
                              "required, requisite, sufficient or optional)")
        pos += 2
        options: dict[str, str] = {}
        while pos < len(tokens) and tokens[pos][0] != ";":
            if pos + 2 >= len(tokens) or tokens[pos][0] != "word" or tokens[pos + 1][0] != "=" or \
                    tokens[pos + 2][0] not in ("word", "string"):
                # Where, not what: the token at fault may be a password (issue 34).
                after = f"option {list(options)[-1]!r}" if options else "the control flag"
                raise ConfigError("sasl.jaas.config", f"expected key=\"value\" options in "
                                  f"{_class_shown(name)}, after {after}")
            options[tokens[pos][1]] = tokens[pos + 2][1]
            pos += 3
        if pos >= len(tokens):
            raise ConfigError("sasl.jaas.config", "the login module entry must end with ';'")
        pos += 1
        modules.append(JaasLoginModule(name, flag.lower(), options))
    if len(modules) != 1:
        raise ConfigError("sasl.jaas.config", f"JAAS config property contains {len(modules)} login modules, "
                          "should be 1 module")
    return modules[0]
