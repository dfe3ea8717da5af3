# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled accumulator behind ``Producer.send()`` (issue 32): per record, the argument checks, the
producer's state, the ``buffer_memory`` limit and the append of key, value, headers, timestamp and partition
into one topic's column buffers, in C. The pure-Python twin is ``_accumulator_pure.py``; its module docstring
describes the three classes, and tests/client/test_accumulator_twins.py keeps both equal.

A buffer grows C arrays (doubling): value and key bytes with int32 offsets and a validity byte per record
(Arrow's binary layout, what :class:`kafkawire.BinaryColumn` and ``Client.produce`` take), int64 timestamps,
int32 partitions (-1: none), and per record its delivery batch and row there. The sender copies them into
numpy arrays once per write, so no per-record Python object exists between ``send()`` and the encoder.
"""

cimport cython
cimport numpy as cnp
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_CheckExact, PyByteArray_GET_SIZE
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_CheckExact
from libc.stdint cimport INT32_MAX, int32_t, int64_t, uint8_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcpy
from posix.time cimport CLOCK_MONOTONIC, CLOCK_REALTIME, clock_gettime, timespec

import numpy as np

from ...binary import BinaryColumn
from ...records import check_record_arguments

cnp.import_array()

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object s, Py_ssize_t* size) except NULL

FULL = 1
LINGERED = 2
NO_SPACE = 3
RECORD_OVERHEAD = 24

cdef int _FULL = 1
cdef int _LINGERED = 2
cdef int _NO_SPACE = 3
cdef Py_ssize_t _OVERHEAD = 24
cdef double _MIN_INLINE_MS = 1.0  # the youngest buffer send() writes itself (see the pure twin)


cdef struct Grow:
    char* p
    Py_ssize_t n
    Py_ssize_t cap


cdef int _put(Grow* g, const void* src, Py_ssize_t k) except -1:
    cdef Py_ssize_t need = g.n + k
    cdef Py_ssize_t cap
    cdef char* p
    if need > g.cap:
        cap = g.cap * 2 if g.cap else 256
        while cap < need:
            cap *= 2
        p = <char*>realloc(g.p, cap)
        if p == NULL:
            raise MemoryError()
        g.p, g.cap = p, cap
    if k:
        memcpy(g.p + g.n, src, k)
    g.n = need
    return 0


cdef inline void _move(Grow* dst, Grow* src) noexcept:
    """Hand ``src``'s memory to ``dst`` (empty) and leave ``src`` empty."""
    dst.p, dst.n, dst.cap = src.p, src.n, src.cap
    src.p, src.n, src.cap = NULL, 0, 0


cdef inline int _put_i32(Grow* g, int32_t v) except -1:
    return _put(g, &v, 4)


cdef inline int _put_i64(Grow* g, int64_t v) except -1:
    return _put(g, &v, 8)


cdef inline int _put_u8(Grow* g, uint8_t v) except -1:
    return _put(g, &v, 1)


cdef inline double _monotonic() noexcept:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef inline int64_t _now_ms() noexcept:
    cdef timespec ts
    clock_gettime(CLOCK_REALTIME, &ts)
    return <int64_t>ts.tv_sec * 1000 + ts.tv_nsec // 1000000


cdef object _array(Grow* g, Py_ssize_t count, int typenum):
    """A numpy copy of ``count`` items of ``g``."""
    cdef cnp.npy_intp dims = count
    arr = cnp.PyArray_EMPTY(1, &dims, typenum, 0)
    if g.n:
        memcpy(cnp.PyArray_DATA(arr), g.p, g.n)
    return arr


@cython.no_gc
cdef class DeliveryFuture:
    """The delivery result of one record sent with ``Producer.send()``: :meth:`result` blocks until it
    is known. Resolved once, with the batch that carried the record: to a
    :class:`~kafkawire.client.producer.delivery.RecordMetadata` when it was acknowledged, or to the error under
    which it came back in ``ProduceFailedError.unacknowledged`` (:class:`RecordDroppedError` when
    ``abort_transaction()`` dropped it). The background sender writes a buffer once ``linger_ms`` has passed, so
    ``producer.send(...).result(timeout=5)`` resolves without a ``flush()`` (as with the Java client)."""

    # Not tracked by the cycle collector (@no_gc): a future per record would otherwise trigger collections that
    # scan the application's heap every few hundred sends. It makes a cycle only through a done-callback holding
    # it, which the batch drops when it runs the callbacks.
    cdef readonly object batch
    cdef readonly Py_ssize_t index

    def __init__(self, batch, Py_ssize_t index):
        self.batch = batch
        self.index = index

    @property
    def topic(self):
        """The record's topic."""
        return self.batch.topic

    def done(self):
        """True once the record was acknowledged or failed."""
        return self.batch.is_done(self.index)

    def result(self, timeout=None):
        """The record's ``RecordMetadata``; raises the delivery error, or ``KafkaTimeoutError`` when it is
        not known within ``timeout`` seconds."""
        return self.batch.result(self.index, timeout)

    def exception(self, timeout=None):
        """The delivery error, or None when the record was acknowledged (waits as :meth:`result`)."""
        return self.batch.exception(self.index, timeout)

    def add_done_callback(self, fn):
        """Call ``fn(future)`` once the future is done (at once when it already is)."""
        self.batch.add_callback(self.index, fn, self)

    def __repr__(self):
        return f"<DeliveryFuture {self.batch.topic} {self.batch.describe(self.index)}>"


cdef inline DeliveryFuture _future(object batch, Py_ssize_t index):
    cdef DeliveryFuture f = DeliveryFuture.__new__(DeliveryFuture)
    f.batch = batch
    f.index = index
    return f


cdef class RecordBuffer:
    """One topic's records not written yet, column by column, oldest first (see the pure twin)."""

    cdef public list batches
    cdef public object headers
    cdef public bint has_keys
    cdef public bint has_partitions
    cdef public Py_ssize_t nbytes
    cdef public double since
    cdef public double last
    cdef Py_ssize_t count
    cdef public Py_ssize_t tail  # rows of the last batch so far: the next record's row there
    cdef Grow vdata, voff, vvalid, kdata, koff, kvalid, ts, parts, bno, bidx

    def __init__(self, batch, double since):
        self.batches = [batch]
        self.headers = None
        self.since = since
        self.last = since
        _put_i32(&self.voff, 0)
        _put_i32(&self.koff, 0)

    def __dealloc__(self):
        free(self.vdata.p); free(self.voff.p); free(self.vvalid.p); free(self.kdata.p); free(self.koff.p)
        free(self.kvalid.p); free(self.ts.p); free(self.parts.p); free(self.bno.p); free(self.bidx.p)

    def __len__(self):
        return self.count

    cdef int _row(self, const char* v, Py_ssize_t vlen, const char* k, Py_ssize_t klen, object headers,
                  int64_t ts, int32_t part, int32_t bno, int32_t bidx) except -1:
        """Append one row (``vlen``/``klen`` -1: null)."""
        if self.vdata.n + vlen > INT32_MAX or self.kdata.n + klen > INT32_MAX:
            raise OverflowError("a producer buffer holds at most 2 GiB of values or keys (lower batch_bytes)")
        if vlen >= 0:
            _put(&self.vdata, v, vlen)
            _put_u8(&self.vvalid, 1)
        else:
            _put_u8(&self.vvalid, 0)
        _put_i32(&self.voff, <int32_t>self.vdata.n)
        if klen >= 0:
            _put(&self.kdata, k, klen)
            _put_u8(&self.kvalid, 1)
            self.has_keys = True
        else:
            _put_u8(&self.kvalid, 0)
        _put_i32(&self.koff, <int32_t>self.kdata.n)
        if headers is not None:
            if self.headers is None:
                self.headers = [None] * self.count
            self.headers.append(headers)
        elif self.headers is not None:
            self.headers.append(None)
        _put_i64(&self.ts, ts)
        _put_i32(&self.parts, part)
        if part >= 0:
            self.has_partitions = True
        _put_i32(&self.bno, bno)
        _put_i32(&self.bidx, bidx)
        self.count += 1
        return 0

    # ------------------------------------------------------------------------ what the sender reads
    def value_column(self):
        """The values as a :class:`BinaryColumn` (a copy: ``send()`` may go on appending)."""
        valid = _array(&self.vvalid, self.count, cnp.NPY_BOOL)
        return BinaryColumn(_array(&self.voff, self.count + 1, cnp.NPY_INT32),
                            _array(&self.vdata, self.vdata.n, cnp.NPY_UINT8), None if valid.all() else valid)

    def key_column(self):
        """The keys as a :class:`BinaryColumn`, None when no record has one."""
        if not self.has_keys:
            return None
        valid = _array(&self.kvalid, self.count, cnp.NPY_BOOL)
        return BinaryColumn(_array(&self.koff, self.count + 1, cnp.NPY_INT32),
                            _array(&self.kdata, self.kdata.n, cnp.NPY_UINT8), None if valid.all() else valid)

    def timestamp_array(self):
        """The records' timestamps (int64 ms)."""
        return _array(&self.ts, self.count, cnp.NPY_INT64)

    def partition_array(self):
        """The partition each record was sent to (int32; -1: none, the client partitions it)."""
        return _array(&self.parts, self.count, cnp.NPY_INT32)

    def row_refs(self):
        """``(batches, bno, bidx)``: the delivery batch and its row of every buffered record."""
        return (list(self.batches), _array(&self.bno, self.count, cnp.NPY_INT32),
                _array(&self.bidx, self.count, cnp.NPY_INT32))

    # ------------------------------------------------------------ what was neither written nor handed back
    def keep(self, rows):
        """Keep only ``rows`` (positions, ascending): the rest were written or handed back."""
        cdef RecordBuffer old = RecordBuffer.__new__(RecordBuffer)
        # Move the arrays to ``old``, start empty, copy the kept rows back.
        _move(&old.vdata, &self.vdata); _move(&old.voff, &self.voff); _move(&old.vvalid, &self.vvalid)
        _move(&old.kdata, &self.kdata); _move(&old.koff, &self.koff); _move(&old.kvalid, &self.kvalid)
        _move(&old.ts, &self.ts); _move(&old.parts, &self.parts); _move(&old.bno, &self.bno)
        _move(&old.bidx, &self.bidx)
        old.headers, old.count = self.headers, self.count
        _put_i32(&self.voff, 0)
        _put_i32(&self.koff, 0)
        self.headers = None if old.headers is None else []
        self.has_keys = self.has_partitions = False
        self.count = 0
        self.nbytes = 0
        for i in rows:
            self._copy_row(old, i, 0)

    def extend(self, RecordBuffer newer):
        """Append the records of ``newer`` (sent while this buffer was being written) after these."""
        cdef int32_t base = len(self.batches)
        self.batches += newer.batches
        self.tail = newer.tail
        for i in range(newer.count):
            self._copy_row(newer, i, base)
        self.last = max(self.last, newer.last)

    cdef int _copy_row(self, RecordBuffer src, Py_ssize_t i, int32_t base) except -1:
        cdef int32_t* voff = <int32_t*>src.voff.p
        cdef int32_t* koff = <int32_t*>src.koff.p
        cdef Py_ssize_t vlen = voff[i + 1] - voff[i] if src.vvalid.p[i] else -1
        cdef Py_ssize_t klen = koff[i + 1] - koff[i] if src.kvalid.p[i] else -1
        headers = None if src.headers is None else src.headers[i]
        cdef Py_ssize_t size = _OVERHEAD + (vlen if vlen > 0 else 0) + (klen if klen > 0 else 0)
        if headers is not None:
            size += sum(len(hk) + (0 if hv is None else len(hv)) for hk, hv in headers)
        self._row(src.vdata.p + voff[i], vlen, src.kdata.p + koff[i], klen, headers, (<int64_t*>src.ts.p)[i],
                  (<int32_t*>src.parts.p)[i], base + (<int32_t*>src.bno.p)[i], (<int32_t*>src.bidx.p)[i])
        self.nbytes += size
        return 0


cdef inline int _as_chars(object data, const char** p, Py_ssize_t* n) except -1:
    """Point at the bytes of a value or key: 1 when it is bytes, str (UTF-8) or a bytearray, 0 when None,
    2 otherwise (a memoryview, a subclass: the caller copies it in Python or raises the TypeError)."""
    if data is None:
        n[0] = -1
        return 0
    if PyBytes_CheckExact(data):
        p[0], n[0] = PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data)
        return 1
    if PyUnicode_CheckExact(data):
        p[0] = PyUnicode_AsUTF8AndSize(data, n)
        return 1
    if PyByteArray_CheckExact(data):
        p[0], n[0] = PyByteArray_AS_STRING(data), PyByteArray_GET_SIZE(data)
        return 1
    return 2


cdef object _other_bytes(object data):
    """bytes of a value or key of another bytes-like or str type, or None (the caller raises)."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    if isinstance(data, str):
        return str(data).encode()
    return None


cdef tuple _headers_list(object headers):
    """One record's headers as the buffer keeps them and their bytes (see the pure twin)."""
    cdef Py_ssize_t size = 0
    cdef list out
    if type(headers) is list or type(headers) is tuple:
        out = list(headers)
        ok = True
        for pair in out:
            if (type(pair) is not tuple and type(pair) is not list) or len(pair) != 2:
                ok = False
                break
            hk, hv = pair
            if (type(hk) is not bytes and type(hk) is not str) or (
                    hv is not None and type(hv) is not bytes and type(hv) is not str):
                ok = False
                break
            size += len(hk) + (0 if hv is None else len(hv))
        if ok:
            return (out or None), size
    check_record_arguments([None], None, [headers], argument_prefix="send: ")
    out = list(headers)
    return (out or None), sum(len(hk) + (0 if hv is None else len(hv)) for hk, hv in out)


cdef class SendPath:
    """``Producer.send()`` (see the pure twin's docstring)."""

    cdef public object settings, lock, txn, in_txn, new_batch, wake, after_send, make_room
    cdef public dict buffers
    cdef public Py_ssize_t buffered_bytes
    cdef public bint closed
    cdef object _acquire, _release
    cdef readonly Py_ssize_t batch_records, batch_bytes, buffer_memory
    cdef readonly double linger_ms

    def __init__(self, settings, lock, txn, in_txn, new_batch, wake, after_send, make_room):
        self.settings = settings
        self.lock = lock
        self._acquire = lock.acquire
        self._release = lock.release
        self.txn = txn
        self.in_txn = in_txn
        self.new_batch = new_batch
        self.wake = wake
        self.after_send = after_send
        self.make_room = make_room
        self.buffers = {}
        self.buffered_bytes = 0
        self.closed = False
        self.configure()

    def configure(self):
        """Take the settings' limits (see the pure twin)."""
        s = self.settings
        self.batch_records, self.batch_bytes = int(s.batch_records), int(s.batch_bytes)
        self.linger_ms, self.buffer_memory = float(s.linger_ms), int(s.buffer_memory)

    def send(self, topic, value, key=None, *, partition=None, headers=None, timestamp_ms=None, on_delivery=None,
             callback=None):
        """``Producer.send()``: see its docstring."""
        cdef const char* vp = NULL
        cdef const char* kp = NULL
        cdef Py_ssize_t vlen = -1, klen = -1, hbytes = 0, size
        cdef int64_t ts
        cdef int32_t part = -1
        cdef int ready
        cdef double now
        cdef RecordBuffer buf
        cdef DeliveryFuture fut
        cdef Py_ssize_t idx, bno
        vkeep = value
        kkeep = key
        if _as_chars(value, &vp, &vlen) == 2:
            vkeep = _other_bytes(value)
            if vkeep is None:
                check_record_arguments([value], None if key is None else [key], None, argument_prefix="send: ")
            _as_chars(vkeep, &vp, &vlen)
        if _as_chars(key, &kp, &klen) == 2:
            kkeep = _other_bytes(key)
            if kkeep is None:
                check_record_arguments([value], [key], None, argument_prefix="send: ")
            _as_chars(kkeep, &kp, &klen)
        hlist = None
        if headers is not None:
            hlist, hbytes = _headers_list(headers)
        if type(topic) is not str:
            raise TypeError(f"send: topic must be a str, not {type(topic).__name__}")
        if partition is not None:
            part = int(partition)
            if part < 0:
                raise ValueError(f"send: partition must be >= 0, not {partition!r}")
        ts = _now_ms() if timestamp_ms is None else int(timestamp_ms)
        size = _OVERHEAD + hbytes + (vlen if vlen > 0 else 0) + (klen if klen > 0 else 0)
        while True:
            now = _monotonic()
            self._acquire()
            try:
                if self.closed:
                    raise RuntimeError("producer is closed")
                txn = self.txn
                if txn is not None and txn.state is not self.in_txn:
                    txn.require(self.in_txn, what="send")
                if self.buffered_bytes and self.buffered_bytes + size > self.buffer_memory:
                    ready = _NO_SPACE
                else:
                    b = self.buffers.get(topic)
                    if b is None:
                        b = RecordBuffer(self.new_batch(topic), now)
                        self.buffers[topic] = b
                        self.wake()
                    buf = <RecordBuffer>b
                    buf.last = now
                    bno = len(buf.batches) - 1  # (no negative index: wraparound is off)
                    batch = buf.batches[bno]
                    idx = buf.tail
                    buf.tail = idx + 1
                    buf._row(vp, vlen, kp, klen, hlist, ts, part, bno, idx)
                    buf.nbytes += size
                    self.buffered_bytes += size
                    fut = _future(batch, idx)
                    if on_delivery is not None:
                        batch.add_callback(idx, on_delivery, None)
                    if callback is not None:
                        batch.add_callback(idx, callback, None)
                    ready = 0
                    if buf.count >= self.batch_records or buf.nbytes >= self.batch_bytes:
                        ready = _FULL
                    elif (now - buf.since) * 1000 >= max(self.linger_ms, _MIN_INLINE_MS):
                        ready = _LINGERED
            finally:
                self._release()
            if ready == _NO_SPACE:
                self.make_room(topic, size)
                continue
            if ready:
                return self.after_send(topic, fut, ready)
            return fut
