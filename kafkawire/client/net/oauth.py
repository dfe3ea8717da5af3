"""OAUTHBEARER token providers: the OIDC client-credentials flow (KIP-768) and Kafka's unsecured tokens.

A provider is a callable returning the token for a new connection (:class:`~.sasl.SaslConfig`);
:class:`ClientCredentialsTokenProvider` is what the Java client's ``OAuthBearerLoginCallbackHandler`` does
with ``sasl.oauthbearer.token.endpoint.url``: POST ``grant_type=client_credentials`` with HTTP Basic
credentials to the identity provider and keep the ``access_token`` until 80 % of its lifetime has passed
(the Java login refresh window, ``sasl.login.refresh.window.factor``). :func:`unsecured_token` builds the
unsigned JWT Kafka's ``OAuthBearerUnsecuredLoginCallbackHandler`` makes from ``unsecuredLoginStringClaim_sub``
(for development brokers that use the unsecured validator).
"""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from ..errors import AuthenticationFailedError

__all__ = ["ClientCredentialsTokenProvider", "unsecured_token"]

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
                             f"{token_endpoint_url!r}")
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
        return f"ClientCredentialsTokenProvider({self.url!r}, client_id={self.client_id!r})"

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
        request = urllib.request.Request(
            self.url,
            data=urllib.parse.urlencode(form).encode(),
            headers={
                "Authorization": "Basic " + base64.b64encode(pair.encode()).decode("ascii"),
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "application/json",
            },
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                body = response.read()
        except urllib.error.HTTPError as e:
            detail = e.read()[:500].decode("utf-8", "replace")
            raise AuthenticationFailedError(f"token endpoint {self.url} answered HTTP {e.code}: {detail}") from None
        except (urllib.error.URLError, OSError) as e:
            raise AuthenticationFailedError(f"token endpoint {self.url} unreachable: {e}") from None
        try:
            answer = json.loads(body)
            token = answer["access_token"]
        except (ValueError, KeyError, TypeError):
            raise AuthenticationFailedError(
                f"token endpoint {self.url} sent no access_token: {body[:300]!r}"
            ) from None
        expires = answer.get("expires_in")
        return str(token), float(expires) if isinstance(expires, (int, float)) else None
