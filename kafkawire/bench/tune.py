"""``tune()``: sweep producer and consumer settings on a cluster and recommend properties for a goal.

A full grid of every setting is too large to run (5 settings of 3-5 values each is hundreds of trials), so
the sweep goes one setting at a time (coordinate descent): it starts from kafkawire's defaults, tries every
value of the first setting with the others held, keeps the best for the goal, and moves on to the next
setting with that value kept. A default sweep is about 30 trials; ``quick`` runs a handful on fewer records.

Trials are measured by :mod:`kafkawire.bench.workloads`: a producer trial is a :class:`~kafkawire.Producer`
writing keyed records with ``send()`` and ``flush()`` while a second client reads them back (end-to-end
latency); a consumer trial is a :class:`~kafkawire.Consumer` assigned every partition of a topic filled
beforehand. Settings are Java client property names, so the recommendation can go straight to
``Producer.from_properties`` / ``Consumer.from_properties``; ``partitions`` is the topic's partition count.

Topics: the sweep creates its own (``kafkawire-tune-<random>-p<N>``) and deletes them when it ends, also
on an error or Ctrl-C. It writes to an existing topic only when given one with ``allow_existing=True``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .trial import Trial

__all__ = [
    "CONSUMER_DIMENSIONS",
    "PRODUCER_DIMENSIONS",
    "QUICK_CONSUMER_DIMENSIONS",
    "QUICK_PRODUCER_DIMENSIONS",
    "Dimension",
    "Trial",
    "TuneReport",
    "tune",
]

GOALS = ("throughput", "latency")


@dataclass(frozen=True)
class Dimension:
    """One swept setting: ``prop`` (a Java client property name, or ``partitions``), the values tried
    (as the property file would spell them) and the baseline the sweep starts from."""

    role: str  # "producer" or "consumer"
    prop: str
    values: tuple[str, ...]
    default: str


def _dims(role: str, spec: Sequence[tuple[str, tuple[str, ...], str]]) -> tuple[Dimension, ...]:
    return tuple(Dimension(role, prop, values, default) for prop, values, default in spec)


#: The default producer sweep. ``batch.size`` is kafkawire's buffer per topic before a write (its
#: ``Producer.batch_bytes``); ``acks=1`` is tried too, and flagged in the recommendation if it wins.
#: ``max.in.flight.requests.per.connection`` (1 or the default 5) matters to an idempotent producer only.
PRODUCER_DIMENSIONS = _dims("producer", (
    ("partitions", ("1", "3", "6"), "3"),
    ("batch.size", ("65536", "1048576", "16777216"), "16777216"),
    ("linger.ms", ("0", "5", "20", "100"), "5"),
    ("compression.type", ("none", "lz4", "zstd", "snappy", "gzip"), "none"),
    ("max.in.flight.requests.per.connection", ("1", "5"), "5"),
    ("acks", ("all", "1"), "all"),
))
#: The default consumer sweep (``partitions``: of the topic read, all of them in every fetch).
CONSUMER_DIMENSIONS = _dims("consumer", (
    ("partitions", ("1", "3", "6"), "3"),
    ("max.partition.fetch.bytes", ("262144", "1048576", "8388608"), "1048576"),
    ("fetch.max.bytes", ("1048576", "16777216", "52428800"), "52428800"),
    ("fetch.max.wait.ms", ("10", "100", "500"), "500"),
))
QUICK_PRODUCER_DIMENSIONS = _dims("producer", (
    ("partitions", ("1", "3"), "3"),
    ("linger.ms", ("0", "5"), "5"),
    ("compression.type", ("none", "lz4"), "none"),
    ("acks", ("all", "1"), "all"),
))
QUICK_CONSUMER_DIMENSIONS = _dims("consumer", (
    ("partitions", ("1", "3"), "3"),
    ("max.partition.fetch.bytes", ("262144", "1048576"), "1048576"),
    ("fetch.max.wait.ms", ("100", "500"), "500"),
))


@dataclass
class TuneReport:
    """What :func:`tune` found: every trial, and the best settings per role for ``goal``."""

    goal: str
    bootstrap: str
    record_size: int
    trials: list[Trial] = field(default_factory=list)
    best: dict[str, dict[str, str]] = field(default_factory=dict)
    seconds: float = 0.0
    topics_created: list[str] = field(default_factory=list)
    topics_deleted: list[str] = field(default_factory=list)

    def recommended(self, role: str) -> dict[str, str]:
        """The Java client properties of the best ``role`` trial (``partitions`` left out: a topic setting)."""
        return {k: v for k, v in self.best.get(role, {}).items() if k != "partitions"}

    def to_json(self) -> dict[str, Any]:
        return {
            "goal": self.goal, "bootstrap": self.bootstrap, "record_size": self.record_size,
            "seconds": self.seconds, "best": self.best,
            "recommended": {role: self.recommended(role) for role in self.best},
            "topics_created": self.topics_created, "topics_deleted": self.topics_deleted,
            "trials": [t.to_json() for t in self.trials],
        }


def score(trial: Trial, goal: str) -> float:
    """Higher is better: records/s for ``throughput``; for ``latency`` minus the p99 latency (end to end for
    a producer, per poll for a consumer). A failed trial scores lowest."""
    if trial.error:
        return float("-inf")
    if goal == "throughput":
        return trial.records_per_s
    return -trial.latency_ms[1] if trial.latency_ms else float("-inf")


class _Topics:
    """The topics of one sweep: one per partition count, created on first use, deleted by :meth:`cleanup`."""

    def __init__(self, client: Any, replication_factor: int, topic: str | None, allow_existing: bool) -> None:
        self.client = client
        self.replication_factor = replication_factor
        self.prefix = f"kafkawire-tune-{uuid.uuid4().hex[:10]}"
        self.created: list[str] = []
        self.filled: dict[str, Any] = {}  # consumer topics written, with their start offsets
        self.fixed: str | None = None
        self.fixed_partitions = 0
        if topic is not None:
            from ..protocol.errors import UnknownTopicOrPartitionError

            try:
                parts = client.partitions_for(topic)
            except UnknownTopicOrPartitionError:
                parts = []
            if parts and not allow_existing:
                raise ValueError(f"topic {topic!r} exists: the sweep writes to it only with allow_existing "
                                 "(--allow-existing)")
            if not parts:
                self._create(topic, 3)
                parts = client.partitions_for(topic)
            self.fixed, self.fixed_partitions = topic, len(parts)

    def _create(self, name: str, partitions: int) -> None:
        self.created.append(name)  # before the call: a half-done create is cleaned up too
        self.client.create_topics({name: partitions}, replication_factor=self.replication_factor, timeout_ms=60_000)

    def get(self, role: str, partitions: int) -> str:
        """The topic for a trial of ``role`` on ``partitions`` partitions (consumer topics are their own:
        they are filled once and read by every consumer trial)."""
        if self.fixed is not None:
            return self.fixed
        name = f"{self.prefix}-{role[0]}{partitions}"
        if name not in self.created:
            self._create(name, partitions)
        return name

    def cleanup(self) -> list[str]:
        """Delete every topic this sweep created; returns their names."""
        if self.created:
            self.client.delete_topics(self.created, missing_ok=True, timeout_ms=60_000)
        return list(self.created)


def _apply_overrides(dims: Sequence[Dimension], overrides: Mapping[str, Sequence[str]]) -> list[Dimension]:
    """``dims`` with the values of ``overrides`` (a setting not swept by default is added at the end)."""
    out = []
    for d in dims:
        values = tuple(str(v) for v in overrides.get(d.prop, d.values))
        if not values:
            raise ValueError(f"no values to try for {d.prop}")
        out.append(Dimension(d.role, d.prop, values, d.default if d.default in values else values[0]))
    known = {d.prop for d in dims}
    for prop, extra in overrides.items():
        if prop not in known and dims and extra:
            out.append(Dimension(dims[0].role, prop, tuple(str(v) for v in extra), str(extra[0])))
    return out


def _descend(
    dims: Sequence[Dimension],
    goal: str,
    run: Callable[[dict[str, str], str], Trial],
) -> dict[str, str]:
    """Coordinate descent over ``dims``: each value of one setting with the best of the others so far.
    Settings already measured are not run again."""
    best = {d.prop: d.default for d in dims}
    seen: dict[tuple[tuple[str, str], ...], Trial] = {}

    def measure(settings: dict[str, str], varied: str) -> Trial:
        key = tuple(sorted(settings.items()))
        if key not in seen:
            seen[key] = run(dict(settings), varied)
        return seen[key]

    base = measure(best, "")
    if base.error:  # e.g. the cluster refuses the connection or the credentials: every trial would fail
        raise RuntimeError(f"the {dims[0].role} baseline trial failed: {base.error}")
    for d in dims:
        if len(d.values) < 2:
            best[d.prop] = d.values[0]
            continue
        trials = [measure({**best, d.prop: v}, d.prop) for v in d.values]
        winner = max(trials, key=lambda t: score(t, goal))
        if score(winner, goal) > float("-inf"):
            best = dict(winner.settings)
    return best


def tune(
    bootstrap: str,
    *,
    goal: str = "throughput",
    quick: bool = False,
    records: int | None = None,
    consumer_records: int | None = None,
    record_size: int = 100,
    roles: Sequence[str] = ("producer", "consumer"),
    overrides: Mapping[str, Sequence[str]] | None = None,
    client_options: Mapping[str, Any] | None = None,
    topic: str | None = None,
    allow_existing: bool = False,
    replication_factor: int = -1,
    repeat: int = 1,
    progress: Callable[[int, int, Trial], None] | None = None,
) -> TuneReport:
    """Sweep producer and consumer settings on the cluster at ``bootstrap`` and return the
    :class:`TuneReport` with every trial and the best settings for ``goal`` (``"throughput"``: records/s;
    ``"latency"``: the p99 latency).

    ``records`` per producer trial (default 200,000; 20,000 with ``quick``), ``consumer_records`` per
    consumer trial (default 500,000; 50,000), values of ``record_size`` bytes with 16-byte keys.
    ``overrides``: ``{property: [values]}`` replacing (or adding) a swept setting. ``client_options``:
    :class:`~kafkawire.client.Client` keyword arguments (security; see
    :func:`kafkawire.client.config.client_kwargs_from_properties`). ``topic``: run every trial on this
    topic (created when missing, deleted afterwards only then); an existing one only with
    ``allow_existing``, and the partition count is then the topic's. ``repeat``: runs per trial, the one
    with the median records/s kept (a loaded machine's single runs vary up to 2x). ``progress(done, total,
    trial)`` is called after each trial. Every topic the sweep created is deleted before it returns or raises.
    """
    from ..client import Client
    from . import workloads

    n_produce, n_consume = _checked_sizes(goal, roles, quick, records, consumer_records, record_size, repeat)
    options = {"client_id": "kafkawire-tune", **dict(client_options or {})}
    plan = _plan(quick, roles, overrides or {})
    report = TuneReport(goal, bootstrap, record_size)
    started = time.monotonic()
    total = sum(1 + sum(len(d.values) - 1 for d in dims if len(d.values) > 1) for dims in plan.values())
    done = 0
    with Client(bootstrap, **options) as admin:
        topics = _Topics(admin, replication_factor, topic, allow_existing)
        try:
            for role, dims in plan.items():
                if topics.fixed is not None:  # the partition count is the topic's
                    fixed = str(topics.fixed_partitions)
                    dims = [Dimension(d.role, d.prop, (fixed,), fixed) if d.prop == "partitions" else d for d in dims]

                def run(settings: dict[str, str], varied: str, role: str = role) -> Trial:
                    nonlocal done
                    t = topics.get(role, int(settings.get("partitions", "1")))
                    runs = []
                    for _ in range(repeat):
                        if role == "producer":
                            runs.append(workloads.produce_trial(bootstrap, options, t, settings, varied, n_produce,
                                                                record_size, max_seconds=8.0 if quick else 20.0))
                        else:
                            runs.append(workloads.consume_trial(bootstrap, options, admin, t, settings, varied,
                                                                n_consume, record_size, topics.filled))
                    trial = _median_trial(runs)
                    report.trials.append(trial)
                    done += 1
                    if progress is not None:
                        progress(done, max(total, done), trial)
                    return trial

                report.best[role] = _descend(dims, goal, run)
        finally:
            report.topics_created = list(topics.created)
            report.topics_deleted = topics.cleanup()
    report.seconds = time.monotonic() - started
    return report


def _checked_sizes(
    goal: str, roles: Sequence[str], quick: bool, records: int | None, consumer_records: int | None,
    record_size: int, repeat: int,
) -> tuple[int, int]:
    """:func:`tune`'s arguments checked; the records per producer and per consumer trial."""
    if goal not in GOALS:
        raise ValueError(f"goal must be one of {GOALS}, not {goal!r}")
    bad_roles = set(roles) - {"producer", "consumer"}
    if bad_roles or not roles:
        raise ValueError(f"roles must be 'producer' and/or 'consumer', not {list(roles)!r}")
    n_produce = int(records or (20_000 if quick else 200_000))
    n_consume = int(consumer_records or (50_000 if quick else 500_000))
    if n_produce < 1 or n_consume < 1 or record_size < 0 or repeat < 1:
        raise ValueError("records, consumer_records and repeat must be >= 1, record_size >= 0")
    return n_produce, n_consume


def _median_trial(runs: Sequence[Trial]) -> Trial:
    """The run with the median records/s (a failed run, if any: the setting is not reliable)."""
    failed = [t for t in runs if t.error]
    if failed:
        return failed[0]
    return sorted(runs, key=lambda t: t.records_per_s)[len(runs) // 2]


def _plan(quick: bool, roles: Sequence[str], overrides: Mapping[str, Sequence[str]]) -> dict[str, list[Dimension]]:
    """The settings to sweep per role: the default (or quick) ones with ``overrides`` applied."""
    split = _split_overrides(overrides)
    plan: dict[str, list[Dimension]] = {}
    for role, dims in (("producer", QUICK_PRODUCER_DIMENSIONS if quick else PRODUCER_DIMENSIONS),
                       ("consumer", QUICK_CONSUMER_DIMENSIONS if quick else CONSUMER_DIMENSIONS)):
        if role in roles:
            plan[role] = _apply_overrides(dims, split[role])
    return plan


def _split_overrides(overrides: Mapping[str, Sequence[str]]) -> dict[str, dict[str, Sequence[str]]]:
    """``{"producer": {prop: values}, "consumer": {...}}``: a key ``producer:X`` / ``consumer:X`` goes to
    that role, ``partitions`` to both, a Java property to the client it belongs to."""
    from ..client.config import CONSUMER_PARAMS, PRODUCER_PARAMS

    out: dict[str, dict[str, Sequence[str]]] = {"producer": {}, "consumer": {}}
    for key, values in overrides.items():
        role, sep, prop = key.partition(":")
        if sep:
            if role not in out:
                raise ValueError(f"bad setting {key!r}: the prefix is producer: or consumer:")
            out[role][prop] = values
        elif key == "partitions":
            out["producer"][key] = out["consumer"][key] = values
        elif key in {d.prop for d in PRODUCER_DIMENSIONS} or key in PRODUCER_PARAMS:
            out["producer"][key] = values
        elif key in {d.prop for d in CONSUMER_DIMENSIONS} or key in CONSUMER_PARAMS:
            out["consumer"][key] = values
        else:
            raise ValueError(f"unknown setting {key!r}: give a Java producer or consumer property (or partitions)")
    return out
