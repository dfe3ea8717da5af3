"""Public record codec API: argument checking in front of the selected implementation.

Both implementations (compiled ``kafkawire._codec`` and pure ``kafkawire._pure.codec``) expose the same
low-level functions; this module normalises user arguments once and calls whichever is active:

``impl.decode(data, verify_crc, fetch_offset, read_committed, aborted) -> RecordColumns``
    ``data`` a contiguous byte buffer; ``fetch_offset`` -1 for none; ``aborted`` a list of
    ``(producer_id, first_offset)`` sorted by ``first_offset``.
``impl.encode(values, keys, timestamps, header_offsets, header_keys, header_values, base_offset, magic,
codec, producer_id, producer_epoch, base_sequence, transactional, partition_leader_epoch) -> bytes``
    ``values``/``keys`` :class:`BinaryColumn` (keys may be None), ``timestamps`` int64 array,
    headers None or int32 offsets (len n+1) plus two BinaryColumns.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from . import _impl
from .columns import BinaryColumn, RecordColumns, as_binary_column

__all__ = ["decode_records", "encode_records", "record_columns", "check_record_arguments", "CODECS", "codec_id"]

#: Compression codec ids as stored in attribute bits 0-2.
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}

HeadersArg = Sequence[Sequence[tuple[str | bytes, bytes | None]] | None]


def codec_id(compression: str | int | None) -> int:
    """Map ``None``/``"none"``/``"gzip"``/``"snappy"``/``"lz4"``/``"zstd"`` (or 0-4) to the codec id."""
    if compression is None:
        return 0
    if isinstance(compression, int) and not isinstance(compression, bool):
        if 0 <= compression <= 4:
            return compression
    elif isinstance(compression, str) and compression.lower() in CODECS:
        return CODECS[compression.lower()]
    raise ValueError(f"unknown compression {compression!r}; expected one of {sorted(CODECS)}")


def _aborted_list(aborted_transactions: Iterable[Any] | None) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for entry in aborted_transactions or ():
        if isinstance(entry, dict):
            pid, first = entry["producer_id"], entry["first_offset"]
        elif hasattr(entry, "producer_id"):
            pid, first = entry.producer_id, entry.first_offset
        else:
            pid, first = entry
        out.append((int(pid), int(first)))
    # Brokers are meant to send this sorted, some do not: order by first offset ourselves.
    out.sort(key=lambda e: (e[1], e[0]))
    return out


def decode_records(
    data: bytes | bytearray | memoryview,
    *,
    verify_crc: bool = True,
    fetch_offset: int | None = None,
    isolation: str = "read_uncommitted",
    aborted_transactions: Iterable[Any] | None = None,
) -> RecordColumns:
    """Decode the ``records`` bytes of a fetched partition into :class:`RecordColumns`.

    ``data`` may mix record batches (magic 2) and legacy message sets (magic 0/1, compressed wrappers
    included) and may end in a partial entry (normal: it is ignored and ``valid_bytes`` says where the
    complete entries end). Control batches are never returned as data. With
    ``isolation="read_committed"``, batches of transactions listed in ``aborted_transactions``
    (``(producer_id, first_offset)`` pairs, dicts or objects with those attributes) are dropped.
    Records below ``fetch_offset`` are dropped (compressed wrappers can start before it).

    Raises a :class:`kafkawire.KafkaWireError` subclass on corrupt input and
    :class:`kafkawire.RecordTooLargeError` when not even one complete entry is present.
    """
    if isolation not in ("read_uncommitted", "read_committed"):
        raise ValueError(f"isolation must be 'read_uncommitted' or 'read_committed', not {isolation!r}")
    if isinstance(data, memoryview) and not data.c_contiguous:
        data = data.tobytes()
    if fetch_offset is not None and not -(2**63) <= int(fetch_offset) < 2**63:
        raise ValueError(f"fetch_offset out of int64 range: {fetch_offset}")
    read_committed = isolation == "read_committed"
    aborted = _aborted_list(aborted_transactions) if read_committed else []
    columns: RecordColumns = _impl.impl.decode(
        data, bool(verify_crc), -1 if fetch_offset is None else int(fetch_offset), read_committed, aborted
    )
    return columns


_BYTES_LIKE = (bytes, bytearray, memoryview)
_SCALARS = (bytes, bytearray, memoryview, str)
# Exact element types the fast check accepts with one C-level pass over the list (subclasses such as
# numpy.bytes_ take the per-element isinstance path below).
_ELEMENT_TYPES = frozenset({bytes, bytearray, memoryview, str, type(None)})


def _describe(x: Any) -> str:
    if isinstance(x, np.ndarray):
        return f"a numpy array of dtype {x.dtype}"
    return f"{type(x).__module__}.{type(x).__qualname__}" if type(x).__module__ != "builtins" else type(x).__name__


def _check_column(items: Any, name: str) -> None:
    """Raise TypeError unless ``items`` is a column of bytes-like / str / None elements."""
    if isinstance(items, BinaryColumn) or type(items).__module__.startswith("pyarrow"):
        return  # typed columns: BinaryColumn.from_arrow rejects non-binary Arrow types itself
    if isinstance(items, _SCALARS):
        # The bug this guards (issue 12): list(b"hello") is five ints, each became a zero-filled record.
        raise TypeError(
            f"{name} must be a sequence of bytes-like values (one per record), not a single "
            f"{type(items).__name__} (wrap a single record in a list)"
        )
    if isinstance(items, np.ndarray):
        if items.ndim != 1:
            raise TypeError(f"{name} must be one-dimensional, got a numpy array of shape {items.shape}")
        if items.dtype.kind in "SU":  # fixed-width bytes / str: elements are numpy.bytes_ / numpy.str_
            return
        if items.dtype.kind != "O":
            raise TypeError(f"{name} is {_describe(items)}; elements must be bytes, bytearray, memoryview, str or None")
    try:
        it = iter(items)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of bytes-like values, not {_describe(items)}") from None
    if it is items:
        return  # a one-shot iterator is not consumed here; BinaryColumn.from_pylist checks each element
    if set(map(type, items)) <= _ELEMENT_TYPES:
        return
    for i, x in enumerate(items):
        if x is not None and not isinstance(x, _SCALARS):
            raise TypeError(
                f"{name}[{i}] is {_describe(x)}; a record value or key must be bytes, bytearray, "
                "memoryview, str (encoded as UTF-8) or None"
            )


def check_record_arguments(values: Any, keys: Any = None, headers: Any = None, *, argument_prefix: str = "") -> None:
    """Raise :class:`TypeError` naming the argument unless the record arguments have usable types.

    Accepted, per record: ``bytes``, ``bytearray``, ``memoryview`` or ``None`` (null); a ``str`` is
    encoded as UTF-8 (what Spark's Kafka sink does with a string column and what kafka-python users
    get from a ``str.encode`` serializer). ``values`` and ``keys`` are sequences of those (lists,
    tuples, numpy ``object``/``S``/``U`` arrays), a :class:`BinaryColumn` or a pyarrow binary/string
    array. Rejected: a single ``bytes``/``bytearray``/``memoryview``/``str`` where a sequence is
    expected (``list(b"hello")`` would be five ints), and any other element type (``int``, numpy
    integers, numeric numpy arrays...), which would otherwise become zero-filled bytes.

    ``headers`` is None or, per record, None or a sequence of ``(key, value)`` pairs with a ``str`` or
    bytes-like key and a bytes-like/``str``/None value. Lengths are not checked here (that is a
    :class:`ValueError` where the columns are built). ``argument_prefix`` is prepended to the argument
    names in messages (e.g. ``"records."`` gives ``records.values[3]``). A one-shot iterator is not
    consumed; its elements are checked when the column is built.
    """
    _check_column(values, f"{argument_prefix}values")
    if keys is not None:
        _check_column(keys, f"{argument_prefix}keys")
    if headers is None:
        return
    name = f"{argument_prefix}headers"
    if isinstance(headers, (*_SCALARS, dict)) or isinstance(headers, np.ndarray) and headers.dtype.kind != "O":
        raise TypeError(
            f"{name} must be a sequence with one list of (key, value) pairs per record, not {_describe(headers)}"
        )
    try:
        entries = iter(headers)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of per-record header lists, not {_describe(headers)}") from None
    if entries is headers:
        return
    for i, hs in enumerate(headers):
        if hs is None:
            continue
        if isinstance(hs, (*_SCALARS, dict)) or not hasattr(hs, "__iter__"):
            raise TypeError(f"{name}[{i}] must be None or a list of (key, value) pairs, not {_describe(hs)}")
        for j, pair in enumerate(hs):
            if isinstance(pair, _SCALARS) or not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"{name}[{i}][{j}] must be a (key, value) pair, not {_describe(pair)}")
            k, v = pair
            if k is not None and not isinstance(k, _SCALARS):
                raise TypeError(f"{name}[{i}][{j}] key is {_describe(k)}; header keys are str or bytes-like")
            if v is not None and not isinstance(v, _SCALARS):
                raise TypeError(
                    f"{name}[{i}][{j}] value is {_describe(v)}; header values are bytes-like, str (UTF-8) or None"
                )


def _headers_columns(
    headers: HeadersArg | None, n: int
) -> tuple[np.ndarray | None, BinaryColumn | None, BinaryColumn | None]:
    if headers is None:
        return None, None, None
    if len(headers) != n:
        raise ValueError(f"headers has {len(headers)} entries, expected {n}")
    offsets = np.zeros(n + 1, dtype=np.int32)
    hkeys: list[bytes] = []
    hvals: list[bytes | None] = []
    for i, hs in enumerate(headers):
        for k, v in hs or ():
            if k is None:
                raise ValueError("header keys cannot be null")
            if not isinstance(k, _SCALARS):
                raise TypeError(f"headers[{i}] key is {_describe(k)}; header keys are str or bytes-like")
            hkeys.append(k.encode("utf-8") if isinstance(k, str) else bytes(k))
            hvals.append(v)
        offsets[i + 1] = len(hkeys)
    if not hkeys:
        return None, None, None
    return offsets, BinaryColumn.from_pylist(hkeys), BinaryColumn.from_pylist(hvals)


def record_columns(
    values: Any, keys: Any = None, timestamps: Any = None
) -> tuple[BinaryColumn, BinaryColumn | None, np.ndarray]:
    """Normalise record inputs once: values and keys to :class:`BinaryColumn` (keys None = all null),
    timestamps to an int64 array of the same length (default: now, in ms). Shared by
    :func:`encode_records` and the client's ``produce``. Element types are checked as in
    :func:`check_record_arguments` (TypeError naming the argument)."""
    check_record_arguments(values, keys)
    vcol = as_binary_column(values)
    n = len(vcol)
    kcol = None if keys is None else as_binary_column(keys, n)
    if timestamps is None:
        ts = np.full(n, int(time.time() * 1000), dtype=np.int64)
    else:
        ts = np.ascontiguousarray(timestamps, dtype=np.int64)
        if ts.shape != (n,):
            raise ValueError(f"timestamps has shape {ts.shape}, expected ({n},)")
    return vcol, kcol, ts


def encode_records(
    values: Any,
    keys: Any = None,
    *,
    timestamps: Any = None,
    headers: HeadersArg | None = None,
    base_offset: int = 0,
    magic: int = 2,
    compression: str | int | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
    partition_leader_epoch: int = -1,
) -> bytes:
    """Encode records into one record batch (magic 2) or a legacy message set (magic 0/1).

    ``values`` and ``keys``: lists of bytes/None (``str`` is UTF-8 encoded), :class:`BinaryColumn` or
    pyarrow binary arrays; anything else (an int element, a single ``bytes`` for the whole list) is a
    :class:`TypeError`, see :func:`check_record_arguments`.
    ``timestamps``: int64 milliseconds per record (numpy array or sequence), default now.
    ``headers``: per record a list of ``(key, value)`` pairs or None (magic 2 only).
    Compressed legacy sets are one wrapper message holding the records (v1 inner offsets relative).
    """
    if magic not in (0, 1, 2):
        raise ValueError(f"magic must be 0, 1 or 2, not {magic!r}")
    codec = codec_id(compression)
    if codec == 4 and magic < 2:
        raise ValueError("zstd needs magic 2 (Kafka 2.1+)")
    check_record_arguments(values, keys, headers)
    vcol, kcol, ts = record_columns(values, keys, timestamps)
    n = len(vcol)
    if n == 0:
        raise ValueError("cannot encode an empty batch")
    hoffs, hkeys, hvals = _headers_columns(headers, n)
    if hoffs is not None and magic < 2:
        raise ValueError("record headers need magic 2")
    batch: bytes = _impl.impl.encode(
        vcol,
        kcol,
        ts,
        hoffs,
        hkeys,
        hvals,
        int(base_offset),
        int(magic),
        codec,
        int(producer_id),
        int(producer_epoch),
        int(base_sequence),
        bool(transactional),
        int(partition_leader_epoch),
    )
    return batch
