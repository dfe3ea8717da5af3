"""A Confluent Schema Registry client: schemas by id, subjects' versions, register, lookup, compatibility.

Speaks the REST API of Confluent's registry (and of the registries that copy it: Apicurio's
``/apis/ccompat/v7``, Redpanda, Karapace) over the standard library's HTTP client. Answers are cached:
a schema id names one schema forever, so ids are cached without expiry; a subject's latest version is
cached for ``latest_ttl`` seconds (Confluent's ``latest.cache.ttl.sec``), since a producer may register a
new one at any time. Every public call runs under one deadline (``timeout`` seconds, or the call's own
``timeout``): retries after a connection error or a 5xx answer, and every socket wait, take what is left
of it.

A registry's answers come from the network and are treated as hostile: the body is read up to
``max_response_bytes``, must be JSON of the documented shape, and anything else raises
:class:`SchemaRegistryError` naming the registry, the subject or id, and what was wrong.
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..client.config.redact import redact_text, redact_url
from ..client.net.deadline import Deadline
from ..errors import KafkaWireError

__all__ = ["RegisteredSchema", "SchemaReference", "SchemaRegistry", "SchemaRegistryError"]

_CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


class SchemaRegistryError(KafkaWireError):
    """A registry call failed: ``registry`` (URL), ``subject`` / ``schema_id`` (what was asked for),
    ``status`` (HTTP status, None when no answer came), ``error_code`` (the registry's own code, e.g.
    40401 subject not found, 40403 schema not found) and the cause in the message."""

    def __init__(self, message: str, *, registry: str, subject: str | None = None, schema_id: int | None = None,
                 status: int | None = None, error_code: int | None = None) -> None:
        what = []
        if subject is not None:
            what.append(f"subject {subject!r}")
        if schema_id is not None:
            what.append(f"schema id {schema_id}")
        where = f"schema registry {registry}" + (f" ({', '.join(what)})" if what else "")
        super().__init__(f"{where}: {message}")
        self.registry = registry
        self.subject = subject
        self.schema_id = schema_id
        self.status = status
        self.error_code = error_code

    def __reduce__(self) -> Any:  # picklable across processes (Spark executors)
        return (_rebuild_error, (self.args[0], self.registry, self.subject, self.schema_id, self.status,
                                 self.error_code))

    @property
    def not_found(self) -> bool:
        """The registry said the subject, version or schema does not exist (HTTP 404)."""
        return self.status == 404


def _rebuild_error(message: str, registry: str, subject: str | None, schema_id: int | None, status: int | None,
                   error_code: int | None) -> SchemaRegistryError:
    err = SchemaRegistryError.__new__(SchemaRegistryError)
    Exception.__init__(err, message)
    err.registry, err.subject, err.schema_id, err.status, err.error_code = (
        registry, subject, schema_id, status, error_code)
    return err


@dataclass(frozen=True)
class SchemaReference:
    """A reference from one schema to another registered one (``name`` as the referring schema uses it)."""

    name: str
    subject: str
    version: int


@dataclass(frozen=True)
class RegisteredSchema:
    """A schema as the registry holds it. ``schema_type`` is ``AVRO``, ``JSON`` or ``PROTOBUF``; ``subject``
    and ``version`` are known when the schema was found through a subject."""

    schema_id: int
    schema: str
    schema_type: str = "AVRO"
    references: tuple[SchemaReference, ...] = field(default=())
    subject: str | None = None
    version: int | None = None


class SchemaRegistry:
    """A client for one Schema Registry (``url``; several comma-separated URLs are tried in order).

    Options: ``timeout`` (seconds per call, default 30), ``basic_auth`` (``"user:password"`` or a pair),
    ``bearer_token`` (a string, or a callable returning the current token), ``headers`` (extra HTTP headers,
    e.g. Confluent Cloud's ``target-sr-cluster``), ``ssl_context`` or ``ca_file`` / ``cert_file`` /
    ``key_file`` / ``key_password`` for TLS, ``latest_ttl`` (seconds a subject's latest version is cached,
    default 300; 0 asks every time), ``max_response_bytes`` (default 64 MiB).
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 30.0,
        basic_auth: str | tuple[str, str] | None = None,
        bearer_token: str | Callable[[], str] | None = None,
        headers: Mapping[str, str] | None = None,
        ssl_context: ssl.SSLContext | None = None,
        ca_file: str | None = None,
        cert_file: str | None = None,
        key_file: str | None = None,
        key_password: str | None = None,
        latest_ttl: float = 300.0,
        max_response_bytes: int = 64 << 20,
    ) -> None:
        if not isinstance(url, str):
            raise TypeError(f"url must be a str, not {type(url).__name__}")
        urls = [u.strip().rstrip("/") for u in url.split(",") if u.strip()]
        if not urls:
            raise ValueError("a schema registry URL is required")
        for u in urls:
            if urllib.parse.urlsplit(u).scheme not in ("http", "https"):
                raise ValueError(f"schema registry URL {redact_url(u)!r} is not http:// or https://")
        # http://user:secret@host:8081 is basic auth, as in Confluent's clients (issue 34): the user info is
        # split off and sent as the Authorization header, never looked up as a host nor shown.
        url_auth = {_userinfo(u) for u in urls} - {None}
        if len(url_auth) > 1:
            raise ValueError("the schema registry URLs carry different user info; give the credentials once "
                             "(basic_auth)")
        if url_auth:
            if basic_auth is not None:
                raise ValueError("give basic_auth or credentials in the schema registry URL, not both")
            basic_auth = url_auth.pop()
        self.urls = [_strip_userinfo(u) for u in urls]
        self.timeout = float(timeout)
        self.latest_ttl = float(latest_ttl)
        self.max_response_bytes = int(max_response_bytes)
        self._headers = {"Accept": _CONTENT_TYPE, "User-Agent": "kafkawire"}
        if headers:
            self._headers.update(headers)
        if basic_auth is not None:
            if isinstance(basic_auth, str):
                if ":" not in basic_auth:
                    raise ValueError("basic_auth must be 'user:password'")
                user_info = basic_auth
            else:
                user_info = f"{basic_auth[0]}:{basic_auth[1]}"
            self._headers["Authorization"] = "Basic " + base64.b64encode(user_info.encode()).decode("ascii")
        #: Values scrubbed from whatever a registry answers before it goes into an error (it may echo them).
        self._secrets = [user_info.partition(":")[2], self._headers["Authorization"][6:]] if basic_auth else []
        if basic_auth is not None and bearer_token is not None:
            raise ValueError("give basic_auth or bearer_token, not both")
        self._bearer = bearer_token
        if ssl_context is None and any(x is not None for x in (ca_file, cert_file)):
            ssl_context = ssl.create_default_context(cafile=ca_file)
            if cert_file is not None:
                ssl_context.load_cert_chain(cert_file, key_file, key_password)
        self._ssl = ssl_context
        self._lock = threading.Lock()
        # keyed with the ``format`` asked for (None: the registry's default form)
        self._by_id: dict[tuple[int, str | None], RegisteredSchema] = {}
        self._latest: dict[tuple[str, str | None], tuple[float, RegisteredSchema]] = {}
        self._versions: dict[tuple[str, int, str | None], RegisteredSchema] = {}
        self._registered: dict[tuple[str, str, str], RegisteredSchema] = {}

    # ----------------------------------------------------------------------------------------- config
    @classmethod
    def from_properties(cls, properties: Mapping[str, Any]) -> SchemaRegistry:
        """A client from Confluent's client property names.

        ``schema.registry.url`` (or ``url``); ``basic.auth.credentials.source`` (``USER_INFO``, ``URL``) with
        ``basic.auth.user.info``; ``bearer.auth.credentials.source`` (``STATIC_TOKEN`` with
        ``bearer.auth.token``, ``OAUTHBEARER`` with ``bearer.auth.client.id``, ``bearer.auth.client.secret``,
        ``bearer.auth.issuer.endpoint.url``, ``bearer.auth.scope``), ``bearer.auth.logical.cluster`` and
        ``bearer.auth.identity.pool.id`` (Confluent Cloud's headers); TLS with ``ssl.ca.location``,
        ``ssl.certificate.location``, ``ssl.key.location``, ``ssl.key.password`` (also the Java client's
        ``schema.registry.ssl.truststore.location`` for a PEM file). Each name may carry the Java client's
        ``schema.registry.`` prefix. Unknown names raise ValueError, so a typo is not silently ignored.
        """
        if not isinstance(properties, Mapping):
            raise TypeError(f"properties must be a mapping, not {type(properties).__name__}")
        props: dict[str, str] = {}
        for k, v in properties.items():
            if not isinstance(k, str):
                raise TypeError(f"property names are str, not {type(k).__name__}")
            name = k[len("schema.registry."):] if k.startswith("schema.registry.") and k != "schema.registry.url" else k
            props[name] = str(v)
        url = props.pop("schema.registry.url", None) or props.pop("url", None)
        if not url:
            raise ValueError("schema.registry.url is required")
        options: dict[str, Any] = {}
        url = _basic_auth_properties(props, url, options)
        _bearer_auth_properties(props, options)
        _tls_properties(props, options)
        for name, option, conv in (("timeout", "timeout", float), ("request.timeout.ms", "timeout", _ms),
                                   ("cache.latest.ttl.sec", "latest_ttl", float),
                                   ("latest.cache.ttl.sec", "latest_ttl", float)):
            if name in props:
                options[option] = conv(props.pop(name))
        # Accepted for compatibility; kafkawire's cache has no capacity bound per client (ids are few).
        for ignored in ("cache.capacity", "max.schemas.per.subject", "auto.register.schemas", "use.latest.version"):
            props.pop(ignored, None)
        if props:
            raise ValueError(f"unknown schema registry properties: {sorted(props)}")
        return cls(url, **options)

    def __repr__(self) -> str:
        return f"SchemaRegistry({','.join(self.urls)!r})"

    # ----------------------------------------------------------------------------------------- HTTP
    def _request(self, method: str, path: str, body: Any, deadline: Deadline, *, subject: str | None = None,
                 schema_id: int | None = None) -> Any:
        """One call: try each URL, retry connection errors and 5xx until ``deadline``; the JSON answer."""
        data = None if body is None else json.dumps(body).encode()
        headers = dict(self._headers)
        if data is not None:
            headers["Content-Type"] = _CONTENT_TYPE
        secrets = list(self._secrets)
        if self._bearer is not None:
            token = self._bearer() if callable(self._bearer) else self._bearer
            headers["Authorization"] = "Bearer " + token
            secrets.append(token)
        backoff = 0.05
        last: str = "no attempt made"
        registry = self.urls[0]
        while True:
            for base in self.urls:
                registry = base
                remaining = deadline.remaining()
                if remaining <= 0:
                    break
                req = urllib.request.Request(base + path, data=data, method=method, headers=headers)
                try:
                    with urllib.request.urlopen(req, timeout=remaining, context=self._ssl) as resp:
                        raw = resp.read(self.max_response_bytes + 1)
                        status = resp.status
                except urllib.error.HTTPError as e:
                    raw = e.read(self.max_response_bytes + 1) if e.fp is not None else b""
                    status = e.code
                except (urllib.error.URLError, OSError, ValueError) as e:
                    reason = getattr(e, "reason", e)
                    last = f"{method} {path}: {type(reason).__name__}: {reason}"
                    continue  # next URL, then retry while time is left
                if len(raw) > self.max_response_bytes:
                    raise SchemaRegistryError(f"answer to {method} {path} exceeds {self.max_response_bytes} bytes",
                                              registry=base, subject=subject, schema_id=schema_id, status=status)
                if 200 <= status < 300:
                    return self._json(raw, method, path, base, subject, schema_id, status)
                code, message = _error_body(raw)
                message = redact_text(message, secrets)
                if status >= 500 or status == 429:
                    last = f"{method} {path}: HTTP {status}: {message}"
                    continue
                raise SchemaRegistryError(f"{method} {path} failed: HTTP {status}"
                                          + (f" (error {code})" if code is not None else "") + f": {message}",
                                          registry=base, subject=subject, schema_id=schema_id, status=status,
                                          error_code=code)
            if deadline.expired():
                raise SchemaRegistryError(f"no answer within {deadline.timeout:g}s; last error: {last}",
                                          registry=registry, subject=subject, schema_id=schema_id)
            deadline.sleep(backoff)
            backoff = min(backoff * 2, 1.0)

    @staticmethod
    def _json(raw: bytes, method: str, path: str, registry: str, subject: str | None, schema_id: int | None,
              status: int) -> Any:
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise SchemaRegistryError(f"answer to {method} {path} is not JSON ({e})", registry=registry,
                                      subject=subject, schema_id=schema_id, status=status) from None

    def _deadline(self, timeout: float | None) -> Deadline:
        return Deadline(self.timeout if timeout is None else timeout)

    def _parse_schema(self, answer: Any, registry_path: str, *, schema_id: int | None, subject: str | None,
                      version: int | None = None) -> RegisteredSchema:
        """Check the shape of a schema answer (``schema``, ``schemaType``, ``references``, ``id``, ``version``)."""
        def bad(what: str) -> SchemaRegistryError:
            return SchemaRegistryError(f"malformed answer to {registry_path}: {what}", registry=self.urls[0],
                                       subject=subject, schema_id=schema_id)

        if not isinstance(answer, dict):
            raise bad(f"expected an object, got {type(answer).__name__}")
        schema = answer.get("schema")
        if not isinstance(schema, str):
            raise bad("no 'schema' string")
        stype = answer.get("schemaType", "AVRO")
        if not isinstance(stype, str) or stype.upper() not in ("AVRO", "JSON", "PROTOBUF"):
            raise bad(f"unknown schemaType {stype!r}")
        refs = []
        for r in answer.get("references") or []:
            if not (isinstance(r, dict) and isinstance(r.get("name"), str) and isinstance(r.get("subject"), str)
                    and _is_int(r.get("version"))):
                raise bad(f"malformed reference {r!r:.200}")
            refs.append(SchemaReference(r["name"], r["subject"], int(r["version"])))
        sid: Any = answer.get("id", schema_id)
        if not _is_int(sid):
            raise bad(f"schema id {sid!r:.50} is not an integer")
        ver = answer.get("version", version)
        if ver is not None and not _is_int(ver):
            raise bad(f"version {ver!r:.50} is not an integer")
        found_subject = answer.get("subject", subject)
        return RegisteredSchema(int(sid), schema, stype.upper(), tuple(refs),
                                found_subject if isinstance(found_subject, str) else subject,
                                int(ver) if ver is not None else None)

    # ------------------------------------------------------------------------------------------ API
    def get_schema(self, schema_id: int, *, format: str | None = None,
                   timeout: float | None = None) -> RegisteredSchema:
        """The schema registered under ``schema_id`` (``GET /schemas/ids/{id}``); cached for good.

        ``format`` asks for a form of the schema (``?format=``): ``"serialized"`` makes Confluent's registry
        answer a Protobuf schema as a base64 ``FileDescriptorProto`` instead of ``.proto`` text, as
        confluent-kafka's ``ProtobufDeserializer`` asks; registries that do not know the parameter (Apicurio)
        answer what was registered."""
        if not _is_int(schema_id):
            raise TypeError(f"schema_id must be an int, not {type(schema_id).__name__}")
        _check_format(format)
        with self._lock:
            hit = self._by_id.get((schema_id, format))
        if hit is not None:
            return hit
        path = f"/schemas/ids/{schema_id}" + _format_query(format)
        answer = self._request("GET", path, None, self._deadline(timeout), schema_id=schema_id)
        schema = self._parse_schema(answer, path, schema_id=schema_id, subject=None)
        schema = RegisteredSchema(schema_id, schema.schema, schema.schema_type, schema.references)
        with self._lock:
            self._by_id[(schema_id, format)] = schema
        return schema

    def get_subjects(self, *, timeout: float | None = None) -> list[str]:
        """Every subject (``GET /subjects``)."""
        answer = self._request("GET", "/subjects", None, self._deadline(timeout))
        if not isinstance(answer, list) or not all(isinstance(s, str) for s in answer):
            raise SchemaRegistryError("malformed answer to /subjects: expected a list of strings",
                                      registry=self.urls[0])
        return answer

    def get_versions(self, subject: str, *, timeout: float | None = None) -> list[int]:
        """The versions registered under ``subject`` (``GET /subjects/{subject}/versions``)."""
        _check_subject(subject)
        path = f"/subjects/{_q(subject)}/versions"
        answer = self._request("GET", path, None, self._deadline(timeout), subject=subject)
        if not isinstance(answer, list) or not all(_is_int(v) for v in answer):
            raise SchemaRegistryError(f"malformed answer to {path}: expected a list of integers",
                                      registry=self.urls[0], subject=subject)
        return [int(v) for v in answer]

    def get_version(self, subject: str, version: int | str = "latest", *, format: str | None = None,
                    timeout: float | None = None) -> RegisteredSchema:
        """One version of ``subject`` (``"latest"`` by default; the latest is cached ``latest_ttl`` seconds);
        ``format`` as for :meth:`get_schema`."""
        _check_subject(subject)
        _check_format(format)
        if version != "latest" and not _is_int(version):
            raise TypeError(f"version must be an int or 'latest', not {version!r}")
        now = time.monotonic()
        with self._lock:
            if version == "latest":
                cached = self._latest.get((subject, format))
                if cached is not None and now - cached[0] < self.latest_ttl:
                    return cached[1]
            else:
                hit = self._versions.get((subject, int(version), format))
                if hit is not None:
                    return hit
        path = f"/subjects/{_q(subject)}/versions/{version}" + _format_query(format)
        answer = self._request("GET", path, None, self._deadline(timeout), subject=subject)
        schema = self._parse_schema(answer, path, schema_id=None, subject=subject)
        if not isinstance(answer, dict) or not _is_int(answer.get("id")):
            raise SchemaRegistryError(f"malformed answer to {path}: no schema id", registry=self.urls[0],
                                      subject=subject)
        with self._lock:
            if version == "latest":
                self._latest[(subject, format)] = (now, schema)
            if schema.version is not None:
                self._versions[(subject, schema.version, format)] = schema
            self._by_id.setdefault((schema.schema_id, format), RegisteredSchema(
                schema.schema_id, schema.schema, schema.schema_type, schema.references))
        return schema

    def get_latest(self, subject: str, *, format: str | None = None,
                   timeout: float | None = None) -> RegisteredSchema:
        """``subject``'s latest version (cached ``latest_ttl`` seconds); ``format`` as for :meth:`get_schema`."""
        return self.get_version(subject, "latest", format=format, timeout=timeout)

    def register(self, subject: str, schema: str, schema_type: str = "AVRO", *,
                 references: Sequence[SchemaReference] = (), timeout: float | None = None) -> int:
        """Register ``schema`` under ``subject`` (``POST /subjects/{subject}/versions``); its id.

        Registering a schema the subject already holds returns the existing id; cached per (subject, schema).
        """
        return self._register_or_lookup(subject, schema, schema_type, references, timeout, register=True).schema_id

    def lookup(self, subject: str, schema: str, schema_type: str = "AVRO", *,
               references: Sequence[SchemaReference] = (), timeout: float | None = None) -> RegisteredSchema:
        """The registered version of ``schema`` under ``subject`` (``POST /subjects/{subject}``); cached.

        Raises :class:`SchemaRegistryError` (``not_found``) when the subject does not hold it.
        """
        return self._register_or_lookup(subject, schema, schema_type, references, timeout, register=False)

    def _register_or_lookup(self, subject: str, schema: str, schema_type: str, references: Sequence[SchemaReference],
                            timeout: float | None, *, register: bool) -> RegisteredSchema:
        _check_subject(subject)
        if not isinstance(schema, str):
            raise TypeError(f"schema must be a str (the schema's JSON or .proto text), not {type(schema).__name__}")
        schema_type = schema_type.upper()
        key = (subject, schema_type, schema)
        with self._lock:
            hit = self._registered.get(key)
        if hit is not None and (register or hit.version is not None):
            return hit
        body: dict[str, Any] = {"schema": schema}
        if schema_type != "AVRO":
            body["schemaType"] = schema_type
        if references:
            body["references"] = [{"name": r.name, "subject": r.subject, "version": r.version} for r in references]
        path = f"/subjects/{_q(subject)}/versions" if register else f"/subjects/{_q(subject)}"
        answer = self._request("POST", path, body, self._deadline(timeout), subject=subject)
        if not isinstance(answer, dict) or not _is_int(answer.get("id")):
            raise SchemaRegistryError(f"malformed answer to {path}: no schema id", registry=self.urls[0],
                                      subject=subject)
        sid = int(answer["id"])
        version: Any = answer.get("version")
        found = RegisteredSchema(sid, schema, schema_type, tuple(references), subject,
                                 int(version) if _is_int(version) else None)
        with self._lock:
            self._registered[key] = found
            self._by_id.setdefault((sid, None), RegisteredSchema(sid, schema, schema_type, tuple(references)))
        return found

    def test_compatibility(self, subject: str, schema: str, schema_type: str = "AVRO", *,
                           version: int | str = "latest", timeout: float | None = None) -> bool:
        """Whether ``schema`` is compatible with ``subject``'s ``version`` under the subject's compatibility
        level (``POST /compatibility/subjects/{subject}/versions/{version}``)."""
        _check_subject(subject)
        body: dict[str, Any] = {"schema": schema}
        if schema_type.upper() != "AVRO":
            body["schemaType"] = schema_type.upper()
        path = f"/compatibility/subjects/{_q(subject)}/versions/{version}"
        answer = self._request("POST", path, body, self._deadline(timeout), subject=subject)
        if not isinstance(answer, dict) or not isinstance(answer.get("is_compatible"), bool):
            raise SchemaRegistryError(f"malformed answer to {path}: no 'is_compatible' boolean",
                                      registry=self.urls[0], subject=subject)
        return bool(answer["is_compatible"])

    def set_compatibility(self, level: str, subject: str | None = None, *, timeout: float | None = None) -> None:
        """Set the compatibility level (``BACKWARD``, ``FULL``, ``NONE``...) of ``subject`` or the registry."""
        path = "/config" if subject is None else f"/config/{_q(subject)}"
        self._request("PUT", path, {"compatibility": level.upper()}, self._deadline(timeout), subject=subject)

    def delete_subject(self, subject: str, *, permanent: bool = False, timeout: float | None = None) -> list[int]:
        """Delete ``subject`` (soft, or ``permanent``); the versions it held. Clears the cached entries."""
        _check_subject(subject)
        deadline = self._deadline(timeout)
        answer = self._request("DELETE", f"/subjects/{_q(subject)}", None, deadline, subject=subject)
        if permanent:
            self._request("DELETE", f"/subjects/{_q(subject)}?permanent=true", None, deadline, subject=subject)
        with self._lock:
            for latest_key in [k for k in self._latest if k[0] == subject]:
                del self._latest[latest_key]
            for version_key in [k for k in self._versions if k[0] == subject]:
                del self._versions[version_key]
            for schema_key in [k for k in self._registered if k[0] == subject]:
                del self._registered[schema_key]
        return [int(v) for v in answer] if isinstance(answer, list) and all(_is_int(v) for v in answer) else []


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _ms(v: str) -> float:
    return float(v) / 1000.0


def _check_format(fmt: Any) -> None:
    if fmt is not None and not isinstance(fmt, str):
        raise TypeError(f"format must be a str or None, not {type(fmt).__name__}")


def _format_query(fmt: str | None) -> str:
    return "" if fmt is None else "?format=" + urllib.parse.quote(fmt, safe="")


def _q(subject: str) -> str:
    return urllib.parse.quote(subject, safe="")


def _check_subject(subject: Any) -> None:
    if not isinstance(subject, str):
        raise TypeError(f"subject must be a str, not {type(subject).__name__}")
    if not subject:
        raise ValueError("subject must not be empty")


def _userinfo(url: str) -> tuple[str, str] | None:
    """The (user, password) of ``url``'s user info, percent-decoded; None without one."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return None
    return urllib.parse.unquote(parts.username or ""), urllib.parse.unquote(parts.password or "")


def _strip_userinfo(url: str) -> str:
    parts = urllib.parse.urlsplit(url.strip())
    netloc = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _error_body(raw: bytes) -> tuple[int | None, str]:
    """The registry's ``{"error_code": N, "message": "..."}``, or the start of whatever it sent."""
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None, raw[:200].decode("utf-8", "replace") or "(empty body)"
    if isinstance(body, dict):
        code = body.get("error_code")
        message = body.get("message")
        return (code if _is_int(code) else None), (str(message)[:500] if message is not None else str(body)[:500])
    return None, str(body)[:500]


def _basic_auth_properties(props: dict[str, str], url: str, options: dict[str, Any]) -> str:
    """``basic.auth.*`` into ``options["basic_auth"]``; returns the URL without user info when it carried it."""
    source = props.pop("basic.auth.credentials.source", "").upper()
    user_info = props.pop("basic.auth.user.info", None)
    if source == "URL" or (not source and "@" in urllib.parse.urlsplit(url.split(",")[0]).netloc):
        parts = urllib.parse.urlsplit(url.split(",")[0])
        if parts.username is None:
            raise ValueError("basic.auth.credentials.source=URL but the URL has no user info")
        options["basic_auth"] = (urllib.parse.unquote(parts.username), urllib.parse.unquote(parts.password or ""))
        return ",".join(_strip_userinfo(u) for u in url.split(","))
    if source in ("USER_INFO", "") and user_info is not None:
        options["basic_auth"] = user_info
    elif source == "USER_INFO":
        raise ValueError("basic.auth.credentials.source=USER_INFO needs basic.auth.user.info")
    elif source and source not in ("USER_INFO", "URL"):
        raise ValueError(f"basic.auth.credentials.source={source!r} is not supported (USER_INFO or URL)")
    return url


def _bearer_auth_properties(props: dict[str, str], options: dict[str, Any]) -> None:
    """``bearer.auth.*`` into ``options["bearer_token"]`` and Confluent Cloud's ``options["headers"]``."""
    bearer_source = props.pop("bearer.auth.credentials.source", "").upper()
    token = props.pop("bearer.auth.token", None)
    client_id = props.pop("bearer.auth.client.id", None)
    client_secret = props.pop("bearer.auth.client.secret", None)
    issuer = props.pop("bearer.auth.issuer.endpoint.url", None)
    scope = props.pop("bearer.auth.scope", None)
    headers: dict[str, str] = {}
    cluster = props.pop("bearer.auth.logical.cluster", None)
    pool = props.pop("bearer.auth.identity.pool.id", None)
    if cluster:
        headers["target-sr-cluster"] = cluster
    if pool:
        headers["Confluent-Identity-Pool-Id"] = pool
    if bearer_source == "STATIC_TOKEN" or (not bearer_source and token):
        if not token:
            raise ValueError("bearer.auth.credentials.source=STATIC_TOKEN needs bearer.auth.token")
        options["bearer_token"] = token
    elif bearer_source == "OAUTHBEARER":
        if not issuer:
            raise ValueError("bearer.auth.credentials.source=OAUTHBEARER needs bearer.auth.issuer.endpoint.url")
        from ..client.net.oauth import ClientCredentialsTokenProvider

        options["bearer_token"] = ClientCredentialsTokenProvider(issuer, client_id, client_secret, scope=scope)
    elif bearer_source:
        raise ValueError(f"bearer.auth.credentials.source={bearer_source!r} is not supported "
                         "(STATIC_TOKEN or OAUTHBEARER)")
    if headers:
        options["headers"] = headers


def _tls_properties(props: dict[str, str], options: dict[str, Any]) -> None:
    """``ssl.*`` (PEM files) into the ``ca_file``, ``cert_file``, ``key_file`` and ``key_password`` options."""
    ca = props.pop("ssl.ca.location", None) or props.pop("ssl.truststore.location", None)
    if ca:
        options["ca_file"] = ca
    cert = props.pop("ssl.certificate.location", None)
    if cert:
        options["cert_file"] = cert
        options["key_file"] = props.pop("ssl.key.location", None)
        options["key_password"] = props.pop("ssl.key.password", None)
