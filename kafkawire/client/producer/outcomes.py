"""What a write's produce calls mean for its records: futures completed from the acknowledgements, and
the :class:`~kafkawire.client.errors.ProduceFailedError` that hands back the records not acknowledged."""

from __future__ import annotations

import numpy as np

from ..errors import ProduceFailedError
from ..types import ProduceResult, UnacknowledgedRecords
from .accumulator import Completed, RecordBuffer, acknowledge_rows, fail_rows
from .produce import take

__all__ = ["combined_failure", "in_write_order", "not_written", "resolve_rows"]


def resolve_rows(
    buf: RecordBuffer, topic: str, rows: np.ndarray, timestamps: np.ndarray, result: object,
    failure: ProduceFailedError | None,
) -> list[Completed]:
    """Complete the futures of ``rows`` (positions in ``buf``, ``timestamps`` theirs) from one produce
    call: acknowledged records get their partition, offset and timestamp, the ones handed back in
    ``failure.unacknowledged`` its error. Returns the delivery work (callbacks), which the producer runs once
    it released its locks."""
    n = len(rows)
    failed: dict[int, BaseException] = {}
    if failure is not None:
        for u in failure.unacknowledged.values():
            assert isinstance(u, UnacknowledgedRecords)
            for j in np.asarray(u.rows).tolist():
                failed[j] = u.error or failure
    acked = np.zeros(n, dtype=bool)
    if isinstance(result, ProduceResult):
        m = min(n, len(result.partition))
        acked[:m] = True if failure is None else result.offset[:m] >= 0
    if failed:
        acked[np.fromiter(failed, dtype=np.int64, count=len(failed))] = False
    completed: list[Completed] = []
    pos = np.flatnonzero(acked)
    if len(pos):
        assert isinstance(result, ProduceResult)
        lat = result.log_append_time[pos]
        ts = np.where(lat >= 0, lat, timestamps[pos])
        completed += acknowledge_rows(buf, rows[pos], result.partition[pos], result.offset[pos], ts)
    rest = np.flatnonzero(~acked)
    if len(rest):  # handed back, or neither acknowledged nor handed back: the call's error is all that is known
        default = failure or ProduceFailedError(f"produce to {topic!r}: no result for the record")
        completed += fail_rows(buf, rows[rest], [failed.get(j, default) for j in rest.tolist()])
    return in_write_order(completed)


def in_write_order(completed: list[Completed]) -> list[Completed]:
    """One entry per batch, rows ascending: callbacks run in the order the records were sent (a call may
    have taken them grouped by partition)."""
    merged: dict[int, Completed] = {}
    for batch, rows in completed:
        prev = merged.get(id(batch))
        merged[id(batch)] = (batch, rows if prev is None else np.concatenate([prev[1], rows]))
    return [(batch, np.sort(rows)) for batch, rows in merged.values()]


def not_written(
    buf: RecordBuffer, topic: str, rows: np.ndarray, partition: int | None, error: Exception
) -> ProduceFailedError:
    """A ProduceFailedError handing back ``rows`` of ``buf`` that a background write could not send
    because of an error other than ProduceFailedError (keyed by ``partition``, -1 when not chosen)."""
    kcol = buf.key_column()
    p = -1 if partition is None else partition
    unacked = UnacknowledgedRecords(
        topic,
        p,
        np.arange(len(rows), dtype=np.int64),
        take(buf.value_column(), rows).to_pylist(),
        None if kcol is None else take(kcol, rows).to_pylist(),
        None if buf.headers is None else [buf.headers[i] for i in rows.tolist()],
        buf.timestamp_array()[rows].tolist(),
        error,
    )
    message = f"produce to {topic!r} failed: {error!r}; {len(rows)} record(s) not written"
    handed_back: dict[int, UnacknowledgedRecords] = {p: unacked}
    err = ProduceFailedError(message, {(topic, p): error}, None, handed_back)
    err.__cause__ = error
    return err


def combined_failure(
    topic: str, failures: list[tuple[list[int], ProduceFailedError]], results: list[ProduceResult]
) -> ProduceFailedError:
    """One error for a write whose produce calls failed: the records of every call not acknowledged,
    per partition, ``rows`` renumbered to positions in the written buffer."""
    if len(failures) == 1 and not results and failures[0][0] == list(range(len(failures[0][0]))):
        return failures[0][1]  # the call took the buffer as it is: its rows are the buffer's
    errors: dict[tuple[str, int], BaseException] = {}
    unacked: dict[int, UnacknowledgedRecords] = {}
    for rows, e in failures:
        errors.update(e.errors)
        for p, u in e.unacknowledged.items():
            assert isinstance(u, UnacknowledgedRecords)
            mapped = np.asarray(rows, dtype=np.int64)[u.rows]
            prev = unacked.get(p)
            if prev is None:
                unacked[p] = UnacknowledgedRecords(
                    topic, p, mapped, list(u.values), u.keys, u.headers, list(u.timestamps), u.error
                )
            else:
                prev.rows = np.concatenate([prev.rows, mapped])
                prev.values += u.values
                prev.keys = None if prev.keys is None or u.keys is None else prev.keys + u.keys
                prev.headers = None if prev.headers is None or u.headers is None else prev.headers + u.headers
                prev.timestamps += u.timestamps
    message = "; ".join(str(e) for _, e in failures)
    handed_back: dict[int, UnacknowledgedRecords] = dict(unacked)
    err = ProduceFailedError(
        f"flush of {topic!r}: {message}", errors, results, handed_back, any(e.timed_out for _, e in failures)
    )
    err.__cause__ = failures[0][1]
    return err
