"""Produce on top of :class:`~kafkawire.client.cluster.cluster.Cluster`: batching per partition, idempotence,
and retries until the deadline.

Produce is idempotent by default (KIP-98): :class:`ProducerState` holds a producer id from
InitProducerId and numbers every batch per partition; a batch whose acknowledgement was lost is sent
again with the *same* bytes and sequence number, and the broker recognises the duplicate instead of
appending it twice. A call retries until its deadline (the Java producer's ``delivery.timeout.ms``);
whatever is still not acknowledged then is handed back in :class:`ProduceFailedError.unacknowledged`.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...columns import BinaryColumn
from ...protocol import InitProducerIdRequest, ProduceRequest
from ...protocol.errors import (
    DuplicateSequenceNumberError,
    InvalidProducerEpochError,
    OutOfOrderSequenceNumberError,
    UnknownProducerIdError,
    broker_error,
)
from ...records import check_record_arguments, encode_records, record_columns
from ..cluster.cluster import Cluster
from ..cluster.quirks import LOWEST_VERSION
from ..cluster.retry import is_retriable
from ..errors import KafkaConnectionError, KafkaTimeoutError, ProduceFailedError
from ..net.connection import PendingResponse
from ..net.deadline import Deadline
from ..types import ProduceResult, UnacknowledgedRecords

__all__ = ["ProducerState", "send_records", "not_sent", "produce_arguments"]

log = logging.getLogger("kafkawire.client.produce")

_SEQ_MODULUS = 1 << 31  # producer sequence numbers wrap to 0 after Integer.MAX_VALUE (KIP-98)
# Bytes of framing per record beyond key, value and headers in a v2 batch (varints, attributes, deltas):
# a generous estimate used only to cut batches below max_batch_bytes.
_RECORD_OVERHEAD = 24


def take(col: BinaryColumn, idx: np.ndarray) -> BinaryColumn:
    """Rows ``idx`` of a binary column, gathered by Arrow's ``take`` when pyarrow is installed, else with
    numpy (no Python object per element either way).

    Work is proportional to the rows taken, not to the column: a call that cuts a 10M-row column into
    thousands of batches calls this once per batch (indexing the whole offsets array each time made
    producing n records cost O(n^2 / batch)). A run of consecutive rows is a slice of the data, no gather.
    """
    offsets = np.asarray(col.offsets)
    valid = None if col.valid is None else np.asarray(col.valid)[idx]
    if len(idx) and int(idx[-1]) - int(idx[0]) + 1 == len(idx) and bool(np.all(np.diff(idx) == 1)):
        first, last = int(idx[0]), int(idx[-1]) + 1
        lo, hi = int(offsets[first]), int(offsets[last])
        new_offsets = (offsets[first : last + 1] - lo).astype(np.int32)
        return BinaryColumn(new_offsets, np.asarray(col.data)[lo:hi], valid)
    pa = _arrow()
    if pa is not None:
        return _arrow_take(pa, col, idx, valid)
    starts = offsets[idx].astype(np.int64)
    lengths = offsets[idx + 1].astype(np.int64) - starts
    new_offsets = np.zeros(len(idx) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    total = int(new_offsets[-1])
    if total:
        gather = np.repeat(starts - new_offsets[:-1], lengths) + np.arange(total, dtype=np.int64)
        data = np.asarray(col.data)[gather]
    else:
        data = np.zeros(0, dtype=np.uint8)
    return BinaryColumn(new_offsets.astype(np.int32), data, valid)


_UNRESOLVED = object()
_pyarrow: Any = _UNRESOLVED


def _arrow() -> Any:
    """pyarrow if installed (looked up on the first gather, so importing the client does not import it)."""
    global _pyarrow
    if _pyarrow is _UNRESOLVED:
        try:
            import pyarrow
        except ImportError:
            pyarrow = None
        _pyarrow = pyarrow
    return _pyarrow


def _arrow_take(pa: Any, col: BinaryColumn, idx: np.ndarray, valid: Any) -> BinaryColumn:
    """:func:`take` with Arrow's ``take`` kernel (one copy per row) on the column as Arrow sees it
    (:meth:`BinaryColumn.to_arrow`, no copy). numpy's gather goes through an int64 index per byte: 1M rows
    of 110 B cut into 4 partitions took 2.0 s of CPU with it and 0.04 s with Arrow's (benchmarks/README.md,
    "Spark writes")."""
    # Nulls travel in ``valid``: the column is wrapped without them, so no validity bitmap is built.
    taken = BinaryColumn(col.offsets, col.data).to_arrow().take(pa.array(idx))
    out = BinaryColumn.from_arrow(taken)
    return BinaryColumn(out.offsets, out.data, valid)


def produce_arguments(
    topic: str, values: Any, keys: Any, headers: Sequence[Any] | None, timestamps: Any, acks: int
) -> tuple[BinaryColumn, BinaryColumn | None, np.ndarray, ProduceResult]:
    """``Client.produce``'s arguments checked (``TypeError``/``ValueError`` naming the bad one) and turned into
    columns, with the call's result before anything is sent (every partition and offset -1)."""
    check_record_arguments(values, keys, headers)
    if acks not in (-1, 0, 1):
        raise ValueError(f"acks must be -1, 0 or 1, not {acks!r}")
    vcol, kcol, ts = record_columns(values, keys, timestamps)
    n = len(vcol)
    if headers is not None and len(headers) != n:
        raise ValueError(f"headers has {len(headers)} entries, expected {n}")
    result = ProduceResult(
        topic,
        np.full(n, -1, dtype=np.int32),
        np.full(n, -1, dtype=np.int64),
        np.full(n, -1, dtype=np.int64),
    )
    return vcol, kcol, ts, result


class ProducerState:
    """The idempotent producer's identity: producer id, epoch and the next sequence per partition.

    A transactional producer's state is a subclass (:class:`~kafkawire.client.producer.transaction.TransactionManager`)
    with a ``transactional_id`` and a :meth:`prepare` that adds partitions to the transaction."""

    #: Sent in every ProduceRequest; batches are marked transactional when set.
    transactional_id: str | None = None
    #: Highest Produce version to send: v13 (KIP-516, Kafka 4.1+) names topics by id only and this request
    #: carries the name, so stay at v12, which every Kafka 4.x serves. A transaction manager lowers it.
    max_produce_version: int = 12

    def __init__(self) -> None:
        self.producer_id = -1
        self.producer_epoch = -1
        self.sequences: dict[tuple[str, int], int] = {}
        # Per partition, the (producer id, epoch) a batch of which the partition's leader acknowledged:
        # from then on it refuses an out-of-order sequence of that producer (see pipeline_depth).
        self.acknowledged_as: dict[tuple[str, int], tuple[int, int]] = {}

    def pipeline_depth(self, topic: str, partition: int, depth: int) -> int:
        """Batches of ``partition`` that may be in flight at once: ``depth`` once the leader acknowledged one
        of this producer id and epoch, else 1. A broker holding no state for a producer on a partition
        accepts any sequence as its first (ProducerStateManager: "accept writes with any sequence number"),
        so a second batch in flight could be written while the first one was refused (NOT_LEADER_OR_FOLLOWER
        on a partition still being created) and the first would then land after it."""
        ident = (self.producer_id, self.producer_epoch)
        return depth if self.acknowledged_as.get((topic, partition)) == ident else 1

    def acknowledged(self, topic: str, partition: int) -> None:
        """A batch of ``partition`` under the current producer id and epoch was acknowledged."""
        self.acknowledged_as[(topic, partition)] = (self.producer_id, self.producer_epoch)

    def reset(self) -> None:
        """Forget the producer id: the next idempotent call takes a new one (after sequence numbers
        the broker never accepted were used up, which would otherwise meet OUT_OF_ORDER_SEQUENCE)."""
        self.producer_id = -1

    def ensure(self, cluster: Cluster, deadline: Deadline, refresh: bool = False) -> None:
        """Take a producer id from InitProducerId unless one is held (or ``refresh``)."""
        if self.producer_id >= 0 and not refresh:
            return

        def attempt(d: Deadline) -> None:
            # InitProducerId goes to any broker for a non-transactional producer (KIP-98).
            conn = cluster.any_connection(d)
            req = InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60_000)
            resp = conn.request(req, conn.version_for(InitProducerIdRequest), deadline=d)
            err = broker_error(resp.error_code, None, "InitProducerId")
            if err is not None:
                raise err
            self.producer_id, self.producer_epoch = resp.producer_id, resp.producer_epoch
            self.sequences.clear()
            log.debug("producer id %d epoch %d", self.producer_id, self.producer_epoch)

        cluster.call(deadline, attempt, what="InitProducerId")

    def prepare(self, cluster: Cluster, topic: str, partitions: list[int], deadline: Deadline) -> None:
        """Called before batches go to ``partitions``; a transactional producer adds them to its
        transaction here (AddPartitionsToTxn). Nothing to do for an idempotent one."""


@dataclass(eq=False)  # compared by identity (list.remove): its fields hold numpy arrays
class _Chunk:
    """One record batch waiting to be acknowledged by a partition leader."""

    partition: int
    rows: np.ndarray  # input positions of its records
    data: bytes | None  # encoded batch (kept for retries: same bytes, same sequence)
    base_sequence: int = -1
    error: BaseException | None = None


class _NotAcknowledged(Exception):
    """A round ended with batches still waiting; carries the first cause (retriable)."""

    retriable = True

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


class _Rejected(Exception):
    """A partition's batch was refused for good (a non-retriable broker error)."""

    retriable = False


@dataclass
class _Records:
    vcol: BinaryColumn
    kcol: BinaryColumn | None
    ts: np.ndarray
    headers: Any


@dataclass
class _Call:
    """One produce call's records and progress, shared by its rounds."""

    cluster: Cluster
    state: ProducerState
    topic: str
    recs: _Records
    acks: int
    compression: Any
    idempotent: bool
    result: ProduceResult
    acked: np.ndarray  # per record: acknowledged
    pending: dict[int, list[_Chunk]]  # per partition: its batches not acknowledged yet, in sequence order
    max_in_flight: int

    def ack(self, chunk: _Chunk) -> None:
        """``chunk`` was written (or is known to have been): its records are acknowledged."""
        self.acked[chunk.rows] = True
        self.pending[chunk.partition].remove(chunk)
        if self.idempotent:
            self.state.acknowledged(self.topic, chunk.partition)


@dataclass
class _Round:
    """What one round found: its first failure, a refused batch, whether to renumber."""

    failure: BaseException | None = None
    rejected: _Rejected | None = None
    renumber: bool = False
    behind: set[int] = field(default_factory=set)  # partitions with a batch not written this round

    def fail(self, error: BaseException) -> None:
        self.failure = self.failure or error


#: Answers meaning the broker lost (or never had) this producer's state: renumber under a new id (KIP-360).
_LOST_STATE = (UnknownProducerIdError, OutOfOrderSequenceNumberError, InvalidProducerEpochError)


def send_records(
    cluster: Cluster,
    state: ProducerState,
    deadline: Deadline,
    *,
    topic: str,
    parts: np.ndarray,
    vcol: BinaryColumn,
    kcol: BinaryColumn | None,
    ts: np.ndarray,
    headers: Any,
    acks: int,
    compression: Any,
    idempotent: bool,
    max_batch_bytes: int,
    result: ProduceResult,
    max_in_flight: int = 1,
) -> None:
    """Write the records (already assigned to partitions ``parts``) and fill ``result``; raises
    :class:`ProduceFailedError` with the records not acknowledged when the deadline or a
    non-retriable error ends the call. An idempotent producer keeps up to ``max_in_flight`` requests in
    flight per broker (see :func:`_round`)."""
    recs = _Records(vcol, kcol, ts, headers)
    acked = np.zeros(len(vcol), dtype=bool)
    pending = {p: list(cs) for p, cs in _make_chunks(parts, recs, max_batch_bytes).items()}
    call = _Call(cluster, state, topic, recs, acks, compression, idempotent, result, acked, pending, max_in_flight)
    errors: dict[tuple[str, int], BaseException] = {}

    def fail(message: str, timed_out: bool) -> ProduceFailedError:
        if idempotent:
            state.reset()  # sequence numbers the broker may not have seen: start afresh next time
        unacked = _unacknowledged(topic, recs, acked, parts, errors)
        summary = "; ".join(f"{t}/{p}: {e}" for (t, p), e in errors.items())
        text = f"{message}; {int((~acked).sum())} of {len(acked)} record(s) not acknowledged"
        return ProduceFailedError(f"{text}: {summary}" if summary else text, errors, result, unacked, timed_out)

    def attempt(d: Deadline) -> None:
        while pending:
            failure = _round(call, d)
            for p, cs in list(pending.items()):
                if not cs:
                    del pending[p]
                    errors.pop((topic, p), None)
                elif cs[0].error is not None:
                    errors[(topic, p)] = cs[0].error
            if failure is not None:
                if isinstance(failure, _Rejected):
                    raise failure
                raise _NotAcknowledged(failure)

    try:
        cluster.call(deadline, attempt, what=f"produce to {topic!r}", topics=[topic])
    except _Rejected as e:
        raise fail("a partition refused the records", False) from e.__cause__
    except _NotAcknowledged as e:  # the optional retries cap ran out
        raise fail("out of retries", False) from e.cause
    except KafkaTimeoutError as e:
        last = getattr(e, "last_error", None)
        cause = last.cause if isinstance(last, _NotAcknowledged) else last
        took = "" if deadline.timeout is None else f" after {deadline.timeout:.1f} s"
        raise fail(f"produce to {topic!r} timed out{took}", True) from cause
    except BaseException as e:
        if pending and not isinstance(e, ProduceFailedError):
            log.debug("produce to %r interrupted by %r with %d partition(s) pending", topic, e, len(pending))
        raise


def _round(call: _Call, d: Deadline) -> BaseException | None:
    """Send the first ``depth`` pending batches of every partition and collect the answers. Returns the
    first failure of the round (None when all succeeded).

    Batch ``j`` of every partition goes in the ``j``-th request to its leader ("wave" ``j``); the waves go
    out back to back on the leader's connection, so up to ``depth`` requests are in flight per broker and a
    partition's batches reach the broker in sequence order. ``depth`` is ``max_in_flight`` for an
    idempotent producer, transactional or not (the broker then refuses a batch whose sequence does not
    follow the last one it wrote, so a batch after a failed one can never be written before it: KAFKA-5494;
    the Java client's transactional producer keeps 5 in flight too), else 1.
    """
    cluster, state = call.cluster, call.state
    if call.idempotent:
        state.ensure(cluster, d)
        state.prepare(cluster, call.topic, [p for p, cs in call.pending.items() if cs], d)
    pipelined = call.idempotent and call.acks != 0
    rnd = _Round()
    waves = _waves(call, d, max(1, call.max_in_flight) if pipelined else 1, rnd)
    # The broker may wait for replication up to this long: less than what the call has left.
    broker_timeout = d.request_timeout_ms(cluster.request_timeout_ms)
    sent = _send_waves(call, d, waves, broker_timeout, rnd)
    for pr, heads in sent:
        if pr is None:  # acks=0: nothing comes back
            for c in heads:
                call.ack(c)
            continue
        try:
            resp = pr.result(broker_timeout + cluster.request_timeout_ms, deadline=d)
        except Exception as e:
            if not is_retriable(e):
                raise
            for c in heads:
                c.error = e
                rnd.behind.add(c.partition)
            rnd.fail(e)
            continue
        by_part = {r.index: r for t in resp.responses for r in t.partition_responses}
        for c in heads:
            _answer(call, c, by_part.get(c.partition), rnd)
    if rnd.renumber:
        # The broker lost (or never had) our producer state, e.g. after a crash that lost its tail: take a
        # new producer id and renumber everything not yet acknowledged (the Java producer's epoch bump,
        # KIP-360). Once per round, after every answer of the round was read.
        state.ensure(cluster, d, refresh=True)
        for cs in call.pending.values():
            for other in cs:
                other.data = None
    return rnd.rejected or rnd.failure


def _waves(call: _Call, d: Deadline, depth: int, rnd: _Round) -> list[dict[int, list[_Chunk]]]:
    """The round's requests: wave ``j`` holds, per leader, batch ``j`` of each of its partitions (encoded
    now if not yet: in order, so sequence numbers follow the partition's order)."""
    waves: list[dict[int, list[_Chunk]]] = [defaultdict(list) for _ in range(depth)]
    for p, cs in call.pending.items():
        if not cs:
            continue
        try:
            leader = call.cluster.leader(call.topic, p, d)
        except Exception as e:
            if not is_retriable(e):
                raise
            cs[0].error = e
            rnd.fail(e)
            continue
        for j, c in enumerate(cs[: call.state.pipeline_depth(call.topic, p, depth)]):
            c.error = None
            if c.data is None:
                _encode_chunk(call.state, call.topic, c, call.recs, call.compression, call.idempotent)
            waves[j][leader].append(c)
    return waves


def _send_waves(
    call: _Call, d: Deadline, waves: list[dict[int, list[_Chunk]]], broker_timeout: int, rnd: _Round
) -> list[tuple[PendingResponse | None, list[_Chunk]]]:
    """Send the waves in order; a leader whose connection failed gets none of its later waves."""
    sent: list[tuple[PendingResponse | None, list[_Chunk]]] = []
    broken: dict[int, BaseException] = {}  # leaders whose connection failed this round
    for wave in waves:
        for leader, heads in wave.items():
            err = broken.get(leader)
            if err is None:
                try:
                    sent.append((_send(call, leader, heads, broker_timeout, d), heads))
                    continue
                except Exception as e:
                    if not is_retriable(e):
                        raise
                    err = broken[leader] = e
            for c in heads:
                c.error = err
            rnd.fail(err)
    return sent


def _answer(call: _Call, c: _Chunk, r: Any, rnd: _Round) -> None:
    """Take the answer ``r`` (its partition's entry in the ProduceResponse; None: missing) for batch ``c``."""
    topic = call.topic
    if r is None:
        c.error = KafkaConnectionError(f"no answer for {topic}/{c.partition} in the response")
        rnd.behind.add(c.partition)
        rnd.fail(c.error)
        return
    err = broker_error(r.error_code, getattr(r, "error_message", None), f"produce {topic}/{c.partition}")
    if err is None or isinstance(err, DuplicateSequenceNumberError):
        # A duplicate means an earlier attempt was written: acknowledged, offset unknown.
        if err is None:
            call.result.offset[c.rows] = r.base_offset + np.arange(len(c.rows), dtype=np.int64)
            lat = getattr(r, "log_append_time_ms", -1)
            if lat is not None and lat >= 0:
                call.result.log_append_time[c.rows] = lat
        call.ack(c)
        return
    c.error = err
    rnd.fail(err)
    if c.partition in rnd.behind:
        # An earlier batch of this partition was not written in this round, so the broker refused
        # this one for its sequence (OUT_OF_ORDER_SEQUENCE_NUMBER): resent after it, in order.
        return
    rnd.behind.add(c.partition)
    if call.idempotent and call.state.transactional_id is None and isinstance(err, _LOST_STATE):
        # (in a transaction these abort it: transaction.py)
        rnd.renumber = True
        return
    if not err.retriable and rnd.rejected is None:
        # Keep reading the other answers of the round (their records may have been written).
        rnd.rejected = _Rejected(str(err))
        rnd.rejected.__cause__ = err


def _send(call: _Call, leader: int, heads: list[_Chunk], broker_timeout: int, d: Deadline) -> PendingResponse | None:
    """Send one ProduceRequest carrying ``heads`` (one batch per partition) to ``leader``."""
    state = call.state
    req = ProduceRequest(
        transactional_id=state.transactional_id,
        acks=call.acks,
        timeout_ms=broker_timeout,
        topic_data=[
            ProduceRequest.TopicProduceData(
                name=call.topic,
                partition_data=[ProduceRequest.PartitionProduceData(index=c.partition, records=c.data) for c in heads],
            )
        ],
    )
    conn = call.cluster.connection(leader, d)
    # Produce v13 (KIP-516, Kafka 4.1+) names topics by id only and this request carries the name: stay at v12,
    # which every Kafka 4.x serves (Kafka answers v13 without an id UNKNOWN_TOPIC_ID). In a transaction the
    # transaction manager decides (v12+ means transaction version 2, KIP-890).
    version = min(conn.version_for(ProduceRequest, LOWEST_VERSION[ProduceRequest]), state.max_produce_version)
    return conn.send(req, version, expect_response=call.acks != 0, deadline=d)


def metadata_timeout(topic: str, error: KafkaTimeoutError, deadline: Deadline, block_ms: float) -> KafkaTimeoutError:
    """``error`` of a write whose topic's metadata never came; when ``max_block_ms`` (not the call's deadline)
    cut the wait, said as Java's producer does ("Topic ... not present in metadata after ... ms"), naming the
    setting and the last answer (issue 34: it took the whole 120 s delivery timeout)."""
    if deadline.expired():
        return error
    last = getattr(error, "last_error", None)
    out = KafkaTimeoutError(f"topic {topic!r} not present in metadata after {block_ms:g} ms (max_block_ms, "
                            f"Java's max.block.ms){f'; last error: {last}' if last is not None else ''}")
    out.last_error = last
    return out


def not_sent(
    topic: str,
    result: ProduceResult,
    vcol: BinaryColumn,
    kcol: BinaryColumn | None,
    ts: np.ndarray,
    headers: Any,
    partition: int | None,
    cause: BaseException,
) -> ProduceFailedError:
    """The error of a produce call that timed out before sending anything (the topic's metadata never
    came): every record handed back, under ``partition`` (-1 when the call let the client choose)."""
    p = -1 if partition is None else int(partition)
    recs = _Records(vcol, kcol, ts, headers)
    parts = np.full(len(vcol), p, dtype=np.int32)
    errors: dict[tuple[str, int], BaseException] = {(topic, p): cause}
    unacked = _unacknowledged(topic, recs, np.zeros(len(vcol), dtype=bool), parts, errors)
    return ProduceFailedError(
        f"produce to {topic!r}: nothing sent, {len(vcol)} record(s) not acknowledged: {cause}",
        errors,
        result,
        unacked,
        timed_out=isinstance(cause, KafkaTimeoutError),
    )


def _make_chunks(parts: np.ndarray, recs: _Records, max_batch_bytes: int) -> dict[int, list[_Chunk]]:
    sizes = np.diff(np.asarray(recs.vcol.offsets, dtype=np.int64)) + _RECORD_OVERHEAD
    if recs.kcol is not None:
        sizes += np.diff(np.asarray(recs.kcol.offsets, dtype=np.int64))
    if recs.headers is not None:
        sizes += np.array([sum(len(k) + len(v or b"") + 4 for k, v in h or ()) for h in recs.headers], dtype=np.int64)
    out: dict[int, list[_Chunk]] = {}
    order = np.argsort(parts, kind="stable")
    sorted_parts = parts[order]
    bounds = np.flatnonzero(np.diff(sorted_parts)) + 1
    for rows in np.split(order, bounds):
        p = int(parts[rows[0]])
        # Cut the partition's records into batches of at most max_batch_bytes (estimated): brokers
        # refuse batches above message.max.bytes, and a v2 Produce carries one batch per partition.
        csum = np.cumsum(sizes[rows])
        chunks = []
        start = 0
        while start < len(rows):
            base = csum[start - 1] if start else 0
            end = int(np.searchsorted(csum, base + max_batch_bytes, side="right"))
            end = max(end, start + 1)
            chunks.append(_Chunk(p, rows[start:end], None))
            start = end
        out[p] = chunks
    return out


def _encode_chunk(
    state: ProducerState, topic: str, chunk: _Chunk, recs: _Records, compression: Any, idempotent: bool
) -> None:
    rows = chunk.rows
    whole = len(rows) == len(recs.vcol) and bool(np.all(rows[:-1] < rows[1:]))
    values = recs.vcol if whole else take(recs.vcol, rows)
    keys = None if recs.kcol is None else (recs.kcol if whole else take(recs.kcol, rows))
    hdrs = None if recs.headers is None else [recs.headers[i] for i in rows.tolist()]
    pid, epoch, seq = -1, -1, -1
    if idempotent:
        tp = (topic, chunk.partition)
        seq = state.sequences.get(tp, 0)
        state.sequences[tp] = (seq + len(rows)) % _SEQ_MODULUS
        pid, epoch = state.producer_id, state.producer_epoch
    chunk.base_sequence = seq
    chunk.data = encode_records(
        values,
        keys,
        timestamps=recs.ts[rows],
        headers=hdrs,
        compression=compression,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        transactional=state.transactional_id is not None,
    )


def _unacknowledged(
    topic: str,
    recs: _Records,
    acked: np.ndarray,
    parts: np.ndarray,
    errors: dict[tuple[str, int], BaseException],
) -> dict[int, UnacknowledgedRecords]:
    out: dict[int, UnacknowledgedRecords] = {}
    missing = np.flatnonzero(~acked)
    if not len(missing):
        return out
    for p in np.unique(parts[missing]).tolist():
        rows = missing[parts[missing] == p]
        out[int(p)] = UnacknowledgedRecords(
            topic=topic,
            partition=int(p),
            rows=rows,
            values=take(recs.vcol, rows).to_pylist(),
            keys=None if recs.kcol is None else take(recs.kcol, rows).to_pylist(),
            headers=None if recs.headers is None else [recs.headers[i] for i in rows.tolist()],
            timestamps=recs.ts[rows].tolist(),
            error=errors.get((topic, int(p))),
        )
    return out
