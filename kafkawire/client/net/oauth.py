"""OAUTHBEARER token providers: the OIDC client-credentials flow (KIP-768) and Kafka's unsecured tokens.

A provider is a callable returning the token for a new connection (:class:`~.sasl.SaslConfig`);
:class:`ClientCredentialsTokenProvider` is what the Java client's ``OAuthBearerLoginCallbackHandler`` does
with ``sasl.oauthbearer.token.endpoint.url``: POST ``grant_type=client_credentials`` with HTTP Basic
credentials to the identity provider and keep the ``access_token`` until 80 % of its lifetime has passed
(the Java login refresh window, ``sasl.login.refresh.window.factor``). :func:`unsecured_token` builds the
unsigned JWT Kafka's ``OAuthBearerUnsecuredLoginCallbackHandler`` makes from ``unsecuredLoginStringClaim_sub``
(for development brokers that use the unsecured validator). :class:`MskIamTokenProvider` is AWS MSK IAM
authentication over OAUTHBEARER (what AWS's ``IAMOAuthBearerLoginCallbackHandler`` does for the Java client),
on AWS's ``aws-msk-iam-sasl-signer-python`` (``pip install "kafkawire[msk]"``).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from ..config.redact import redact_text, redact_url
from ..errors import AuthenticationFailedError

__all__ = ["ClientCredentialsTokenProvider", "MskIamTokenProvider", "msk_region", "unsecured_token"]

# sasl.login.refresh.window.factor's default: refresh once 80 % of the token's lifetime has passed.
_REFRESH_FACTOR = 0.8


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def unsecured_token(subject: str, *, lifetime_s: float = 3600, scope: list[str] | None = None,
                    claims: dict[str, Any] | None = None) -> str:
    """An unsigned JWS (``alg: none``) with ``sub``, ``iat``, ``exp`` (and ``scope``): what Kafka's
    unsecured login handler sends, accepted only by a broker using the unsecured validator."""
    now = time.time()
    payload: dict[str, Any] = {"sub": subject, "iat": int(now), "exp": int(now + lifetime_s)}
    if scope:
        payload["scope"] = scope
    payload.update(claims or {})
    header = _b64url(json.dumps({"alg": "none"}).encode())
    return f"{header}.{_b64url(json.dumps(payload).encode())}."


def _jwt_expiry(token: str) -> float | None:
    """The ``exp`` claim of a JWT (seconds since the epoch), or None when the token is not a readable JWT."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return float(claims["exp"])
    except (IndexError, ValueError, KeyError, TypeError):
        return None


class ClientCredentialsTokenProvider:
    """Tokens from an OAuth 2 token endpoint with the client-credentials grant (RFC 6749 section 4.4, KIP-768).

    ``token_endpoint_url`` is ``http(s)://...`` or ``file:...`` (a file holding the token, re-read when it
    expires, as the Java client allows). The token is cached and shared by every connection until 80 %
    of its lifetime (``expires_in``, else the JWT's ``exp``) has passed.
    """

    def __init__(self, token_endpoint_url: str, client_id: str | None = None, client_secret: str | None = None,
                 *, scope: str | None = None, timeout_s: float = 10.0) -> None:
        scheme = urllib.parse.urlsplit(token_endpoint_url).scheme.lower()
        if scheme not in ("http", "https", "file"):
            raise ValueError(f"sasl.oauthbearer.token.endpoint.url must be http(s):// or file:, not "
                             f"{redact_url(token_endpoint_url)!r}")
        if scheme != "file" and (not client_id or not client_secret):
            raise ValueError("the OAuth client-credentials flow needs a client id and secret "
                             "(sasl.oauthbearer.client.credentials.client.id/.secret, or clientId/clientSecret "
                             "in sasl.jaas.config)")
        self.url = token_endpoint_url
        self.scheme = scheme
        self.client_id = client_id
        self._secret = client_secret
        self.scope = scope
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._token: str | None = None
        self._refresh_at = 0.0

    def __repr__(self) -> str:
        return f"ClientCredentialsTokenProvider({redact_url(self.url)!r}, client_id={self.client_id!r})"

    def __call__(self) -> str:
        with self._lock:
            if self._token is None or time.time() >= self._refresh_at:
                self._token, lifetime = self._retrieve()
                self._refresh_at = time.time() + (lifetime * _REFRESH_FACTOR if lifetime else 0.0)
            return self._token

    def _retrieve(self) -> tuple[str, float | None]:
        if self.scheme == "file":
            path = urllib.request.url2pathname(urllib.parse.urlsplit(self.url).path)
            token = Path(path).read_text().strip()
        else:
            token, expires_in = self._post()
            if expires_in is not None:
                return token, expires_in
        exp = _jwt_expiry(token)
        return token, None if exp is None else max(0.0, exp - time.time())

    def _post(self) -> tuple[str, float | None]:
        form = {"grant_type": "client_credentials"}
        if self.scope:
            form["scope"] = self.scope
        # Like the Java client (HttpAccessTokenRetriever): id and secret URL-encoded, then HTTP Basic.
        pair = f"{urllib.parse.quote(self.client_id or '')}:{urllib.parse.quote(self._secret or '')}"
        basic = base64.b64encode(pair.encode()).decode("ascii")
        request = urllib.request.Request(
            self.url,
            data=urllib.parse.urlencode(form).encode(),
            headers={
                "Authorization": "Basic " + basic,
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "application/json",
            },
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                body = response.read()
        except urllib.error.HTTPError as e:
            # The endpoint's text may echo what it was sent (the client id and secret): scrubbed (issue 34).
            detail = redact_text(e.read()[:500].decode("utf-8", "replace"), (self._secret, pair, basic))
            raise AuthenticationFailedError(f"token endpoint {redact_url(self.url)} answered HTTP {e.code}: "
                                            f"{detail}") from None
        except (urllib.error.URLError, OSError) as e:
            raise AuthenticationFailedError(f"token endpoint {redact_url(self.url)} unreachable: "
                                            f"{redact_text(str(e), (self._secret, pair, basic))}") from None
        try:
            answer = json.loads(body)
        except ValueError:
            answer = None
        if not isinstance(answer, dict) or "access_token" not in answer:
            # Not the body: a token under another name would be shown (issue 34); its keys say enough.
            got = (f"keys {', '.join(sorted(map(str, answer))[:10])}" if isinstance(answer, dict)
                   else "not a JSON object")
            raise AuthenticationFailedError(f"token endpoint {redact_url(self.url)} sent no access_token ({got})")
        token = answer["access_token"]
        expires = answer.get("expires_in")
        return str(token), float(expires) if isinstance(expires, (int, float)) else None


# MSK brokers are named b-1.<cluster>.<id>.c2.kafka.<region>.amazonaws.com (serverless: kafka-serverless).
_MSK_HOST = re.compile(r"\.kafka(?:-serverless)?\.([a-z]{2}(?:-[a-z]+)+-\d+)\.amazonaws\.com(?:\.cn)?(?::\d+)?$")


def msk_region(bootstrap_servers: str) -> str | None:
    """The AWS region of an MSK cluster: from its brokers' host names, else ``AWS_REGION`` /
    ``AWS_DEFAULT_REGION``, else None."""
    for server in bootstrap_servers.split(","):
        match = _MSK_HOST.search(server.strip().lower())
        if match:
            return match.group(1)
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or None


class _NoSigningDebug(logging.Filter):
    """Drops botocore's DEBUG records of what it signs: for a presigned MSK token the canonical request carries
    the session token (X-Amz-Security-Token) and the signature, a credential for 15 minutes (issue 34)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno > logging.DEBUG


def _hide_signing_logs() -> None:
    signing_log = logging.getLogger("botocore.auth")
    if not any(isinstance(f, _NoSigningDebug) for f in signing_log.filters):
        signing_log.addFilter(_NoSigningDebug())


class MskIamTokenProvider:
    """OAUTHBEARER tokens for Amazon MSK's IAM access control.

    A token is a SigV4-presigned ``kafka-cluster:Connect`` request for ``region``, base64url-encoded (AWS's
    ``MSKAuthTokenProvider``), signed with the AWS credentials found the usual way (environment, shared
    config and credentials files, container or instance role), or those of ``profile``, or of ``role_arn``
    assumed through STS (``role_session_name``), or of ``credentials_provider`` (a botocore credentials
    provider). Tokens last 15 minutes; one is shared by every connection until 80 % of its lifetime has
    passed (the Java login's refresh window), then a new one is signed.

    Pass it as ``sasl_oauth_token_provider`` with ``sasl_mechanism="OAUTHBEARER"`` and ``SASL_SSL``, or set
    the Java properties AWS documents (``sasl.login.callback.handler.class=
    software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler``).
    """

    def __init__(self, region: str, *, profile: str | None = None, role_arn: str | None = None,
                 role_session_name: str | None = None, credentials_provider: Any = None) -> None:
        from ..._optional import require

        if not isinstance(region, str) or not region:
            raise ValueError(f"an AWS region such as 'us-east-1' is needed, not {region!r}")
        # The package exports nothing at its top: the functions live in its MSKAuthTokenProvider module.
        self._signer = require("aws_msk_iam_sasl_signer.MSKAuthTokenProvider", "AWS MSK IAM authentication")
        self.region = region
        self.profile = profile
        self.role_arn = role_arn
        self.role_session_name = role_session_name
        self.credentials_provider = credentials_provider
        self._lock = threading.Lock()
        self._token: str | None = None
        #: When (``time.time()``) the cached token is replaced; its expiry is :attr:`expires_at`.
        self.refresh_at = 0.0
        self.expires_at = 0.0
        _hide_signing_logs()

    def __repr__(self) -> str:
        how = (f"profile={self.profile!r}" if self.profile else f"role_arn={self.role_arn!r}" if self.role_arn
               else "default credentials")
        return f"MskIamTokenProvider({self.region!r}, {how})"

    def _sign(self) -> tuple[str, float]:
        signer = self._signer
        if self.credentials_provider is not None:
            return signer.generate_auth_token_from_credentials_provider(  # type: ignore[no-any-return]
                self.region, self.credentials_provider)
        if self.role_arn:
            if self.role_session_name:
                return signer.generate_auth_token_from_role_arn(  # type: ignore[no-any-return]
                    self.region, self.role_arn, self.role_session_name)
            return signer.generate_auth_token_from_role_arn(self.region, self.role_arn)  # type: ignore[no-any-return]
        if self.profile:
            return signer.generate_auth_token_from_profile(self.region, self.profile)  # type: ignore[no-any-return]
        return signer.generate_auth_token(self.region)  # type: ignore[no-any-return]

    def __call__(self) -> str:
        with self._lock:
            now = time.time()
            if self._token is None or now >= self.refresh_at:
                try:
                    token, expiry_ms = self._sign()
                except Exception as e:  # botocore's NoCredentialsError, ProfileNotFound, STS errors, ...
                    raise AuthenticationFailedError(
                        f"AWS MSK IAM token for region {self.region} ({self!r}) cannot be signed: "
                        f"{type(e).__name__}: {e}"
                    ) from None
                self.expires_at = float(expiry_ms) / 1000.0
                self.refresh_at = now + max(0.0, self.expires_at - now) * _REFRESH_FACTOR
                self._token = token
            return self._token
