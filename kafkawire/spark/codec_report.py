"""Which codec the Spark source's Python workers decode with, said once per query when it is the slow one.

The planner (``partitions()`` of a batch read, the first micro-batch of a stream) runs in a Python worker
that the driver's JVM starts exactly as it starts the executors' workers in ``local`` and ``local-cluster``
mode (same interpreter, working directory and ``PYTHONPATH``), so what that worker imported is what the
tasks decode with: when it is the pure-Python codec nobody chose, the query logs one warning on the driver
naming the interpreter and the kafkawire directory it imported (the usual cause: a source checkout in the
working directory, which ``python -m pyspark.daemon`` puts first on ``sys.path``).

Each read task carries the planner's codec and compares it with its own; a task that decodes with an
unexpected pure codec the planner did not report (an executor set up differently from the driver) logs
the warning in its own worker's log, once per worker process.

Metrics: PySpark's Python data source API (4.x) has no custom task metrics and its micro-batch stream does
not report source metrics to the query progress, so the warning is a log line, not a metric.
"""

from __future__ import annotations

import logging

from .. import _impl

__all__ = ["CodecIdentity", "check_task", "identity", "report_planner"]

log = logging.getLogger("kafkawire.spark")

#: (compiled, opted in, interpreter, kafkawire directory): what tells two workers' codecs apart.
CodecIdentity = tuple[bool, bool, str, str]

_task_warned = False


def identity() -> CodecIdentity:
    """This process's codec, as carried from the planner to the read tasks."""
    s = _impl.status
    return (s.compiled, s.opted_in, s.python, s.package)


def query_warning(what: str) -> str:
    """The warning for a query whose workers decode with an unexpected pure codec."""
    return f"kafkawire Spark source: {what} decode with the pure-Python codec. {_impl.status.warning_text()}"


def report_planner() -> bool:
    """Called once per query by the planner: log the warning when this worker (and so the query's local
    executors) runs the pure codec unexpectedly. Returns whether it warned."""
    if not _impl.status.unexpected:
        return False
    log.warning(query_warning("this query's Python workers"))
    return True


def check_task(planner: CodecIdentity | None) -> None:
    """Called by each read task with the planner's codec: warn (once per worker process) when this task
    decodes with an unexpected pure codec that the planner's warning did not already name."""
    global _task_warned
    if _task_warned or not _impl.status.unexpected or planner == identity():
        return
    _task_warned = True
    log.warning(query_warning("the read tasks of this executor's Python worker"))
