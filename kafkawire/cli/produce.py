"""``kafkawire produce TOPIC``: write records from lines, JSON lines or a whole file.

Input comes from ``--input FILE`` or standard input and is read as bytes (no decoding: any encoding
goes through unchanged). Records are sent in chunks of ``--chunk-records`` with one
:meth:`kafkawire.client.Client.produce` call each, so a long stream does not sit in memory.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import IO, Any

from ._common import CliError, add_connection_args, make_client, parse_pairs, partitions_of

__all__ = ["add_arguments", "run"]

COMPRESSIONS = ("none", "gzip", "snappy", "lz4", "zstd")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``kafkawire produce``."""
    parser.add_argument("topic", help="topic to write to")
    add_connection_args(parser)
    parser.add_argument("--input", "-i", default="-", metavar="FILE", help="read from FILE (default: stdin)")
    parser.add_argument(
        "--format",
        "-f",
        choices=("lines", "json", "file"),
        default="lines",
        help="lines: one record per line; json: one JSON document per line (validated); "
        "file: the whole input is one record (default: lines)",
    )
    parser.add_argument("--key-field", metavar="FIELD", help="json: use this field of each object as the key")
    parser.add_argument(
        "--value-field", metavar="FIELD", help="json: use this field as the value (default: the whole line)"
    )
    parser.add_argument(
        "--key-separator", metavar="SEP", help="lines: split each line at the first SEP into key and value"
    )
    parser.add_argument("--key", help="the same key for every record")
    parser.add_argument("--compression", "-z", choices=COMPRESSIONS, default=None,
                        help="default: -X compression.type, else none")
    parser.add_argument("--partition", "-p", type=int, help="write every record to this partition")
    parser.add_argument(
        "--headers",
        "-H",
        action="append",
        metavar="KEY=VALUE[,...]",
        help="headers added to every record (repeatable)",
    )
    parser.add_argument("--acks", type=int, choices=(-1, 0, 1), default=None,
                        help="default: -X acks, else -1 (all, idempotent)")
    parser.add_argument("--chunk-records", type=int, default=10_000, help="records per produce call")
    parser.add_argument("--quiet", "-q", action="store_true", help="do not print the summary on stderr")


def _open_input(path: str) -> IO[bytes]:
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as e:
        raise CliError(f"cannot read {path}: {e.strerror}") from None


def _json_field_bytes(value: Any) -> bytes | None:
    """A JSON field as record bytes: strings as UTF-8 text, null as a null key, anything else as JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode("utf-8")
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _records(args: argparse.Namespace, stream: IO[bytes]) -> Iterator[tuple[bytes | None, bytes]]:
    """``(key, value)`` for every record of the input, in order."""
    fixed_key: bytes | None = None if args.key is None else args.key.encode("utf-8")
    if args.format == "file":
        yield fixed_key, stream.read()
        return
    sep = None if args.key_separator is None else args.key_separator.encode("utf-8")
    for lineno, raw in enumerate(stream, 1):
        line = raw.rstrip(b"\r\n") if raw.endswith(b"\n") else raw
        if args.format == "lines":
            if sep is not None:
                key, found, value = line.partition(sep)
                if not found:
                    raise CliError(f"line {lineno}: no key separator {args.key_separator!r}")
                yield key, value
            else:
                yield fixed_key, line
            continue
        if not line.strip():
            continue  # blank lines between JSON documents carry no record
        try:
            doc = json.loads(line)
        except ValueError as e:
            raise CliError(f"line {lineno}: not JSON ({e})") from None
        doc_key = fixed_key
        if args.key_field is not None:
            if not isinstance(doc, dict):
                raise CliError(f"line {lineno}: --key-field needs a JSON object, got {type(doc).__name__}")
            doc_key = _json_field_bytes(doc.get(args.key_field))
        value = line.strip()
        if args.value_field is not None:
            if not isinstance(doc, dict) or args.value_field not in doc:
                raise CliError(f"line {lineno}: no field {args.value_field!r}")
            value = _json_field_bytes(doc[args.value_field]) or b""
        yield doc_key, value


def run(args: argparse.Namespace) -> int:
    """Produce the input to ``args.topic``; print where the records went on stderr."""
    if args.format != "json" and (args.key_field or args.value_field):
        raise CliError("--key-field and --value-field need --format json")
    if args.format != "lines" and args.key_separator is not None:
        raise CliError("--key-separator needs --format lines")
    if args.chunk_records < 1:
        raise CliError("--chunk-records must be >= 1")
    header_pairs = [(k, v.encode("utf-8")) for k, v in parse_pairs(args.headers, "header")]
    stream = _open_input(args.input)
    total = 0
    per_partition: dict[int, list[int]] = {}  # partition -> [first offset, last offset, count]
    with make_client(args, "producer") as client:
        # The Java producer's properties (-X, --command-config) through kafkawire's one mapping; the flags
        # win. linger.ms, batch.size and delivery.timeout.ms need no action: the command sends each chunk
        # of --chunk-records as soon as it is read, bounded by --timeout.
        role = args.role_settings
        if role.get("transactional_id"):
            raise CliError("transactional.id: `kafkawire produce` does not write transactions")
        acks = args.acks if args.acks is not None else role.get("acks", -1)
        compression = args.compression if args.compression is not None else role.get("compression")
        compression = None if compression == "none" else compression
        # A missing topic (or partition) is reported at once, as consume and offsets do, instead of after
        # the client's retries of UNKNOWN_TOPIC_OR_PARTITION have run out --timeout.
        available = partitions_of(client, args.topic)
        if args.partition is not None and args.partition not in available:
            raise CliError(f"topic {args.topic!r} has no partition {args.partition} (partitions: {available})")
        keys: list[bytes | None] = []
        values: list[bytes] = []

        def flush() -> None:
            nonlocal total
            if not values:
                return
            uses_keys = any(k is not None for k in keys)
            result = client.produce(
                args.topic,
                values,
                keys if uses_keys else None,
                partition=args.partition,
                headers=[header_pairs] * len(values) if header_pairs else None,
                acks=acks,
                compression=compression,
            )
            for p, off in zip(result.partition.tolist(), result.offset.tolist()):
                span = per_partition.setdefault(p, [off, off, 0])
                if off >= 0:
                    span[0] = off if span[0] < 0 else min(span[0], off)
                    span[1] = max(span[1], off)
                span[2] += 1
            total += len(values)
            keys.clear()
            values.clear()

        try:
            for key, value in _records(args, stream):
                keys.append(key)
                values.append(value)
                if len(values) >= args.chunk_records:
                    flush()
            flush()
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()
    if not args.quiet:
        where = ", ".join(
            f"partition {p}: {c} at offsets {lo}..{hi}" if lo >= 0 else f"partition {p}: {c}"
            for p, (lo, hi, c) in sorted(per_partition.items())
        )
        print(f"produced {total} record{'s' if total != 1 else ''} to {args.topic}" + (f" ({where})" if where else ""),
              file=sys.stderr)
    return 0
