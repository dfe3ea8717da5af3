"""What :func:`kafkawire.bench.tune.tune` found, for people and programs: the table, the recommended
properties, the JSON file and a chart (PNG with matplotlib, else an SVG written here, no dependency)."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from .trial import Trial
from .tune import TuneReport

__all__ = ["format_recommendation", "format_table", "write_chart", "write_json"]

_HEADER = ("role", "trial", "records/s", "MB/s", "ack p50/p99 ms", "latency p50/p99 ms", "CPU us/record",
           "settings")


def _pair(p: tuple[float, float] | None) -> str:
    return "-" if p is None else f"{p[0]:.1f} / {p[1]:.1f}"


def _p99(p: tuple[float, float] | None) -> str:
    return "-" if p is None else f"{p[1]:.1f}"


def _row(t: Trial, best: dict[str, str] | None) -> list[str]:
    mark = " *" if best is not None and t.settings == best else ""
    if t.error:
        return [t.role, t.label() + mark, "failed", "-", "-", "-", "-", t.error[:80]]
    cpu = t.cpu_us_per_record
    settings = " ".join(f"{k}={v}" for k, v in t.settings.items())
    return [t.role, t.label() + mark, f"{t.records_per_s:,.0f}", f"{t.mb_per_s:.1f}", _pair(t.ack_ms),
            _pair(t.latency_ms), "-" if cpu is None else f"{cpu:.2f}", settings]


def format_table(report: TuneReport) -> str:
    """Aligned text table, one row per trial in the order run; ``*`` marks each role's best for the goal."""
    rows = [list(_HEADER)] + [_row(t, report.best.get(t.role)) for t in report.trials]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEADER))]
    right = {2, 3, 4, 5, 6}
    lines = []
    for r in rows:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_recommendation(report: TuneReport) -> str:
    """The best settings per role as Java client properties (``key=value`` lines, ready for
    ``Producer.from_properties`` / ``Consumer.from_properties``), with the topic's partition count and the
    trade-offs a property brings as comments."""
    lines = []
    for role in ("producer", "consumer"):
        if role not in report.best:
            continue
        best = report.best[role]
        trial = next((t for t in report.trials if t.role == role and t.settings == best), None)
        measured = ""
        if trial is not None and not trial.error:
            measured = f": {trial.records_per_s:,.0f} records/s, latency p99 {_p99(trial.latency_ms)} ms"
        lines.append(f"# recommended {role} properties (--goal {report.goal}){measured}")
        if "partitions" in best:
            lines.append(f"# topic: {best['partitions']} partitions did best")
        if best.get("acks") == "1":
            lines.append("# acks=1: only the leader acknowledges (not idempotent; a leader failure can lose "
                         "acknowledged records); use acks=all where that matters")
        lines += [f"{k}={v}" for k, v in report.recommended(role).items()]
    return "\n".join(lines)


def write_json(report: TuneReport, path: str | Path) -> None:
    """Every trial, the best settings and the recommendation, as JSON."""
    Path(path).write_text(json.dumps(report.to_json(), indent=2) + "\n")


def write_chart(report: TuneReport, path: str | Path) -> Path:
    """Records/s per trial, one panel per role, the best marked. ``path``'s suffix is replaced by ``.png``
    when matplotlib is installed, else ``.svg`` (written by hand); returns the file written."""
    path = Path(path)
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        out = path.with_suffix(".svg")
        out.write_text(_svg(report))
        return out
    out = path.with_suffix(".png")
    roles = [r for r in ("producer", "consumer") if any(t.role == r for t in report.trials)]
    fig, axes = plt.subplots(len(roles), 1, figsize=(10, 1.5 + 0.32 * len(report.trials)), squeeze=False)
    for ax, role in zip(axes[:, 0], roles):
        trials = [t for t in report.trials if t.role == role][::-1]
        best = report.best.get(role)
        colors = ["#d9480f" if t.settings == best else "#868e96" for t in trials]
        ax.barh([t.label() for t in trials], [t.records_per_s for t in trials], color=colors)
        for y, t in enumerate(trials):
            text = "failed" if t.error else f" {t.records_per_s:,.0f}/s  p99 {_p99(t.latency_ms)} ms"
            ax.text(t.records_per_s, y, text, va="center", fontsize=7)
        ax.set_title(f"{role} trials (best for {report.goal} in orange)", loc="left", fontsize=9)
        ax.set_xlabel("records/s")
        ax.set_xlim(0, max([t.records_per_s for t in trials] + [1]) * 1.45)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def _svg(report: TuneReport) -> str:
    """The chart as a plain SVG: a horizontal bar per trial."""
    bar_h, label_w, width = 16, 230, 760
    top = 24
    rows: list[str] = []
    y = top
    for role in ("producer", "consumer"):
        trials = [t for t in report.trials if t.role == role]
        if not trials:
            continue
        rows.append(f'<text x="4" y="{y + 12}" font-weight="bold">{role} (records/s; best for {report.goal} '
                    'in orange)</text>')
        y += bar_h + 4
        top_rate = max([t.records_per_s for t in trials] + [1.0])
        for t in trials:
            w = (width - label_w - 170) * t.records_per_s / top_rate
            color = "#d9480f" if t.settings == report.best.get(role) else "#868e96"
            value = "failed" if t.error else f"{t.records_per_s:,.0f}/s p99 {_p99(t.latency_ms)} ms"
            rows.append(f'<text x="4" y="{y + 12}">{escape(t.label())}</text>'
                        f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h - 3}" fill="{color}"/>'
                        f'<text x="{label_w + w + 4:.1f}" y="{y + 12}">{escape(value)}</text>')
            y += bar_h
        y += 8
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y + 8}" '
            f'font-family="sans-serif" font-size="11">\n<title>kafkawire tune</title>\n'
            + "\n".join(rows) + "\n</svg>\n")
