# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled core of kafkawire's record codec (the contract is docs/CODEC-SPEC.md).

Same functions and results as the pure-Python reference ``kafkawire._pure.codec``; this one is built for
throughput:

* ``decode`` makes two passes over the fetched bytes. The first walks the entry headers: it checks
  framing, codecs and record counts against the bytes present and runs the read-committed filter. That
  gives the exact record count of uncompressed batches and an upper bound on their key/value/header
  bytes. The first compressed batch is inflated right away (and kept for pass 2): its ratio sizes the
  reservation of every other compressed entry (at most ``MAX_INFLATE_GUESS`` times its compressed
  size). The output columns are allocated once from that. The second pass checks each batch's CRC32C and, while its
  bytes are still in cache, fills the columns with raw pointers and short copies (no Python object per
  record), without the GIL for large batches. A compressed entry is inflated right there, parsed from
  the cache and dropped before the next one (one decompressed section alive at a time); when it inflates
  past its reservation the columns grow, at least doubling.
  An error found by the first pass is raised only after the second pass has decoded every entry before
  it (and after the CRC of its own entry), so the exception class is the one a front-to-back decoder
  (the reference) raises.
* Large output columns live on buffers recycled from earlier results (``_csrc/kw_pool.h``): writing into
  fresh memory costs a page fault and a zeroing per page, as much again as the decoding.
* ``encode`` computes the exact size of the batch from the columns and writes it into one buffer.
* CRC32C and CRC32 use SSE4.2 / PCLMULQDQ (or ARMv8 CRC) when the CPU has them (``_csrc/kw_crc.h``).
"""

cimport cython
cimport numpy as cnp
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.memoryview cimport PyMemoryView_FromMemory

cdef extern from "Python.h":
    int PyBUF_READ
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_FromStringAndSize
from cpython.ref cimport Py_INCREF
from libc.stdint cimport INT32_MAX, INT64_MAX, INT64_MIN
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy

from operator import index as _index

import numpy as np

from kafkawire.columns import BinaryColumn, RecordColumns
from kafkawire.errors import (
    CorruptRecordError,
    CrcMismatchError,
    RecordTooLargeError,
    UnsupportedCodecError,
    UnsupportedMagicError,
)

cnp.import_array()
kw_crc_init()

__all__ = [
    "decode",
    "encode",
    "crc32",
    "crc32c",
    "encode_varint",
    "decode_varint",
    "encode_varlong",
    "decode_varlong",
    "encode_unsigned_varint",
    "decode_unsigned_varint",
]

# Buffers at least this large are checksummed / parsed with the GIL released; below it, releasing and
# re-taking the GIL costs more than it lets other threads gain.
cdef enum:
    NOGIL_BYTES = 65536

# Field offsets of a magic-2 record batch (KIP-98), from the start of the entry.
cdef enum:
    V2_PLE = 12
    V2_CRC = 17
    V2_ATTRS = 21
    V2_LOD = 23
    V2_BASE_TS = 27
    V2_MAX_TS = 35
    V2_PID = 43
    V2_EPOCH = 51
    V2_SEQ = 53
    V2_COUNT = 57
    V2_HEADER = 61
# Smallest encodings: a magic-2 record is 7 bytes (length, attributes, ts delta, offset delta, key -1,
# value -1, header count, one byte each); a legacy message is 26 bytes with its 12-byte log overhead.
cdef enum:
    MIN_V2_RECORD = 7
    MIN_LEGACY_ENTRY = 26

# Pass 1 inflates only the first compressed batch of a fetch; every other compressed entry gets a
# reservation of its compressed size times that batch's ratio (plus 1/8), or INFLATE_GUESS times before a
# ratio is known, never more than MAX_INFLATE_GUESS times. Pass 2 grows the columns (at least doubling)
# when an entry inflates to more. The reservation is a small multiple of the input, whatever the payloads
# claim: data compressed better than MAX_INFLATE_GUESS pays for a few copies instead.
cdef enum:
    INFLATE_GUESS = 4
    MAX_INFLATE_GUESS = 16

cdef enum:
    KIND_V2 = 0
    KIND_V2_SKIP = 1
    KIND_LEGACY = 2
    KIND_LEGACY_WRAPPER = 3

cdef enum:
    ATTR_LOG_APPEND = 0x08
    ATTR_TRANSACTIONAL = 0x10
    ATTR_CONTROL = 0x20

cdef object _compression = None


cdef object _gzip_into = None
cdef object _lz4_into = None
cdef object _zstd_into = None


cdef object _compression_module():
    # Imported on first use: kafkawire.compression needs optional codecs and is not needed to import us.
    global _compression, _gzip_into, _lz4_into, _zstd_into
    if _compression is None:
        import cramjam

        from kafkawire import compression

        _gzip_into = cramjam.gzip.decompress_into
        _lz4_into = cramjam.lz4.decompress_into
        _zstd_into = cramjam.zstd.decompress_into
        _compression = compression
    return _compression


# --------------------------------------------------------------------------------------------- CRCs

cdef inline int _get_buffer(object data, Py_buffer *view) except -1:
    return PyObject_GetBuffer(data, view, PyBUF_SIMPLE)


def crc32(data, value=0):
    """IEEE CRC32 of ``data`` (any contiguous buffer), equal to ``zlib.crc32(data, value)``."""
    cdef Py_buffer view
    cdef uint32_t c = <uint32_t>(_index(value) & 0xFFFFFFFF)
    _get_buffer(data, &view)
    try:
        if view.len >= NOGIL_BYTES:
            with nogil:
                c = kw_crc32(c, view.buf, <size_t>view.len)
        else:
            c = kw_crc32(c, view.buf, <size_t>view.len)
    finally:
        PyBuffer_Release(&view)
    return c


def crc32c(data, value=0):
    """Castagnoli CRC32C of ``data`` (any contiguous buffer), equal to ``crc32c.crc32c(data, value)``."""
    cdef Py_buffer view
    cdef uint32_t c = <uint32_t>(_index(value) & 0xFFFFFFFF)
    _get_buffer(data, &view)
    try:
        if view.len >= NOGIL_BYTES:
            with nogil:
                c = kw_crc32c(c, view.buf, <size_t>view.len)
        else:
            c = kw_crc32c(c, view.buf, <size_t>view.len)
    finally:
        PyBuffer_Release(&view)
    return c


def _crc_implementations():
    """``(crc32, crc32c)`` names of the CRC code paths in use (diagnostics and tests)."""
    return kw_crc32_impl_name().decode(), kw_crc32c_impl_name().decode()


def _crc_force_software(bint on):
    """Use the portable slicing-by-8 CRCs even where the CPU has faster instructions (for tests)."""
    global kw_crc_force_software
    kw_crc_force_software = 1 if on else 0


# ------------------------------------------------------------------------------------------ varints

cdef str _varint_error(int rc, str what):
    if rc == KW_VARINT_TRUNCATED:
        return f"{what} runs past the end of the buffer"
    return f"{what} overflows"


def encode_varint(n):
    """Zigzag varint of ``n`` (int32 range; ``ValueError`` outside it), 1-5 bytes."""
    n = _index(n)
    if not -0x80000000 <= n <= 0x7FFFFFFF:
        raise ValueError(f"varint out of int32 range: {n}")
    cdef uint8_t buf[10]
    cdef size_t k = kw_put_uvarint(buf, kw_zigzag32(<int32_t>n))
    return PyBytes_FromStringAndSize(<char *>buf, k)


def encode_varlong(n):
    """Zigzag varlong of ``n`` (int64 range; ``ValueError`` outside it), 1-10 bytes."""
    n = _index(n)
    if not -0x8000000000000000 <= n <= 0x7FFFFFFFFFFFFFFF:
        raise ValueError(f"varlong out of int64 range: {n}")
    cdef uint8_t buf[10]
    cdef size_t k = kw_put_uvarint(buf, kw_zigzag64(<int64_t>n))
    return PyBytes_FromStringAndSize(<char *>buf, k)


def encode_unsigned_varint(n):
    """Unsigned varint of ``n`` (uint32 range; ``ValueError`` outside it), 1-5 bytes (KIP-482)."""
    n = _index(n)
    if not 0 <= n <= 0xFFFFFFFF:
        raise ValueError(f"unsigned varint out of uint32 range: {n}")
    cdef uint8_t buf[10]
    cdef size_t k = kw_put_uvarint(buf, <uint32_t>n)
    return PyBytes_FromStringAndSize(<char *>buf, k)


cdef inline size_t _varint_start(Py_buffer *view, object pos) except? 0:
    pos = _index(pos)
    if pos < 0:
        raise ValueError(f"pos must be >= 0, not {pos}")
    if pos > view.len:
        raise CorruptRecordError(f"varint position {pos} is past the end of a buffer of {view.len} bytes")
    return <size_t>pos


def decode_varint(buf, pos=0):
    """Read a zigzag varint at ``pos``: ``(value, new_pos)``; ``CorruptRecordError`` if truncated/overlong."""
    cdef Py_buffer view
    cdef size_t p
    cdef int32_t v
    cdef int rc
    _get_buffer(buf, &view)
    try:
        p = _varint_start(&view, pos)
        rc = kw_get_varint(<const uint8_t *>view.buf, <size_t>view.len, &p, &v)
    finally:
        PyBuffer_Release(&view)
    if rc:
        raise CorruptRecordError(_varint_error(rc, "varint"))
    return v, p


def decode_varlong(buf, pos=0):
    """Read a zigzag varlong at ``pos``: ``(value, new_pos)``; ``CorruptRecordError`` if truncated/overlong."""
    cdef Py_buffer view
    cdef size_t p
    cdef int64_t v
    cdef int rc
    _get_buffer(buf, &view)
    try:
        p = _varint_start(&view, pos)
        rc = kw_get_varlong(<const uint8_t *>view.buf, <size_t>view.len, &p, &v)
    finally:
        PyBuffer_Release(&view)
    if rc:
        raise CorruptRecordError(_varint_error(rc, "varlong"))
    return v, p


def decode_unsigned_varint(buf, pos=0):
    """Read an unsigned varint (KIP-482) at ``pos``: ``(value, new_pos)``; ``CorruptRecordError`` on bad bytes."""
    cdef Py_buffer view
    cdef size_t p
    cdef uint32_t v
    cdef int rc
    _get_buffer(buf, &view)
    try:
        p = _varint_start(&view, pos)
        rc = kw_get_uvarint32(<const uint8_t *>view.buf, <size_t>view.len, &p, &v)
    finally:
        PyBuffer_Release(&view)
    if rc:
        raise CorruptRecordError(_varint_error(rc, "unsigned varint"))
    return v, p


# ------------------------------------------------------------------------------------------- decode

cdef struct Entry:
    Py_ssize_t start      # offset of the entry in the input
    Py_ssize_t end        # offset just past it
    const uint8_t *sec    # v2: the (decompressed) records section; legacy wrapper: the inner messages
    Py_ssize_t sec_len
    int32_t count         # v2: recordsCount
    int8_t kind
    int8_t codec          # compressed entries: ``sec`` is the compressed payload, inflated in pass 2
    int8_t magic


cdef struct LegacyMsg:
    int64_t offset
    int64_t timestamp
    int8_t magic
    uint8_t attrs
    int32_t klen
    int32_t vlen
    const uint8_t *key
    const uint8_t *value


cdef inline cnp.ndarray _empty(Py_ssize_t n, int typenum):
    cdef cnp.npy_intp dim = n
    return cnp.PyArray_EMPTY(1, &dim, typenum, 0)


@cython.final
cdef class _Block:
    """Owner of a pooled buffer (kw_pool.h), the ``base`` of the numpy array built on it.

    When the last array using it goes away, the buffer returns to the pool, already faulted in, for the
    next decode."""

    cdef void *ptr
    cdef size_t cap

    def __dealloc__(self):
        kw_pool_put(self.ptr, self.cap)


cdef enum:
    POOL_MIN_BYTES = 65536  # below this, numpy's allocator (and glibc's heap) serve well


cdef cnp.ndarray _pooled(Py_ssize_t n, int typenum, Py_ssize_t itemsize):
    """An uninitialised 1-d array of n items, on a reused buffer when it is large."""
    cdef cnp.npy_intp dim = n
    cdef _Block blk
    cdef cnp.ndarray arr
    if n * itemsize < POOL_MIN_BYTES:
        return cnp.PyArray_EMPTY(1, &dim, typenum, 0)
    blk = _Block.__new__(_Block)
    blk.ptr = kw_pool_get(<size_t>(n * itemsize), &blk.cap)
    if blk.ptr == NULL:
        raise MemoryError()
    arr = cnp.PyArray_SimpleNewFromData(1, &dim, typenum, blk.ptr)
    Py_INCREF(blk)  # PyArray_SetBaseObject steals a reference
    cnp.PyArray_SetBaseObject(arr, blk)
    return arr


def _buffer_pool(limit=None):
    """Bytes of decode buffers cached for reuse; with ``limit``, first cap the cache (0 disables it).

    Also settable at import with the ``KAFKAWIRE_BUFFER_POOL`` environment variable (a byte count)."""
    if limit is not None:
        if limit < 0:
            raise ValueError("limit must be >= 0")
        kw_pool_set_limit(<size_t>limit)
    return kw_pool_cached_bytes()


def _pool_limit_from_env():
    # KAFKAWIRE_BUFFER_POOL=<bytes> sets the cap at import (0 turns recycling off), e.g. on memory-tight
    # Spark executors; the default keeps up to 256 MiB of released decode buffers.
    import os

    value = os.environ.get("KAFKAWIRE_BUFFER_POOL", "")
    if value:
        try:
            _buffer_pool(int(value))
        except ValueError:
            raise ValueError(f"KAFKAWIRE_BUFFER_POOL must be a byte count >= 0, not {value!r}") from None


_pool_limit_from_env()


cdef cnp.ndarray _regrow(cnp.ndarray old, int64_t n, int64_t used, int typenum, Py_ssize_t itemsize, bint zeroed):
    """A larger array of ``n`` items holding the first ``used`` items of ``old`` (zero-filled tail if asked)."""
    cdef cnp.ndarray new = _zeros(n, typenum) if zeroed else _pooled(n, typenum, itemsize)
    memcpy(cnp.PyArray_DATA(new), cnp.PyArray_DATA(old), <size_t>(used * itemsize))
    return new


cdef inline cnp.ndarray _zeros(Py_ssize_t n, int typenum):
    # calloc: large zeroed buffers arrive as untouched zero pages, paid for only where written.
    cdef cnp.npy_intp dim = n
    return cnp.PyArray_ZEROS(1, &dim, typenum, 0)


cdef object _valid(cnp.ndarray null_mask, Py_ssize_t n, int64_t nulls):
    """The validity array of a column from its null mask, or None when nothing is null."""
    return np.logical_not(null_mask[:n]) if nulls else None


cdef inline void *_ptr(cnp.ndarray a):
    return cnp.PyArray_DATA(a)


cdef int _check_legacy_min(const uint8_t *e, int32_t length, int8_t magic) except -1:
    if (magic == 0 and length < 14) or (magic == 1 and length < 22):
        raise CorruptRecordError(f"magic {magic} message of {length} bytes is shorter than its header")
    return 0


cdef int _parse_legacy(const uint8_t *e, int32_t length, bint verify_crc, bint inner, LegacyMsg *m) except -1:
    """Validate one magic 0/1 message at ``e`` (12 + length bytes, magic and minimum length already checked).

    Order (spec): CRC, then codec, then key/value framing; the message must end exactly at 12 + length.
    Inside a compressed wrapper any codec is corruption (one level of nesting only).
    """
    cdef uint32_t stored, computed
    cdef size_t pos, end = 12 + <size_t>length
    cdef int codec
    m.offset = kw_be_i64(e)
    m.magic = <int8_t>e[16]
    m.attrs = e[17]
    if verify_crc:
        stored = kw_be32(e + 12)
        computed = kw_crc32(0, e + 16, <size_t>length - 4)
        if stored != computed:
            raise CrcMismatchError(m.offset, m.offset, stored, computed)
    codec = m.attrs & 7
    if inner:
        if codec != 0:
            raise CorruptRecordError(f"compressed message nested in a compressed wrapper (offset {m.offset})")
    elif codec > 4:
        raise UnsupportedCodecError(f"unknown compression codec {codec} in a magic {m.magic} message")
    elif codec == 4:
        raise UnsupportedCodecError("zstd compression needs magic 2, found in a magic %d message" % m.magic)
    if m.magic == 1:
        m.timestamp = kw_be_i64(e + 18)
        pos = 26
    else:
        m.timestamp = -1
        pos = 18
    # Minimum lengths guarantee the key length field is present.
    m.klen = kw_be_i32(e + pos)
    pos += 4
    if m.klen < -1:
        raise CorruptRecordError(f"negative key length {m.klen} in the message at offset {m.offset}")
    m.key = e + pos
    if m.klen > 0:
        if <size_t>m.klen > end - pos:
            raise CorruptRecordError(f"key runs past the end of the message at offset {m.offset}")
        pos += <size_t>m.klen
    if end - pos < 4:
        raise CorruptRecordError(f"value length runs past the end of the message at offset {m.offset}")
    m.vlen = kw_be_i32(e + pos)
    pos += 4
    if m.vlen < -1:
        raise CorruptRecordError(f"negative value length {m.vlen} in the message at offset {m.offset}")
    m.value = e + pos
    if m.vlen > 0:
        if <size_t>m.vlen > end - pos:
            raise CorruptRecordError(f"value runs past the end of the message at offset {m.offset}")
        pos += <size_t>m.vlen
    if pos != end:
        raise CorruptRecordError(f"message at offset {m.offset} has {end - pos} bytes after its value")
    return 0


cdef int _read_blob(const uint8_t *p, size_t end, size_t *pos, int32_t *length) except -1:
    """Read a varint length (-1 = null) and skip that many bytes, all within ``end``."""
    if kw_get_varint(p, end, pos, length):
        raise CorruptRecordError("malformed length varint in a control record")
    if length[0] < -1:
        raise CorruptRecordError(f"negative length {length[0]} in a control record")
    if length[0] > 0:
        if <size_t>length[0] > end - pos[0]:
            raise CorruptRecordError("field runs past the end of a control record")
        pos[0] += <size_t>length[0]
    return 0


cdef int _control_is_abort(const uint8_t *p, size_t n) except -1:
    """1 if the first record of a control batch is an ABORT marker (key version 0, type 0), else 0.

    The record is validated like any other (field bounds, exact end), then its key is read.
    """
    cdef size_t pos = 0, end, key_pos
    cdef int32_t rec_len, off_delta, klen, vlen, hcount, hkl, hvl, h
    cdef int64_t ts_delta
    if kw_get_varint(p, n, &pos, &rec_len):
        raise CorruptRecordError("malformed control record length")
    if rec_len < 0 or <size_t>rec_len > n - pos:
        raise CorruptRecordError("control record length exceeds its batch")
    end = pos + <size_t>rec_len
    if pos >= end:
        raise CorruptRecordError("control record ends before its attributes")
    pos += 1
    if kw_get_varlong(p, end, &pos, &ts_delta) or kw_get_varint(p, end, &pos, &off_delta):
        raise CorruptRecordError("malformed control record header")
    _read_blob(p, end, &pos, &klen)
    key_pos = pos - (<size_t>klen if klen > 0 else 0)
    _read_blob(p, end, &pos, &vlen)
    if kw_get_varint(p, end, &pos, &hcount):
        raise CorruptRecordError("malformed control record header count")
    if hcount < 0:
        raise CorruptRecordError("negative header count in a control record")
    for h in range(hcount):
        _read_blob(p, end, &pos, &hkl)
        if hkl < 0:
            raise CorruptRecordError("null header key in a control record")
        _read_blob(p, end, &pos, &hvl)
    if pos != end:
        raise CorruptRecordError("control record does not end at its declared length")
    if klen < 4:
        raise CorruptRecordError("control record key is null or shorter than 4 bytes")
    # Key: int16 version, int16 type (0 = ABORT, 1 = COMMIT). An unknown version is not an abort.
    return 1 if kw_be_i16(p + key_pos) == 0 and kw_be_i16(p + key_pos + 2) == 0 else 0


cdef object _not_an_entry(const uint8_t *d, Py_ssize_t n):
    """Why ``d[:n]``, which holds no complete entry, cannot start with a cut-off one (None when it can).

    "The first batch is larger than the fetch" (RecordTooLargeError) versus "these bytes are not record
    data" (CorruptRecordError, issue 12), from the header fields present; same rules and messages as
    ``kafkawire._pure.decode.not_an_entry``.
    """
    cdef int64_t offset
    cdef int32_t length, leader_epoch
    cdef int8_t magic
    cdef int32_t min_len
    if n < 8:
        return None
    offset = kw_be_i64(d)
    if n < 12:
        return f"not a record batch: base offset {offset} is negative" if offset < 0 else None
    length = kw_be_i32(d + 8)
    head = f"not a record batch: length field {length} exceeds the {n} bytes present, and"
    if offset < 0:
        return f"{head} the base offset {offset} is negative"
    if length < 14:
        return f"{head} is below the 14 bytes of the smallest entry"
    if n < 17:
        return None
    magic = <int8_t>d[16]
    if magic < 0 or magic > 2:
        return f"{head} the magic byte {magic} is not 0, 1 or 2"
    min_len = 49 if magic == 2 else 22 if magic == 1 else 14
    if length < min_len:
        return f"{head} is below the {min_len} bytes of a magic {magic} entry"
    leader_epoch = kw_be_i32(d + 12)
    if magic == 2 and leader_epoch < -1:
        return f"{head} the partition leader epoch {leader_epoch} is below -1"
    return None


cdef object _crc_mismatch(const uint8_t *e, uint32_t stored, uint32_t computed):
    """The CrcMismatchError of the record batch at ``e`` (first and last offset from its header)."""
    cdef int64_t base = kw_be_i64(e)
    return CrcMismatchError(base, <int64_t>(<uint64_t>base + <uint64_t>(<int64_t>kw_be_i32(e + V2_LOD))),
                            stored, computed)


@cython.final
cdef class _Decoder:
    """State of one ``decode`` call: the entry table, kept decompressed buffers and the output columns."""

    cdef Py_buffer view
    cdef bint have_view
    cdef cnp.ndarray stable  # a private copy of a writable input (``data`` points into it), else None
    cdef const uint8_t *data
    cdef Py_ssize_t size
    cdef bint verify_crc
    cdef int64_t fetch_offset
    cdef Entry *entries
    cdef Py_ssize_t n_entries, cap_entries
    cdef object inflated  # the decompressed section being parsed (one at a time)
    cdef cnp.ndarray scratch  # pass 2's reused output buffer for gzip members and LZ4 and zstd frames
    # read-committed state (Java's CompletedFetch): next aborted entry, producers in an aborted range
    cdef bint read_committed
    cdef list aborted
    cdef Py_ssize_t ai, na
    cdef set aborted_pids
    # sizing from pass 1
    cdef int64_t rec_bound, bytes_bound, batch_bound
    cdef int64_t guess_bytes  # the part of bytes_bound that is reservations for compressed entries
    cdef double ratio  # inflated / compressed size of the first compressed batch (0: none seen yet)
    cdef object held  # that batch's decompressed section, parsed in pass 2
    cdef int64_t sample_sec, sample_keys, sample_values  # the first batch's section size and data bytes
    cdef int64_t walk_count, walk_key_bytes, walk_val_bytes  # what a wrapper's validating walk found
    cdef int64_t next_offset
    cdef Py_ssize_t valid_bytes
    # outputs
    cdef kw_cols c
    cdef Py_ssize_t nb
    cdef cnp.ndarray a_offset, a_timestamp, a_ttype, a_batch_index, a_hdr_off
    cdef cnp.ndarray a_key_off, a_key_data, a_key_null, a_val_off, a_val_data, a_val_null
    cdef cnp.ndarray a_hk_off, a_hk_data, a_hv_off, a_hv_data, a_hv_null
    cdef cnp.ndarray b_base, b_pid, b_epoch, b_seq, b_ple, b_txn, b_magic, b_codec, b_start
    cdef Py_ssize_t cur_start  # where the entry pass 2 is filling from starts (stored with its batch row)

    def __cinit__(self):
        self.have_view = False
        self.entries = NULL
        self.n_entries = 0
        self.cap_entries = 0
        self.inflated = None

    def __dealloc__(self):
        if self.have_view:
            PyBuffer_Release(&self.view)
        free(self.entries)

    cdef Entry *_new_entry(self) except NULL:
        cdef Py_ssize_t cap
        cdef Entry *grown
        if self.n_entries == self.cap_entries:
            cap = 16 if self.cap_entries == 0 else 2 * self.cap_entries
            grown = <Entry *>realloc(self.entries, cap * sizeof(Entry))
            if grown == NULL:
                raise MemoryError()
            self.entries = grown
            self.cap_entries = cap
        self.n_entries += 1
        return &self.entries[self.n_entries - 1]

    cdef const uint8_t *_decompress(self, int codec, const uint8_t *p, Py_ssize_t n, int magic,
                                    Py_ssize_t *out_len, bint scratch=False) except NULL:
        # The payload is handed over as a memoryview of the fetched buffer (no copy: it stays alive for
        # the whole call), and whatever buffer comes back is read in place (no copy either). It is held in
        # ``self.inflated`` until the next call, or until its entry is parsed: one decompressed section
        # lives at a time, so N decompression bombs in one fetch never hold more than one cap of memory, and the
        # section is parsed while it is still in cache.
        cdef object src = PyMemoryView_FromMemory(<char *>p, n, PyBUF_READ)
        cdef object out
        cdef cnp.ndarray arr
        cdef int64_t bound = -1
        cdef int exact = 0  # filled by the LZ4/zstd bound functions; the fast path only needs the bound
        self.inflated = None  # drop the previous section before inflating the next
        if scratch and (codec == 3 and magic != 0 or codec == 4 or codec == 1):
            # Fast path (pass 2 only: the output is overwritten by the next batch): one plain gzip member
            # or one standard LZ4/zstd frame, sized in C exactly as kafkawire.compression sizes it,
            # inflated by the same cramjam call into a buffer reused batch after batch (warm in cache).
            # Anything else, or any failure, takes the general path below, which raises the right error.
            if codec == 1:
                bound = kw_gzip_member_size(p, <size_t>n)
            else:
                bound = (kw_lz4_frame_bound if codec == 3 else kw_zstd_frame_bound)(p, <size_t>n, &exact)
            if 0 <= bound <= _compression_module().MAX_DECOMPRESSED_SIZE:
                if self.scratch is None or cnp.PyArray_DIM(self.scratch, 0) < bound:
                    self.scratch = _pooled(max(bound, 1 << 17), cnp.NPY_UINT8, 1)
                try:
                    out_len[0] = (_gzip_into if codec == 1 else _lz4_into if codec == 3 else _zstd_into)(
                        src, self.scratch[:bound])
                    # gzip: a member that gives less than its ISIZE is for the general path to judge
                    if codec != 1 or out_len[0] == bound:
                        return <const uint8_t *>cnp.PyArray_DATA(self.scratch)
                except Exception:
                    pass
        out = _compression_module().decompress(codec, src, magic)
        if PyBytes_CheckExact(out):
            self.inflated = out
            out_len[0] = len(out)
            return <const uint8_t *>PyBytes_AS_STRING(out)
        arr = np.frombuffer(out, dtype=np.uint8)
        self.inflated = arr
        out_len[0] = arr.shape[0]
        return <const uint8_t *>cnp.PyArray_DATA(arr)

    # ---------------------------------------------------------------- pass 1: framing, filters, sizes
    cdef int check_v2_crc(self, const uint8_t *e, int32_t length) except -1:
        """Raise CrcMismatchError unless the CRC32C over [attributes, end) matches the stored one."""
        cdef uint32_t stored = kw_be32(e + V2_CRC)
        cdef uint32_t computed
        if length >= NOGIL_BYTES:
            with nogil:
                computed = kw_crc32c(0, e + V2_ATTRS, <size_t>(12 + length - V2_ATTRS))
        else:
            computed = kw_crc32c(0, e + V2_ATTRS, <size_t>(12 + length - V2_ATTRS))
        if stored != computed:
            raise _crc_mismatch(e, stored, computed)
        return 0

    cdef int64_t guess(self, Py_ssize_t compressed) noexcept:
        """Bytes to reserve for an entry of ``compressed`` bytes that pass 2 will inflate."""
        cdef double r = self.ratio * 1.125 if self.ratio > 0 else <double>INFLATE_GUESS
        return <int64_t>(<double>compressed * min(r, <double>MAX_INFLATE_GUESS)) + 64

    cdef int scan_v2(self, const uint8_t *e, Py_ssize_t pos, int32_t length) except -1:
        """Pass-1 checks of one record batch after its CRC (spec order: codec, count, filters, size).

        The CRC itself is checked in pass 2, right before the batch is parsed, while its bytes are in
        cache; when a check here fails, the caller checks the CRC first so that a damaged batch still
        reports CrcMismatchError, as a front-to-back decoder would.
        """
        cdef Py_ssize_t sec_len, n_in
        cdef int64_t guess
        cdef int32_t count
        cdef int16_t attrs = kw_be_i16(e + V2_ATTRS)
        cdef int codec = attrs & 7
        cdef int64_t base = kw_be_i64(e)
        cdef int64_t last = <int64_t>(<uint64_t>base + <uint64_t>(<int64_t>kw_be_i32(e + V2_LOD)))
        cdef int64_t pid
        cdef bint skip
        cdef Entry *ent
        cdef const uint8_t *sec
        if codec > 4:
            raise UnsupportedCodecError(f"unknown compression codec {codec} in the batch at offset {base}")
        count = kw_be_i32(e + V2_COUNT)
        if count < 0:
            raise CorruptRecordError(f"negative record count {count} in the batch at offset {base}")
        sec = e + V2_HEADER
        sec_len = 12 + length - V2_HEADER
        skip = (attrs & ATTR_CONTROL) != 0
        pid = kw_be_i64(e + V2_PID)
        if self.read_committed and pid >= 0:
            # Java consumer semantics: an aborted transaction's range opens when its first offset is
            # reached and closes at the producer's ABORT marker.
            while self.ai < self.na and self.aborted[self.ai][1] <= last:
                self.aborted_pids.add(self.aborted[self.ai][0])
                self.ai += 1
            if attrs & ATTR_CONTROL:
                if count > 0:
                    if codec:
                        sec = self._decompress(codec, sec, sec_len, 2, &sec_len)
                    if _control_is_abort(sec, <size_t>sec_len):
                        self.aborted_pids.discard(pid)
                    self.inflated = None
            elif (attrs & ATTR_TRANSACTIONAL) and pid in self.aborted_pids:
                skip = True  # aborted: neither decompressed nor parsed
        if skip:
            ent = self._new_entry()
            ent.kind = KIND_V2_SKIP
        elif codec and self.ratio > 0:
            # Inflated in pass 2, where its record count is checked against the decompressed size; here
            # only a guess is reserved (a forged count cannot reserve more than the guess allows).
            guess = self.guess(sec_len)
            ent = self._new_entry()
            ent.kind = KIND_V2
            ent.codec = codec
            ent.sec = sec
            ent.sec_len = sec_len
            ent.count = count
            self.rec_bound += min(<int64_t>count, guess // MIN_V2_RECORD)
            self.bytes_bound += guess
            self.guess_bytes += guess
            self.batch_bound += 1
        else:
            if codec:
                # The first compressed batch: inflated now, kept for pass 2, and its ratio sizes the rest.
                n_in = sec_len
                sec = self._decompress(codec, sec, sec_len, 2, &sec_len)
                self.held = self.inflated
                self.inflated = None
                self.ratio = max(<double>sec_len / <double>max(n_in, 1), 1.0)
            if count > sec_len // MIN_V2_RECORD:
                raise CorruptRecordError(f"batch at offset {base} claims {count} records in {sec_len} bytes")
            if self.sample_sec == 0 and count > 0:
                kw_v2_data_sizes(sec, <size_t>sec_len, count, &self.sample_keys, &self.sample_values)
                self.sample_sec = sec_len
            # Appended only now: pass 2 must never see an entry that failed a check here. (The batch
            # inflated above is parsed from ``held`` like an uncompressed one; its CRC covers the entry.)
            ent = self._new_entry()
            ent.kind = KIND_V2
            ent.codec = 0
            ent.sec = sec
            ent.sec_len = sec_len
            ent.count = count
            self.rec_bound += count
            self.bytes_bound += sec_len
            self.batch_bound += 1
        ent.start = pos
        ent.end = pos + 12 + length
        # KAFKA-5443: the next fetch starts after this batch even if it yields no records.
        self.next_offset = <int64_t>(<uint64_t>last + 1)
        return 0

    cdef int scan_legacy(self, const uint8_t *e, Py_ssize_t pos, int32_t length, int8_t magic) except -1:
        """Pass-1 checks of one magic 0/1 message (CRC included: legacy messages are small)."""
        cdef LegacyMsg m
        cdef Entry *ent
        cdef int codec
        cdef int64_t guess
        _check_legacy_min(e, length, magic)
        _parse_legacy(e, length, self.verify_crc, False, &m)
        codec = m.attrs & 7
        if codec == 0:
            ent = self._new_entry()
            ent.kind = KIND_LEGACY
            self.next_offset = <int64_t>(<uint64_t>m.offset + 1)
            self.rec_bound += 1
            self.bytes_bound += length
        else:
            if m.vlen < 0:
                raise CorruptRecordError(f"compressed message at offset {m.offset} has a null value")
            # Inflated in pass 2 (like compressed batches); a guess is reserved here.
            ent = self._new_entry()
            ent.kind = KIND_LEGACY_WRAPPER
            ent.codec = codec
            ent.magic = magic
            ent.sec = m.value
            ent.sec_len = m.vlen
            guess = self.guess(m.vlen)
            self.rec_bound += guess // MIN_LEGACY_ENTRY + 1
            self.bytes_bound += guess
            self.guess_bytes += guess
        ent.start = pos
        ent.end = pos + 12 + length
        self.batch_bound += 1
        return 0

    cdef int scan(self) except -1:
        cdef const uint8_t *e
        cdef Py_ssize_t pos = 0, left
        cdef int32_t length
        cdef int8_t magic
        cdef Py_ssize_t n_complete = 0
        while True:
            left = self.size - pos
            if left < 12:
                break
            e = self.data + pos
            length = kw_be_i32(e + 8)
            if length < 0:
                raise CorruptRecordError(f"entry at byte {pos} has negative length {length}")
            if 12 + <Py_ssize_t>length > left:
                break  # partial tail: the fetch stopped inside this entry
            if length < 5:
                raise CorruptRecordError(f"entry at byte {pos} is {length} bytes, too short for a magic byte")
            magic = <int8_t>e[16]
            if magic < 0 or magic > 2:
                raise UnsupportedMagicError(f"unsupported magic byte {magic} at byte {pos}")
            if magic == 2:
                if length < V2_HEADER - 12:
                    raise CorruptRecordError(f"record batch at byte {pos} is {length} bytes, shorter than its header")
                try:
                    self.scan_v2(e, pos, length)
                except BaseException:
                    if self.verify_crc:
                        self.check_v2_crc(e, length)
                    raise
            else:
                self.scan_legacy(e, pos, length, magic)
            pos += 12 + length
            n_complete += 1
            self.valid_bytes = pos
        if self.size > 0 and n_complete == 0:
            why = _not_an_entry(self.data, self.size)
            if why is not None:
                raise CorruptRecordError(why)
            raise RecordTooLargeError(
                kw_be_i64(self.data) if self.size >= 8 else None,
                12 + <Py_ssize_t>kw_be_i32(self.data + 8) if self.size >= 12 else None,
                self.size,
            )
        return 0

    # ---------------------------------------------------------------- pass 2: fill the columns
    cdef int allocate(self) except -1:
        cdef int64_t nrec = self.rec_bound
        cdef int64_t nbytes = self.bytes_bound
        cdef int64_t nb = self.batch_bound
        cdef kw_cols *c
        cdef int64_t key_res, val_res
        if nbytes - self.guess_bytes > INT32_MAX:
            raise ValueError("decoded keys or values would exceed the 2 GiB limit of a binary column")
        nbytes = min(nbytes, <int64_t>INT32_MAX)
        # Keys and values each get the share of the sections they took in the first batch, plus 1/8: a
        # topic's records look alike, and a fetch that does not fits grows in pass 2. (Reserving the whole
        # section for both, as an exact bound would, keeps 2x the memory and overflows the buffer pool.)
        key_res = val_res = nbytes
        if self.sample_sec > 0:
            key_res = min(nbytes, <int64_t>(<double>nbytes * 1.125 * self.sample_keys / self.sample_sec) + 4096)
            val_res = min(nbytes, <int64_t>(<double>nbytes * 1.125 * self.sample_values / self.sample_sec) + 4096)
        self.a_offset = _pooled(nrec, cnp.NPY_INT64, 8)
        self.a_timestamp = _pooled(nrec, cnp.NPY_INT64, 8)
        self.a_ttype = _pooled(nrec, cnp.NPY_INT8, 1)
        self.a_batch_index = _pooled(nrec, cnp.NPY_INT32, 4)
        self.a_hdr_off = _zeros(nrec + 1, cnp.NPY_INT32)
        self.a_key_off = _pooled(nrec + 1, cnp.NPY_INT32, 4)
        self.a_key_data = _pooled(key_res + KW_COPY_SLACK, cnp.NPY_UINT8, 1)
        self.a_key_null = _zeros(nrec, cnp.NPY_BOOL)
        self.a_val_off = _pooled(nrec + 1, cnp.NPY_INT32, 4)
        self.a_val_data = _pooled(val_res + KW_COPY_SLACK, cnp.NPY_UINT8, 1)
        self.a_val_null = _zeros(nrec, cnp.NPY_BOOL)
        c = &self.c
        self.bind_records()
        c.key_data = <uint8_t *>_ptr(self.a_key_data)
        c.val_data = <uint8_t *>_ptr(self.a_val_data)
        c.key_off[0] = 0
        c.val_off[0] = 0
        c.rec_cap = nrec
        c.key_cap = key_res
        c.val_cap = val_res
        c.hdr_cap = c.hk_cap = c.hv_cap = 0
        c.n = c.key_len = c.val_len = c.nh = c.hk_len = c.hv_len = 0
        c.key_nulls = c.val_nulls = c.hv_nulls = 0
        self.b_base = _empty(nb, cnp.NPY_INT64)
        self.b_pid = _empty(nb, cnp.NPY_INT64)
        self.b_epoch = _empty(nb, cnp.NPY_INT16)
        self.b_seq = _empty(nb, cnp.NPY_INT32)
        self.b_ple = _empty(nb, cnp.NPY_INT32)
        self.b_txn = _empty(nb, cnp.NPY_BOOL)
        self.b_magic = _empty(nb, cnp.NPY_INT8)
        self.b_codec = _empty(nb, cnp.NPY_INT8)
        self.b_start = _empty(nb, cnp.NPY_INT64)
        self.nb = 0
        return 0

    cdef int grow_headers(self, int64_t cap, int64_t nbytes) except -1:
        """Allocate the header columns (first header met) or grow them to ``cap`` headers / ``nbytes`` bytes."""
        cdef kw_cols *c = &self.c
        if c.hdr_cap == 0:
            self.a_hk_off = _empty(cap + 1, cnp.NPY_INT32)
            self.a_hk_data = _empty(nbytes, cnp.NPY_UINT8)
            self.a_hv_off = _empty(cap + 1, cnp.NPY_INT32)
            self.a_hv_data = _empty(nbytes, cnp.NPY_UINT8)
            self.a_hv_null = _zeros(cap, cnp.NPY_BOOL)
            (<int32_t *>_ptr(self.a_hk_off))[0] = 0
            (<int32_t *>_ptr(self.a_hv_off))[0] = 0
        else:
            self.a_hk_off = _regrow(self.a_hk_off, cap + 1, c.nh + 1, cnp.NPY_INT32, 4, False)
            self.a_hk_data = _regrow(self.a_hk_data, nbytes, c.hk_len, cnp.NPY_UINT8, 1, False)
            self.a_hv_off = _regrow(self.a_hv_off, cap + 1, c.nh + 1, cnp.NPY_INT32, 4, False)
            self.a_hv_data = _regrow(self.a_hv_data, nbytes, c.hv_len, cnp.NPY_UINT8, 1, False)
            self.a_hv_null = _regrow(self.a_hv_null, cap, c.nh, cnp.NPY_BOOL, 1, True)
        c.hk_off = <int32_t *>_ptr(self.a_hk_off)
        c.hk_data = <uint8_t *>_ptr(self.a_hk_data)
        c.hv_off = <int32_t *>_ptr(self.a_hv_off)
        c.hv_data = <uint8_t *>_ptr(self.a_hv_data)
        c.hv_null = <uint8_t *>_ptr(self.a_hv_null)
        c.hdr_cap = cap
        c.hk_cap = c.hv_cap = nbytes
        return 0

    cdef int ensure_records(self, int64_t more) except -1:
        """Room for ``more`` records (pass 1 sized uncompressed entries exactly, compressed ones by a guess)."""
        cdef kw_cols *c = &self.c
        if c.n + more > c.rec_cap:
            self.grow_records(max(c.n + more, 2 * c.rec_cap))
        return 0

    cdef int ensure_bytes(self, int64_t key_need, int64_t val_need) except -1:
        """Room for key and value data up to these fill levels, growing each buffer (at least doubling).

        Growth is driven by bytes actually decompressed and parsed (each section at most the cap), never
        by a size a payload declares.
        """
        cdef kw_cols *c = &self.c
        if max(key_need, val_need) > INT32_MAX:
            raise ValueError("decoded keys or values would exceed the 2 GiB limit of a binary column")
        if key_need > c.key_cap:
            self.a_key_data = _regrow(self.a_key_data, min(max(key_need, 2 * c.key_cap), <int64_t>INT32_MAX)
                                      + KW_COPY_SLACK, c.key_len, cnp.NPY_UINT8, 1, False)
            c.key_data = <uint8_t *>_ptr(self.a_key_data)
            c.key_cap = cnp.PyArray_DIM(self.a_key_data, 0) - KW_COPY_SLACK
        if val_need > c.val_cap:
            self.a_val_data = _regrow(self.a_val_data, min(max(val_need, 2 * c.val_cap), <int64_t>INT32_MAX)
                                      + KW_COPY_SLACK, c.val_len, cnp.NPY_UINT8, 1, False)
            c.val_data = <uint8_t *>_ptr(self.a_val_data)
            c.val_cap = cnp.PyArray_DIM(self.a_val_data, 0) - KW_COPY_SLACK
        return 0

    cdef int grow_records(self, int64_t cap) except -1:
        cdef kw_cols *c = &self.c
        cdef int64_t n = c.n
        self.a_offset = _regrow(self.a_offset, cap, n, cnp.NPY_INT64, 8, False)
        self.a_timestamp = _regrow(self.a_timestamp, cap, n, cnp.NPY_INT64, 8, False)
        self.a_ttype = _regrow(self.a_ttype, cap, n, cnp.NPY_INT8, 1, False)
        self.a_batch_index = _regrow(self.a_batch_index, cap, n, cnp.NPY_INT32, 4, False)
        self.a_hdr_off = _regrow(self.a_hdr_off, cap + 1, n + 1, cnp.NPY_INT32, 4, True)
        self.a_key_off = _regrow(self.a_key_off, cap + 1, n + 1, cnp.NPY_INT32, 4, False)
        self.a_key_null = _regrow(self.a_key_null, cap, n, cnp.NPY_BOOL, 1, True)
        self.a_val_off = _regrow(self.a_val_off, cap + 1, n + 1, cnp.NPY_INT32, 4, False)
        self.a_val_null = _regrow(self.a_val_null, cap, n, cnp.NPY_BOOL, 1, True)
        self.bind_records()
        c.rec_cap = cap
        return 0

    cdef void bind_records(self) noexcept:
        """Point the parser's per-record outputs at the record arrays (after allocating or growing them)."""
        cdef kw_cols *c = &self.c
        c.offset = <int64_t *>_ptr(self.a_offset)
        c.timestamp = <int64_t *>_ptr(self.a_timestamp)
        c.ttype = <int8_t *>_ptr(self.a_ttype)
        c.batch_index = <int32_t *>_ptr(self.a_batch_index)
        c.hdr_off = <int32_t *>_ptr(self.a_hdr_off)
        c.key_off = <int32_t *>_ptr(self.a_key_off)
        c.key_null = <uint8_t *>_ptr(self.a_key_null)
        c.val_off = <int32_t *>_ptr(self.a_val_off)
        c.val_null = <uint8_t *>_ptr(self.a_val_null)

    cdef void add_batch(self, int64_t base, int64_t pid, int16_t epoch, int32_t seq, int32_t ple, bint txn,
                        int8_t magic, int8_t codec) noexcept:
        cdef Py_ssize_t i = self.nb
        (<int64_t *>_ptr(self.b_base))[i] = base
        (<int64_t *>_ptr(self.b_pid))[i] = pid
        (<int16_t *>_ptr(self.b_epoch))[i] = epoch
        (<int32_t *>_ptr(self.b_seq))[i] = seq
        (<int32_t *>_ptr(self.b_ple))[i] = ple
        (<uint8_t *>_ptr(self.b_txn))[i] = txn
        (<int8_t *>_ptr(self.b_magic))[i] = magic
        (<int8_t *>_ptr(self.b_codec))[i] = codec
        (<int64_t *>_ptr(self.b_start))[i] = self.cur_start
        self.nb = i + 1

    cdef int fill_v2(self, Entry *ent) except -1:
        cdef const uint8_t *e = self.data + ent.start
        cdef kw_batch_ctx b
        cdef kw_cols saved
        cdef const char *err = NULL
        cdef int rc = -1  # not KW_OK: a path that never parses can only end in an error with a message
        cdef int16_t attrs = kw_be_i16(e + V2_ATTRS)
        cdef int64_t n0 = self.c.n
        cdef int32_t length = <int32_t>(ent.end - ent.start - 12)
        cdef bint check_crc = self.verify_crc
        cdef uint32_t computed = 0
        cdef uint32_t stored = kw_be32(e + V2_CRC)
        cdef const uint8_t *sec = ent.sec
        cdef Py_ssize_t sec_len = ent.sec_len
        cdef int64_t left, hneed, hbytes, hbound, key_need, val_need
        cdef int tries = 0
        if ent.codec:
            # CRC (over the compressed bytes) first, then inflate, then parse straight from the cache.
            if check_crc:
                self.check_v2_crc(e, length)
                check_crc = False
            sec = self._decompress(ent.codec, ent.sec, ent.sec_len, 2, &sec_len, True)
            if ent.count > sec_len // MIN_V2_RECORD:
                raise CorruptRecordError(
                    f"batch at offset {kw_be_i64(e)} claims {ent.count} records in {sec_len} bytes")
        self.ensure_records(ent.count)
        b.base_offset = kw_be_i64(e)
        b.base_timestamp = kw_be_i64(e + V2_BASE_TS)
        b.max_timestamp = kw_be_i64(e + V2_MAX_TS)
        b.fetch_offset = self.fetch_offset
        b.batch_row = <int32_t>self.nb
        b.log_append_time = (attrs & ATTR_LOG_APPEND) != 0
        while True:
            saved = self.c
            # CRC then parse, back to back: the batch is read from memory once and parsed from cache.
            if sec_len >= NOGIL_BYTES or length >= NOGIL_BYTES:
                with nogil:
                    if check_crc:
                        computed = kw_crc32c(0, e + V2_ATTRS, <size_t>(12 + length - V2_ATTRS))
                    if not check_crc or computed == stored:
                        rc = kw_parse_v2_records(&self.c, sec, <size_t>sec_len, ent.count, &b, &err)
            else:
                if check_crc:
                    computed = kw_crc32c(0, e + V2_ATTRS, <size_t>(12 + length - V2_ATTRS))
                if not check_crc or computed == stored:
                    rc = kw_parse_v2_records(&self.c, sec, <size_t>sec_len, ent.count, &b, &err)
            if check_crc and computed != stored:
                # Raised from the CRC just computed, never from a second read of the bytes: re-reading
                # memory that changed could match and fall through with nothing parsed (issue 12).
                raise _crc_mismatch(e, stored, computed)
            check_crc = False
            if rc != KW_NEED_HEADERS and rc != KW_NEED_SPACE:
                break
            # A record did not fit: what is left of the section from it on bounds what the rest of the
            # batch can store, so growing by that much makes the retry succeed (one retry per column).
            tries += 1
            if tries > 4:
                raise RuntimeError("kafkawire internal error: column capacity not reached after growing")
            left = <int64_t>(sec_len - <Py_ssize_t>self.c.stop_pos)
            if rc == KW_NEED_SPACE:
                # Only the column that was short grows, by what is left of the section at most.
                key_need = self.c.key_len + left if self.c.need_key > self.c.key_cap else 0
                val_need = self.c.val_len + left if self.c.need_val > self.c.val_cap else 0
                self.c = saved
                self.ensure_bytes(key_need, val_need)
            else:
                # Every header takes at least 2 bytes of the section. The first allocation is sized for
                # the whole fetch as pass 1 saw it, so uncompressed fetches never grow the headers again.
                hbound = min(self.bytes_bound, <int64_t>INT32_MAX)
                hneed = max(self.c.nh + left // 2 + 1, hbound // 2 + 1, 2 * self.c.hdr_cap)
                hbytes = max(max(self.c.hk_len, self.c.hv_len) + left, hbound, 2 * self.c.hk_cap)
                self.c = saved
                self.grow_headers(hneed, hbytes)
        self.inflated = None
        if rc != KW_OK:
            why = err.decode() if err != NULL else "records section could not be parsed"
            raise CorruptRecordError(f"{why} (batch at offset {b.base_offset})")
        if self.c.n > n0:
            self.add_batch(b.base_offset, kw_be_i64(e + V2_PID), kw_be_i16(e + V2_EPOCH), kw_be_i32(e + V2_SEQ),
                           kw_be_i32(e + V2_PLE), (attrs & ATTR_TRANSACTIONAL) != 0, 2, attrs & 7)
        return 0

    cdef inline void put_record(self, int64_t offset, int64_t ts, int8_t ttype, const LegacyMsg *m) noexcept:
        cdef kw_cols *c = &self.c
        cdef int64_t n = c.n
        c.offset[n] = offset
        c.timestamp[n] = ts
        c.ttype[n] = ttype
        c.batch_index[n] = <int32_t>self.nb
        if m.klen >= 0:
            memcpy(c.key_data + c.key_len, m.key, <size_t>m.klen)
            c.key_len += m.klen
        else:
            c.key_null[n] = 1
            c.key_nulls += 1
        c.key_off[n + 1] = <int32_t>c.key_len
        if m.vlen >= 0:
            memcpy(c.val_data + c.val_len, m.value, <size_t>m.vlen)
            c.val_len += m.vlen
        else:
            c.val_null[n] = 1
            c.val_nulls += 1
        c.val_off[n + 1] = <int32_t>c.val_len
        if c.hdr_cap:
            c.hdr_off[n + 1] = <int32_t>c.nh
        c.n = n + 1

    cdef int fill_legacy(self, Entry *ent) except -1:
        cdef const uint8_t *e = self.data + ent.start
        cdef LegacyMsg m
        _parse_legacy(e, <int32_t>(ent.end - ent.start - 12), False, False, &m)
        self.ensure_records(1)
        self.ensure_bytes(self.c.key_len + max(m.klen, 0), self.c.val_len + max(m.vlen, 0))
        if m.offset < self.fetch_offset:
            return 0
        if m.magic == 1:
            self.put_record(m.offset, m.timestamp, (m.attrs >> 3) & 1, &m)
        else:
            self.put_record(m.offset, -1, -1, &m)
        self.add_batch(m.offset, -1, -1, -1, -1, False, m.magic, 0)
        return 0

    cdef int inner_walk(self, const uint8_t *d, Py_ssize_t sec_len, const LegacyMsg *w, bint emit, int64_t delta,
                        int64_t *last_offset) except -1:
        """Walk a wrapper's inner messages: validate them (emit False) or store them (emit True)."""
        cdef Py_ssize_t pos = 0, left
        cdef int32_t length
        cdef int8_t magic
        cdef LegacyMsg m
        cdef int64_t offset, ts
        cdef int8_t ttype
        cdef int64_t n0 = self.c.n
        cdef int64_t first = 0
        cdef bint log_append = w.magic == 1 and (w.attrs & ATTR_LOG_APPEND) != 0
        if not emit:
            self.walk_count = self.walk_key_bytes = self.walk_val_bytes = 0
        while pos < sec_len:
            left = sec_len - pos
            if left < 12:
                raise CorruptRecordError(f"compressed message at offset {w.offset} ends inside an inner message")
            length = kw_be_i32(d + pos + 8)
            if length < 0:
                raise CorruptRecordError(f"inner message of the wrapper at offset {w.offset} has a negative length")
            if 12 + <Py_ssize_t>length > left:
                raise CorruptRecordError(f"compressed message at offset {w.offset} ends inside an inner message")
            if length < 5:
                raise CorruptRecordError(f"inner message of the wrapper at offset {w.offset} is too short")
            magic = <int8_t>d[pos + 16]
            if magic < 0 or magic > 2:
                raise UnsupportedMagicError(f"unsupported magic byte {magic} inside the wrapper at offset {w.offset}")
            if magic > w.magic:
                raise CorruptRecordError(
                    f"inner message magic {magic} above its wrapper's magic {w.magic} (offset {w.offset})")
            _check_legacy_min(d + pos, length, magic)
            _parse_legacy(d + pos, length, self.verify_crc and not emit, True, &m)
            pos += 12 + length
            last_offset[0] = m.offset
            if not emit:
                self.walk_count += 1
                self.walk_key_bytes += max(m.klen, 0)
                self.walk_val_bytes += max(m.vlen, 0)
                continue
            offset = <int64_t>(<uint64_t>m.offset + <uint64_t>delta)
            if offset < self.fetch_offset:
                continue
            if log_append:
                ts = w.timestamp
                ttype = 1
            elif m.magic == 1:
                ts = m.timestamp
                ttype = (m.attrs >> 3) & 1
            else:
                ts = -1
                ttype = -1
            if self.c.n == n0:
                first = offset
            self.put_record(offset, ts, ttype, &m)
        if emit and self.c.n > n0:
            self.add_batch(first, -1, -1, -1, -1, False, w.magic, w.attrs & 7)
        return 0

    cdef int fill_wrapper(self, Entry *ent) except -1:
        cdef const uint8_t *e = self.data + ent.start
        cdef LegacyMsg w
        cdef int64_t last = 0, delta = 0, abs_last
        cdef const uint8_t *sec
        cdef Py_ssize_t sec_len
        _parse_legacy(e, <int32_t>(ent.end - ent.start - 12), False, False, &w)
        sec = self._decompress(ent.codec, ent.sec, ent.sec_len, ent.magic, &sec_len, True)
        if sec_len == 0:
            # Java: "Found invalid compressed record set with no inner records".
            raise CorruptRecordError(f"compressed message at offset {w.offset} holds no messages")
        self.inner_walk(sec, sec_len, &w, False, 0, &last)
        # The validating walk counted the messages and their key/value bytes: make exactly that much room.
        self.ensure_records(self.walk_count)
        self.ensure_bytes(self.c.key_len + self.walk_key_bytes, self.c.val_len + self.walk_val_bytes)
        # KIP-31: magic 1 inner offsets are relative to the wrapper, whose offset is the last inner
        # record's; wrapper offset 0 comes from old producers that wrote absolute offsets.
        if w.magic == 1 and w.offset != 0:
            delta = <int64_t>(<uint64_t>w.offset - <uint64_t>last)
        self.inner_walk(sec, sec_len, &w, True, delta, &last)
        self.inflated = None
        abs_last = <int64_t>(<uint64_t>last + <uint64_t>delta)
        # Pass 1 set next_offset for every other kind of entry; a wrapper's is only known here, and only
        # matters when the wrapper is the last entry.
        if ent == &self.entries[self.n_entries - 1]:
            self.next_offset = <int64_t>(<uint64_t>(abs_last if abs_last > w.offset else w.offset) + 1)
        return 0

    cdef int fill(self) except -1:
        cdef Py_ssize_t i
        cdef Entry *ent
        for i in range(self.n_entries):
            ent = &self.entries[i]
            self.cur_start = ent.start
            if ent.kind == KIND_V2:
                self.fill_v2(ent)
            elif ent.kind == KIND_V2_SKIP:
                if self.verify_crc:
                    self.check_v2_crc(self.data + ent.start, <int32_t>(ent.end - ent.start - 12))
            elif ent.kind == KIND_LEGACY:
                self.fill_legacy(ent)
            elif ent.kind == KIND_LEGACY_WRAPPER:
                self.fill_wrapper(ent)
        return 0

    cdef object result(self):
        cdef kw_cols *c = &self.c
        cdef Py_ssize_t n = c.n
        cdef Py_ssize_t nb = self.nb
        if n == 0:
            return _empty_columns(self.next_offset, self.valid_bytes)
        if c.hdr_cap:
            header_key = _binary(_head(self.a_hk_off, c.nh + 1), _trim(self.a_hk_data, c.hk_len), None)
            header_value = _binary(_head(self.a_hv_off, c.nh + 1), _trim(self.a_hv_data, c.hv_len),
                                   _valid(self.a_hv_null, c.nh, c.hv_nulls))
        else:
            empty = _empty(0, cnp.NPY_UINT8)
            header_key = _binary(_zeros(1, cnp.NPY_INT32), empty, None)
            header_value = _binary(_zeros(1, cnp.NPY_INT32), empty, None)
        return _columns(
            _head(self.a_offset, n),
            _head(self.a_timestamp, n),
            _head(self.a_ttype, n),
            _binary(_head(self.a_key_off, n + 1), _trim(self.a_key_data, c.key_len),
                    _valid(self.a_key_null, n, c.key_nulls)),
            _binary(_head(self.a_val_off, n + 1), _trim(self.a_val_data, c.val_len),
                    _valid(self.a_val_null, n, c.val_nulls)),
            _head(self.a_hdr_off, n + 1),
            header_key,
            header_value,
            _head(self.a_batch_index, n),
            _head(self.b_base, nb),
            _head(self.b_pid, nb),
            _head(self.b_epoch, nb),
            _head(self.b_seq, nb),
            _head(self.b_ple, nb),
            _head(self.b_txn, nb),
            _head(self.b_magic, nb),
            _head(self.b_codec, nb),
            _head(self.b_start, nb),
            self.next_offset,
            self.valid_bytes,
        )


# The result objects are built without their Python ``__init__`` (the idiom of aiokafka's cdef static
# constructors): for a small fetch, interpreting those two ``__init__``s cost more than decoding the records.
# Every slot is assigned here, exactly as the constructors would.
cdef object _object_new = object.__new__


cdef object _binary(object offsets, object data, object valid):
    cdef object col = _object_new(BinaryColumn)
    col.offsets = offsets
    col.data = data
    col.valid = valid
    return col


cdef object _columns(object offset, object timestamp, object timestamp_type, object key, object value,
                     object header_offsets, object header_key, object header_value, object batch_index,
                     object batch_base_offset, object batch_producer_id, object batch_producer_epoch,
                     object batch_base_sequence, object batch_partition_leader_epoch, object batch_transactional,
                     object batch_magic, object batch_codec, object batch_start,
                     int64_t next_offset, Py_ssize_t valid_bytes):
    cdef object r = _object_new(RecordColumns)
    r.offset = offset
    r.timestamp = timestamp
    r.timestamp_type = timestamp_type
    r.key = key
    r.value = value
    r.header_offsets = header_offsets
    r.header_key = header_key
    r.header_value = header_value
    r.batch_index = batch_index
    r.batch_base_offset = batch_base_offset
    r.batch_producer_id = batch_producer_id
    r.batch_producer_epoch = batch_producer_epoch
    r.batch_base_sequence = batch_base_sequence
    r.batch_partition_leader_epoch = batch_partition_leader_epoch
    r.batch_transactional = batch_transactional
    r.batch_magic = batch_magic
    r.batch_codec = batch_codec
    r.batch_start = batch_start
    r.next_offset = next_offset
    r.valid_bytes = valid_bytes
    return r


cdef object _empty_columns(int64_t next_offset, Py_ssize_t valid_bytes):
    """Columns with no records (what ``RecordColumns.empty`` builds), e.g. for an empty fetch."""
    cdef object e = _empty(0, cnp.NPY_UINT8)
    return _columns(
        _empty(0, cnp.NPY_INT64), _empty(0, cnp.NPY_INT64), _empty(0, cnp.NPY_INT8),
        _binary(_zeros(1, cnp.NPY_INT32), e, None), _binary(_zeros(1, cnp.NPY_INT32), e, None),
        _zeros(1, cnp.NPY_INT32),
        _binary(_zeros(1, cnp.NPY_INT32), e, None), _binary(_zeros(1, cnp.NPY_INT32), e, None),
        _empty(0, cnp.NPY_INT32),
        _empty(0, cnp.NPY_INT64), _empty(0, cnp.NPY_INT64), _empty(0, cnp.NPY_INT16), _empty(0, cnp.NPY_INT32),
        _empty(0, cnp.NPY_INT32), _empty(0, cnp.NPY_BOOL), _empty(0, cnp.NPY_INT8), _empty(0, cnp.NPY_INT8),
        _empty(0, cnp.NPY_INT64),
        next_offset, valid_bytes,
    )


cdef inline cnp.ndarray _head(cnp.ndarray a, Py_ssize_t n):
    """``a[:n]``, without making a view when nothing is cut (the usual case: counts are exact)."""
    return a if cnp.PyArray_DIM(a, 0) == n else a[:n]


cdef cnp.ndarray _trim(cnp.ndarray a, int64_t used):
    """Cut a data buffer allocated from an upper bound down to what was used.

    A buffer numpy owns is ``resize``d (realloc shrinks in place: for large buffers glibc unmaps the tail),
    so the untouched part of the bound does not stay reserved behind a slice."""
    if used < cnp.PyArray_DIM(a, 0):
        if not cnp.PyArray_CHKFLAGS(a, cnp.NPY_ARRAY_OWNDATA):
            return a[:used]  # a pooled buffer: the tail goes back to the pool with the rest
        a.resize((used,), refcheck=False)
    return a


def decode(data, verify_crc, fetch_offset, read_committed, aborted):
    """Decode fetched record bytes into :class:`~kafkawire.columns.RecordColumns` (docs/CODEC-SPEC.md).

    ``data``: any contiguous buffer of entries; ``fetch_offset``: -1 for none; ``aborted``: a list of
    ``(producer_id, first_offset)`` sorted by first offset (used when ``read_committed``).
    """
    cdef _Decoder d = _Decoder.__new__(_Decoder)
    cdef object pending = None
    if not INT64_MIN <= fetch_offset <= INT64_MAX:
        raise ValueError(f"fetch_offset out of int64 range: {fetch_offset}")
    _get_buffer(data, &d.view)
    d.have_view = True
    if d.view.readonly:
        d.data = <const uint8_t *>d.view.buf
        d.size = d.view.len
    else:
        # Issue 12: a writable buffer (bytearray, writable memoryview or numpy array, mmap) can change while
        # it is decoded, since large batches are checked and parsed without the GIL; pass 2 would then parse
        # bytes other than the ones pass 1 framed and the CRC covered. Decode a private copy, taken while the
        # GIL is held (so no Python thread writes during it): every byte is read from one state. A read-only
        # export (bytes, ``memoryview.toreadonly()``) is trusted not to change and costs no copy.
        # The copy goes into a pooled buffer: fresh memory would cost a page fault per 4 KiB, which on a
        # 110 MiB fetch tripled the decode time; a recycled one costs only the memcpy.
        d.size = d.view.len
        d.stable = _pooled(d.size, cnp.NPY_UINT8, 1)
        memcpy(_ptr(d.stable), d.view.buf, <size_t>d.size)
        PyBuffer_Release(&d.view)
        d.have_view = False
        d.data = <const uint8_t *>_ptr(d.stable)
    d.verify_crc = bool(verify_crc)
    # Any negative fetch offset means "none": nothing is filtered out, not even negative (forged) offsets.
    d.fetch_offset = fetch_offset if fetch_offset >= 0 else INT64_MIN
    d.next_offset = fetch_offset
    d.valid_bytes = 0
    d.rec_bound = d.bytes_bound = d.batch_bound = d.guess_bytes = 0
    d.ratio = 0.0
    d.read_committed = bool(read_committed)
    d.aborted = aborted if type(aborted) is list else list(aborted)
    d.ai = 0
    d.na = len(d.aborted)
    d.aborted_pids = set()
    try:
        d.scan()
    except Exception as exc:
        # Entries before the faulty one are decoded first, so that an error inside one of them wins,
        # exactly as in a decoder that goes front to back.
        pending = exc
    d.allocate()
    d.fill()
    if pending is not None:
        raise pending
    return d.result()


# ------------------------------------------------------------------------------------------- encode

@cython.final
cdef class _Col:
    """Raw view of a BinaryColumn for the encoder: offsets (int32 or int64), data and validity."""

    cdef object keep
    cdef const int32_t *off32
    cdef const int64_t *off64
    cdef const uint8_t *data
    cdef const uint8_t *valid
    cdef Py_ssize_t n

    cdef inline int64_t start(self, Py_ssize_t i) noexcept nogil:
        return self.off32[i] if self.off32 != NULL else self.off64[i]

    cdef inline int32_t length(self, Py_ssize_t i) noexcept nogil:
        """Byte length of element i, -1 when null."""
        if self.valid != NULL and not self.valid[i]:
            return -1
        if self.off32 != NULL:
            return self.off32[i + 1] - self.off32[i]
        return <int32_t>(self.off64[i + 1] - self.off64[i])


cdef inline bint _is_carray(object a, int typenum):
    return (cnp.PyArray_CheckExact(a) and cnp.PyArray_TYPE(<cnp.ndarray>a) == typenum
            and cnp.PyArray_NDIM(<cnp.ndarray>a) == 1 and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>a))


cdef _Col _column(object col, Py_ssize_t n, str what):
    """Checked raw view of a BinaryColumn with ``n`` elements (offsets in range and non-decreasing)."""
    cdef _Col r = _Col.__new__(_Col)
    cdef object raw = col.offsets
    cdef cnp.ndarray offsets
    cdef cnp.ndarray data
    cdef cnp.ndarray valid
    cdef Py_ssize_t i, ndata
    cdef int64_t prev, cur
    # Fast path for what BinaryColumn.from_pylist / from_arrow produce: contiguous int32 and uint8 arrays.
    if _is_carray(raw, cnp.NPY_INT32):
        offsets = <cnp.ndarray>raw
    else:
        offsets = np.asarray(raw)
    raw = col.data
    if _is_carray(raw, cnp.NPY_UINT8):
        data = <cnp.ndarray>raw
    else:
        data = np.ascontiguousarray(raw).view(np.uint8).reshape(-1)
    if offsets.ndim != 1 or cnp.PyArray_DIM(offsets, 0) != n + 1:
        raise ValueError(f"{what} offsets must have {n + 1} elements")
    if cnp.PyArray_TYPE(offsets) == cnp.NPY_INT32:
        if not cnp.PyArray_IS_C_CONTIGUOUS(offsets):
            offsets = np.ascontiguousarray(offsets)
        r.off32 = <const int32_t *>_ptr(offsets)
    else:
        offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        r.off64 = <const int64_t *>_ptr(offsets)
    ndata = cnp.PyArray_DIM(data, 0)
    prev = r.start(0)
    if prev < 0:
        raise ValueError(f"{what} offsets must start at a non-negative position")
    for i in range(1, n + 1):
        cur = r.start(i)
        if cur < prev:
            raise ValueError(f"{what} offsets must not decrease")
        if cur - prev > INT32_MAX:
            raise ValueError(f"{what} element {i - 1} is larger than 2**31-1 bytes")
        prev = cur
    if prev > ndata:
        raise ValueError(f"{what} offsets point past the end of its data ({prev} > {ndata})")
    r.data = <const uint8_t *>_ptr(data)
    r.n = n
    r.keep = [offsets, data]
    if col.valid is not None:
        valid = np.ascontiguousarray(col.valid, dtype=bool)
        if valid.ndim != 1 or cnp.PyArray_DIM(valid, 0) != n:
            raise ValueError(f"{what} validity must have {n} elements")
        r.valid = <const uint8_t *>_ptr(valid)
        r.keep.append(valid)
    return r


cdef inline size_t _blob_size(int32_t length) noexcept nogil:
    """Size of a varint-length-prefixed nullable byte string."""
    return kw_uvarint_size(kw_zigzag32(length)) + (<size_t>length if length > 0 else 0)


cdef inline uint8_t *_put_blob(uint8_t *p, _Col col, Py_ssize_t i, int32_t length) noexcept:
    p += kw_put_uvarint(p, kw_zigzag32(length))
    if length > 0:
        memcpy(p, col.data + col.start(i), <size_t>length)
        p += length
    return p


cdef inline uint8_t *_put_i32_blob(uint8_t *p, _Col col, Py_ssize_t i, int32_t length) noexcept:
    kw_put_be32(p, <uint32_t>length)
    p += 4
    if length > 0:
        memcpy(p, col.data + col.start(i), <size_t>length)
        p += length
    return p


cdef bytes _encode_v2_records(Py_ssize_t n, _Col vals, _Col keys, const int64_t *ts, const int32_t *hoffs,
                              _Col hkeys, _Col hvals, Py_ssize_t head, Py_ssize_t *out_len):
    """The records section of a magic-2 batch (uncompressed), after ``head`` bytes left for the caller."""
    cdef int32_t *body = <int32_t *>malloc(max(n, 1) * sizeof(int32_t))
    cdef Py_ssize_t i, h, total = 0
    cdef int64_t b, delta, base_ts = ts[0]
    cdef int32_t kl, vl, hc
    cdef uint8_t *p
    cdef bytes out
    if body == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            delta = <int64_t>(<uint64_t>ts[i] - <uint64_t>base_ts)
            if ((ts[i] ^ base_ts) & (ts[i] ^ delta)) < 0:
                raise ValueError(f"timestamp {ts[i]} is too far from the first timestamp {base_ts}")
            kl = keys.length(i) if keys is not None else -1
            vl = vals.length(i)
            b = 1 + kw_uvarint_size(kw_zigzag64(delta)) + kw_uvarint_size(kw_zigzag32(<int32_t>i))
            b += _blob_size(kl) + _blob_size(vl)
            hc = hoffs[i + 1] - hoffs[i] if hoffs != NULL else 0
            b += kw_uvarint_size(kw_zigzag32(hc))
            for h in range(hoffs[i] if hoffs != NULL else 0, hoffs[i + 1] if hoffs != NULL else 0):
                b += _blob_size(hkeys.length(h)) + _blob_size(hvals.length(h))
            if b > INT32_MAX:
                raise ValueError(f"record {i} is larger than 2**31-1 bytes")
            body[i] = <int32_t>b
            total += kw_uvarint_size(kw_zigzag32(<int32_t>b)) + b
        if total > INT32_MAX - V2_HEADER:
            raise ValueError("record batch would be larger than 2**31-1 bytes")
        out = PyBytes_FromStringAndSize(NULL, head + total)
        p = <uint8_t *>PyBytes_AS_STRING(out) + head
        for i in range(n):
            p += kw_put_uvarint(p, kw_zigzag32(body[i]))
            p[0] = 0  # record attributes
            p += 1
            p += kw_put_uvarint(p, kw_zigzag64(<int64_t>(<uint64_t>ts[i] - <uint64_t>base_ts)))
            p += kw_put_uvarint(p, kw_zigzag32(<int32_t>i))
            p = _put_blob(p, keys, i, keys.length(i)) if keys is not None else _put_blob(p, None, i, -1)
            p = _put_blob(p, vals, i, vals.length(i))
            if hoffs != NULL:
                p += kw_put_uvarint(p, kw_zigzag32(hoffs[i + 1] - hoffs[i]))
                for h in range(hoffs[i], hoffs[i + 1]):
                    p = _put_blob(p, hkeys, h, hkeys.length(h))
                    p = _put_blob(p, hvals, h, hvals.length(h))
            else:
                p[0] = 0  # header count 0
                p += 1
    finally:
        free(body)
    out_len[0] = total
    return out


cdef bytes _encode_v2(Py_ssize_t n, _Col vals, _Col keys, const int64_t *ts, const int32_t *hoffs, _Col hkeys,
                      _Col hvals, int64_t base_offset, int codec, int64_t producer_id, int16_t producer_epoch,
                      int32_t base_sequence, bint transactional, int32_t partition_leader_epoch):
    cdef Py_ssize_t rec_len, total, i
    # Uncompressed: the records are written straight after room for the header, in the final buffer.
    cdef bytes records = _encode_v2_records(n, vals, keys, ts, hoffs, hkeys, hvals, 0 if codec else V2_HEADER,
                                            &rec_len)
    cdef bytes out
    cdef uint8_t *p
    cdef int64_t max_ts = ts[0]
    if codec:
        records = bytes(_compression_module().compress(codec, records, 2))
        rec_len = len(records)
        if rec_len > INT32_MAX - V2_HEADER:
            raise ValueError("record batch would be larger than 2**31-1 bytes")
        out = PyBytes_FromStringAndSize(NULL, V2_HEADER + rec_len)
        memcpy(PyBytes_AS_STRING(out) + V2_HEADER, PyBytes_AS_STRING(records), <size_t>rec_len)
    else:
        out = records
    for i in range(1, n):
        if ts[i] > max_ts:
            max_ts = ts[i]
    total = V2_HEADER + rec_len
    p = <uint8_t *>PyBytes_AS_STRING(out)
    kw_put_be64(p, <uint64_t>base_offset)
    kw_put_be32(p + 8, <uint32_t>(total - 12))
    kw_put_be32(p + V2_PLE, <uint32_t>partition_leader_epoch)
    p[16] = 2
    kw_put_be16(p + V2_ATTRS, <uint16_t>(codec | (ATTR_TRANSACTIONAL if transactional else 0)))
    kw_put_be32(p + V2_LOD, <uint32_t>(n - 1))
    kw_put_be64(p + V2_BASE_TS, <uint64_t>ts[0])
    kw_put_be64(p + V2_MAX_TS, <uint64_t>max_ts)
    kw_put_be64(p + V2_PID, <uint64_t>producer_id)
    kw_put_be16(p + V2_EPOCH, <uint16_t>producer_epoch)
    kw_put_be32(p + V2_SEQ, <uint32_t>base_sequence)
    kw_put_be32(p + V2_COUNT, <uint32_t>n)
    kw_put_be32(p + V2_CRC, kw_crc32c(0, p + V2_ATTRS, <size_t>(total - V2_ATTRS)))
    return out


cdef uint8_t *_put_legacy(uint8_t *p, int64_t offset, int magic, int attrs, int64_t ts, _Col keys, _Col vals,
                          Py_ssize_t i, int32_t kl, int32_t vl, const uint8_t *raw_value) noexcept:
    """Write one magic 0/1 message (with its 12-byte log overhead); ``raw_value`` overrides ``vals``."""
    cdef uint8_t *start = p
    cdef size_t size = (14 if magic == 0 else 22) + (<size_t>kl if kl > 0 else 0) + (<size_t>vl if vl > 0 else 0)
    kw_put_be64(p, <uint64_t>offset)
    kw_put_be32(p + 8, <uint32_t>size)
    p[16] = <uint8_t>magic
    p[17] = <uint8_t>attrs
    p += 18
    if magic == 1:
        kw_put_be64(p, <uint64_t>ts)
        p += 8
    if keys is not None:
        p = _put_i32_blob(p, keys, i, kl)
    else:
        kw_put_be32(p, <uint32_t>-1)
        p += 4
    if raw_value != NULL:
        kw_put_be32(p, <uint32_t>vl)
        memcpy(p + 4, raw_value, <size_t>vl)
        p += 4 + vl
    else:
        p = _put_i32_blob(p, vals, i, vl)
    kw_put_be32(start + 12, kw_crc32(0, start + 16, size - 4))
    return p


cdef bytes _encode_legacy(Py_ssize_t n, _Col vals, _Col keys, const int64_t *ts, int64_t base_offset, int magic,
                          int codec):
    cdef Py_ssize_t i, total = 0
    cdef int64_t entry
    cdef int64_t max_ts = ts[0]
    cdef int32_t kl, vl
    cdef bytes out, inner
    cdef uint8_t *p
    cdef Py_ssize_t overhead = 26 if magic == 0 else 34
    for i in range(n):
        kl = keys.length(i) if keys is not None else -1
        vl = vals.length(i)
        entry = overhead + (kl if kl > 0 else 0) + (vl if vl > 0 else 0)
        if entry - 12 > INT32_MAX:
            raise ValueError(f"message {i} is larger than 2**31-1 bytes")
        total += entry
        if ts[i] > max_ts:
            max_ts = ts[i]
    out = PyBytes_FromStringAndSize(NULL, total)
    p = <uint8_t *>PyBytes_AS_STRING(out)
    for i in range(n):
        kl = keys.length(i) if keys is not None else -1
        # Compressed sets: magic 1 inner offsets are relative (KIP-31), magic 0 ones absolute.
        p = _put_legacy(p, (i if magic == 1 else base_offset + i) if codec else base_offset + i, magic, 0, ts[i],
                        keys, vals, i, kl, vals.length(i), NULL)
    if not codec:
        return out
    inner = bytes(_compression_module().compress(codec, out, magic))
    if len(inner) > INT32_MAX - 34:
        raise ValueError("compressed message set is larger than 2**31-1 bytes")
    total = overhead + len(inner)
    out = PyBytes_FromStringAndSize(NULL, total)
    _put_legacy(<uint8_t *>PyBytes_AS_STRING(out), base_offset + n - 1, magic, codec, max_ts, None, None, 0, -1,
                <int32_t>len(inner), <const uint8_t *>PyBytes_AS_STRING(inner))
    return out


def encode(values, keys, timestamps, header_offsets, header_keys, header_values, base_offset, magic, codec,
           producer_id, producer_epoch, base_sequence, transactional, partition_leader_epoch):
    """Encode columns into one magic-2 record batch or a magic 0/1 message set (docs/CODEC-SPEC.md)."""
    cdef Py_ssize_t n = len(values)
    cdef _Col vals = _column(values, n, "values")
    cdef _Col keys_c = None if keys is None else _column(keys, n, "keys")
    cdef _Col hk = None, hv = None
    cdef cnp.ndarray ts = np.ascontiguousarray(timestamps, dtype=np.int64)
    cdef cnp.ndarray hoffs = None
    cdef const int32_t *hp = NULL
    cdef Py_ssize_t i, nh
    if n == 0:
        raise ValueError("cannot encode an empty batch")
    if ts.ndim != 1 or cnp.PyArray_DIM(ts, 0) != n:
        raise ValueError(f"timestamps must have {n} elements")
    if magic not in (0, 1, 2):
        raise ValueError(f"magic must be 0, 1 or 2, not {magic!r}")
    if not 0 <= codec <= 4 or (codec == 4 and magic < 2):
        raise ValueError(f"codec {codec!r} is not valid for magic {magic}")
    if not INT64_MIN <= base_offset <= INT64_MAX:
        raise ValueError(f"base_offset out of int64 range: {base_offset}")
    if header_offsets is not None and (header_keys is None or header_values is None):
        raise ValueError("header_offsets needs header key and value columns")
    if magic < 2:
        if header_offsets is not None and len(header_offsets) and np.any(np.diff(np.asarray(header_offsets))):
            raise ValueError("record headers need magic 2")
        if base_offset + n - 1 > INT64_MAX:
            raise ValueError(f"offset {base_offset + n - 1} out of int64 range")
        return _encode_legacy(n, vals, keys_c, <const int64_t *>_ptr(ts), base_offset, magic, codec)
    if not INT64_MIN <= producer_id <= INT64_MAX:
        raise ValueError(f"producer_id out of int64 range: {producer_id}")
    if not -0x8000 <= producer_epoch <= 0x7FFF:
        raise ValueError(f"producer_epoch out of int16 range: {producer_epoch}")
    if not -0x80000000 <= base_sequence <= 0x7FFFFFFF:
        raise ValueError(f"base_sequence out of int32 range: {base_sequence}")
    if not -0x80000000 <= partition_leader_epoch <= 0x7FFFFFFF:
        raise ValueError(f"partition_leader_epoch out of int32 range: {partition_leader_epoch}")
    if header_offsets is not None:
        hoffs = np.ascontiguousarray(header_offsets, dtype=np.int32)
        if hoffs.ndim != 1 or cnp.PyArray_DIM(hoffs, 0) != n + 1:
            raise ValueError(f"header_offsets must have {n + 1} elements")
        hp = <const int32_t *>_ptr(hoffs)
        if hp[0] < 0:
            raise ValueError("header_offsets must start at a non-negative index")
        for i in range(n):
            if hp[i + 1] < hp[i]:
                raise ValueError("header_offsets must not decrease")
        nh = hp[n]
        hk = _column(header_keys, len(header_keys), "header_keys")
        hv = _column(header_values, len(header_values), "header_values")
        if hk.n < nh or hv.n < nh:
            raise ValueError("header_offsets point past the end of the header columns")
        for i in range(hp[0], nh):
            if hk.length(i) < 0:
                raise ValueError("header keys cannot be null")
    return _encode_v2(n, vals, keys_c, <const int64_t *>_ptr(ts), hp, hk, hv, base_offset, codec, producer_id,
                      producer_epoch, base_sequence, bool(transactional), partition_leader_epoch)
