"""``kafkawire bench`` with tiny sizes: the table lists every case and installed peer, the PNG is written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kafkawire.cli.bench import BenchResult, format_table
from kafkawire.cli.main import main

pytestmark = pytest.mark.broker


@pytest.fixture(params=["kafka", "noida"])
def broker_args(request: pytest.FixtureRequest) -> list[str]:
    """The consume case against Apache Kafka (the session's broker, by address) or an embedded noida-db."""
    if request.param == "kafka":
        return ["--bootstrap", request.getfixturevalue("kafka_broker").bootstrap]
    return ["--with-broker"]


def test_bench_table_and_chart(tmp_path: Path, capsys: pytest.CaptureFixture, broker_args: list[str]) -> None:
    chart = tmp_path / "chart.png"
    args = ["bench", "--records", "3000", "--batch-size", "500", "--record-size", "50", "--repeat", "1",
            "--slow-records", "1000", "--partitions", "2", *broker_args, "--output", str(chart)]
    assert main(args) == 0
    out = capsys.readouterr().out
    # The table says what it timed: the timer, the warm-up and the statistic.
    assert "timer: wall clock" in out and "warm-up" in out and "median of --repeat" in out and "(--repeat 1)" in out
    rows = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| case")]
    got = {(r.split("|")[1].strip(), r.split("|")[2].strip()) for r in rows}
    # Every peer in the test extra is installed here, so every row must be there.
    assert got == {
        ("decode", "kafkawire"), ("decode", "aiokafka (Cython)"), ("decode", "kafka-python"),
        ("encode", "kafkawire"), ("encode", "aiokafka (Cython)"), ("encode", "kafka-python"),
        ("consume", "kafkawire"), ("consume", "confluent-kafka"),
        ("produce", "kafkawire"), ("produce", "confluent-kafka"),
    }
    for r in rows:
        cells = [c.strip() for c in r.strip("|").split("|")]
        expected_records = 1000 if cells[1] == "kafka-python" else 3000
        assert int(cells[2]) == expected_records
        assert re.fullmatch(r"\d+\.\d{3} M", cells[4]) and float(cells[5]) > 0
        if cells[1] == "kafkawire":
            assert cells[6] == "1.00x"
    # The broker cases say how much of them was start-up, and the rate after it.
    assert "start-up: a new client's time to its first record" in out
    for case in ("produce", "consume"):
        for who in ("kafkawire", "confluent-kafka"):
            assert re.search(rf"  {case} {who}: \d+\.\d ms of \d+\.\d ms \(", out), (case, who, out)
    assert f"chart: {chart}" in out
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and chart.stat().st_size > 10_000


def test_format_table_ratio_is_per_record() -> None:
    # kafka-python measured on a fifth of the records in a tenth of the time: half kafkawire's rate.
    results = [
        BenchResult("decode", "kafkawire", 1000, 116_000, 0.010),
        BenchResult("decode", "kafka-python", 200, 23_200, 0.004),
    ]
    table = format_table(results)
    assert "| decode | kafka-python | 200 | 4.0 ms | 0.050 M | 5.8 | 2.00x |" in table


def test_bench_rejects_bad_sizes(capsys: pytest.CaptureFixture) -> None:
    assert main(["bench", "--records", "0", "--no-chart"]) == 1
    assert "--records must be >= 1" in capsys.readouterr().err
