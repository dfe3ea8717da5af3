"""The ``kafkawire`` commands, run for real against Apache Kafka and a noida-db broker (see conftest.py).

Most tests call :func:`kafkawire.cli.main.main` in-process (fast, and pytest shows the output); the ones
about signals, stdout piping and the ``broker`` command run the installed console script
(``.venv/bin/kafkawire``) in a subprocess.
"""

from __future__ import annotations

import datetime
import io
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kafkawire.cli.main import main
from kafkawire.client import Client
from kafkawire.testing import free_port

CONSOLE_SCRIPT = Path(sys.executable).parent / "kafkawire"
T0 = (int(time.time()) - 60) * 1000  # record timestamps of the ``filled`` topic

pytestmark = pytest.mark.broker


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def _json_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def _create(name: str, partitions: int = 1) -> None:
    assert main(["topics", "create", name, "--partitions", str(partitions)]) == 0


# ------------------------------------------------------------------------------------------- produce


def test_produce_lines_with_keys_then_consume_json(
    bootstrap: str, topic_name: Callable[..., str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    topic = topic_name("lines")
    _create(topic, 3)
    src = tmp_path / "in.txt"
    src.write_bytes(b"".join(b"user-%d:event %d\n" % (i % 4, i) for i in range(40)))
    assert main(["produce", topic, "--input", str(src), "--key-separator", ":"]) == 0
    out = tmp_path / "out.jsonl"
    assert main(["consume", topic, "--format", "json", "--output", str(out)]) == 0
    docs = _json_lines(out)
    assert len(docs) == 40
    assert sorted(d["value"] for d in docs) == sorted(f"event {i}" for i in range(40))
    # Same key, same partition (murmur2), and offsets dense from 0 in each partition.
    by_key: dict[str, set[int]] = {}
    for d in docs:
        assert d["topic"] == topic and d["headers"] is None  # Spark's columns: null when a record has none
        by_key.setdefault(d["key"], set()).add(d["partition"])
    assert sorted(by_key) == [f"user-{i}" for i in range(4)]
    assert all(len(parts) == 1 for parts in by_key.values())
    for p in {d["partition"] for d in docs}:
        offs = [d["offset"] for d in docs if d["partition"] == p]
        assert offs == list(range(len(offs)))


def test_produce_json_key_field_headers_compression(
    bootstrap: str, topic_name: Callable[..., str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    topic = topic_name("json")
    _create(topic)
    lines = [json.dumps({"id": f"u{i}", "n": i, "text": "é" * i}) for i in range(5)]
    _stdin(monkeypatch, ("\n".join(lines) + "\n\n").encode("utf-8"))  # a trailing blank line is skipped
    args = ["produce", topic, "--format", "json", "--key-field", "id", "--compression", "gzip"]
    assert main([*args, "--headers", "source=cli,v=1", "--headers", "trace=a=b"]) == 0
    with Client(bootstrap) as client:
        cols = client.fetch(topic, 0, 0)
    assert len(cols) == 5
    assert set(cols.batch_codec.tolist()) == {1}  # gzip
    assert cols.key.to_pylist() == [f"u{i}".encode() for i in range(5)]
    assert [v.decode("utf-8") for v in cols.value.to_pylist()] == lines
    assert cols.headers_of(3) == [("source", b"cli"), ("v", b"1"), ("trace", b"a=b")]

    out = tmp_path / "out.jsonl"
    assert main(["consume", topic, "-f", "json", "-o", str(out), "--binary", "base64"]) == 0
    doc = _json_lines(out)[2]
    assert doc["key"] == "dTI=" and doc["headers"][0] == {"key": "source", "value": "Y2xp"}


def test_produce_json_rejects_bad_input(
    bootstrap: str, topic_name: Callable[..., str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    topic = topic_name("badjson")
    _create(topic)
    capsys.readouterr()
    _stdin(monkeypatch, b'{"id": 1}\nnot json\n')
    assert main(["produce", topic, "--format", "json"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kafkawire: error: line 2: not JSON") and "Traceback" not in err


def test_produce_whole_file_to_a_partition(bootstrap: str, topic_name: Callable[..., str], tmp_path: Path) -> None:
    topic = topic_name("file")
    _create(topic, 3)
    blob = bytes(range(256)) * 40 + b"\n\nlast line\n"
    src = tmp_path / "blob.bin"
    src.write_bytes(blob)
    assert main(["produce", topic, "-i", str(src), "--format", "file", "--partition", "2", "--key", "k"]) == 0
    with Client(bootstrap) as client:
        assert [len(client.fetch(topic, p, 0)) for p in (0, 1)] == [0, 0]
        cols = client.fetch(topic, 2, 0)
    assert cols.value.to_pylist() == [blob] and cols.key.to_pylist() == [b"k"]


# ------------------------------------------------------------------------------------------- consume


@pytest.fixture
def filled(bootstrap: str, topic_name: Callable[..., str]) -> str:
    """A 2-partition topic: partition 0 has values a0..a9 with timestamps T0..T0+9, partition 1 b0..b4 with
    T0..T0+4. T0 is a recent whole second: brokers delete records older than retention.ms (7 days by
    default) by their timestamps, so 1970 timestamps would vanish under the test's feet."""
    topic = topic_name("filled")
    _create(topic, 2)
    with Client(bootstrap) as client:
        client.produce(topic, [b"a%d" % i for i in range(10)], partition=0, timestamps=list(range(T0, T0 + 10)))
        client.produce(topic, [b"b%d" % i for i in range(5)], partition=1, timestamps=list(range(T0, T0 + 5)))
    return topic


def _consume_values(tmp_path: Path, topic: str, *extra: str) -> list[bytes]:
    out = tmp_path / f"values-{time.monotonic_ns()}.txt"
    assert main(["consume", topic, "-o", str(out), *extra]) == 0
    return out.read_bytes().splitlines()


def test_consume_start_positions_and_limits(filled: str, tmp_path: Path) -> None:
    everything = [b"a%d" % i for i in range(10)] + [b"b%d" % i for i in range(5)]
    assert sorted(_consume_values(tmp_path, filled)) == sorted(everything)
    assert _consume_values(tmp_path, filled, "--partition", "0", "--from", "7") == [b"a7", b"a8", b"a9"]
    assert _consume_values(tmp_path, filled, "-p", "0", "--from", f"@{T0 + 4}", "-n", "2") == [b"a4", b"a5"]
    # As ISO 8601 (UTC): T0 + 8 ms. Partition 1 has nothing that late, so it starts at its end.
    iso = datetime.datetime.fromtimestamp((T0 + 8) / 1000, datetime.timezone.utc).isoformat(timespec="milliseconds")
    assert _consume_values(tmp_path, filled, "--from", iso) == [b"a8", b"a9"]
    assert _consume_values(tmp_path, filled, "--from", "latest") == []
    assert _consume_values(tmp_path, filled, "-p", "1", "--print-key", "--separator", "|", "-n", "1") == [b"|b0"]


def test_consume_parquet(filled: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "out.parquet"
    capsys.readouterr()
    assert main(["consume", filled, "--format", "parquet", "--output", str(out), "--progress"]) == 0
    err = capsys.readouterr().err
    assert "15/15" in err and "records" in err  # the tqdm bar reached the end offsets it was given
    table = pq.read_table(out)
    assert table.num_rows == 15
    assert table.column_names == ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType",
                                  "headers"]
    rows = sorted(zip(table["partition"].to_pylist(), table["offset"].to_pylist(), table["value"].to_pylist()))
    assert rows[:2] == [(0, 0, b"a0"), (0, 1, b"a1")] and rows[-1] == (1, 4, b"b4")
    # An empty read still leaves a readable file with the same columns.
    empty = tmp_path / "empty.parquet"
    assert main(["consume", filled, "-f", "parquet", "-o", str(empty), "--from", "latest"]) == 0
    assert pq.read_table(empty).num_rows == 0 and pq.read_table(empty).column_names == table.column_names



def test_consume_to_unwritable_path_is_a_clean_error(
    filled: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    capsys.readouterr()
    for fmt in ("parquet", "json"):
        assert main(["consume", filled, "-f", fmt, "-o", str(tmp_path / "missing" / f"out.{fmt}")]) == 1
        err = capsys.readouterr().err
        assert err.startswith("kafkawire: error: cannot write") and "Traceback" not in err


def test_consume_group_commits_and_offsets_show_lag(
    filled: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert _consume_values(tmp_path, filled, "-p", "0", "--group", "g1", "-n", "3") == [b"a0", b"a1", b"a2"]
    capsys.readouterr()
    assert main(["offsets", filled, "--group", "g1", "--json", "--time", f"@{T0 + 6}"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["partitions"] == [
        {"partition": 0, "earliest": 0, "latest": 10, "at_time": 6, "committed": 3, "lag": 7},
        {"partition": 1, "earliest": 0, "latest": 5, "at_time": -1, "committed": None, "lag": 5},
    ]
    # The next run of the same group goes on where the last one stopped.
    assert _consume_values(tmp_path, filled, "-p", "0", "--group", "g1", "-n", "2") == [b"a3", b"a4"]
    assert main(["offsets", filled, "--group", "g1"]) == 0
    table = capsys.readouterr().out
    assert "COMMITTED" in table and "total lag 10" in table


def test_consume_ends_at_a_transaction_marker(bootstrap: str, topic_name: Callable[..., str], tmp_path: Path) -> None:
    """A log that ends in commit/abort markers (offsets with no record to read): consume still stops at the
    end offsets it saw at start. Written by librdkafka's transactional producer: one committed, one aborted."""
    from confluent_kafka import Producer

    topic = topic_name("txn")
    _create(topic)
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"tx-{topic}"})
    p.init_transactions(30)
    for values, commit in (([b"c1", b"c2"], True), ([b"a1"], False)):
        p.begin_transaction()
        for v in values:
            p.produce(topic, value=v, partition=0)
        p.flush(30)
        (p.commit_transaction if commit else p.abort_transaction)(30)
    # Kafka writes the markers after EndTxn returns (KIP-98): wait until the second one is in the log.
    with Client(bootstrap) as client:
        deadline = time.monotonic() + 30
        while client.list_offsets(topic)[0].offset < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert client.list_offsets(topic)[0].offset == 5  # 3 records + 2 markers
    # read_uncommitted, as Kafka's console consumer shows them: the aborted record too, the markers never.
    assert _consume_values(tmp_path, topic) == [b"c1", b"c2", b"a1"]


# -------------------------------------------------------------------------------------------- topics


def test_topics_create_list_describe_delete(
    bootstrap: str, topic_name: Callable[..., str], capsys: pytest.CaptureFixture
) -> None:
    topic = topic_name("admin")
    assert main(["topics", "create", topic, "-p", "4", "--config", "retention.ms=60000"]) == 0
    assert main(["topics", "create", topic, "--if-not-exists"]) == 0
    assert main(["topics", "create", topic]) == 1
    assert "TopicAlreadyExistsError" in capsys.readouterr().err
    assert main(["topics", "list", "--json"]) == 0
    assert {"name": topic, "partitions": 4} in json.loads(capsys.readouterr().out)
    assert main(["topics", "describe", topic, "--json"]) == 0
    (desc,) = json.loads(capsys.readouterr().out)
    assert [p["partition"] for p in desc["partitions"]] == [0, 1, 2, 3]
    assert all(p["leader"] >= 0 and p["records"] == 0 for p in desc["partitions"])
    assert main(["topics", "describe", topic]) == 0
    assert "PARTITION" in capsys.readouterr().out
    assert main(["topics", "delete", topic]) == 0
    assert main(["topics", "list"]) == 0
    assert topic not in capsys.readouterr().out
    assert main(["topics", "delete", topic]) == 1
    assert "UnknownTopicOrPartitionError" in capsys.readouterr().err
    assert main(["topics", "delete", topic, "--if-exists"]) == 0


def test_errors_are_one_line_without_traceback(bootstrap: str, capsys: pytest.CaptureFixture) -> None:
    capsys.readouterr()
    assert main(["consume", "no-such-topic"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kafkawire: error: UnknownTopicOrPartitionError") and err.count("\n") == 1
    # Nothing listens on a freshly picked free port: connection refused, reported within --timeout.
    dead = f"127.0.0.1:{free_port()}"
    t0 = time.monotonic()
    assert main(["topics", "list", "--bootstrap", dead, "--timeout", "1"]) == 1
    assert time.monotonic() - t0 < 15
    err = capsys.readouterr().err
    # One line that names the address nobody answered at (the class name is the client's business).
    assert err.startswith("kafkawire: error: ") and err.count("\n") == 1 and f"cannot connect to {dead}" in err
    assert main(["consume", "x", "--from", "yesterday"]) == 1
    assert "bad time 'yesterday'" in capsys.readouterr().err


# --------------------------------------------------------------------------- subprocess: console script


def _env(bootstrap: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("KAFKAWIRE_BOOTSTRAP", None)
    if bootstrap:
        env["KAFKAWIRE_BOOTSTRAP"] = bootstrap
    return env


def test_console_script_pipes_produce_into_consume(bootstrap: str, topic_name: Callable[..., str]) -> None:
    topic = topic_name("script")
    env = _env(bootstrap)
    subprocess.run([CONSOLE_SCRIPT, "topics", "create", topic], env=env, check=True, timeout=60)
    lines = b"".join(b"line %d\n" % i for i in range(1000))
    res = subprocess.run([CONSOLE_SCRIPT, "produce", topic, "-z", "zstd"], input=lines, env=env,
                         capture_output=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert b"produced 1000 records" in res.stderr
    # `| head`: the reader goes away early; the command must not die with a BrokenPipe traceback.
    pipe = subprocess.run(f"'{CONSOLE_SCRIPT}' consume {topic} | head -n 3", shell=True, env=env,
                          capture_output=True, timeout=60)
    assert pipe.stdout == b"line 0\nline 1\nline 2\n"
    assert b"Traceback" not in pipe.stderr
    res = subprocess.run([CONSOLE_SCRIPT, "consume", topic], env=env, capture_output=True, timeout=60)
    assert res.returncode == 0 and res.stdout == lines
    assert res.stderr.strip().endswith(b"consumed 1000 records from " + topic.encode())


def _readline(proc: subprocess.Popen[bytes], timeout: float = 30.0) -> bytes:
    """One line of the child's stdout, failing (not hanging) when none comes within ``timeout``."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, f"no output within {timeout} s"
    return proc.stdout.readline()


def test_console_script_follow_until_sigterm(bootstrap: str, topic_name: Callable[..., str]) -> None:
    topic = topic_name("follow")
    _create(topic)
    with Client(bootstrap) as client:
        client.produce(topic, [b"early"])
        # --from 0: records written at any time after the start are read, so the test has no race.
        # Unbuffered pipe: select() must see every line that readline() has not consumed yet.
        proc = subprocess.Popen([CONSOLE_SCRIPT, "consume", topic, "--follow", "--from", "0"],
                                env=_env(bootstrap), stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
        try:
            assert _readline(proc) == b"early\n"  # it is in its fetch loop now
            client.produce(topic, [b"late-1", b"late-2"])  # past the end offset it saw at start
            assert _readline(proc) == b"late-1\n"
            assert _readline(proc) == b"late-2\n"
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 0, err
    assert out == b"" and b"consumed 3 records" in err and b"Traceback" not in err


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _run_broker(args: list[str]) -> tuple[subprocess.Popen[bytes], str]:
    proc = subprocess.Popen([CONSOLE_SCRIPT, "broker", *args], env=_env(None),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode().strip()
    assert line.startswith("127.0.0.1:"), proc.stderr.read() if proc.stderr else line
    return proc, line


def _stop_broker(proc: subprocess.Popen[bytes], sig: int) -> tuple[int, bytes]:
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err


def test_broker_command_serves_and_keeps_data_dir(tmp_path: Path) -> None:
    port = free_port()
    data = tmp_path / "data"
    proc, addr = _run_broker(["--port", str(port), "--data-dir", str(data)])
    try:
        assert addr == f"127.0.0.1:{port}"
        assert main(["topics", "create", "kept", "--bootstrap", addr]) == 0
        with Client(addr) as client:
            client.produce("kept", [b"survives", b"restart"])
    finally:
        rc, err = _stop_broker(proc, signal.SIGTERM)
    assert rc == 0 and b"SIGTERM: broker stopped" in err
    assert not _port_open(port)
    # A second run on the same directory serves the records written by the first (clean shutdown).
    proc, addr = _run_broker(["--data-dir", str(data)])
    try:
        with Client(addr) as client:
            assert client.fetch("kept", 0, 0).value.to_pylist() == [b"survives", b"restart"]
    finally:
        rc, _ = _stop_broker(proc, signal.SIGINT)
    assert rc == 0


def test_broker_command_kafka_keeps_data_dir(tmp_path: Path) -> None:
    """`kafkawire broker --kind kafka`: Apache Kafka itself; SIGTERM is its controlled shutdown, and a second
    run on the same --data-dir serves what the first one acknowledged."""
    data = tmp_path / "kafka-data"
    proc, addr = _run_broker(["--kind", "kafka", "--data-dir", str(data)])
    try:
        assert main(["topics", "create", "kept", "--bootstrap", addr, "-p", "2"]) == 0
        with Client(addr) as client:
            client.produce("kept", [b"survives", b"restart"], partition=1)
    finally:
        rc, err = _stop_broker(proc, signal.SIGTERM)
    assert rc == 0 and b"SIGTERM: broker stopped" in err
    assert (data / "server.properties").exists()  # the broker's files stayed where they were asked to
    proc, addr = _run_broker(["--kind", "kafka", "--data-dir", str(data)])
    try:
        with Client(addr) as client:
            assert client.fetch("kept", 1, 0).value.to_pylist() == [b"survives", b"restart"]
    finally:
        rc, _ = _stop_broker(proc, signal.SIGINT)
    assert rc == 0


def test_broker_command_tansu_and_bad_options(capsys: pytest.CaptureFixture) -> None:
    proc, addr = _run_broker(["--kind", "tansu"])
    try:
        assert main(["topics", "create", "on-tansu", "--bootstrap", addr]) == 0
        assert main(["topics", "list", "--bootstrap", addr, "--json"]) == 0
        assert {"name": "on-tansu", "partitions": 1} in json.loads(capsys.readouterr().out)
    finally:
        rc, _ = _stop_broker(proc, signal.SIGINT)
    assert rc == 0
    assert main(["broker", "--kind", "tansu", "--data-dir", "/tmp/x"]) == 1
    assert "--data-dir needs --kind noida or kafka" in capsys.readouterr().err


def test_stop_signal_during_a_write_waits_until_the_batch_is_counted() -> None:
    """The race `test_console_script_follow_until_sigterm` once lost (a SIGTERM between writing a batch
    and counting it printed "consumed 1 record" after 3 lines): a signal inside `held()` is raised only
    after the block completes; outside it is raised at once."""
    from kafkawire.cli.consume import _stop_signals

    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with _stop_signals() as stops:
        counted = 0
        with pytest.raises(KeyboardInterrupt):
            with stops.held():
                os.kill(os.getpid(), signal.SIGTERM)  # delivered here, while the batch is being written
                time.sleep(0.05)
                counted += 2  # still runs: the signal is held
        assert counted == 2
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)  # interrupted at once, outside held()
        assert not stops.pending
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before  # handlers restored
