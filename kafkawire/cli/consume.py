"""``kafkawire consume TOPIC``: read records to stdout (values or JSON lines) or to a Parquet file.

Reading uses :meth:`kafkawire.client.Client.fetch_many`: every fetch is decoded into
:class:`kafkawire.RecordColumns` in one pass, so the Parquet path never builds a Python object per record
(the columns go to Arrow without copying). By default the command reads up to the end offsets it saw when
it started and exits; ``--follow`` keeps reading new records until Ctrl-C or SIGTERM.

With ``--group`` (or ``-X group.id``) the command joins that consumer group, like ``kafka-console-consumer
--group``: members share the topic's partitions, each starts at the group's committed offsets (``--from
earliest``/``latest`` where there are none) and commits exactly the records it has written after each batch,
so an interrupted run (Ctrl-C, SIGTERM) committed what it output and a restart reads on from there. With
``--partition`` too, it reads those partitions by offset and commits for the group without joining.

``--format json`` and ``parquet`` have Spark's Kafka source columns: ``key, value, topic, partition, offset,
timestamp, timestampType, headers`` (headers null when a record has none).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import signal
import sys
from collections.abc import Callable, Iterator
from typing import IO, Any

from ..client.consumer.ranges import LostRange, read_ranges
from ..client.net.deadline import Deadline
from ..errors import KafkaWireError
from ._common import CliError, add_connection_args, make_client, parse_start, partitions_of
from .values import add_value_args, wrap_writer

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``kafkawire consume``."""
    parser.add_argument("topic", help="topic to read")
    add_connection_args(parser)
    parser.add_argument(
        "--from",
        dest="start",
        default=None,
        metavar="WHERE",
        help="earliest, latest, committed (needs --group), an offset (42), or a time: @MILLISECONDS or "
        "ISO 8601 (first record at or after it). Default: committed with --group (earliest where none), "
        "else earliest",
    )
    parser.add_argument("--partition", "-p", type=int, action="append", help="read only this partition (repeatable)")
    parser.add_argument("--max-records", "-n", type=int, help="stop after this many records")
    parser.add_argument("--follow", "-F", action="store_true", help="keep reading new records until interrupted")
    parser.add_argument(
        "--group", "-g",
        help="join this consumer group (its members share the topic's partitions, as kafka-console-consumer "
        "--group) and commit exactly what was written after each batch, Ctrl-C included; with --partition, "
        "commit for it without joining (default: -X group.id)",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="do not print the summary on stderr")
    parser.add_argument(
        "--format",
        "-f",
        choices=("values", "json", "parquet"),
        default="values",
        help="values: one value per line; json: one JSON object per record; parquet: a Parquet file "
        "(needs --output and pyarrow). Default: values",
    )
    parser.add_argument("--output", "-o", default="-", metavar="FILE", help="write to FILE (default: stdout)")
    parser.add_argument(
        "--print-key", action="store_true", help="values: print KEY<separator>VALUE instead of the value alone"
    )
    parser.add_argument("--separator", default="\t", help="values: separator for --print-key (default: tab)")
    parser.add_argument(
        "--binary",
        choices=("utf8", "base64", "hex"),
        default="utf8",
        help="json: how keys and values appear (utf8 replaces invalid bytes with U+FFFD; default: utf8)",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar on stderr (needs tqdm; default: when stderr is a terminal)",
    )
    parser.add_argument("--max-wait-ms", type=int, default=500, help="how long one fetch waits for new data")
    parser.add_argument("--fetch-max-bytes", type=int, default=16 << 20, help="bytes per fetch (default: 16 MiB)")
    add_value_args(parser)  # --value-format avro --schema-registry URL (cli/values.py)


# ------------------------------------------------------------------------------------------ writers


class _ValuesWriter:
    """Raw values, one per line (a null value is an empty line)."""

    def __init__(self, out: IO[bytes], print_key: bool, separator: bytes) -> None:
        self.out, self.print_key, self.separator = out, print_key, separator

    def write(self, topic: str, partition: int, cols: Any, count: int) -> None:
        values = cols.value.to_pylist()[:count]
        if self.print_key:
            keys = cols.key.to_pylist()[:count]
            lines = [(k or b"") + self.separator + (v or b"") for k, v in zip(keys, values)]
        else:
            lines = [v or b"" for v in values]
        self.out.write(b"\n".join(lines) + b"\n")
        self.out.flush()

    def close(self) -> None:
        pass


def _text_encoder(kind: str) -> Callable[[bytes | None], str | None]:
    if kind == "base64":
        return lambda b: None if b is None else base64.b64encode(b).decode("ascii")
    if kind == "hex":
        return lambda b: None if b is None else b.hex()
    return lambda b: None if b is None else b.decode("utf-8", "replace")


#: The columns of ``--format json`` and ``parquet``, named and ordered as Spark's Kafka source has them.
COLUMNS = ("key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers")


class _JsonWriter:
    """One JSON object per record with Spark's columns (:data:`COLUMNS`): ``timestamp`` in ms since the
    epoch, ``headers`` a list of ``{"key", "value"}`` objects or null when the record has none (as Spark)."""

    def __init__(self, out: IO[bytes], binary: str) -> None:
        self.out, self.enc = out, _text_encoder(binary)

    def write(self, topic: str, partition: int, cols: Any, count: int, value: list[Any] | None = None,
              default: Callable[[Any], Any] | None = None) -> None:
        """``value``: decoded values (``--value-format``) written as JSON instead of the bytes, with
        ``default`` for what JSON lacks."""
        enc = self.enc
        offsets = cols.offset[:count].tolist()
        stamps = cols.timestamp[:count].tolist()
        kinds = cols.timestamp_type[:count].tolist()
        keys = cols.key.to_pylist()[:count]
        values = value if value is not None else [enc(v) for v in cols.value.to_pylist()[:count]]
        hoffs = cols.header_offsets.tolist()
        hkeys = [(k or b"").decode("utf-8", "replace") for k in cols.header_key.to_pylist()]
        hvals = cols.header_value.to_pylist()
        lines = []
        for i in range(count):
            lo, hi = hoffs[i], hoffs[i + 1]
            doc = {
                "key": enc(keys[i]),
                "value": values[i],
                "topic": topic,
                "partition": partition,
                "offset": offsets[i],
                "timestamp": stamps[i],
                "timestampType": kinds[i],
                "headers": [{"key": hkeys[j], "value": enc(hvals[j])} for j in range(lo, hi)] if hi > lo else None,
            }
            lines.append(json.dumps(doc, ensure_ascii=False, separators=(",", ":"), default=default))
        self.out.write(("\n".join(lines) + "\n").encode("utf-8"))
        self.out.flush()

    def close(self) -> None:
        pass


class _ParquetWriter:
    """Arrow record batches with Spark's columns (:data:`COLUMNS`; ``RecordColumns.to_arrow()`` shares the
    decoded buffers, topic and partition are added) into one file."""

    def __init__(self, path: str) -> None:
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise CliError("--format parquet needs pyarrow: pip install 'kafkawire[arrow]'") from None
        self.pa, self.pq, self.path = pa, pq, path
        self.writer: Any = None

    def _batch(self, topic: str, partition: int, cols: Any, count: int, value: Any = None) -> Any:
        pa = self.pa
        batch = cols.to_arrow().slice(0, count)
        arrays = [
            batch.column("key"),
            batch.column("value") if value is None else value,  # decoded values (--value-format): a struct
            pa.array([topic] * count, pa.string()),
            pa.array([partition] * count, pa.int32()),
            batch.column("offset"),
            batch.column("timestamp"),
            batch.column("timestamp_type").cast(pa.int32()),  # Spark's timestampType is an int
            batch.column("headers"),
        ]
        return pa.RecordBatch.from_arrays(arrays, names=list(COLUMNS))

    def write(self, topic: str, partition: int, cols: Any, count: int, value: Any = None) -> None:
        batch = self._batch(topic, partition, cols, count, value)
        if self.writer is None:
            self.writer = self.pq.ParquetWriter(self.path, batch.schema)
        self.writer.write_batch(batch)

    def close(self, value_type: Any = None) -> None:
        """``value_type``: the Arrow type of decoded values, for the schema of a file without records."""
        if self.writer is None:  # no record at all: still leave a valid (empty) file behind
            from ..columns import RecordColumns

            empty = None if value_type is None else self.pa.array([], value_type)
            schema = self._batch("", 0, RecordColumns.empty(), 0, empty).schema
            self.writer = self.pq.ParquetWriter(self.path, schema)
        self.writer.close()


# ------------------------------------------------------------------------------------------ the loop


def _progress_bar(enabled: bool | None, total: int | None) -> Any:
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        if enabled:
            print('kafkawire: tqdm is not installed: no progress bar (pip install "kafkawire[cli]")', file=sys.stderr)
        return None
    return tqdm(total=total, unit=" records", file=sys.stderr, dynamic_ncols=True, leave=True)


def _start_offsets(
    client: Any, topic: str, partitions: list[int], start: tuple[str, int], group: str | None
) -> dict[int, int]:
    kind, value = start
    if kind == "committed":
        assert group is not None
        committed = client.committed(group, [(topic, p) for p in partitions])
        earliest = client.list_offsets(topic, partitions, timestamp="earliest")
        return {
            p: committed[(topic, p)].offset if committed[(topic, p)].offset >= 0 else earliest[p].offset
            for p in partitions
        }
    if kind in ("earliest", "latest"):
        return {p: lo.offset for p, lo in client.list_offsets(topic, partitions, timestamp=kind).items()}
    if kind == "offset":
        return dict.fromkeys(partitions, value)
    # A time: the first offset at or after it; a partition with no such record starts at its end.
    by_time = client.list_offsets(topic, partitions, timestamp=value)
    latest = client.list_offsets(topic, partitions, timestamp="latest")
    return {p: by_time[p].offset if by_time[p].offset >= 0 else latest[p].offset for p in partitions}


def _skip_lost(lost: LostRange) -> None:
    print(f"kafkawire: {lost}; skipped", file=sys.stderr)


class _StopSignals:
    """SIGTERM and Ctrl-C (SIGINT) end consuming with ``KeyboardInterrupt``, but never inside :meth:`held`.

    A signal that arrives while a batch is being written and counted is held until both are done, so the
    summary line counts exactly the records that were output (a signal between the two used to lose the
    batch from the count).
    """

    def __init__(self) -> None:
        self.holding = False
        self.pending = False

    def handler(self, signum: int, frame: Any) -> None:
        if self.holding:
            self.pending = True
        else:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        self.holding = True
        try:
            yield
        finally:
            self.holding = False
        if self.pending:  # reached only when the block completed: raise what it held back
            self.pending = False
            raise KeyboardInterrupt


@contextlib.contextmanager
def _stop_signals() -> Iterator[_StopSignals]:
    """Install :class:`_StopSignals` for SIGTERM and SIGINT while consuming (main thread only)."""
    stops = _StopSignals()
    previous: dict[signal.Signals, Any] = {}
    try:
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, stops.handler)
    except ValueError:  # not the main thread: leave signals alone
        pass
    try:
        yield stops
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class _Run:
    """What one consume run did: records written, and the position committed per partition (``--group``)."""

    def __init__(self) -> None:
        self.written = 0
        self.committed: dict[int, int] = {}
        self.commit_error: str | None = None


def _read_assigned(args: argparse.Namespace, client: Any, writer: Any, stops: _StopSignals, bar: Any,
                   partitions: list[int], start: tuple[str, int], group: str | None, done: _Run) -> None:
    """Read ``partitions`` by offset (no group membership); with ``group`` (``--partition`` given), commit
    exactly what was written after each batch, as a consumer with manual assignment does."""
    topic = args.topic
    positions = _start_offsets(client, topic, partitions, start, group)
    ends: dict[int, int] | None = None
    if not args.follow:
        latest = client.list_offsets(topic, partitions, timestamp="latest")
        ends = {p: latest[p].offset for p in partitions}
    if bar is not None and ends is not None:
        total = sum(max(0, ends[p] - positions[p]) for p in partitions)
        bar.total = total if args.max_records is None else min(total, args.max_records)
    limit = args.max_records
    # The one bounded range reader: every partition up to the end offsets seen at start (open-ended
    # with --follow), fetched together; gaps, control records and idle backoff are handled there.
    # Records the log no longer has (retention) are skipped, as a consumer with auto.offset.reset does.
    reader: Any = read_ranges(  # a generator: closed below
        client,
        {(topic, p): (positions[p], None if ends is None else ends[p]) for p in partitions},
        deadline=Deadline(None),  # ended by the end offsets, --max-records or a signal
        max_bytes=args.fetch_max_bytes,
        max_wait_ms=args.max_wait_ms,
        isolation=args.role_settings.get("isolation", "read_uncommitted"),
        on_loss=_skip_lost,
    )
    try:
        for piece in reader if limit is None or limit > 0 else ():
            # A slice starts at row 0: the decoder drops records below the fetch offset.
            count = len(piece) if limit is None else min(len(piece), limit - done.written)
            with stops.held():  # a stop signal waits until the batch is written, counted and committed
                writer.write(topic, piece.partition, piece.columns, count)
                done.written += count
                if group:
                    position = piece.next_offset if count == len(piece) else int(piece.offsets[count - 1]) + 1
                    client.commit_offsets(group, {(topic, piece.partition): position})
                    done.committed[piece.partition] = position
            if bar is not None:
                bar.update(count)
            if limit is not None and done.written >= limit:
                break
    finally:
        reader.close()


def _read_group(args: argparse.Namespace, client: Any, writer: Any, stops: _StopSignals, bar: Any,
                available: list[int], start: tuple[str, int], done: _Run) -> None:
    """Join ``--group`` (subscribe, as ``kafka-console-consumer --group``): the group's members share the
    topic's partitions, each starts at the group's committed offsets (``--from earliest``/``latest`` where
    there are none), and after each batch exactly the written records are committed."""
    from ..client import Consumer

    topic = args.topic
    role = dict(args.role_settings)
    role.pop("group_id", None)
    if start[0] in ("earliest", "latest"):
        role["auto_offset_reset"] = start[0]
    role.setdefault("auto_offset_reset", "earliest")
    role.setdefault("max_wait_ms", args.max_wait_ms)
    role.setdefault("max_bytes", args.fetch_max_bytes)
    ends: dict[int, int] | None = None
    if not args.follow:
        latest = client.list_offsets(topic, available, timestamp="latest")
        ends = {p: latest[p].offset for p in available}
    limit = args.max_records
    consumer = Consumer(client=client, group_id=args.group, enable_auto_commit=False, **role)
    try:
        consumer.subscribe([topic])
        while limit is None or done.written < limit:
            batches = consumer.poll(timeout_ms=max(args.max_wait_ms, 200))
            for tp, cols in sorted(batches.items()):
                partition = tp[1]
                offsets = cols.offset
                count = len(offsets)
                if ends is not None:  # stop at the end offsets seen at start, as without --group
                    count = int((offsets < ends[partition]).sum())
                if limit is not None:
                    count = min(count, limit - done.written)
                if count <= 0:
                    continue
                with stops.held():  # a stop signal waits until the batch is written, counted and committed
                    writer.write(topic, partition, cols, count)
                    done.written += count
                    position = int(offsets[count - 1]) + 1
                    try:
                        consumer.commit({(topic, partition): position})
                        done.committed[partition] = position
                    except KafkaWireError as e:  # e.g. the partition was revoked by a rebalance meanwhile
                        done.commit_error = f"{type(e).__name__}: {e}"
                if bar is not None:
                    bar.update(count)
            if ends is not None and _at_end(consumer, ends):
                break
    finally:
        consumer.close()


def _at_end(consumer: Any, ends: dict[int, int]) -> bool:
    """Every partition this member holds is read up to the end offsets seen at start."""
    assigned = consumer.assignment()
    if not assigned:  # joined, and the group gave this member nothing (more members than partitions)
        return bool(consumer.generation >= 0)
    return all(consumer.position(tp) >= ends[tp[1]] for tp in assigned)


def run(args: argparse.Namespace) -> int:
    """Consume ``args.topic`` as the options say; print a one-line summary on stderr."""
    if args.max_records is not None and args.max_records < 0:
        raise CliError("--max-records must be >= 0")
    if args.format == "parquet" and args.output == "-":
        raise CliError("--format parquet needs --output FILE")
    out: IO[bytes] | None = None
    writer: Any
    topic = args.topic
    done = _Run()
    bar = None
    group: str | None = None
    try:
        with make_client(args, "consumer") as client, _stop_signals() as stops:
            # -X group.id (the Java name) is --group.
            group = args.group or args.role_settings.get("group_id")
            args.group = group
            # Checked before reading, so a typo is reported at once.
            start = parse_start(args.start) if args.start else (("committed", 0) if group else ("earliest", 0))
            if start[0] == "committed" and not group:
                raise CliError("--from committed needs --group")
            joins = group is not None and not args.partition
            if joins and start[0] in ("offset", "time"):
                raise CliError("--from OFFSET or TIME with --group: the group's members start at its committed "
                               "offsets; move them first (kafkawire groups reset-offsets), or name --partition")
            if args.format == "parquet":
                writer = _ParquetWriter(args.output)
            else:
                try:
                    out = sys.stdout.buffer if args.output == "-" else open(args.output, "wb")
                except OSError as e:
                    raise CliError(f"cannot write {args.output}: {e.strerror}") from None
                if args.format == "json":
                    writer = _JsonWriter(out, args.binary)
                else:
                    writer = _ValuesWriter(out, args.print_key, args.separator.encode("utf-8"))
            writer = wrap_writer(writer, args, out)  # decodes registry-framed values first (--value-format)
            available = partitions_of(client, topic)
            partitions = sorted(set(args.partition)) if args.partition else available
            missing = [p for p in partitions if p not in available]
            if missing:
                raise CliError(f"topic {topic!r} has no partition {missing[0]} (partitions: {available})")
            bar = _progress_bar(args.progress, None)
            try:
                if joins:
                    _read_group(args, client, writer, stops, bar, available, start, done)
                else:
                    _read_assigned(args, client, writer, stops, bar, partitions, start, group, done)
            except KeyboardInterrupt:
                if not args.follow:
                    _summary(args, done, interrupted=True)
                    raise
    except BrokenPipeError:
        # `kafkawire consume ... | head`: the reader went away; not an error worth a traceback.
        with contextlib.suppress(Exception):
            sys.stdout = open("/dev/null", "w")  # noqa: SIM115 - keep interpreter shutdown from flushing
        return 0
    except KafkaWireError:
        raise  # includes KafkaConnectionError, an OSError too: reported by main()
    except OSError as e:  # the output file (e.g. a Parquet path in a missing directory)
        raise CliError(f"cannot write {args.output}: {e}") from None
    finally:
        if bar is not None:
            bar.close()
        with contextlib.suppress(NameError):  # not made when the arguments were rejected
            try:
                writer.close()
            except OSError as e:
                raise CliError(f"cannot write {args.output}: {e}") from None
        if out is not None and out is not sys.stdout.buffer:
            out.close()
    _summary(args, done, interrupted=False)
    return 0


def _summary(args: argparse.Namespace, done: _Run, *, interrupted: bool) -> None:
    """``consumed N records from T`` (and what was committed for the group) on stderr, unless ``-q``."""
    if args.quiet:
        return
    n = done.written
    text = f"consumed {n} record{'s' if n != 1 else ''} from {args.topic}"
    if args.group:
        spots = ", ".join(f"{p}:{o}" for p, o in sorted(done.committed.items())) or "nothing"
        text += f"; committed for group {args.group} the position after each written record (partition:offset {spots})"
        if done.commit_error:
            text += f"; a commit failed ({done.commit_error}): another member may read those records again"
    print(text + (" (interrupted)" if interrupted else ""), file=sys.stderr)
