"""API version negotiation with a broker (KIP-35, KIP-511).

A client opens every connection with an ApiVersions request and then uses, per API, the highest version
both sides speak. Three wrinkles are handled here:

* A broker that does not know the ApiVersions version we sent answers UNSUPPORTED_VERSION (35) in a
  **v0** body listing its own range for key 18 (KIP-511), whatever version we asked for: the error code
  is peeked first and such answers are decoded as v0, then the request is retried at the broker's max
  for key 18 (or v0 when it lists none).
* The ApiVersions response header is always v0, even for flexible versions (KIP-511).
* librdkafka's mock cluster answers ApiVersions v3+ with UNSUPPORTED_VERSION in a body that does not
  parse (a compact array whose count is off by one): any decode error at a version above 0 falls back to
  v0, which every broker answers (older clients rely on it).

I/O stays with the caller: :class:`ApiVersionsExchange` produces frames and consumes response frames;
:func:`negotiate` runs it over any ``send_and_receive(frame) -> response_frame`` callable.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping

from ..errors import ProtocolError
from .errors import error_for_code

__all__ = ["ApiVersionsExchange", "NegotiatedVersions", "negotiate", "client_versions", "UNSUPPORTED_VERSION"]

UNSUPPORTED_VERSION = 35
_API_VERSIONS_KEY = 18
_CORRELATION = struct.Struct(">i")
_ERROR = struct.Struct(">h")


def client_versions() -> dict[int, tuple[int, int]]:
    """API key -> (min, max) version this package can encode and decode."""
    from . import API_BY_KEY

    return {key: (req.MIN_VERSION, req.MAX_VERSION) for key, (req, _) in API_BY_KEY.items()}


class NegotiatedVersions:
    """The outcome of a negotiation: broker ranges and, per API, the version to use.

    ``broker`` maps API key -> (min, max) as the broker advertised; ``versions`` maps API key -> the
    highest version both sides speak (APIs with no overlap are absent).
    """

    def __init__(
        self,
        broker: Mapping[int, tuple[int, int]],
        client: Mapping[int, tuple[int, int]] | None = None,
        api_versions_version: int = 0,
        response: object | None = None,
    ) -> None:
        self.broker = dict(broker)
        self.client = dict(client if client is not None else client_versions())
        #: The ApiVersions version that finally succeeded.
        self.api_versions_version = api_versions_version
        #: The decoded ApiVersionsResponse (features, throttle time...).
        self.response = response
        self.versions: dict[int, int] = {}
        for key, (cmin, cmax) in self.client.items():
            rng = self.broker.get(key)
            if rng is None:
                continue
            lo, hi = max(cmin, rng[0]), min(cmax, rng[1])
            if lo <= hi:
                self.versions[key] = hi

    @property
    def finalized_features(self) -> dict[str, int]:
        """Feature name -> finalized max version level (ApiVersions v3+, KIP-584), e.g.
        ``{"transaction.version": 2}``; empty when the broker sent none (older versions, older brokers)."""
        feats = getattr(self.response, "finalized_features", None) or ()
        return {f.name: f.max_version_level for f in feats}

    @property
    def finalized_features_epoch(self) -> int:
        """The epoch of :attr:`finalized_features` (-1 when unknown): the higher, the newer."""
        return int(getattr(self.response, "finalized_features_epoch", -1))

    def get(self, api: int | type) -> int | None:
        """The version to use for ``api`` (a key or a request/response class), or None if none fits."""
        return self.versions.get(api if isinstance(api, int) else api.API_KEY)  # type: ignore[attr-defined]

    def version_for(self, api: int | type, min_version: int = 0) -> int:
        """Like :meth:`get`, but raises :class:`UnsupportedVersionError` when no version >= ``min_version`` fits."""
        v = self.get(api)
        if v is None or v < min_version:
            key = api if isinstance(api, int) else api.API_KEY  # type: ignore[attr-defined]
            cls = error_for_code(UNSUPPORTED_VERSION)
            assert cls is not None
            raise cls(
                f"API {key}: broker speaks {self.broker.get(key)}, client speaks {self.client.get(key)}"
                + (f", need >= {min_version}" if min_version else "")
            )
        return v

    def __repr__(self) -> str:
        return f"NegotiatedVersions({self.versions!r})"


class ApiVersionsExchange:
    """The ApiVersions handshake as a small state machine (no I/O).

    Call :meth:`request_frame`, send it, read the response frame (after its 4-byte size) and pass it to
    :meth:`handle_response`: it returns :class:`NegotiatedVersions` when done, or None when the request
    must be sent again (with the version it chose: call :meth:`request_frame` again).
    """

    #: Give up after this many attempts (the protocol needs at most three: newest, broker's max, v0).
    MAX_ATTEMPTS = 4

    def __init__(
        self,
        client_id: str | None = "kafkawire",
        *,
        client_software_name: str = "kafkawire",
        client_software_version: str | None = None,
        max_version: int | None = None,
        client: Mapping[int, tuple[int, int]] | None = None,
    ) -> None:
        from . import ApiVersionsRequest

        if client_software_version is None:
            from .. import __version__

            client_software_version = __version__
        self.client_id = client_id
        self.software_name = client_software_name
        self.software_version: str = client_software_version
        self.client = client
        top = ApiVersionsRequest.MAX_VERSION
        #: The ApiVersions version the next request uses.
        self.version = top if max_version is None else min(max_version, top)
        self.attempts = 0
        self._sent_correlation: int | None = None

    def request_frame(self, correlation_id: int = 0) -> bytes:
        """The ApiVersions request frame (size prefix included) at :attr:`version`."""
        from . import ApiVersionsRequest

        # KIP-511: software name/version must match [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?
        req = ApiVersionsRequest(client_software_name=self.software_name, client_software_version=self.software_version)
        self._sent_correlation = correlation_id
        self.attempts += 1
        return req.encode(self.version, correlation_id, self.client_id)

    def handle_response(self, frame: bytes | bytearray | memoryview) -> NegotiatedVersions | None:
        """Consume a response frame (without its size prefix)."""
        from . import ApiVersionsResponse

        mv = memoryview(frame)
        if len(mv) < 6:
            raise ProtocolError("ApiVersions response shorter than header and error code")
        (cid,) = _CORRELATION.unpack_from(mv, 0)  # header v0 always (KIP-511)
        if self._sent_correlation is not None and cid != self._sent_correlation:
            raise ProtocolError(f"correlation id {cid} does not match the request's {self._sent_correlation}")
        body = mv[4:]
        (error_code,) = _ERROR.unpack_from(body, 0)
        if error_code == UNSUPPORTED_VERSION:
            # The broker answers in v0 whatever we sent; it lists its own range for key 18.
            try:
                resp = ApiVersionsResponse.decode(body, 0, allow_trailing=True)
                broker_max = next((k.max_version for k in resp.api_keys if k.api_key == _API_VERSIONS_KEY), None)
            except ProtocolError:
                # librdkafka's mock cluster sends this answer in a malformed compact form: use v0.
                broker_max = None
            if broker_max is None or broker_max >= self.version:
                nxt = 0
            else:
                nxt = broker_max
            self._retry(nxt, f"broker does not support ApiVersions v{self.version}")
            return None
        try:
            resp = ApiVersionsResponse.decode(body, self.version)
        except ProtocolError as exc:
            # librdkafka's mock cluster (and some proxies) send v3+ bodies that do not parse.
            if self.version > 0:
                self._retry(0, f"ApiVersions v{self.version} response did not decode: {exc}")
                return None
            raise
        if resp.error_code:
            cls = error_for_code(resp.error_code)
            assert cls is not None
            raise cls("ApiVersions failed")
        broker = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
        return NegotiatedVersions(broker, self.client, self.version, resp)

    def _retry(self, version: int, why: str) -> None:
        if self.attempts >= self.MAX_ATTEMPTS or (version == self.version == 0):
            raise ProtocolError(f"ApiVersions negotiation failed: {why}")
        self.version = version
        return None


def negotiate(
    send_and_receive: Callable[[bytes], bytes | bytearray | memoryview],
    client_id: str | None = "kafkawire",
    *,
    first_correlation_id: int = 0,
    max_version: int | None = None,
) -> NegotiatedVersions:
    """Run the ApiVersions handshake over ``send_and_receive`` (frame in, response frame without size out)."""
    ex = ApiVersionsExchange(client_id, max_version=max_version)
    cid = first_correlation_id
    while True:
        result = ex.handle_response(send_and_receive(ex.request_frame(cid)))
        if result is not None:
            return result
        cid += 1
