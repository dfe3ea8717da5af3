"""SchemaRegistry against a real registry (Apicurio Registry's Confluent API, started by the test) and against a
small HTTP server on loopback that answers what a hostile or broken registry would (to see every error path)."""

from __future__ import annotations

import base64
import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kafkawire.serde import SchemaRegistry, SchemaRegistryError
from kafkawire.testing import free_port, start_schema_registry

V1 = json.dumps({"type": "record", "name": "Order", "fields": [{"name": "id", "type": "int"}]})
V2 = json.dumps({"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"}, {"name": "note", "type": "string", "default": ""}]})


@pytest.fixture(scope="module")
def apicurio() -> Iterator[Any]:
    with start_schema_registry() as server:
        yield server


@pytest.mark.broker
def test_rest_api_against_apicurio(apicurio: Any) -> None:
    reg = SchemaRegistry(apicurio.url, timeout=30)
    id1 = reg.register("orders-value", V1)
    assert reg.register("orders-value", V1) == id1  # the same schema again: the same id
    id2 = reg.register("orders-value", V2)
    assert id2 != id1
    assert reg.get_versions("orders-value") == [1, 2]
    latest = reg.get_latest("orders-value")
    assert (latest.schema_id, latest.version, latest.subject) == (id2, 2, "orders-value")
    assert json.loads(reg.get_schema(id1).schema) == json.loads(V1)
    assert reg.get_version("orders-value", 1).schema_id == id1
    found = SchemaRegistry(apicurio.url).lookup("orders-value", V1)
    assert (found.schema_id, found.version) == (id1, 1)
    assert "orders-value" in reg.get_subjects()
    reg.set_compatibility("BACKWARD", "orders-value")
    assert reg.test_compatibility("orders-value", V2) is True
    incompatible = json.dumps({"type": "record", "name": "Order", "fields": [{"name": "other", "type": "string"}]})
    assert reg.test_compatibility("orders-value", incompatible) is False


@pytest.mark.broker
def test_errors_name_registry_subject_and_id(apicurio: Any) -> None:
    reg = SchemaRegistry(apicurio.url)
    with pytest.raises(SchemaRegistryError) as e:
        reg.get_latest("no-such-subject")
    assert e.value.not_found and e.value.subject == "no-such-subject"
    assert apicurio.url in str(e.value) and "no-such-subject" in str(e.value)
    with pytest.raises(SchemaRegistryError) as e:
        reg.get_schema(987654)
    assert e.value.not_found and "schema id 987654" in str(e.value)
    with pytest.raises(SchemaRegistryError) as e:
        reg.register("bad-value", "{not json")
    assert e.value.status is not None and 400 <= e.value.status < 500


class _Server:
    """A loopback HTTP server whose answers the test decides (``handler(method, path, headers, body)``)."""

    def __init__(self, handler: Callable[[str, str, Any, bytes], tuple[int, bytes]]) -> None:
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            def _do(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                outer.requests.append((self.command, self.path, dict(self.headers)))
                status, payload = handler(self.command, self.path, self.headers, body)
                self.send_response(status)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = _do

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[Callable[..., _Server]]:
    made: list[_Server] = []

    def make(handler: Callable[[str, str, Any, bytes], tuple[int, bytes]]) -> _Server:
        s = _Server(handler)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def test_schema_by_id_is_cached_and_latest_expires(server: Callable[..., _Server]) -> None:
    version = [1]

    def handler(method: str, path: str, headers: Any, body: bytes) -> tuple[int, bytes]:
        if path == "/schemas/ids/3":
            return 200, json.dumps({"schema": V1}).encode()
        return 200, json.dumps({"subject": "s", "version": version[0], "id": 3, "schema": V1}).encode()

    s = server(handler)
    reg = SchemaRegistry(s.url, latest_ttl=0.2)
    for _ in range(3):
        assert reg.get_schema(3).schema == V1
    assert len(s.requests) == 1
    assert reg.get_latest("s").version == 1 and reg.get_latest("s").version == 1
    assert len(s.requests) == 2
    version[0] = 2
    time.sleep(0.3)
    assert reg.get_latest("s").version == 2  # the cached latest expired: asked again


@pytest.mark.parametrize("status, payload, match", [
    (200, b"<html>not json</html>", "is not JSON"),
    (200, b'{"schema": 5}', "no 'schema' string"),
    (200, b'["a list"]', "expected an object"),
    (200, b'{"schema": "\\"int\\"", "schemaType": "XML"}', "unknown schemaType"),
    (200, b'{"schema": "\\"int\\"", "references": [{"name": 1}]}', "malformed reference"),
    (200, b"x" * 5000, "exceeds 4096 bytes"),
    (404, b'{"error_code": 40403, "message": "Schema not found"}', "Schema not found"),
    (401, b"", "HTTP 401"),
])
def test_hostile_answers_are_typed_errors(server: Callable[..., _Server], status: int, payload: bytes,
                                          match: str) -> None:
    s = server(lambda *a: (status, payload))
    with pytest.raises(SchemaRegistryError, match=match) as e:
        SchemaRegistry(s.url, max_response_bytes=4096).get_schema(1)
    assert e.value.schema_id == 1 and s.url in str(e.value)


def test_5xx_retried_within_one_deadline(server: Callable[..., _Server]) -> None:
    calls = []

    def flaky(*a: Any) -> tuple[int, bytes]:
        calls.append(1)
        return (503, b"busy") if len(calls) < 3 else (200, json.dumps({"schema": V1}).encode())

    s = server(flaky)
    assert SchemaRegistry(s.url, timeout=10).get_schema(1).schema == V1
    assert len(calls) == 3
    always = server(lambda *a: (500, b'{"error_code": 50001, "message": "store down"}'))
    started = time.monotonic()
    with pytest.raises(SchemaRegistryError, match="no answer within 1s.*store down"):
        SchemaRegistry(always.url, timeout=1.0).get_schema(1)
    assert time.monotonic() - started < 10  # slack for a loaded machine: the bound is the 1 s deadline


def test_unreachable_registry_names_the_cause() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(SchemaRegistryError, match="ConnectionRefusedError") as e:
        SchemaRegistry(url, timeout=0.5).get_latest("t-value")
    assert e.value.subject == "t-value" and url in str(e.value)


def test_from_properties_auth_and_headers(server: Callable[..., _Server]) -> None:
    s = server(lambda *a: (200, json.dumps({"schema": V1}).encode()))
    SchemaRegistry.from_properties({"schema.registry.url": s.url, "basic.auth.credentials.source": "USER_INFO",
                                    "basic.auth.user.info": "alice:s3cret"}).get_schema(1)
    assert s.requests[-1][2]["Authorization"] == "Basic " + base64.b64encode(b"alice:s3cret").decode()
    user_url = s.url.replace("http://", "http://bob:pw%21@")
    SchemaRegistry.from_properties({"schema.registry.url": user_url,
                                    "basic.auth.credentials.source": "URL"}).get_schema(2)
    assert s.requests[-1][2]["Authorization"] == "Basic " + base64.b64encode(b"bob:pw!").decode()
    SchemaRegistry.from_properties({"url": s.url, "bearer.auth.credentials.source": "STATIC_TOKEN",
                                    "bearer.auth.token": "tok", "bearer.auth.logical.cluster": "lsrc-1",
                                    "bearer.auth.identity.pool.id": "pool-2"}).get_schema(3)
    headers = {k.lower(): v for k, v in s.requests[-1][2].items()}
    assert headers["authorization"] == "Bearer tok"
    assert headers["target-sr-cluster"] == "lsrc-1" and headers["confluent-identity-pool-id"] == "pool-2"
    with pytest.raises(ValueError, match="unknown schema registry properties"):
        SchemaRegistry.from_properties({"schema.registry.url": s.url, "basic.auth.usr.info": "typo"})
    with pytest.raises(ValueError, match="schema.registry.url is required"):
        SchemaRegistry.from_properties({})
    with pytest.raises(TypeError):
        SchemaRegistry.from_properties("schema.registry.url=x")  # type: ignore[arg-type]


def test_argument_types() -> None:
    with pytest.raises(TypeError):
        SchemaRegistry(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        SchemaRegistry("ftp://x")
    reg = SchemaRegistry("http://127.0.0.1:1")
    with pytest.raises(TypeError):
        reg.get_schema("1")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        reg.get_latest(None)  # type: ignore[arg-type]
