"""The source metrics Spark's own Kafka source reports, computed from a ``format("kafkawire")`` query's progress.

Spark's ``KafkaMicroBatchStream`` implements ``ReportsSourceMetrics``: each progress entry of its source
carries ``metrics`` with ``minOffsetsBehindLatest``, ``maxOffsetsBehindLatest`` and
``avgOffsetsBehindLatest`` (latest available offset minus the batch's end offset, per partition). A
Python streaming source cannot report metrics: PySpark 4.2's ``PythonMicroBatchStream`` does not
implement that interface, so its ``metrics`` stay ``{}``. What it does report is the batch's
``endOffset`` and, from :meth:`KafkaStreamReader.reportLatestOffset`, the ``latestOffset``, which is all
Spark computes its metrics from; :func:`offsets_behind_latest` does that computation::

    from kafkawire.spark.progress import offsets_behind_latest

    for source in query.lastProgress["sources"]:
        print(offsets_behind_latest(source))   # {'minOffsetsBehindLatest': '0', 'maxOffsetsBehindLatest': ...}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["offsets_behind_latest"]


def _offsets(value: Any) -> dict[tuple[str, str], int]:
    """``{topic: {partition: offset}}`` (a dict or its JSON text, as progress entries hold it)."""
    if value is None:
        return {}
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, Mapping):
        raise TypeError(f"expected Kafka offsets as {{topic: {{partition: offset}}}}, not {type(value).__name__}")
    return {(str(t), str(p)): int(o) for t, parts in value.items() for p, o in dict(parts).items()}


def offsets_behind_latest(source_progress: Mapping[str, Any]) -> dict[str, str]:
    """Spark's Kafka source metrics for one entry of ``query.lastProgress["sources"]`` (or
    ``query.recentProgress[i]["sources"]``): offsets behind the latest per partition, as strings (min, max,
    and the average as a double) like ``KafkaMicroBatchStream.metrics``; ``{}`` when the entry has no
    latest offset (Spark reports nothing then either)."""
    if not isinstance(source_progress, Mapping):
        raise TypeError(f"expected a progress entry (a mapping), not {type(source_progress).__name__}")
    latest = _offsets(source_progress.get("latestOffset"))
    end = _offsets(source_progress.get("endOffset"))
    if not latest:
        return {}
    behind = [off - end[tp] for tp, off in latest.items() if tp in end]
    if not behind:
        return {}
    return {
        "minOffsetsBehindLatest": str(min(behind)),
        "maxOffsetsBehindLatest": str(max(behind)),
        "avgOffsetsBehindLatest": str(float(sum(behind)) / len(behind)),
    }
