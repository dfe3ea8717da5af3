# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled per-record views of :class:`~kafkawire.columns.RecordColumns` (issue 32, consumer half).

Iterating columns used to build a ``Record`` namedtuple, two bytes objects and a headers list per record
from Python lists made for the whole batch. A :class:`RecordView` holds only its columns' reader and an
index: each field is read from the numpy buffers when asked (raw pointers, no Python object in between),
so a loop that touches ``key``, ``value`` and ``offset`` pays for those three objects and nothing else.
Views are recycled through a freelist.

:class:`RecordCursor` is the per-record loop of a consumer: it walks the partitions of each ``poll()``
answer and asks its ``refill`` callable for the next one when they are spent, and it knows which records
the loop has moved past (what an at-least-once commit may cover). The pure-Python twin is
``kafkawire/_pure/recview.py``: same classes, same results (tests/test_recview_differential.py).

Columns are trusted to be what the decoder made, but every read is checked against its buffer's length
anyway (a column pair built by hand with offsets past the data raises ``ValueError``, never reads out of
bounds).
"""

cimport cython
cimport numpy as cnp
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t

import numpy as np

from kafkawire.columns import Record

cnp.import_array()

__all__ = ["RecordView", "RecordCursor", "iter_records"]


cdef inline cnp.ndarray _c(object a, object dtype):
    return np.ascontiguousarray(a, dtype=dtype)


@cython.final
cdef class _Binary:
    """Raw pointers of one BinaryColumn (offsets, data, validity) and their lengths."""
    cdef cnp.ndarray _off, _data, _valid
    cdef const int32_t *off
    cdef const uint8_t *data
    cdef const uint8_t *valid  # NULL: nothing is null
    cdef Py_ssize_t n  # elements
    cdef Py_ssize_t nbytes

    def __cinit__(self, col):
        self._off = _c(col.offsets, np.int32)
        self._data = _c(col.data, np.uint8)
        self.off = <const int32_t *>cnp.PyArray_DATA(self._off)
        self.data = <const uint8_t *>cnp.PyArray_DATA(self._data)
        self.n = cnp.PyArray_SIZE(self._off) - 1
        self.nbytes = cnp.PyArray_SIZE(self._data)
        self.valid = NULL
        if col.valid is not None:
            self._valid = _c(col.valid, np.bool_).view(np.uint8)
            if cnp.PyArray_SIZE(self._valid) < self.n:
                raise ValueError("BinaryColumn: validity mask shorter than the column")
            self.valid = <const uint8_t *>cnp.PyArray_DATA(self._valid)

    cdef inline object get(self, Py_ssize_t i):
        """Element ``i`` as bytes, or None when null."""
        if i < 0 or i >= self.n:
            raise ValueError("RecordColumns: a record's index is past its binary column")
        if self.valid != NULL and not self.valid[i]:
            return None
        cdef int32_t lo = self.off[i], hi = self.off[i + 1]
        if lo < 0 or hi < lo or hi > self.nbytes:
            raise ValueError("RecordColumns: binary column offsets outside its data")
        return PyBytes_FromStringAndSize(<const char *>(self.data + lo), hi - lo)

    cdef inline Py_ssize_t size(self, Py_ssize_t i):
        """Length of element ``i``, -1 when null (the serialized size Java and kafka-python report)."""
        if i < 0 or i >= self.n:
            raise ValueError("RecordColumns: a record's index is past its binary column")
        if self.valid != NULL and not self.valid[i]:
            return -1
        return self.off[i + 1] - self.off[i]

    cdef inline object get_str(self, Py_ssize_t i):
        """Element ``i`` decoded as UTF-8 (surrogateescape: header keys are not checked on the wire); null -> ''."""
        if i < 0 or i >= self.n:
            raise ValueError("RecordColumns: a header's index is past its binary column")
        if self.valid != NULL and not self.valid[i]:
            return ""
        cdef int32_t lo = self.off[i], hi = self.off[i + 1]
        if lo < 0 or hi < lo or hi > self.nbytes:
            raise ValueError("RecordColumns: binary column offsets outside its data")
        return PyUnicode_DecodeUTF8(<const char *>(self.data + lo), hi - lo, "surrogateescape")


@cython.final
cdef class _Reader:
    """What every view of one RecordColumns shares: raw pointers into its columns, its topic and partition."""
    cdef readonly object columns
    cdef readonly object topic
    cdef readonly object partition
    cdef cnp.ndarray _offset, _timestamp, _ttype, _bidx, _hoff, _bepoch
    cdef const int64_t *offset
    cdef const int64_t *timestamp
    cdef const int8_t *ttype
    cdef const int32_t *bidx
    cdef const int32_t *hoff
    cdef const int32_t *bepoch
    cdef Py_ssize_t n, nbatches, nhoff
    cdef _Binary key, value, hkey, hval

    def __cinit__(self, cols, topic=None, partition=-1):
        self.columns = cols
        if topic is None:
            topic, partition = cols.topic, cols.partition
        self.topic = topic
        self.partition = partition
        self._offset = _c(cols.offset, np.int64)
        self._timestamp = _c(cols.timestamp, np.int64)
        self._ttype = _c(cols.timestamp_type, np.int8)
        self._bidx = _c(cols.batch_index, np.int32)
        self._hoff = _c(cols.header_offsets, np.int32)
        self._bepoch = _c(cols.batch_partition_leader_epoch, np.int32)
        self.n = cnp.PyArray_SIZE(self._offset)
        if (cnp.PyArray_SIZE(self._timestamp) < self.n or cnp.PyArray_SIZE(self._ttype) < self.n
                or cnp.PyArray_SIZE(self._bidx) < self.n):
            raise ValueError("RecordColumns: per-record columns of different lengths")
        self.nhoff = cnp.PyArray_SIZE(self._hoff)
        self.nbatches = cnp.PyArray_SIZE(self._bepoch)
        self.offset = <const int64_t *>cnp.PyArray_DATA(self._offset)
        self.timestamp = <const int64_t *>cnp.PyArray_DATA(self._timestamp)
        self.ttype = <const int8_t *>cnp.PyArray_DATA(self._ttype)
        self.bidx = <const int32_t *>cnp.PyArray_DATA(self._bidx)
        self.hoff = <const int32_t *>cnp.PyArray_DATA(self._hoff)
        self.bepoch = <const int32_t *>cnp.PyArray_DATA(self._bepoch)
        self.key = _Binary(cols.key)
        self.value = _Binary(cols.value)
        self.hkey = _Binary(cols.header_key)
        self.hval = _Binary(cols.header_value)

    cdef object headers(self, Py_ssize_t i):
        if i + 1 >= self.nhoff:
            raise ValueError("RecordColumns: header_offsets shorter than the records")
        cdef int32_t lo = self.hoff[i], hi = self.hoff[i + 1]
        if lo < 0 or hi < lo:
            raise ValueError("RecordColumns: header_offsets out of order")
        cdef list out = PyList_New(hi - lo)
        cdef tuple pair
        cdef object k, v
        cdef int32_t j
        for j in range(lo, hi):
            k = self.hkey.get_str(j)
            v = self.hval.get(j)
            pair = PyTuple_New(2)
            Py_INCREF(k)
            PyTuple_SET_ITEM(pair, 0, k)
            Py_INCREF(v)
            PyTuple_SET_ITEM(pair, 1, v)
            Py_INCREF(pair)
            PyList_SET_ITEM(out, j - lo, pair)
        return out

    cdef int32_t leader_epoch(self, Py_ssize_t i) except? -2:
        cdef int32_t b = self.bidx[i]
        if b < 0 or b >= self.nbatches:
            raise ValueError("RecordColumns: a record's batch_index is past the batch columns")
        return self.bepoch[b]


@cython.final
@cython.freelist(64)
cdef class RecordView:
    """One record of a :class:`~kafkawire.RecordColumns`, read from the columns when a field is asked for.

    Fields (kafka-python's ``ConsumerRecord`` names; Java's accessors are the camelCase of them):
    ``topic`` (None when the columns came from :func:`kafkawire.decode_records`), ``partition`` (-1 then),
    ``offset``, ``timestamp`` (ms, -1 when the format has none), ``timestamp_type`` (0 create time,
    1 log-append time, -1 none), ``key`` and ``value`` (bytes or None), ``headers`` (list of
    ``(str, bytes | None)``, wire order, duplicates kept; a new list each time), ``leader_epoch`` (of the
    record's batch, -1 unknown), ``serialized_key_size`` / ``serialized_value_size`` (-1 for null).

    It is also the sequence ``(offset, timestamp, timestamp_type, key, value, headers)`` of
    :class:`~kafkawire.Record`: it unpacks, indexes and compares equal to that tuple (and to the
    ``Record`` ``columns[i]`` returns); :meth:`to_record` makes the namedtuple. Two views are equal when
    their tuples, topics and partitions are.

    A view keeps its whole columns alive (one fetch's buffers): to keep records beyond the loop, keep
    their fields or :meth:`to_record`, not the views. Views do not pickle for the same reason.
    """
    cdef _Reader r
    cdef Py_ssize_t i

    def __init__(self, *args, **kwargs):
        raise TypeError("RecordView objects come from iterating RecordColumns or a Consumer")

    @property
    def offset(self):
        return self.r.offset[self.i]

    @property
    def timestamp(self):
        return self.r.timestamp[self.i]

    @property
    def timestamp_type(self):
        return self.r.ttype[self.i]

    @property
    def key(self):
        return self.r.key.get(self.i)

    @property
    def value(self):
        return self.r.value.get(self.i)

    @property
    def headers(self):
        return self.r.headers(self.i)

    @property
    def topic(self):
        return self.r.topic

    @property
    def partition(self):
        return self.r.partition

    @property
    def leader_epoch(self):
        return self.r.leader_epoch(self.i)

    @property
    def serialized_key_size(self):
        return self.r.key.size(self.i)

    @property
    def serialized_value_size(self):
        return self.r.value.size(self.i)

    @property
    def columns(self):
        """The :class:`~kafkawire.RecordColumns` this record is a row of."""
        return self.r.columns

    @property
    def index(self):
        """This record's row in :attr:`columns`."""
        return self.i

    cpdef tuple as_tuple(self):
        return (self.offset, self.timestamp, self.timestamp_type, self.key, self.value, self.headers)

    def to_record(self):
        """This record as a :class:`~kafkawire.Record` namedtuple (fields copied out of the columns)."""
        return Record(*self.as_tuple())

    def __len__(self):
        return 6

    def __getitem__(self, i):
        return self.as_tuple()[i]

    def __iter__(self):
        return iter(self.as_tuple())

    def __eq__(self, other):
        if isinstance(other, RecordView):
            o = <RecordView>other
            return (self.r.topic == o.r.topic and self.r.partition == o.r.partition
                    and self.as_tuple() == o.as_tuple())
        if isinstance(other, tuple):
            return self.as_tuple() == other
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __reduce__(self):
        raise TypeError("a RecordView is a view into its columns and does not pickle: pickle view.to_record()")

    __hash__ = None  # as Record's: its headers are a list
    def __repr__(self):
        return (f"RecordView(topic={self.topic!r}, partition={self.partition}, offset={self.offset}, "
                f"timestamp={self.timestamp}, timestamp_type={self.timestamp_type}, key={self.key!r}, "
                f"value={self.value!r}, headers={self.headers!r})")


cdef inline RecordView _view(_Reader r, Py_ssize_t i):
    cdef RecordView v = RecordView.__new__(RecordView)
    v.r = r
    v.i = i
    return v


@cython.final
cdef class _ColumnsIter:
    cdef _Reader r
    cdef Py_ssize_t pos

    def __iter__(self):
        return self

    def __next__(self):
        if self.pos >= self.r.n:
            raise StopIteration
        self.pos += 1
        return _view(self.r, self.pos - 1)

    def __length_hint__(self):
        return self.r.n - self.pos


def iter_records(cols, topic=None, partition=-1):
    """An iterator of :class:`RecordView` over ``cols`` (what ``iter(RecordColumns)`` returns)."""
    cdef _ColumnsIter it = _ColumnsIter.__new__(_ColumnsIter)
    it.r = _Reader(cols, topic, partition)
    it.pos = 0
    return it


@cython.final
cdef class RecordCursor:
    """The per-record loop of a consumer over successive ``poll()`` answers.

    ``refill()`` returns the next answer (a mapping of ``(topic, partition)`` to RecordColumns, possibly
    empty) or None to end the iteration. Records go out partition by partition, in offset order within
    each. The record last returned is *held* (the application is processing it) until the next call of
    ``__next__`` moves past it; :meth:`pending` says where each partition with records not moved past
    (or, with ``include_held``, not returned) stands, so that commits cover only those.
    """
    cdef public object refill
    cdef list parts  # [(tp, RecordColumns)] still to start, in order
    cdef Py_ssize_t next_part
    cdef _Reader cur
    cdef object cur_tp
    cdef Py_ssize_t pos  # records of cur returned so far
    cdef Py_ssize_t end  # records of cur to return (cur.n, or pos after a discard)
    cdef bint held

    def __init__(self, refill):
        self.refill = refill
        self.parts = []
        self.next_part = 0
        self.cur = None
        self.cur_tp = None
        self.pos = 0
        self.end = 0
        self.held = False

    def __iter__(self):
        return self

    def __next__(self):
        cdef _Reader cur = self.cur
        if cur is not None and self.pos < self.end:
            self.pos += 1
            self.held = True
            return _view(cur, self.pos - 1)
        return self._slow_next()

    cdef object _slow_next(self):
        cdef object batch, tp, cols
        self.held = False
        while True:
            if self.cur is not None and self.pos < self.end:
                self.pos += 1
                self.held = True
                return _view(self.cur, self.pos - 1)
            self.cur = None
            self.cur_tp = None
            if self.next_part < len(self.parts):
                tp, cols = self.parts[self.next_part]
                self.parts[self.next_part] = None  # the columns go as soon as they are read
                self.next_part += 1
                if not len(cols):  # discarded
                    continue
                self.cur = _Reader(cols, tp[0], tp[1])
                self.cur_tp = tp
                self.pos = 0
                self.end = self.cur.n
                continue
            self.parts = []
            self.next_part = 0
            if self.refill is None:
                raise StopIteration
            batch = self.refill()
            if batch is None:
                raise StopIteration
            self.parts = [(tp, cols) for tp, cols in batch.items() if len(cols)]

    def pending(self, bint include_held=False):
        """``{tp: (offset, leader_epoch)}`` for each partition with records the loop has not moved past
        (``include_held``: not returned): the offset of its first such record, and the leader epoch of the
        record before it (-1 unknown). Partitions absent are fully moved past."""
        out = {}
        cdef Py_ssize_t done, k
        cdef _Reader r
        if self.cur is not None:
            done = self.pos if (include_held or not self.held) else self.pos - 1
            if done < self.end:
                out[self.cur_tp] = (self.cur.offset[done], self.cur.leader_epoch(done - 1) if done > 0 else -1)
        for k in range(self.next_part, len(self.parts)):
            tp, cols = self.parts[k]
            if len(cols):
                out[tp] = (int(cols.offset[0]), -1)
        return out

    def discard(self, tp=None, bint keep_held=False):
        """Drop the records not returned yet, of ``tp`` only or (None) of every partition; with
        ``keep_held`` the record in hand stays in :meth:`pending` until the loop moves past it."""
        if tp is None or tp == self.cur_tp:
            if self.cur is not None:
                self.end = self.pos
                if not keep_held:
                    self.held = False
        cdef Py_ssize_t k
        for k in range(self.next_part, len(self.parts)):
            if tp is None or self.parts[k][0] == tp:
                self.parts[k] = (self.parts[k][0], _EMPTY)

    def buffered(self):
        """How many records are left to return."""
        cdef Py_ssize_t n = 0, k
        if self.cur is not None:
            n = self.end - self.pos
        for k in range(self.next_part, len(self.parts)):
            n += len(self.parts[k][1])
        return n


cdef tuple _EMPTY = ()
