"""The sweep's logic without a broker: coordinate descent, overrides, scoring, and the report's table,
recommendation and hand-written SVG chart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkawire.bench import report as rep
from kafkawire.bench.trial import Trial
from kafkawire.bench.tune import (
    Dimension,
    TuneReport,
    _apply_overrides,
    _descend,
    _median_trial,
    _split_overrides,
    score,
)


def _trial(role: str, settings: dict[str, str], varied: str, rate: float, p99: float = 10.0) -> Trial:
    return Trial(role, settings, varied, int(rate), int(rate) * 116, 1.0, 0.5, ack_ms=(1.0, 2.0),
                 latency_ms=(p99 / 2, p99))


def test_descent_keeps_the_best_value_of_each_setting_and_measures_each_combination_once() -> None:
    dims = [Dimension("producer", "a", ("1", "2", "3"), "1"), Dimension("producer", "b", ("x", "y"), "x")]
    rates = {("1", "x"): 10, ("2", "x"): 30, ("3", "x"): 20, ("2", "y"): 40}
    calls: list[tuple[str, str]] = []

    def run(settings: dict[str, str], varied: str) -> Trial:
        key = (settings["a"], settings["b"])
        calls.append(key)
        return _trial("producer", settings, varied, rates[key])

    assert _descend(dims, "throughput", run) == {"a": "2", "b": "y"}
    # (1, x) is the baseline and a's first value: measured once; (2, x) reused when b is varied.
    assert calls == [("1", "x"), ("2", "x"), ("3", "x"), ("2", "y")]


def test_descent_for_latency_and_a_failed_trial() -> None:
    dims = [Dimension("consumer", "w", ("10", "500"), "500")]

    def run(settings: dict[str, str], varied: str) -> Trial:
        if settings["w"] == "10":
            return Trial("consumer", settings, varied, 0, 0, 0.0, 0.0, error="refused")
        return _trial("consumer", settings, varied, 100, p99=50)

    assert _descend(dims, "latency", run) == {"w": "500"}  # the failed value never wins
    assert score(run({"w": "10"}, "w"), "throughput") == float("-inf")
    assert score(_trial("p", {}, "", 5, p99=3), "latency") == -3


def test_a_failed_baseline_stops_the_sweep() -> None:
    dims = [Dimension("producer", "acks", ("all", "1"), "all")]
    with pytest.raises(RuntimeError, match="producer baseline trial failed: SaslAuthenticationFailed"):
        _descend(dims, "throughput", lambda s, v: Trial("producer", s, v, 0, 0, 0, 0, error="SaslAuthenticationFailed"))


def test_overrides() -> None:
    split = _split_overrides({"linger.ms": ["0"], "fetch.max.wait.ms": ["5", "50"], "partitions": ["2"],
                              "consumer:partitions": ["4"], "max.in.flight.requests.per.connection": ["1"]})
    assert split["producer"] == {"linger.ms": ["0"], "partitions": ["2"],
                                 "max.in.flight.requests.per.connection": ["1"]}
    assert split["consumer"] == {"fetch.max.wait.ms": ["5", "50"], "partitions": ["4"]}
    with pytest.raises(ValueError, match="unknown setting 'lingerms'"):
        _split_overrides({"lingerms": ["1"]})
    with pytest.raises(ValueError, match="prefix is producer: or consumer:"):
        _split_overrides({"admin:x": ["1"]})
    dims = _apply_overrides([Dimension("producer", "linger.ms", ("0", "5"), "5")], {"linger.ms": ["7", "9"],
                                                                                    "batch.size": ["1024"]})
    assert dims == [Dimension("producer", "linger.ms", ("7", "9"), "7"),
                    Dimension("producer", "batch.size", ("1024",), "1024")]


def _report() -> TuneReport:
    r = TuneReport("throughput", "h:1", 100)
    best = {"partitions": "3", "linger.ms": "5", "acks": "1"}
    r.trials = [_trial("producer", {"partitions": "3", "linger.ms": "0", "acks": "all"}, "", 1000),
                _trial("producer", best, "linger.ms", 5000),
                Trial("consumer", {"partitions": "1", "fetch.max.wait.ms": "100"}, "", 0, 0, 0, 0, error="boom <&>"),
                _trial("consumer", {"partitions": "1", "fetch.max.wait.ms": "500"}, "fetch.max.wait.ms", 9e5)]
    r.best = {"producer": best, "consumer": {"partitions": "1", "fetch.max.wait.ms": "500"}}
    return r


def test_table_and_recommendation() -> None:
    r = _report()
    table = rep.format_table(r).splitlines()
    assert table[0].split()[:3] == ["role", "trial", "records/s"] and set(table[1]) <= {"-", " "}
    assert "linger.ms=5 *" in table[3] and "5,000" in table[3] and "1.0 / 2.0" in table[3]
    assert "failed" in table[4] and "boom" in table[4]
    text = rep.format_recommendation(r)
    assert "linger.ms=5\nacks=1" in text and "partitions=" not in text and "# topic: 3 partitions" in text
    assert "acks=1: only the leader acknowledges" in text
    assert "fetch.max.wait.ms=500" in text


def test_json_and_svg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    r = _report()
    rep.write_json(r, tmp_path / "t.json")
    data = json.loads((tmp_path / "t.json").read_text())
    assert data["recommended"]["producer"] == {"linger.ms": "5", "acks": "1"} and len(data["trials"]) == 4
    # Without matplotlib the chart is an SVG written by hand (names escaped).
    import builtins

    real_import = builtins.__import__

    def no_matplotlib(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    out = rep.write_chart(r, tmp_path / "chart.png")
    assert out == tmp_path / "chart.svg"
    svg = out.read_text()
    assert svg.startswith("<svg ") and svg.count("<rect ") == 4 and "failed" in svg and "#d9480f" in svg
    import xml.dom.minidom

    xml.dom.minidom.parseString(svg)  # well-formed


def test_median_of_repeated_runs() -> None:
    runs = [_trial("producer", {}, "", r) for r in (300, 100, 200)]
    assert _median_trial(runs).records_per_s == 200
    bad = Trial("producer", {}, "", 0, 0, 0, 0, error="x")
    assert _median_trial([runs[0], bad, runs[1]]) is bad
