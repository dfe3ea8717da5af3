"""What a write's produce calls mean for its records: futures completed from the acknowledgements, and
the :class:`~kafkawire.client.errors.ProduceFailedError` that hands back the records not acknowledged."""

from __future__ import annotations

import numpy as np

from ..errors import ProduceFailedError
from ..types import ProduceResult, UnacknowledgedRecords
from .accumulator import TopicBuffer
from .delivery import DeliveryFuture, RecordMetadata

__all__ = ["combined_failure", "not_written", "resolve_futures"]


def resolve_futures(
    buf: TopicBuffer, topic: str, rows: list[int], result: object, failure: ProduceFailedError | None
) -> list[DeliveryFuture]:
    """Complete the futures of ``rows`` (positions in ``buf``) from one produce call: acknowledged
    records get their metadata, the ones handed back in ``failure.unacknowledged`` its error. Returns the
    futures completed that have callbacks, which the producer runs once it released its locks."""
    failed: dict[int, BaseException] = {}
    if failure is not None:
        for u in failure.unacknowledged.values():
            assert isinstance(u, UnacknowledgedRecords)
            for j in np.asarray(u.rows).tolist():
                failed[j] = u.error or failure
    parts: list[int] = []
    offsets: list[int] = []
    times: list[int] = []
    if isinstance(result, ProduceResult):
        parts, offsets, times = result.partition.tolist(), result.offset.tolist(), result.log_append_time.tolist()
    completed: list[DeliveryFuture] = []
    for j, i in enumerate(rows):
        fut = buf.futures[i]
        if j in failed:
            ok = fut.settle(None, failed[j])
        elif j < len(parts) and (failure is None or offsets[j] >= 0):
            ts = times[j] if times[j] >= 0 else buf.timestamps[i]
            ok = fut.settle(RecordMetadata(topic, int(parts[j]), int(offsets[j]), int(ts)), None)
        else:  # neither acknowledged nor handed back: the call's error is all that is known
            ok = fut.settle(None, failure or ProduceFailedError(f"produce to {topic!r}: no result for the record"))
        if ok:  # callbacks to run (settle says so only once)
            completed.append(fut)
    return completed


def not_written(
    buf: TopicBuffer, topic: str, rows: list[int], partition: int | None, error: Exception
) -> ProduceFailedError:
    """A ProduceFailedError handing back ``rows`` of ``buf`` that a background write could not send
    because of an error other than ProduceFailedError (keyed by ``partition``, -1 when not chosen)."""
    has_keys = any(buf.keys[i] is not None for i in rows)
    has_headers = any(buf.headers[i] for i in rows)
    p = -1 if partition is None else partition
    unacked = UnacknowledgedRecords(
        topic,
        p,
        np.arange(len(rows), dtype=np.int64),
        [buf.values[i] for i in rows],
        [buf.keys[i] for i in rows] if has_keys else None,
        [buf.headers[i] for i in rows] if has_headers else None,
        [buf.timestamps[i] for i in rows],
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
    if len(failures) == 1 and not results:
        return failures[0][1]
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
