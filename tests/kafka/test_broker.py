"""start_broker("kafka"): the life cycle of the reference broker, as every Kafka-backed test relies on it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kafkawire.client import Client
from kafkawire.client.net.connection import BrokerConnection
from kafkawire.testing import DEFAULT_KAFKA_VERSION, LEGACY_KAFKA_VERSION, BrokerStartError, start_broker
from kafkawire.testing.kafka import kafka_version

pytestmark = pytest.mark.broker

PRODUCE = 0


def produce_min_version(bootstrap: str) -> int:
    """The lowest Produce version the broker serves (0 on Kafka 3.x, 3 on 4.x after KIP-896)."""
    host, port = bootstrap.rsplit(":", 1)
    with BrokerConnection(host, int(port)) as conn:
        conn.connect()
        return conn.versions.broker[PRODUCE][0]


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for its reaper counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_start_stop_and_context_manager(topic_name):
    topic = topic_name()
    with start_broker("kafka") as broker:
        assert broker.running and broker.kind == "kafka"
        assert broker.version == kafka_version() == DEFAULT_KAFKA_VERSION
        assert broker.bootstrap == f"127.0.0.1:{broker.port}" == broker.bootstrap_for("PLAINTEXT")
        with pytest.raises(ValueError, match="no SSL listener"):
            broker.bootstrap_for("SSL")
        pid, log_dir = broker.pid, broker.log_dir
        assert pid is not None and pid_alive(pid) and log_dir.is_dir()
        with Client(broker.bootstrap) as client:
            client.create_topics([topic])
            client.produce(topic, [b"one", b"two"], partition=0)
            assert [r.value for r in client.fetch(topic, 0, 0).to_records()] == [b"one", b"two"]
    assert not broker.running and broker.pid is None
    assert not pid_alive(pid)
    assert not log_dir.exists()  # the broker owned its temporary directory
    broker.stop()  # twice is fine


def test_restart_graceful_and_crash_keep_the_log(topic_name):
    topic = topic_name()
    values = [b"v%d" % i for i in range(200)]
    with start_broker("kafka") as broker:
        bootstrap = broker.bootstrap
        with Client(bootstrap) as client:
            client.create_topics([topic])
            client.produce(topic, values[:100], partition=0, acks=-1)
        pid = broker.pid
        broker.restart(graceful=True)  # SIGTERM: controlled shutdown
        assert broker.running and broker.bootstrap == bootstrap and broker.pid != pid and not pid_alive(pid)
        with Client(bootstrap) as client:
            assert [r.value for r in client.fetch(topic, 0, 0).to_records()] == values[:100]
            client.produce(topic, values[100:], partition=0, acks=-1)
        pid = broker.pid
        broker.restart(graceful=False)  # SIGKILL: the crash
        assert broker.running and broker.bootstrap == bootstrap and broker.pid != pid and not pid_alive(pid)
        with Client(bootstrap) as client:
            fetched: list[bytes] = []
            while len(fetched) < len(values):
                batch = [r.value for r in client.fetch(topic, 0, len(fetched)).to_records()]
                assert batch, f"log ends at {len(fetched)} after the crash, {len(values)} were acknowledged"
                fetched += batch
            assert fetched == values


CHILD = textwrap.dedent(
    """
    import sys, threading
    from kafkawire.client import Client
    from kafkawire.testing import start_broker

    brokers = []
    # Started from a thread that ends at once: PR_SET_PDEATHSIG fires when the *thread* that forked the
    # JVM exits, so the broker must have been forked by the long-lived spawner thread to survive this.
    starter = threading.Thread(target=lambda: brokers.append(start_broker("kafka", log_dir=sys.argv[1])))
    starter.start()
    starter.join()
    broker = brokers[0]
    with Client(broker.bootstrap) as client:
        client.metadata()  # still answering after its starting thread is gone
    print(broker.pid, flush=True)
    sys.stdin.read()  # until killed
    """
)


def test_broker_dies_with_its_parent(tmp_path):
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path / "broker")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    jvm = 0
    try:
        line = child.stdout.readline()
        assert line.strip().isdigit(), f"child printed {line!r}; stderr: {child.stderr.read()[-3000:]}"
        jvm = int(line)
        assert pid_alive(jvm)
        child.send_signal(signal.SIGKILL)  # no atexit, no finally: only the kernel can stop the JVM
        child.wait(10)
        deadline = time.monotonic() + 10
        while pid_alive(jvm) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not pid_alive(jvm), f"Apache Kafka (pid {jvm}) outlived the process that started it"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if jvm and pid_alive(jvm):  # the failure case: do not leave the JVM behind
            os.kill(jvm, signal.SIGKILL)


EXITING_CHILD = textwrap.dedent(
    """
    import sys
    from kafkawire.testing import start_broker

    broker = start_broker("kafka", log_dir=sys.argv[1])
    print(broker.pid, flush=True)
    # No stop(): the interpreter exits with the broker running, and the exit handlers stop it.
    """
)


def test_a_broker_left_running_gets_a_controlled_shutdown_at_exit(tmp_path):
    # kafkawire's exit handler (SIGTERM: Kafka's controlled shutdown) must run before mirakuru's, which
    # SIGKILLs whatever it started. Only a controlled shutdown writes the clean-shutdown marker.
    log_dir = tmp_path / "broker"
    res = subprocess.run(
        [sys.executable, "-c", EXITING_CHILD, str(log_dir)], capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr[-3000:]
    jvm = int(res.stdout.strip())
    assert not pid_alive(jvm)
    assert (log_dir / "kraft-logs" / ".kafka_cleanshutdown").exists(), sorted(
        p.name for p in (log_dir / "kraft-logs").iterdir()
    )


def test_version_from_the_environment(monkeypatch):
    monkeypatch.setenv("KAFKAWIRE_KAFKA_VERSION", LEGACY_KAFKA_VERSION)
    with start_broker("kafka") as broker:
        assert broker.version == LEGACY_KAFKA_VERSION
        cmdline = Path(f"/proc/{broker.pid}/cmdline").read_bytes().decode()
        assert f"kafka_2.13-{LEGACY_KAFKA_VERSION}.jar" in cmdline
        assert f"kafka_2.13-{DEFAULT_KAFKA_VERSION}.jar" not in cmdline
        # What the broker itself says: 3.x still serves Produce v0, which 4.0 removed (KIP-896).
        assert produce_min_version(broker.bootstrap) == 0
    monkeypatch.delenv("KAFKAWIRE_KAFKA_VERSION")
    assert kafka_version() == DEFAULT_KAFKA_VERSION
    assert kafka_version("4.1.0") == "4.1.0"


def test_a_version_maven_central_does_not_have_is_a_clear_error(tmp_path):
    with pytest.raises(BrokerStartError) as info:
        start_broker("kafka", version="3.99.7", log_dir=tmp_path)
    message = str(info.value)
    assert "Apache Kafka 3.99.7" in message and "Maven Central" in message
    # Maven's own reason, without its colour codes and generic advice.
    assert "Could not find artifact org.apache.kafka:kafka_2.13:jar:3.99.7" in message
    assert "\x1b[" not in message and "Re-run Maven" not in message
