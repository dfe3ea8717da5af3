"""``kafkawire consume TOPIC``: read records to stdout (values or JSON lines) or to a Parquet file.

Reading uses :meth:`kafkawire.client.Client.fetch_many`: every fetch is decoded into
:class:`kafkawire.RecordColumns` in one pass, so the Parquet path never builds a Python object per record
(the columns go to Arrow without copying). By default the command reads up to the end offsets it saw when
it started and exits; ``--follow`` keeps reading new records until Ctrl-C or SIGTERM.

With ``--group`` the position after each written chunk is committed for that consumer group (a commit
outside group membership, like a consumer with manual assignment), and ``--from`` defaults to the
group's committed offsets.
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
    parser.add_argument("--group", "-g", help="commit the position for this consumer group as records are written")
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


class _JsonWriter:
    """One JSON object per record: topic, partition, offset, timestamp (ms), key, value, headers."""

    def __init__(self, out: IO[bytes], binary: str) -> None:
        self.out, self.enc = out, _text_encoder(binary)

    def write(self, topic: str, partition: int, cols: Any, count: int) -> None:
        enc = self.enc
        offsets = cols.offset[:count].tolist()
        stamps = cols.timestamp[:count].tolist()
        keys = cols.key.to_pylist()[:count]
        values = cols.value.to_pylist()[:count]
        hoffs = cols.header_offsets.tolist()
        hkeys = [(k or b"").decode("utf-8", "replace") for k in cols.header_key.to_pylist()]
        hvals = cols.header_value.to_pylist()
        lines = []
        for i in range(count):
            doc = {
                "topic": topic,
                "partition": partition,
                "offset": offsets[i],
                "timestamp": stamps[i],
                "key": enc(keys[i]),
                "value": enc(values[i]),
                "headers": [[hkeys[j], enc(hvals[j])] for j in range(hoffs[i], hoffs[i + 1])],
            }
            lines.append(json.dumps(doc, ensure_ascii=False, separators=(",", ":")))
        self.out.write(("\n".join(lines) + "\n").encode("utf-8"))
        self.out.flush()

    def close(self) -> None:
        pass


class _ParquetWriter:
    """Arrow record batches (``RecordColumns.to_arrow()`` plus a ``partition`` column) into one file."""

    def __init__(self, path: str) -> None:
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise CliError("--format parquet needs pyarrow: pip install 'kafkawire[arrow]'") from None
        self.pa, self.pq, self.path = pa, pq, path
        self.writer: Any = None

    def write(self, topic: str, partition: int, cols: Any, count: int) -> None:
        pa = self.pa
        batch = cols.to_arrow().slice(0, count)
        batch = pa.RecordBatch.from_arrays(
            [pa.array([partition] * count, pa.int32()), *batch.columns], names=["partition", *batch.schema.names]
        )
        if self.writer is None:
            self.writer = self.pq.ParquetWriter(self.path, batch.schema)
        self.writer.write_batch(batch)

    def close(self) -> None:
        if self.writer is None:  # no record at all: still leave a valid (empty) file behind
            from ..columns import RecordColumns

            empty = RecordColumns.empty().to_arrow()
            schema = self.pa.schema([self.pa.field("partition", self.pa.int32()), *empty.schema])
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
    previous: dict[int, Any] = {}
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


def run(args: argparse.Namespace) -> int:
    """Consume ``args.topic`` as the options say; print a one-line summary on stderr."""
    if args.max_records is not None and args.max_records < 0:
        raise CliError("--max-records must be >= 0")
    if args.format == "parquet" and args.output == "-":
        raise CliError("--format parquet needs --output FILE")
    # Checked before connecting, so a typo is reported at once.
    start = parse_start(args.start) if args.start else (("committed", 0) if args.group else ("earliest", 0))
    if start[0] == "committed" and not args.group:
        raise CliError("--from committed needs --group")
    out: IO[bytes] | None = None
    writer: Any
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

    topic = args.topic
    written = 0
    bar = None
    try:
        with make_client(args) as client, _stop_signals() as stops:
            available = partitions_of(client, topic)
            partitions = sorted(set(args.partition)) if args.partition else available
            missing = [p for p in partitions if p not in available]
            if missing:
                raise CliError(f"topic {topic!r} has no partition {missing[0]} (partitions: {available})")
            positions = _start_offsets(client, topic, partitions, start, args.group)
            ends: dict[int, int] | None = None
            if not args.follow:
                latest = client.list_offsets(topic, partitions, timestamp="latest")
                ends = {p: latest[p].offset for p in partitions}
            total = None
            if ends is not None:
                total = sum(max(0, ends[p] - positions[p]) for p in partitions)
                if args.max_records is not None:
                    total = min(total, args.max_records)
            bar = _progress_bar(args.progress, total)
            limit = args.max_records
            # The one bounded range reader: every partition up to the end offsets seen at start (open-ended
            # with --follow), fetched together; gaps, control records and idle backoff are handled there.
            # Records the log no longer has (retention) are skipped, as a consumer with auto.offset.reset does.
            reader = read_ranges(
                client,
                {(topic, p): (positions[p], None if ends is None else ends[p]) for p in partitions},
                deadline=Deadline(None),  # ended by the end offsets, --max-records or a signal
                max_bytes=args.fetch_max_bytes,
                max_wait_ms=args.max_wait_ms,
                on_loss=_skip_lost,
            )
            try:
                for piece in reader if limit is None or limit > 0 else ():
                    # A slice starts at row 0: the decoder drops records below the fetch offset.
                    count = len(piece) if limit is None else min(len(piece), limit - written)
                    with stops.held():  # a stop signal waits until the batch is counted
                        writer.write(topic, piece.partition, piece.columns, count)
                        written += count
                    if bar is not None:
                        bar.update(count)
                    if args.group:
                        done = count == len(piece)
                        position = piece.next_offset if done else int(piece.offsets[count - 1]) + 1
                        client.commit_offsets(args.group, {(topic, piece.partition): position})
                    if limit is not None and written >= limit:
                        break
            except KeyboardInterrupt:
                if not args.follow:
                    raise
            finally:
                reader.close()
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
        try:
            writer.close()
        except OSError as e:
            raise CliError(f"cannot write {args.output}: {e}") from None
        if out is not None and out is not sys.stdout.buffer:
            out.close()
    print(f"consumed {written} record{'s' if written != 1 else ''} from {topic}", file=sys.stderr)
    return 0

