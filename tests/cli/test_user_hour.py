"""A user's second hour with the ``kafkawire`` command (issue 25), through the installed console script
against Apache Kafka: options where Kafka's tools accept them, errors at once, Java property names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kafkawire.client import Client

CONSOLE_SCRIPT = Path(sys.executable).parent / "kafkawire"

pytestmark = pytest.mark.broker


def kw(*args: str, stdin: bytes | None = None, timeout: float = 180) -> subprocess.CompletedProcess[bytes]:
    """Run ``kafkawire ARGS`` (no KAFKAWIRE_BOOTSTRAP: every test names its broker)."""
    env = {k: v for k, v in os.environ.items() if k != "KAFKAWIRE_BOOTSTRAP"}
    return subprocess.run([str(CONSOLE_SCRIPT), *args], input=stdin, capture_output=True, env=env,
                          timeout=timeout, check=False)


@pytest.fixture
def broker(kafka_broker: object) -> str:
    return kafka_broker.bootstrap  # type: ignore[attr-defined]


def _create(bootstrap: str, topic: str, partitions: int = 1) -> None:
    with Client(bootstrap) as c:
        c.create_topics({topic: partitions})


# ------------------------------------------------------------------- 6: global options before the command


def test_connection_options_before_the_command(broker: str, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("global")
    _create(broker, topic, 2)
    proc = kw("-b", broker, "topics", "list")
    assert proc.returncode == 0, proc.stderr
    assert topic in proc.stdout.decode()
    proc = kw(f"--bootstrap={broker}", "--timeout", "20", "-X", "client.id=cli-test", "produce", topic, "-q",
              stdin=b"a\nb\n")
    assert proc.returncode == 0, proc.stderr
    proc = kw("-b", broker, "consume", topic, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert sorted(json.loads(x)["value"] for x in proc.stdout.decode().splitlines()) == ["a", "b"]
    # Anything else before the command is still argparse's to judge.
    proc = kw("--no-such-option", "topics", "list")
    assert proc.returncode == 2 and b"unrecognized arguments: --no-such-option" in proc.stderr, proc.stderr


# ------------------------------------------------------------------- 2: produce to a missing topic


def test_produce_to_a_missing_topic_is_reported_at_once(broker: str, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("nosuch")
    proc = kw("produce", topic, "-b", broker, "--timeout", "60", stdin=b"x\n")
    assert proc.returncode == 1
    err = proc.stderr.decode()
    # One Metadata answer decides, as consume and offsets do; not "did not complete after 60.0 s".
    assert "UNKNOWN_TOPIC_OR_PARTITION" in err and f"topic {topic!r}" in err, err
    assert "did not complete" not in err, err
    with Client(broker) as c:
        assert topic not in c.metadata().topics  # nothing was created on the way
    _create(broker, topic)
    proc = kw("produce", topic, "-b", broker, "-p", "3", stdin=b"x\n")
    assert proc.returncode == 1 and f"topic {topic!r} has no partition 3".encode() in proc.stderr, proc.stderr
