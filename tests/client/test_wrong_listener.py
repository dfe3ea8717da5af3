"""A client pointed at the wrong kind of listener (issue 25, items 1 and 5), against Apache Kafka with TLS and
SASL_SSL listeners and a real HTTP server: the error names host, port and the likely cause (security.protocol)
within the call's deadline, instead of "response of 352518912 bytes exceeds max_response_bytes"; and
``Client.from_properties`` takes a ``client.properties`` path like ``Consumer`` and ``Producer``."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkawire.client import Client, ListenerMismatchError
from kafkawire.client.config import ConfigError

pytestmark = pytest.mark.broker

CONSOLE_SCRIPT = Path(sys.executable).parent / "kafkawire"


@pytest.fixture(scope="module")
def secured() -> Iterator[object]:
    from kafkawire.testing import start_broker

    broker = start_broker("kafka", tls=True, sasl_mechanisms=("SCRAM-SHA-512",), users={"alice": "secret"})
    yield broker
    broker.stop()


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _metadata_error(bootstrap: str, timeout_ms: int = 20_000, **options: object) -> tuple[BaseException, float]:
    began = time.monotonic()
    with pytest.raises(Exception) as info, Client(bootstrap, retry_timeout_ms=timeout_ms, **options) as c:
        c.metadata()
    return info.value, time.monotonic() - began


@pytest.mark.parametrize("listener", ["SSL", "SASL_SSL"])
def test_plaintext_client_on_a_tls_listener(secured: object, listener: str) -> None:
    bootstrap = secured.bootstrap_for(listener)  # type: ignore[attr-defined]
    err, took = _metadata_error(bootstrap)
    text = str(err)
    assert isinstance(err, ListenerMismatchError), repr(err)
    assert bootstrap in text and "TLS" in text and "security.protocol=SSL or SASL_SSL" in text, text
    assert "max_response_bytes" not in text
    assert took < 18, took  # at once, not after the 20 s deadline (no retry can change the answer)


def test_plaintext_client_on_a_sasl_listener(secured: object) -> None:
    """Kafka's SASL listener answers ApiVersions (KIP-43) and hangs up on the next request: said at once, naming
    the setting, not "closed the connection" after the whole deadline (issue 34)."""
    bootstrap = secured.bootstrap_for("SASL_PLAINTEXT")  # type: ignore[attr-defined]
    err, took = _metadata_error(bootstrap)
    text = str(err)
    assert isinstance(err, ListenerMismatchError), repr(err)
    assert bootstrap in text and "closed the connection after ApiVersions" in text, text
    assert "security_protocol=SASL_PLAINTEXT" in text and "security.protocol" in text, text
    assert "SCRAM-SHA-512" in text, text  # the mechanisms the listener offers
    assert took < 18, took


def test_tls_client_without_sasl_on_a_sasl_ssl_listener(secured: object) -> None:
    import ssl

    bootstrap = secured.bootstrap_for("SASL_SSL")  # type: ignore[attr-defined]
    context = ssl.create_default_context(cafile=str(secured.ca_file))  # type: ignore[attr-defined]
    err, took = _metadata_error(bootstrap, security_protocol="SSL", ssl_context=context)
    text = str(err)
    assert isinstance(err, ListenerMismatchError), repr(err)
    assert "after ApiVersions" in text and "security_protocol=SASL_SSL" in text, text
    assert took < 18, took


def test_plaintext_client_on_an_http_server(http_server: str) -> None:
    err, took = _metadata_error(http_server)
    text = str(err)
    assert isinstance(err, ListenerMismatchError), repr(err)
    assert http_server in text and "HTTP" in text and "not a Kafka listener" in text, text
    assert took < 18, took


def test_tls_client_on_a_plaintext_listener(secured: object) -> None:
    import ssl

    bootstrap = secured.bootstrap  # type: ignore[attr-defined]
    # Kafka's plaintext listener reads the ClientHello as an oversized request and hangs up: that EOF could
    # also be a transient failure, so it stays retriable, with the likely cause named.
    err, _ = _metadata_error(bootstrap, 3_000, security_protocol="SSL", ssl_context=ssl.create_default_context())
    text = str(err)
    assert bootstrap in text and "plaintext listener" in text and "security.protocol=PLAINTEXT" in text, text


def test_cli_names_the_listener_and_the_fix(secured: object) -> None:
    bootstrap = secured.bootstrap_for("SSL")  # type: ignore[attr-defined]
    env = {k: v for k, v in os.environ.items() if k != "KAFKAWIRE_BOOTSTRAP"}
    proc = subprocess.run([str(CONSOLE_SCRIPT), "topics", "list", "-b", bootstrap, "--timeout", "20"],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kafkawire: error: ListenerMismatchError:"), proc.stderr
    assert bootstrap in lines[0] and "security.protocol" in lines[0]


def test_client_from_properties_takes_a_path(secured: object, tmp_path: Path) -> None:
    config = tmp_path / "client.properties"
    config.write_text(
        f"bootstrap.servers={secured.bootstrap_for('SASL_SSL')}\n"  # type: ignore[attr-defined]
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" '
        'password="secret";\n'
        f"ssl.truststore.location={secured.ca_file}\n"  # type: ignore[attr-defined]
        "ssl.truststore.type=PEM\n"
    )
    for given in (str(config), config):
        with Client.from_properties(given) as client:
            assert client.metadata().brokers
    # A typo gets the suggestion the consumer's and producer's mappings give.
    with pytest.raises(ConfigError, match=r"did you mean 'security.protocol'\?"):
        Client.from_properties({"bootstrap.servers": "h:1", "securty.protocol": "SSL"})
    with pytest.raises(TypeError, match="mapping or a file path"):
        Client.from_properties(42)  # type: ignore[arg-type]
