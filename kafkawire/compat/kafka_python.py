"""Drop-in record decoding for kafka-python's ``KafkaConsumer`` (kafka-python 2.0.2 through 3.x).

::

    import kafkawire.compat.kafka_python as kw_kafka_python

    kw_kafka_python.install()          # every KafkaConsumer in the process, existing ones included
    consumer = kafka.KafkaConsumer("topic", bootstrap_servers=...)
    ...
    kw_kafka_python.uninstall()        # back to kafka-python's own decoder

kafka-python's fetcher builds ``MemoryRecords(partition_data.records)`` for each fetched partition and
walks its batches. ``kafka/consumer/fetcher.py`` binds the name at import time
(``from kafka.record import MemoryRecords``), so :func:`install` rebinds
``kafka.consumer.fetcher.MemoryRecords``; replacing ``kafka.record.MemoryRecords`` would change nothing.

What changes and what does not:

* :class:`MemoryRecords` subclasses kafka-python's own class, so framing, ``has_next()``,
  ``size_in_bytes()``, ``valid_bytes()``, partial tails and "record smaller than the minimum overhead"
  errors are those of the installed kafka-python version.
* Magic-2 *data* batches come back as :class:`DefaultRecordBatch`, a subclass of kafka-python's, so every
  batch attribute of the installed version is there. Iterating the first one decodes the rest of the
  fetch in one call of kafkawire's compiled core; each batch then takes its rows and turns them into
  records in bulk. ``validate_crc()`` uses kafkawire's CRC32C (kafka-python falls back to a pure-Python
  CRC32C when the ``crc32c`` package is missing).
* Control batches, legacy (magic 0/1) message sets and unknown magics are kafka-python's own objects: the
  fetcher's transaction-marker logic (which differs between versions: 2.0.2 even returns control records
  to the application) and per-message CRCs behave exactly as before.
* Whenever kafkawire's stricter decoder rejects a batch, or cannot reproduce kafka-python's result
  exactly (a header key that is not UTF-8, say), that batch is handed to kafka-python's own code, which
  yields the records it can and raises its own ``CorruptRecordError`` where it always did.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

try:
    import kafka.consumer.fetcher as _fetcher
    from kafka.record.default_records import DefaultRecordBatch as _KDefaultRecordBatch
    from kafka.record.memory_records import MemoryRecords as _KMemoryRecords
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("kafkawire.compat.kafka_python needs kafka-python (pip install kafka-python)") from exc

from .. import crc32c as _crc32c
from ._fast import FastRecord, FetchColumns, decode_batch, fast_entry

__all__ = ["DefaultRecordBatch", "MemoryRecords", "install", "installed", "is_installed", "uninstall"]

# Iteration states of a DefaultRecordBatch.
_NOT_STARTED, _FAST, _FALLBACK = 0, 1, 2
_UNSET: Any = object()


class DefaultRecordBatch(_KDefaultRecordBatch):
    """A magic-2 data batch whose records come from kafkawire's columns.

    Behaves like kafka-python's ``DefaultRecordBatch`` (which it subclasses): same properties, the same
    ``validate_crc()`` contract (only before iteration), ``next(batch)`` without ``iter()`` first, and
    the same records. Falls back to the parent's own record parser for anything the fast path cannot
    reproduce exactly.
    """

    __slots__ = ("_kw_view", "_kw_owner", "_kw_start", "_kw_state", "_kw_it")

    def __init__(self, buffer: Any, owner: MemoryRecords | None = None, start: int = 0) -> None:
        super().__init__(buffer)
        self._kw_view = buffer
        self._kw_owner = owner
        self._kw_start = start
        self._kw_state = _NOT_STARTED
        self._kw_it: Iterator[FastRecord] | None = None

    def validate_crc(self) -> bool:
        """True if the stored CRC32C matches the one computed over ``[attributes, end)``."""
        assert self._decompressed is False, "Validate should be called before iteration"
        return self.crc == _crc32c(memoryview(self._buffer)[self.ATTRIBUTES_OFFSET :])

    def _kw_begin(self) -> None:
        records = None
        header = self._header_data
        owner = self._kw_owner
        if owner is not None:
            records = owner._kw_records(self._kw_start, header, self._kw_view)
        if records is None:
            records = decode_batch(self._kw_view, header)
        if records is None:
            self._kw_state = _FALLBACK
            _KDefaultRecordBatch.__iter__(self)
            return
        self._kw_state = _FAST
        self._kw_it = iter(records)
        # Mirror the parent: once iteration started, validate_crc() is a programming error.
        self._decompressed = True

    def __iter__(self) -> Any:
        if self._kw_state == _NOT_STARTED:
            self._kw_begin()
        if self._kw_state == _FAST:
            return self._kw_it
        return self

    def __next__(self) -> Any:
        state = self._kw_state
        if state == _FAST:
            return next(self._kw_it)  # type: ignore[arg-type]
        if state == _NOT_STARTED:
            if self.compression_type != self.CODEC_NONE:
                # kafka-python's next() without iter() reads the records section undecompressed; keep
                # that (garbage in, its own error out) rather than silently doing something else.
                self._kw_state = _FALLBACK
            else:
                self._kw_begin()
                if self._kw_state == _FAST:
                    return next(self._kw_it)  # type: ignore[arg-type]
        return _KDefaultRecordBatch.__next__(self)

    next = __next__


class MemoryRecords(_KMemoryRecords):
    """kafka-python's ``MemoryRecords`` whose magic-2 data batches decode through kafkawire.

    Construct it with the ``records`` bytes of one fetched partition, as the fetcher does.
    """

    __slots__ = ("_kw_fetch",)

    def __init__(self, bytes_data: Any) -> None:
        self._kw_fetch: FetchColumns | None = _UNSET
        super().__init__(bytes_data)

    def next_batch(self, *args: Any, **kwargs: Any) -> Any:
        """The next batch (None at the end): kafkawire-backed for data batches, kafka-python's otherwise."""
        next_slice = self._next_slice
        if next_slice is None or not fast_entry(next_slice):
            return super().next_batch(*args, **kwargs)
        # _cache_next() left _pos at the end of the cached slice: that is where this entry starts.
        start = self._pos - len(next_slice)
        self._cache_next()
        return DefaultRecordBatch(next_slice, self, start)

    def _kw_records(self, start: int, header: tuple[Any, ...], view: Any) -> Iterator[FastRecord] | None:
        fetch = self._kw_fetch
        if fetch is _UNSET:
            # Decode from the first data batch that is iterated to the end of the fetch in one call.
            fetch = self._kw_fetch = FetchColumns.build(self._buffer, start)
        if fetch is None:
            return None
        return fetch.records(start, header, view)


_original: Any = None


def install() -> None:
    """Make every kafka-python consumer in this process decode record batches with kafkawire.

    Idempotent. Affects consumers created before the call too (the fetcher looks the class up on each
    fetch). Undo with :func:`uninstall`.
    """
    global _original
    if _fetcher.MemoryRecords is MemoryRecords:
        return
    _original = _fetcher.MemoryRecords
    _fetcher.MemoryRecords = MemoryRecords


def uninstall() -> None:
    """Restore kafka-python's own ``MemoryRecords`` in its fetcher (no-op if not installed)."""
    global _original
    if _fetcher.MemoryRecords is MemoryRecords:
        _fetcher.MemoryRecords = _original if _original is not None else _KMemoryRecords
        _original = None


def is_installed() -> bool:
    """True while :func:`install` is in effect."""
    return _fetcher.MemoryRecords is MemoryRecords


@contextlib.contextmanager
def installed() -> Iterator[None]:
    """Context manager: :func:`install` on entry, and on exit restore the previous state."""
    was = is_installed()
    install()
    try:
        yield
    finally:
        if not was:
            uninstall()
