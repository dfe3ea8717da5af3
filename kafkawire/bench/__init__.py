"""Measuring kafkawire on a user's own cluster.

:func:`tune` sweeps producer and consumer settings (the Java client's property names) against any cluster
and recommends the properties that did best for a goal (``"throughput"`` or ``"latency"``); the
``kafkawire tune`` command is its command line. :mod:`kafkawire.bench.report` prints its table and writes
its JSON and chart; the settings swept by default are in :mod:`kafkawire.bench.tune`. (``kafkawire bench``,
which compares kafkawire with other libraries on generated data, lives in :mod:`kafkawire.cli.bench`.)
"""

from __future__ import annotations

from .trial import Trial
from .tune import Dimension, TuneReport, tune

__all__ = ["Dimension", "Trial", "TuneReport", "tune"]
