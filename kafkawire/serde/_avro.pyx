# cython: language_level=3
"""The compiled Avro column decoder: one pass over Confluent-framed values into raw Arrow column buffers.

It runs the program of :mod:`kafkawire.serde.avro_plan` (a table of nodes, each reading one writer value and
appending it to one reader column) with the GIL released, and returns per column ``(length, validity bytes,
int32 offsets, data)``, exactly what the pure-Python reference :mod:`kafkawire.serde._avro_pure` returns, with
the same error messages. Every read is bounds-checked against the value's end; counts are checked against the
bytes left before anything is appended; nesting is bounded; a failed allocation is a MemoryError.
"""

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t, INT64_MIN
from libc.stdlib cimport free, malloc, realloc, calloc
from libc.string cimport memcpy, memset
from libc.stdio cimport snprintf

from cpython.buffer cimport PyBuffer_FillInfo

import numpy as np
cimport numpy as cnp

cnp.import_array()

cdef extern from *:
    """
    /* Strict UTF-8 (as Python's codec: no overlongs, no surrogates, nothing above U+10FFFF). 1 = valid. */
    static int kw_utf8_valid(const unsigned char *s, long long n) {
        long long i = 0;
        /* all ASCII (the common case): OR every byte together, eight at a time; else the strict walk below */
        if (n >= 8) {
            unsigned long long acc = 0, w;
            for (i = 0; i + 8 <= n; i += 8) {
                memcpy(&w, s + i, 8);
                acc |= w;
            }
            memcpy(&w, s + n - 8, 8);  /* the tail, overlapping the last word */
            acc |= w;
            if (!(acc & 0x8080808080808080ULL)) return 1;
        } else {
            unsigned char acc = 0;
            for (i = 0; i < n; i++) acc |= s[i];
            if (acc < 0x80) return 1;
        }
        i = 0;
        while (i < n) {
            unsigned char c = s[i];
            if (c < 0x80) {
                /* ASCII runs are the common case: eight bytes at a time */
                while (i + 8 <= n) {
                    unsigned long long w;
                    memcpy(&w, s + i, 8);
                    if (w & 0x8080808080808080ULL) break;
                    i += 8;
                }
                if (i < n && s[i] < 0x80) i++;
                continue;
            }
            if (c >= 0xC2 && c <= 0xDF) {
                if (i + 1 >= n || (s[i+1] & 0xC0) != 0x80) return 0;
                i += 2;
            } else if (c >= 0xE0 && c <= 0xEF) {
                if (i + 2 >= n) return 0;
                unsigned char c1 = s[i+1];
                if ((c1 & 0xC0) != 0x80 || (s[i+2] & 0xC0) != 0x80) return 0;
                if (c == 0xE0 && c1 < 0xA0) return 0;         /* overlong */
                if (c == 0xED && c1 >= 0xA0) return 0;        /* surrogates */
                i += 3;
            } else if (c >= 0xF0 && c <= 0xF4) {
                if (i + 3 >= n) return 0;
                unsigned char c1 = s[i+1];
                if ((c1 & 0xC0) != 0x80 || (s[i+2] & 0xC0) != 0x80 || (s[i+3] & 0xC0) != 0x80) return 0;
                if (c == 0xF0 && c1 < 0x90) return 0;         /* overlong */
                if (c == 0xF4 && c1 >= 0x90) return 0;        /* above U+10FFFF */
                i += 4;
            } else {
                return 0;
            }
        }
        return 1;
    }
    """
    int kw_utf8_valid(const unsigned char *s, long long n) nogil

# Keep equal to _avro_pure: the differential tests compare error messages word for word.
DEF MAX_DEPTH = 128
DEF ZERO_SIZE_ITEMS = 1048576
DEF INT32_MAX = 2147483647
DEF MSG = 320

# column kinds and ops: kafkawire/serde/avro_plan.py
DEF K_NULL = 0
DEF K_FIXED = 1
DEF K_VAR = 2
DEF K_STRUCT = 3
DEF K_LIST = 4
DEF K_MAP = 5
DEF K_UNION = 6

DEF OP_NULL = 0
DEF OP_BOOL = 1
DEF OP_INT = 2
DEF OP_LONG = 3
DEF OP_FLOAT = 4
DEF OP_DOUBLE = 5
DEF OP_BYTES = 6
DEF OP_FIXED = 7
DEF OP_ENUM = 8
DEF OP_DEC_BYTES = 9
DEF OP_DEC_FIXED = 10
DEF OP_DURATION = 11
DEF OP_RECORD = 12
DEF OP_ARRAY = 13
DEF OP_MAP = 14
DEF OP_UNION = 15
DEF OP_BRANCH = 16
DEF OP_DEFAULT = 17
DEF OP_ERROR = 18

DEF T_I32 = 0
DEF T_I64 = 1
DEF T_F32 = 2
DEF T_F64 = 3

# fast codes (field()): the common ops with their column's kind and width checked once per decode() call
DEF F_GENERIC = 0
DEF F_LONG64 = 1
DEF F_INT32 = 2
DEF F_DOUBLE = 3
DEF F_FLOAT32 = 4
DEF F_BOOL = 5
DEF F_BYTES = 6
DEF F_ENUM = 7
DEF F_NULL = 8
DEF F_RECORD = 9
DEF F_UNION = 10

DEF E_DECODE = 1
DEF E_MEMORY = 2


cdef struct Buf:
    uint8_t* p
    size_t n
    size_t cap


cdef struct Col:
    int kind
    int width
    int64_t length
    Buf valid
    Buf data
    Buf offs
    const int32_t* children
    int nchildren


cdef struct St:
    const int64_t* nodes
    const uint8_t* fast
    const int32_t* kids
    const uint8_t** blob_p
    const int64_t* blob_n
    Col* cols
    const uint8_t* buf
    int64_t pos
    int64_t end
    int64_t base
    int64_t zero_budget
    int err
    char msg[MSG]


cdef inline int reserve(St* s, Buf* b, size_t extra) noexcept nogil:
    cdef size_t need = b.n + extra
    cdef size_t cap
    cdef uint8_t* q
    if need <= b.cap:
        return 0
    cap = b.cap * 2 if b.cap else 256
    while cap < need:
        cap *= 2
    q = <uint8_t*>realloc(b.p, cap)
    if q == NULL:
        s.err = E_MEMORY
        return -1
    b.p = q
    b.cap = cap
    return 0


cdef inline int push_byte(St* s, Buf* b, uint8_t v) noexcept nogil:
    if b.n == b.cap and reserve(s, b, 1) < 0:
        return -1
    b.p[b.n] = v
    b.n += 1
    return 0


cdef inline int push_i32(St* s, Buf* b, int32_t v) noexcept nogil:
    if b.n + 4 > b.cap and reserve(s, b, 4) < 0:
        return -1
    memcpy(b.p + b.n, &v, 4)
    b.n += 4
    return 0


cdef inline int push_bytes(St* s, Buf* b, const void* src, size_t n) noexcept nogil:
    if b.n + n > b.cap and reserve(s, b, n) < 0:
        return -1
    if n:
        memcpy(b.p + b.n, src, n)
    b.n += n
    return 0


cdef inline int fail(St* s) noexcept nogil:
    s.err = E_DECODE
    return -1


cdef inline int need(St* s, int64_t n) noexcept nogil:
    if n > s.end - s.pos:
        snprintf(s.msg, MSG, "value truncated: %lld bytes needed at byte %lld, %lld left",
                 <long long>n, <long long>(s.pos - s.base), <long long>(s.end - s.pos))
        return fail(s)
    return 0


cdef inline int read_long(St* s, int64_t* out) noexcept nogil:
    cdef uint64_t z = 0
    cdef int shift = 0
    cdef uint8_t c
    cdef const uint8_t* p
    cdef int i
    if s.pos < s.end:
        c = s.buf[s.pos]
        if c < 0x80:  # one byte (|value| < 64): most lengths, indexes and small numbers
            s.pos += 1
            out[0] = <int64_t>(c >> 1) ^ -(<int64_t>(c & 1))
            return 0
        if s.end - s.pos >= 10:
            # a varint is at most 10 bytes: with 10 left, no byte needs its own bounds check
            p = s.buf + s.pos
            i = 0
            while True:
                c = p[i]
                i += 1
                if i == 10 and c > 1:
                    snprintf(s.msg, MSG, "varint overflows 64 bits at byte %lld", <long long>(s.pos + 9 - s.base))
                    return fail(s)
                z |= (<uint64_t>(c & 0x7F)) << shift
                if c < 0x80:
                    break
                shift += 7
            s.pos += i
            out[0] = <int64_t>(z >> 1) ^ -(<int64_t>(z & 1))
            return 0
    while True:
        if s.pos >= s.end:
            snprintf(s.msg, MSG, "value truncated: varint runs past the end at byte %lld", <long long>(s.pos - s.base))
            return fail(s)
        c = s.buf[s.pos]
        s.pos += 1
        if shift == 63 and c > 1:
            snprintf(s.msg, MSG, "varint overflows 64 bits at byte %lld", <long long>(s.pos - 1 - s.base))
            return fail(s)
        z |= (<uint64_t>(c & 0x7F)) << shift
        if c < 0x80:
            break
        shift += 7
    out[0] = <int64_t>(z >> 1) ^ -(<int64_t>(z & 1))
    return 0


cdef inline int read_int(St* s, int64_t* out) noexcept nogil:
    cdef int64_t start = s.pos
    if read_long(s, out) < 0:
        return -1
    if out[0] < -2147483648 or out[0] > INT32_MAX:
        snprintf(s.msg, MSG, "int %lld out of range at byte %lld", <long long>out[0], <long long>(start - s.base))
        return fail(s)
    return 0


cdef inline int read_len(St* s, int64_t* out) noexcept nogil:
    cdef int64_t start = s.pos
    if read_long(s, out) < 0:
        return -1
    if out[0] < 0:
        snprintf(s.msg, MSG, "negative length %lld at byte %lld", <long long>out[0], <long long>(start - s.base))
        return fail(s)
    return need(s, out[0])


cdef inline int slot(St* s, Col* col, uint8_t valid) noexcept nogil:
    col.length += 1
    return push_byte(s, &col.valid, valid)


cdef inline int push_fixed(St* s, int64_t c, const void* src, size_t n) noexcept nogil:
    cdef Col* col
    if c < 0:
        return 0
    col = &s.cols[c]
    # one capacity check for the slot and its bytes (columns are presized: this is almost never taken)
    if col.valid.n >= col.valid.cap or col.data.n + n > col.data.cap:
        if reserve(s, &col.valid, 1) < 0 or reserve(s, &col.data, n) < 0:
            return -1
    col.valid.p[col.valid.n] = 1
    col.valid.n += 1
    col.length += 1
    if n:  # fixed(0): no arithmetic on a NULL data pointer (UBSan)
        memcpy(col.data.p + col.data.n, src, n)
    col.data.n += n
    return 0


cdef int append_null(St* s, int64_t c) noexcept nogil:
    cdef Col* col = &s.cols[c]
    cdef int i
    cdef int32_t last
    if slot(s, col, 0) < 0:
        return -1
    if col.kind == K_FIXED:
        if col.width == 0:
            return 0
        if reserve(s, &col.data, col.width) < 0:
            return -1
        memset(col.data.p + col.data.n, 0, col.width)
        col.data.n += col.width
    elif col.kind == K_VAR or col.kind == K_LIST or col.kind == K_MAP:
        memcpy(&last, col.offs.p + col.offs.n - 4, 4)
        return push_i32(s, &col.offs, last)
    elif col.kind == K_STRUCT:
        for i in range(col.nchildren):
            if append_null(s, col.children[i]) < 0:
                return -1
    elif col.kind == K_UNION:
        if push_byte(s, &col.data, 0) < 0:
            return -1
        if push_i32(s, &col.offs, <int32_t>s.cols[col.children[0]].length) < 0:
            return -1
        return append_null(s, col.children[0])
    return 0


cdef inline int read_bytes(St* s, int64_t c, int64_t utf8) noexcept nogil:
    """OP_BYTES: a length-prefixed string (checked as UTF-8 when ``utf8``) or bytes into var column ``c``."""
    cdef int64_t v, start
    cdef int32_t i32
    cdef Col* col
    if read_len(s, &v) < 0:
        return -1
    start = s.pos
    if utf8 and not kw_utf8_valid(s.buf + s.pos, v):
        snprintf(s.msg, MSG, "invalid UTF-8 in a string at byte %lld", <long long>(start - s.base))
        return fail(s)
    s.pos += v
    if c < 0:
        return 0
    col = &s.cols[c]
    if col.valid.n >= col.valid.cap or col.offs.n + 4 > col.offs.cap or col.data.n + v > col.data.cap:
        if reserve(s, &col.valid, 1) < 0 or reserve(s, &col.offs, 4) < 0 or reserve(s, &col.data, v) < 0:
            return -1
    if col.data.n + v > INT32_MAX:
        snprintf(s.msg, MSG, "a column exceeds 2 GiB of data: decode fewer values at a time")
        return fail(s)
    col.valid.p[col.valid.n] = 1
    col.valid.n += 1
    col.length += 1
    if v:  # an empty string into a column with no data yet: no arithmetic on its NULL pointer (UBSan)
        memcpy(col.data.p + col.data.n, s.buf + start, v)
    col.data.n += v
    i32 = <int32_t>col.data.n
    memcpy(col.offs.p + col.offs.n, &i32, 4)
    col.offs.n += 4
    return 0


cdef inline int read_enum(St* s, int64_t c, int64_t a0, int64_t blob) noexcept nogil:
    """OP_ENUM: a symbol index of an enum of ``a0`` symbols, mapped by the blob to the reader's index."""
    cdef int64_t i, start
    cdef int32_t i32
    start = s.pos
    if read_long(s, &i) < 0:
        return -1
    if i < 0 or i >= a0:
        snprintf(s.msg, MSG, "invalid enum index %lld at byte %lld (the enum has %lld symbols)",
                 <long long>i, <long long>(start - s.base), <long long>a0)
        return fail(s)
    memcpy(&i32, s.blob_p[blob] + 4 * i, 4)
    if i32 < 0:
        snprintf(s.msg, MSG, "enum symbol %lld at byte %lld is not in the reader enum, which has no default",
                 <long long>i, <long long>(start - s.base))
        return fail(s)
    return push_fixed(s, c, &i32, 4)


cdef inline int read_bool(St* s, int64_t c) noexcept nogil:
    """One boolean byte (0 or 1: anything else is an error) into column ``c``."""
    cdef uint8_t b
    if need(s, 1) < 0:
        return -1
    b = s.buf[s.pos]
    if b > 1:
        snprintf(s.msg, MSG, "boolean byte %d is not 0 or 1 at byte %lld", <int>b, <long long>(s.pos - s.base))
        return fail(s)
    s.pos += 1
    return push_fixed(s, c, &b, 1)


cdef inline int leaf(St* s, const int64_t* nd) noexcept nogil:
    """The ops that read one scalar (the common case, kept out of run()'s large frame); 1: not a leaf op."""
    cdef int64_t op = nd[0], c = nd[1], a0 = nd[2], blob = nd[7]
    cdef int64_t v, i, start
    cdef int32_t i32
    cdef float f32
    cdef double f64
    cdef uint8_t b
    cdef Col* col
    if op == OP_INT or op == OP_LONG:
        if op == OP_INT:
            if read_int(s, &v) < 0:
                return -1
        elif read_long(s, &v) < 0:
            return -1
        if c < 0:
            return 0
        if a0 == T_I32:
            i32 = <int32_t>v
            return push_fixed(s, c, &i32, 4)
        if a0 == T_I64:
            return push_fixed(s, c, &v, 8)
        if a0 == T_F32:
            f32 = <float>v
            return push_fixed(s, c, &f32, 4)
        f64 = <double>v
        return push_fixed(s, c, &f64, 8)
    if op == OP_BYTES:
        return read_bytes(s, c, a0)
    if op == OP_NULL:
        if c >= 0:
            return append_null(s, c)
        return 0
    if op == OP_DOUBLE:
        if need(s, 8) < 0:
            return -1
        s.pos += 8
        return push_fixed(s, c, s.buf + s.pos - 8, 8)
    if op == OP_FLOAT:
        if need(s, 4) < 0:
            return -1
        s.pos += 4
        if c < 0:
            return 0
        if a0 == T_F32:
            return push_fixed(s, c, s.buf + s.pos - 4, 4)
        memcpy(&f32, s.buf + s.pos - 4, 4)
        f64 = <double>f32
        return push_fixed(s, c, &f64, 8)
    if op == OP_BOOL:
        return read_bool(s, c)
    if op == OP_FIXED:
        if need(s, a0) < 0:
            return -1
        s.pos += a0
        return push_fixed(s, c, s.buf + s.pos - a0, a0)
    if op == OP_ENUM:
        return read_enum(s, c, a0, blob)
    return 1


cdef int run(St* s, int64_t n, int depth) noexcept nogil:
    """The ops field() leaves to it: decimals, durations, arrays and maps, union branches, defaults, errors."""
    cdef const int64_t* nd = s.nodes + 8 * n
    cdef int64_t op = nd[0], c = nd[1], a0 = nd[2], a1 = nd[3], koff = nd[5], kn = nd[6], blob = nd[7]
    cdef int64_t v, i, count, start, j, width, item, total
    cdef int32_t i32
    cdef uint8_t b
    cdef uint8_t dec[32]
    cdef uint8_t mag[32]
    cdef const uint8_t* limit
    cdef uint32_t carry
    cdef uint32_t months, days, millis
    cdef int64_t nanos
    cdef Col* col
    cdef const uint8_t* saved_buf
    cdef int64_t saved_pos, saved_end, saved_base
    cdef int rc
    if op == OP_DEC_BYTES or op == OP_DEC_FIXED:
        start = s.pos
        if op == OP_DEC_BYTES:
            if read_len(s, &v) < 0:
                return -1
            width = a0
        else:
            v = a0
            if need(s, v) < 0:
                return -1
            width = a1
        s.pos += v
        if c < 0:
            return 0
        # big-endian two's complement of v bytes -> little-endian of width bytes; bytes beyond the width must
        # be sign extension
        b = 0xFF if v > 0 and (s.buf[s.pos - v] & 0x80) else 0
        memset(dec, b, width)
        for j in range(v):
            # byte j from the end of the value
            if j < width:
                dec[j] = s.buf[s.pos - 1 - j]
            elif s.buf[s.pos - 1 - j] != b:
                snprintf(s.msg, MSG, "decimal at byte %lld does not fit %lld bytes", <long long>(start - s.base),
                         <long long>width)
                return fail(s)
        if v > width and (dec[width - 1] & 0x80) != (b & 0x80):
            snprintf(s.msg, MSG, "decimal at byte %lld does not fit %lld bytes", <long long>(start - s.base),
                     <long long>width)
            return fail(s)
        # |value| < 10**precision (the limit's bytes are in the node's blob): Arrow rejects wider values
        memcpy(mag, dec, width)
        if mag[width - 1] & 0x80:
            j = 0
            carry = 1
            for j in range(width):
                carry += <uint8_t>(~mag[j])
                mag[j] = <uint8_t>(carry & 0xFF)
                carry >>= 8
        limit = s.blob_p[blob]
        j = width - 1
        while j >= 0 and mag[j] == limit[j]:
            j -= 1
        if j < 0 or mag[j] > limit[j]:
            snprintf(s.msg, MSG, "decimal at byte %lld has more than %lld digits", <long long>(start - s.base),
                     <long long>nd[4])
            return fail(s)
        return push_fixed(s, c, dec, width)
    if op == OP_DURATION:
        if need(s, 12) < 0:
            return -1
        memcpy(&months, s.buf + s.pos, 4)
        memcpy(&days, s.buf + s.pos + 4, 4)
        memcpy(&millis, s.buf + s.pos + 8, 4)
        s.pos += 12
        if c < 0:
            return 0
        i32 = <int32_t>months
        memcpy(dec, &i32, 4)
        i32 = <int32_t>days
        memcpy(dec + 4, &i32, 4)
        nanos = <int64_t>millis * 1000000
        memcpy(dec + 8, &nanos, 8)
        return push_fixed(s, c, dec, 16)
    if op == OP_ARRAY or op == OP_MAP:
        if depth >= MAX_DEPTH:
            snprintf(s.msg, MSG, "value nested deeper than %d levels at byte %lld", MAX_DEPTH,
                     <long long>(s.pos - s.base))
            return fail(s)
        item = s.kids[koff + (1 if op == OP_MAP else 0)]
        while True:
            start = s.pos
            if read_long(s, &count) < 0:
                return -1
            if count == 0:
                break
            if count < 0:
                if count == INT64_MIN:
                    snprintf(s.msg, MSG, "invalid block count %lld at byte %lld", <long long>count,
                             <long long>(start - s.base))
                    return fail(s)
                count = -count
                if read_long(s, &v) < 0:  # the block's size in bytes: only a skipper needs it
                    return -1
            if a0 > 0:
                if count > (s.end - s.pos) // a0:
                    snprintf(s.msg, MSG, "block of %lld items at byte %lld is longer than the %lld bytes left",
                             <long long>count, <long long>(start - s.base), <long long>(s.end - s.pos))
                    return fail(s)
            else:
                if count > s.zero_budget:
                    snprintf(s.msg, MSG, "block of %lld items at byte %lld exceeds the limit of %d empty items "
                             "per value", <long long>count, <long long>(start - s.base), ZERO_SIZE_ITEMS)
                    return fail(s)
                s.zero_budget -= count
            for j in range(count):
                if op == OP_MAP and field(s, s.kids[koff], depth + 1) < 0:
                    return -1
                if field(s, item, depth + 1) < 0:
                    return -1
        if c < 0:
            return 0
        col = &s.cols[c]
        if slot(s, col, 1) < 0:
            return -1
        total = s.cols[col.children[0]].length
        if total > INT32_MAX:
            snprintf(s.msg, MSG, "a column exceeds 2**31 items: decode fewer values at a time")
            return fail(s)
        return push_i32(s, &col.offs, <int32_t>total)
    if op == OP_BRANCH:
        col = &s.cols[c]
        if slot(s, col, 1) < 0 or push_byte(s, &col.data, <uint8_t>a0) < 0:
            return -1
        if push_i32(s, &col.offs, <int32_t>s.cols[col.children[a0]].length) < 0:
            return -1
        return field(s, s.kids[koff], depth + 1)
    if op == OP_DEFAULT:
        saved_buf, saved_pos, saved_end, saved_base = s.buf, s.pos, s.end, s.base
        s.buf, s.pos, s.end, s.base = s.blob_p[blob], 0, s.blob_n[blob], 0
        rc = field(s, s.kids[koff], depth + 1)
        s.buf, s.pos, s.end, s.base = saved_buf, saved_pos, saved_end, saved_base
        return rc
    if op == OP_ERROR:
        v = s.blob_n[blob] if s.blob_n[blob] < MSG - 1 else MSG - 1
        memcpy(s.msg, s.blob_p[blob], v)
        s.msg[v] = 0
        return fail(s)
    snprintf(s.msg, MSG, "corrupt program: op %lld", <long long>op)
    return fail(s)


cdef inline int scalar(St* s, int code, const int64_t* nd) noexcept nogil:
    """The scalar fast codes (field() and the record loop); 1: not one of them."""
    cdef int64_t v
    cdef int32_t i32
    cdef uint8_t b
    if code == F_LONG64:
        if read_long(s, &v) < 0:
            return -1
        return push_fixed(s, nd[1], &v, 8)
    elif code == F_INT32:
        if read_int(s, &v) < 0:
            return -1
        i32 = <int32_t>v
        return push_fixed(s, nd[1], &i32, 4)
    elif code == F_DOUBLE:
        if need(s, 8) < 0:
            return -1
        s.pos += 8
        return push_fixed(s, nd[1], s.buf + s.pos - 8, 8)
    elif code == F_FLOAT32:
        if need(s, 4) < 0:
            return -1
        s.pos += 4
        return push_fixed(s, nd[1], s.buf + s.pos - 4, 4)
    elif code == F_BOOL:
        return read_bool(s, nd[1])
    elif code == F_BYTES:
        return read_bytes(s, nd[1], nd[2])
    elif code == F_ENUM:
        return read_enum(s, nd[1], nd[2], nd[7])
    return 1


cdef int field(St* s, int64_t n, int depth) noexcept nogil:
    """Read node ``n``'s value: one switch on the node's fast code (set up by decode()) for the common ops,
    with the column and width known from the code; run() for the rest."""
    cdef const int64_t* nd = s.nodes + 8 * n
    cdef int code = s.fast[n]
    cdef int64_t v, j, start
    cdef int rc
    cdef int64_t kn
    cdef int kc
    cdef int32_t i32
    cdef const int64_t* kd
    if code == F_NULL:
        return append_null(s, nd[1])
    elif code == F_RECORD:
        if depth >= MAX_DEPTH:
            snprintf(s.msg, MSG, "value nested deeper than %d levels at byte %lld", MAX_DEPTH,
                     <long long>(s.pos - s.base))
            return fail(s)
        for j in range(nd[5], nd[5] + nd[6]):
            kn = s.kids[j]
            kc = s.fast[kn]
            kd = s.nodes + 8 * kn
            # the scalar fields inline (as scalar() does them): no call per field for the common ones
            if kc == F_LONG64:
                if read_long(s, &v) < 0:
                    return -1
                rc = push_fixed(s, kd[1], &v, 8)
            elif kc == F_INT32:
                if read_int(s, &v) < 0:
                    return -1
                i32 = <int32_t>v
                rc = push_fixed(s, kd[1], &i32, 4)
            elif kc == F_DOUBLE:
                if need(s, 8) < 0:
                    return -1
                s.pos += 8
                rc = push_fixed(s, kd[1], s.buf + s.pos - 8, 8)
            elif kc == F_BYTES:
                rc = read_bytes(s, kd[1], kd[2])
            elif kc == F_FLOAT32:
                if need(s, 4) < 0:
                    return -1
                s.pos += 4
                rc = push_fixed(s, kd[1], s.buf + s.pos - 4, 4)
            elif kc == F_BOOL or kc == F_ENUM:
                rc = scalar(s, kc, kd)
            else:
                rc = field(s, kn, depth + 1)
            if rc < 0:
                return -1
        if nd[1] >= 0:
            return slot(s, &s.cols[nd[1]], 1)
        return 0
    elif code == F_UNION:
        if depth >= MAX_DEPTH:
            snprintf(s.msg, MSG, "value nested deeper than %d levels at byte %lld", MAX_DEPTH,
                     <long long>(s.pos - s.base))
            return fail(s)
        start = s.pos
        if read_long(s, &v) < 0:
            return -1
        if v < 0 or v >= nd[6]:
            snprintf(s.msg, MSG, "invalid union index %lld at byte %lld (the union has %lld branches)",
                     <long long>v, <long long>(start - s.base), <long long>nd[6])
            return fail(s)
        kn = s.kids[nd[5] + v]
        kc = s.fast[kn]
        if F_LONG64 <= kc <= F_ENUM:
            return scalar(s, kc, s.nodes + 8 * kn)
        return field(s, kn, depth + 1)
    rc = scalar(s, code, nd)
    if rc != 1:
        return rc
    rc = leaf(s, nd)
    if rc != 1:
        return rc
    return run(s, n, depth)


cdef int fast_code(const int64_t* nd, const Col* cols, int64_t ncols) noexcept nogil:
    """The fast code of a node: an op whose column and target are the common ones, checked against the column
    it writes (kind and width), so field() never writes a value of the wrong width; 0: leave it to leaf/run."""
    cdef int64_t op = nd[0], c = nd[1], a0 = nd[2]
    cdef const Col* col
    if op == OP_RECORD:
        return F_RECORD
    if op == OP_UNION:
        return F_UNION
    if c < 0 or c >= ncols:
        return F_GENERIC
    col = &cols[c]
    if op == OP_NULL:
        return F_NULL
    if col.kind == K_VAR:
        if op == OP_BYTES:
            return F_BYTES
        return F_GENERIC
    if col.kind != K_FIXED:
        return F_GENERIC
    if op == OP_LONG and a0 == T_I64 and col.width == 8:
        return F_LONG64
    if op == OP_INT and a0 == T_I32 and col.width == 4:
        return F_INT32
    if op == OP_DOUBLE and a0 == T_F64 and col.width == 8:
        return F_DOUBLE
    if op == OP_FLOAT and a0 == T_F32 and col.width == 4:
        return F_FLOAT32
    if op == OP_BOOL and col.width == 1:
        return F_BOOL
    if op == OP_ENUM and col.width == 4:
        return F_ENUM
    return F_GENERIC


cdef class Chunk:
    """Memory a column was decoded into, handed on without a copy (buffer protocol, read-only); freed when the
    last Arrow buffer or numpy view of it goes away."""

    cdef uint8_t* p
    cdef Py_ssize_t n

    def __dealloc__(self):
        free(self.p)

    def __getbuffer__(self, Py_buffer* view, int flags):
        PyBuffer_FillInfo(view, self, <void*>(self.p if self.p != NULL else <uint8_t*>b""), self.n, 1, flags)

    def __releasebuffer__(self, Py_buffer* view):
        pass

    def __len__(self):
        return self.n


cdef Chunk take(Buf* b):
    """Move a buffer's memory into a Chunk (shrunk to its length when much was left over)."""
    cdef Chunk c = Chunk.__new__(Chunk)
    cdef uint8_t* q
    if b.p != NULL and b.n and b.cap > b.n + (b.n >> 2) + 4096:
        q = <uint8_t*>realloc(b.p, b.n)
        if q != NULL:
            b.p = q
    c.p = b.p
    c.n = b.n
    b.p = NULL
    b.n = 0
    b.cap = 0
    return c


cdef int decode_row(St* s, const uint8_t* data, int64_t start, int64_t end, const int64_t* root_ids,
                    const int64_t* root_nodes, int64_t nroots) noexcept nogil:
    cdef int64_t sid, k, node = -1
    if end - start < 5:
        snprintf(s.msg, MSG, "value of %lld bytes is shorter than the 5-byte Confluent header",
                 <long long>(end - start))
        return fail(s)
    if data[start] != 0:
        snprintf(s.msg, MSG, "bad magic byte %d (the Confluent wire format starts with 0)", <int>data[start])
        return fail(s)
    sid = <int32_t>((<uint32_t>data[start + 1] << 24) | (<uint32_t>data[start + 2] << 16)
                    | (<uint32_t>data[start + 3] << 8) | <uint32_t>data[start + 4])
    for k in range(nroots):
        if root_ids[k] == sid:
            node = root_nodes[k]
            break
    if node < 0:
        snprintf(s.msg, MSG, "unknown schema id %lld", <long long>sid)
        return fail(s)
    s.buf = data
    s.pos = start + 5
    s.end = end
    s.base = start
    s.zero_budget = ZERO_SIZE_ITEMS
    return field(s, node, 0)


def decode(cnp.ndarray nodes, cnp.ndarray kids, list blobs, list col_kinds, list col_widths, list col_children,
           int root_col, dict roots, data, cnp.ndarray offsets, valid, bint permissive):
    """As :func:`kafkawire.serde._avro_pure.decode` (same arguments, same results, same errors)."""
    cdef cnp.ndarray[cnp.int64_t, ndim=2, mode="c"] nodes_c = np.ascontiguousarray(nodes, dtype=np.int64)
    cdef cnp.ndarray[cnp.int32_t, ndim=1, mode="c"] kids_c = np.ascontiguousarray(kids, dtype=np.int32)
    cdef cnp.ndarray[cnp.uint8_t, ndim=1, mode="c"] fast_c = np.zeros(max(nodes.shape[0], 1), dtype=np.uint8)
    cdef cnp.ndarray[cnp.uint8_t, ndim=1, mode="c"] data_c = np.ascontiguousarray(data, dtype=np.uint8)
    cdef cnp.ndarray[cnp.int32_t, ndim=1, mode="c"] offs_c = np.ascontiguousarray(offsets, dtype=np.int32)
    cdef cnp.ndarray[cnp.uint8_t, ndim=1, mode="c"] valid_c
    cdef const uint8_t* validp = NULL
    cdef int ncols = len(col_kinds)
    cdef int64_t nblobs = len(blobs), nroots = len(roots), nrows = offs_c.shape[0] - 1
    cdef list children_arrays = []
    cdef cnp.ndarray[cnp.int32_t, ndim=1, mode="c"] ch
    cdef cnp.ndarray[cnp.int64_t, ndim=1, mode="c"] root_ids = np.array(list(roots.keys()) or [0], dtype=np.int64)
    cdef cnp.ndarray[cnp.int64_t, ndim=1, mode="c"] root_nodes = np.array(list(roots.values()) or [0], dtype=np.int64)
    cdef cnp.ndarray[cnp.int64_t, ndim=1, mode="c"] blob_n = np.zeros(max(nblobs, 1), dtype=np.int64)
    cdef const uint8_t** blob_p = NULL
    cdef int64_t* snap = NULL
    cdef St st
    cdef Col* col
    cdef int64_t row, k, start, end
    cdef int rc
    cdef const uint8_t* datap
    cdef const int32_t* offp
    cdef int64_t* ridp
    cdef int64_t* rnodep
    cdef list errors = []
    cdef list out = []
    if nrows < 0:
        raise ValueError("offsets must hold at least one element")
    if offs_c.shape[0] and (offs_c[0] < 0 or offs_c[nrows] > data_c.shape[0]):
        raise ValueError("offsets point outside the data")
    if nrows > 0 and np.any(np.diff(offs_c) < 0):
        raise ValueError("offsets must not decrease")
    if valid is not None:
        valid_c = np.ascontiguousarray(valid, dtype=np.uint8)
        if valid_c.shape[0] != nrows:
            raise ValueError("valid has the wrong length")
        validp = &valid_c[0] if nrows else NULL
    memset(&st, 0, sizeof(St))
    st.cols = <Col*>calloc(ncols if ncols else 1, sizeof(Col))
    blob_p = <const uint8_t**>calloc(nblobs if nblobs else 1, sizeof(uint8_t*))
    if permissive:
        snap = <int64_t*>calloc(4 * (ncols if ncols else 1), sizeof(int64_t))
    try:
        if st.cols == NULL or blob_p == NULL or (permissive and snap == NULL):
            raise MemoryError()
        for k in range(nblobs):
            b = blobs[k]
            blob_p[k] = <const uint8_t*><const char*>b
            blob_n[k] = len(b)
        for k in range(ncols):
            col = &st.cols[k]
            col.kind = col_kinds[k]
            col.width = col_widths[k]
            ch = np.array(col_children[k] or [0], dtype=np.int32)
            children_arrays.append(ch)
            col.children = &ch[0]
            col.nchildren = len(col_children[k])
            if reserve(&st, &col.offs, 4) < 0:
                raise MemoryError()
            memset(col.offs.p, 0, 4)
            col.offs.n = 4
        # Columns that get exactly one slot per value (the root, and fields of records that do) are sized once
        # for every row: no regrowth, no copy, fewer page faults.
        exact = [False] * ncols
        stack = [root_col]
        while stack:
            k = stack.pop()
            exact[k] = True
            if col_kinds[k] == K_STRUCT:
                stack.extend(col_children[k])
        for k in range(ncols):
            if not exact[k]:
                continue
            col = &st.cols[k]
            if reserve(&st, &col.valid, nrows) < 0 or reserve(&st, &col.offs, 4 * nrows + 4) < 0:
                raise MemoryError()
            if col.kind == K_FIXED and reserve(&st, &col.data, <size_t>col.width * nrows) < 0:
                raise MemoryError()
        st.nodes = <const int64_t*>&nodes_c[0, 0] if nodes_c.shape[0] else NULL
        for k in range(nodes_c.shape[0]):
            fast_c[k] = fast_code(st.nodes + 8 * k, st.cols, ncols)
        st.fast = &fast_c[0]
        st.kids = <const int32_t*>&kids_c[0]
        st.blob_p = blob_p
        st.blob_n = <const int64_t*>&blob_n[0]
        datap = &data_c[0] if data_c.shape[0] else <const uint8_t*>""
        offp = &offs_c[0]
        ridp = <int64_t*>&root_ids[0]
        rnodep = <int64_t*>&root_nodes[0]
        with nogil:
            for row in range(nrows):
                if validp != NULL and not validp[row]:
                    if append_null(&st, root_col) < 0:
                        break
                    continue
                if permissive:
                    for k in range(ncols):
                        snap[4 * k] = st.cols[k].length
                        snap[4 * k + 1] = st.cols[k].valid.n
                        snap[4 * k + 2] = st.cols[k].offs.n
                        snap[4 * k + 3] = st.cols[k].data.n
                rc = decode_row(&st, datap, offp[row], offp[row + 1], ridp, rnodep, nroots)
                if rc == 0:
                    continue
                if st.err == E_MEMORY:
                    break
                with gil:
                    errors.append((row, (<char*>st.msg).decode("utf-8", "replace")))
                st.err = 0
                if not permissive:
                    break
                for k in range(ncols):
                    st.cols[k].length = snap[4 * k]
                    st.cols[k].valid.n = snap[4 * k + 1]
                    st.cols[k].offs.n = snap[4 * k + 2]
                    st.cols[k].data.n = snap[4 * k + 3]
                if append_null(&st, root_col) < 0:
                    break
        if st.err == E_MEMORY:
            raise MemoryError("out of memory decoding Avro values")
        for k in range(ncols):
            col = &st.cols[k]
            out.append((col.length, take(&col.valid), take(&col.offs), take(&col.data)))
        return out, errors
    finally:
        if st.cols != NULL:
            for k in range(ncols):
                free(st.cols[k].valid.p)
                free(st.cols[k].data.p)
                free(st.cols[k].offs.p)
            free(st.cols)
        free(blob_p)
        free(snap)


def scan_ids(data, cnp.ndarray offsets, valid):
    """The distinct schema ids of the framed values (nulls, short values and a wrong magic byte skipped), in
    order of first appearance: one pass over the 5-byte headers, no per-value array."""
    cdef cnp.ndarray[cnp.uint8_t, ndim=1, mode="c"] data_c = np.ascontiguousarray(data, dtype=np.uint8)
    cdef cnp.ndarray[cnp.int32_t, ndim=1, mode="c"] offs_c = np.ascontiguousarray(offsets, dtype=np.int32)
    cdef cnp.ndarray[cnp.uint8_t, ndim=1, mode="c"] valid_c
    cdef const uint8_t* validp = NULL
    cdef int64_t nrows = offs_c.shape[0] - 1, row, start, ndata = data_c.shape[0]
    cdef int64_t sid, last = -1, k
    cdef int64_t seen[64]
    cdef int nseen = 0, found
    cdef const uint8_t* d = &data_c[0] if ndata else <const uint8_t*>b""
    out = []
    if valid is not None:
        valid_c = np.ascontiguousarray(valid, dtype=np.uint8)
        if valid_c.shape[0] != nrows:
            raise ValueError("valid has the wrong length")
        validp = &valid_c[0] if nrows else NULL
    for row in range(nrows):
        if validp != NULL and not validp[row]:
            continue
        start = offs_c[row]
        if offs_c[row + 1] - start < 5 or start < 0 or offs_c[row + 1] > ndata or d[start] != 0:
            continue
        sid = <int32_t>((<uint32_t>d[start + 1] << 24) | (<uint32_t>d[start + 2] << 16)
                        | (<uint32_t>d[start + 3] << 8) | <uint32_t>d[start + 4])
        if sid == last:
            continue
        last = sid
        found = 0
        for k in range(nseen):
            if seen[k] == sid:
                found = 1
                break
        if found:
            continue
        if sid in out:  # more distinct ids than the small table holds: rare, slower
            continue
        if nseen < 64:
            seen[nseen] = sid
            nseen += 1
        out.append(sid)
    return out
