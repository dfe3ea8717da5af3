# cython: language_level=3
"""The compiled Protobuf column decoder: one pass over Confluent-framed values into raw Arrow column buffers.

It runs the program of :mod:`kafkawire.serde.protobuf_plan` with the GIL released and returns per column
``(length, validity bytes, int32 offsets, data)``, exactly what the pure-Python reference
:mod:`kafkawire.serde._protobuf_pure` returns, with the same error messages. Every read is bounds-checked
against the end of the message it is in; lengths are checked before anything is read; nesting (messages and
groups) is bounded; a failed allocation is a MemoryError.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
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
    static int kwpb_utf8_valid(const unsigned char *s, long long n) {
        long long i = 0;
        while (i < n) {
            unsigned char c = s[i];
            if (c < 0x80) {
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
                if (c == 0xE0 && c1 < 0xA0) return 0;
                if (c == 0xED && c1 >= 0xA0) return 0;
                i += 3;
            } else if (c >= 0xF0 && c <= 0xF4) {
                if (i + 3 >= n) return 0;
                unsigned char c1 = s[i+1];
                if ((c1 & 0xC0) != 0x80 || (s[i+2] & 0xC0) != 0x80 || (s[i+3] & 0xC0) != 0x80) return 0;
                if (c == 0xF0 && c1 < 0x90) return 0;
                if (c == 0xF4 && c1 >= 0x90) return 0;
                i += 4;
            } else {
                return 0;
            }
        }
        return 1;
    }
    """
    int kwpb_utf8_valid(const unsigned char *s, long long n) nogil

# Keep equal to _protobuf_pure: the differential tests compare error messages word for word.
DEF MAX_DEPTH = 100
DEF MAX_INDEXES = 64
DEF INT32_MAX = 2147483647
DEF MSG = 320

# kafkawire/serde/protobuf_plan.py
DEF K_FIXED = 0
DEF K_VAR = 1
DEF K_STRUCT = 2
DEF K_LIST = 3
DEF K_MAP = 4

DEF O_INT32 = 0
DEF O_INT64 = 1
DEF O_UINT32 = 2
DEF O_UINT64 = 3
DEF O_SINT32 = 4
DEF O_SINT64 = 5
DEF O_BOOL = 6
DEF O_ENUM = 7
DEF O_FIXED32 = 8
DEF O_FIXED64 = 9
DEF O_STRING = 10
DEF O_BYTES = 11
DEF O_MSG = 12
DEF O_MAP = 13
DEF O_TIMESTAMP = 14
DEF O_DURATION = 15

DEF F_REPEATED = 1
DEF F_PRESENCE = 2
DEF F_PACKABLE = 4
DEF F_EMPTY_MESSAGE = 8

DEF E_DECODE = 1
DEF E_MEMORY = 2


cdef inline int wire_of(int64_t op) noexcept nogil:
    """The wire type of an op's values (protobuf_plan.OP_WIRE)."""
    if op < O_FIXED32:
        return 0
    if op == O_FIXED32:
        return 5
    if op == O_FIXED64:
        return 1
    return 2


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


cdef struct Rec:
    int64_t n
    uint64_t v
    int64_t a
    int64_t b
    Buf merged


cdef struct St:
    const int64_t* msgs
    const int64_t* slots
    const int32_t* lookup
    const uint8_t** blob_p
    const int64_t* blob_n
    Col* cols
    const uint8_t* buf
    Rec* recs
    int64_t rtop
    int64_t merges
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


cdef inline int fail(St* s) noexcept nogil:
    s.err = E_DECODE
    return -1


cdef inline int varint(St* s, int64_t* pos, int64_t end, uint64_t* out) noexcept nogil:
    cdef int64_t p = pos[0]
    cdef uint64_t z = 0
    cdef uint8_t c
    cdef int i
    if p < end:
        c = s.buf[p]
        if c < 0x80:
            pos[0] = p + 1
            out[0] = c
            return 0
    for i in range(10):
        if p + i >= end:
            snprintf(s.msg, MSG, "value truncated: varint runs past the end at byte %lld", <long long>(p + i))
            return fail(s)
        c = s.buf[p + i]
        z |= (<uint64_t>(c & 0x7F)) << (7 * i)
        if c < 0x80:
            pos[0] = p + i + 1
            out[0] = z
            return 0
    snprintf(s.msg, MSG, "varint longer than 10 bytes at byte %lld", <long long>p)
    return fail(s)


cdef inline int length(St* s, int64_t* pos, int64_t end, int64_t* out) noexcept nogil:
    cdef int64_t start = pos[0]
    cdef uint64_t n
    if varint(s, pos, end, &n) < 0:
        return -1
    if n > <uint64_t>(end - pos[0]):
        snprintf(s.msg, MSG, "length %lld at byte %lld runs past the end of its message (%lld bytes left)",
                 <long long>(<int64_t>n), <long long>start, <long long>(end - pos[0]))
        return fail(s)
    out[0] = <int64_t>n
    return 0


cdef int skip(St* s, int wt, uint64_t num, int64_t* pos, int64_t end, int64_t tagpos, int depth) noexcept nogil:
    """Skip an unknown field's value of wire type ``wt`` (a group to its end tag)."""
    cdef uint64_t v, tag
    cdef int64_t n, tp
    if wt == 0:
        return varint(s, pos, end, &v)
    if wt == 1 or wt == 5:
        n = 8 if wt == 1 else 4
        if n > end - pos[0]:
            snprintf(s.msg, MSG, "value truncated: %lld bytes needed at byte %lld, %lld left", <long long>n,
                     <long long>pos[0], <long long>(end - pos[0]))
            return fail(s)
        pos[0] += n
        return 0
    if wt == 2:
        if length(s, pos, end, &n) < 0:
            return -1
        pos[0] += n
        return 0
    if wt == 3:
        if depth >= MAX_DEPTH:
            snprintf(s.msg, MSG, "message nested deeper than %d levels at byte %lld", MAX_DEPTH, <long long>tagpos)
            return fail(s)
        while True:
            if pos[0] >= end:
                snprintf(s.msg, MSG, "group of field %llu at byte %lld is not closed", <unsigned long long>num,
                         <long long>tagpos)
                return fail(s)
            tp = pos[0]
            if varint(s, pos, end, &tag) < 0:
                return -1
            if (tag & 7) == 4:
                if (tag >> 3) != num:
                    snprintf(s.msg, MSG, "unexpected end-group tag at byte %lld", <long long>tp)
                    return fail(s)
                return 0
            if (tag >> 3) == 0 or (tag >> 3) > 0x1FFFFFFF:
                snprintf(s.msg, MSG, "invalid field number %llu at byte %lld", <unsigned long long>(tag >> 3),
                         <long long>tp)
                return fail(s)
            if skip(s, <int>(tag & 7), tag >> 3, pos, end, tp, depth + 1) < 0:
                return -1
    if wt == 4:
        snprintf(s.msg, MSG, "unexpected end-group tag at byte %lld", <long long>tagpos)
        return fail(s)
    snprintf(s.msg, MSG, "invalid wire type %d at byte %lld", wt, <long long>tagpos)
    return fail(s)


cdef inline int value(St* s, int wt, int64_t* pos, int64_t end, uint64_t* v, int64_t* a, int64_t* b) noexcept nogil:
    cdef int64_t n
    cdef uint32_t u32
    if wt == 0:
        return varint(s, pos, end, v)
    if wt == 5 or wt == 1:
        n = 4 if wt == 5 else 8
        if n > end - pos[0]:
            snprintf(s.msg, MSG, "value truncated: %lld bytes needed at byte %lld, %lld left", <long long>n,
                     <long long>pos[0], <long long>(end - pos[0]))
            return fail(s)
        if wt == 5:
            memcpy(&u32, s.buf + pos[0], 4)
            v[0] = u32
        else:
            memcpy(v, s.buf + pos[0], 8)
        pos[0] += n
        return 0
    if length(s, pos, end, &n) < 0:
        return -1
    a[0] = pos[0]
    b[0] = pos[0] + n
    pos[0] += n
    return 0


cdef inline int push_fixed(St* s, int64_t c, const void* src, size_t n) noexcept nogil:
    cdef Col* col = &s.cols[c]
    if col.valid.n >= col.valid.cap or col.data.n + n > col.data.cap:
        if reserve(s, &col.valid, 1) < 0 or reserve(s, &col.data, n) < 0:
            return -1
    col.valid.p[col.valid.n] = 1
    col.valid.n += 1
    col.length += 1
    memcpy(col.data.p + col.data.n, src, n)
    col.data.n += n
    return 0


cdef inline int push_var(St* s, int64_t c, const uint8_t* src, int64_t n) noexcept nogil:
    cdef Col* col = &s.cols[c]
    cdef int32_t i32
    if col.valid.n >= col.valid.cap or col.offs.n + 4 > col.offs.cap or col.data.n + n > col.data.cap:
        if reserve(s, &col.valid, 1) < 0 or reserve(s, &col.offs, 4) < 0 or reserve(s, &col.data, n) < 0:
            return -1
    if col.data.n + n > INT32_MAX:
        snprintf(s.msg, MSG, "a column exceeds 2 GiB of data: decode fewer values at a time")
        return fail(s)
    col.valid.p[col.valid.n] = 1
    col.valid.n += 1
    col.length += 1
    if n:
        memcpy(col.data.p + col.data.n, src, n)
    col.data.n += n
    i32 = <int32_t>col.data.n
    memcpy(col.offs.p + col.offs.n, &i32, 4)
    col.offs.n += 4
    return 0


cdef int push_null(St* s, int64_t c) noexcept nogil:
    cdef Col* col = &s.cols[c]
    cdef int32_t last
    cdef int i
    if reserve(s, &col.valid, 1) < 0:
        return -1
    col.valid.p[col.valid.n] = 0
    col.valid.n += 1
    col.length += 1
    if col.kind == K_FIXED:
        if reserve(s, &col.data, col.width) < 0:
            return -1
        memset(col.data.p + col.data.n, 0, col.width)
        col.data.n += col.width
    elif col.kind == K_STRUCT:
        for i in range(col.nchildren):
            if push_null(s, col.children[i]) < 0:
                return -1
    else:
        if reserve(s, &col.offs, 4) < 0:
            return -1
        memcpy(&last, col.offs.p + col.offs.n - 4, 4)
        memcpy(col.offs.p + col.offs.n, &last, 4)
        col.offs.n += 4
    return 0


cdef inline int close_list(St* s, int64_t c) noexcept nogil:
    cdef Col* col = &s.cols[c]
    cdef int64_t total = s.cols[col.children[0]].length
    cdef int32_t i32
    if total > INT32_MAX:
        snprintf(s.msg, MSG, "a column exceeds 2**31 items: decode fewer values at a time")
        return fail(s)
    if reserve(s, &col.valid, 1) < 0 or reserve(s, &col.offs, 4) < 0:
        return -1
    col.valid.p[col.valid.n] = 1
    col.valid.n += 1
    col.length += 1
    i32 = <int32_t>total
    memcpy(col.offs.p + col.offs.n, &i32, 4)
    col.offs.n += 4
    return 0


cdef int instant(St* s, int64_t a, int64_t b, int64_t* out) noexcept nogil:
    """A Timestamp / Duration payload as microseconds (seconds * 10**6 + nanos / 1000, as Spark)."""
    cdef int64_t seconds = 0, p = a, tp
    cdef int32_t nanos = 0
    cdef uint64_t tag, v, num
    cdef int wt
    while p < b:
        tp = p
        if varint(s, &p, b, &tag) < 0:
            return -1
        num = tag >> 3
        wt = <int>(tag & 7)
        if num == 0 or num > 0x1FFFFFFF:
            snprintf(s.msg, MSG, "invalid field number %llu at byte %lld", <unsigned long long>num, <long long>tp)
            return fail(s)
        if wt == 0 and (num == 1 or num == 2):
            if varint(s, &p, b, &v) < 0:
                return -1
            if num == 1:
                seconds = <int64_t>v
            else:
                nanos = <int32_t>(<uint32_t>v)
        elif skip(s, wt, num, &p, b, tp, 1) < 0:
            return -1
    if seconds < -9223372036854LL or seconds > 9223372036854LL:  # |seconds| * 10**6 fits an int64
        snprintf(s.msg, MSG, "timestamp or duration of %lld seconds at byte %lld is out of range",
                 <long long>seconds, <long long>a)
        return fail(s)
    out[0] = seconds * 1000000 + nanos // 1000 if nanos >= 0 else seconds * 1000000 - ((-<int64_t>nanos) // 1000)
    return 0


cdef inline int put(St* s, const int64_t* sl, int64_t c, uint64_t v, int64_t a, int64_t b, int depth) noexcept nogil:
    """Slot ``sl``'s value into column ``c``: ``v`` (varint or fixed bits) or the payload ``a``..``b``."""
    cdef int64_t op = sl[1]
    cdef int32_t i32
    cdef uint32_t u32
    cdef int64_t i64
    cdef uint8_t b8
    if op == O_INT32 or op == O_ENUM:
        i32 = <int32_t>(<uint32_t>v)
        return push_fixed(s, c, &i32, 4)
    if op == O_INT64 or op == O_UINT64 or op == O_FIXED64:
        return push_fixed(s, c, &v, 8)
    if op == O_UINT32 or op == O_FIXED32:
        u32 = <uint32_t>v
        return push_fixed(s, c, &u32, 4)
    if op == O_SINT32:
        u32 = <uint32_t>v
        i32 = <int32_t>((u32 >> 1) ^ (-(u32 & 1)))
        return push_fixed(s, c, &i32, 4)
    if op == O_SINT64:
        i64 = <int64_t>((v >> 1) ^ (-(v & 1)))
        return push_fixed(s, c, &i64, 8)
    if op == O_BOOL:
        b8 = 1 if v else 0
        return push_fixed(s, c, &b8, 1)
    if op == O_STRING or op == O_BYTES:
        if op == O_STRING and not kwpb_utf8_valid(s.buf + a, b - a):
            snprintf(s.msg, MSG, "invalid UTF-8 in a string at byte %lld", <long long>a)
            return fail(s)
        return push_var(s, c, s.buf + a, b - a)
    if op == O_MSG or op == O_MAP:
        return message(s, sl[4], a, b, depth + 1)
    if instant(s, a, b, &i64) < 0:
        return -1
    return push_fixed(s, c, &i64, 8)


cdef inline int64_t find_slot(St* s, const int64_t* md, uint64_t num) noexcept nogil:
    cdef int64_t j
    cdef int64_t ln = md[4]
    if ln >= 0:
        if num < <uint64_t>ln:
            return s.lookup[md[3] + <int64_t>num]
        return -1
    for j in range(md[2]):
        if s.slots[8 * (md[1] + j)] == <int64_t>num:
            return j
    return -1


cdef int scan(St* s, const int64_t* md, Rec* rec, int64_t start, int64_t end, int depth) noexcept nogil:
    """Scan one message's fields: singular ones recorded (last wins; message fields' payloads gathered for
    the merge), repeated ones appended."""
    cdef int64_t p = start, tp, k, j, item, pend, ln2, a = 0, b = 0
    cdef uint64_t tag, num, v = 0
    cdef int wt, expect
    cdef const int64_t* sl
    cdef int64_t op, flags
    cdef Rec* r
    cdef int64_t nslots = md[2]
    while p < end:
        tp = p
        if varint(s, &p, end, &tag) < 0:
            return -1
        num = tag >> 3
        wt = <int>(tag & 7)
        if num == 0 or num > 0x1FFFFFFF:
            snprintf(s.msg, MSG, "invalid field number %llu at byte %lld", <unsigned long long>num, <long long>tp)
            return fail(s)
        k = find_slot(s, md, num)
        if k < 0:
            if skip(s, wt, num, &p, end, tp, depth) < 0:
                return -1
            continue
        sl = s.slots + 8 * (md[1] + k)
        op = sl[1]
        flags = sl[3]
        expect = wire_of(op)
        if flags & F_REPEATED:
            item = sl[2] if op == O_MAP else s.cols[sl[2]].children[0]
            if wt == expect:
                if value(s, wt, &p, end, &v, &a, &b) < 0 or put(s, sl, item, v, a, b, depth) < 0:
                    return -1
            elif wt == 2 and (flags & F_PACKABLE):
                if length(s, &p, end, &ln2) < 0:
                    return -1
                pend = p + ln2
                if expect != 0 and ln2 % (4 if expect == 5 else 8):
                    snprintf(s.msg, MSG, "packed field at byte %lld does not end on a value boundary", <long long>tp)
                    return fail(s)
                while p < pend:
                    if value(s, expect, &p, pend, &v, &a, &b) < 0 or put(s, sl, item, v, a, b, depth) < 0:
                        return -1
            elif skip(s, wt, num, &p, end, tp, depth) < 0:
                return -1
            continue
        if wt != expect:
            if skip(s, wt, num, &p, end, tp, depth) < 0:
                return -1
            continue
        if value(s, wt, &p, end, &v, &a, &b) < 0:
            return -1
        r = &rec[k]
        if r.n and (op == O_MSG or op == O_TIMESTAMP or op == O_DURATION):
            # a message field again: merge, by decoding the concatenation of its payloads (the spec)
            if r.merged.cap == 0:
                s.merges += 1
            if r.a != -1 and r.b > r.a:  # the first payload, the first time round
                if reserve(s, &r.merged, r.b - r.a) < 0:
                    return -1
                memcpy(r.merged.p, s.buf + r.a, r.b - r.a)
                r.merged.n = r.b - r.a
            if b > a:
                if reserve(s, &r.merged, b - a) < 0:
                    return -1
                memcpy(r.merged.p + r.merged.n, s.buf + a, b - a)
                r.merged.n += b - a
            r.n += 1
            r.a = -1  # marks "merged" (the payload lives in r.merged)
        else:
            r.n += 1
            r.v = v
            r.a = a
            r.b = b
        if sl[5] >= 0:  # a oneof member clears the others
            for j in range(nslots):
                if j != k and s.slots[8 * (md[1] + j) + 5] == sl[5]:
                    rec[j].n = 0
                    rec[j].merged.n = 0
    return 0


cdef int emit(St* s, const int64_t* md, Rec* rec, int64_t end, int depth) noexcept nogil:
    cdef int64_t k, c, op, flags
    cdef int32_t i32
    cdef const int64_t* sl
    cdef Rec* r
    cdef const uint8_t* saved
    cdef int rc
    for k in range(md[2]):
        sl = s.slots + 8 * (md[1] + k)
        op = sl[1]
        c = sl[2]
        flags = sl[3]
        r = &rec[k]
        if flags & F_REPEATED:
            rc = close_list(s, c)
        elif r.n and (op == O_INT64 or op == O_UINT64 or op == O_FIXED64):
            rc = push_fixed(s, c, &r.v, 8)
        elif r.n and (op == O_INT32 or op == O_ENUM):
            i32 = <int32_t>(<uint32_t>r.v)
            rc = push_fixed(s, c, &i32, 4)
        elif r.n and op == O_STRING and r.a >= 0:
            if not kwpb_utf8_valid(s.buf + r.a, r.b - r.a):
                snprintf(s.msg, MSG, "invalid UTF-8 in a string at byte %lld", <long long>r.a)
                return fail(s)
            rc = push_var(s, c, s.buf + r.a, r.b - r.a)
        elif r.n:
            if r.a == -1:
                saved = s.buf
                s.buf = r.merged.p if r.merged.p != NULL else <const uint8_t*>b""
                rc = put(s, sl, c, 0, 0, <int64_t>r.merged.n, depth)
                s.buf = saved
            else:
                rc = put(s, sl, c, r.v, r.a, r.b, depth)
        elif flags & F_EMPTY_MESSAGE:
            rc = put(s, sl, c, 0, end, end, depth)
        elif (flags & F_PRESENCE) or op == O_MSG or op == O_TIMESTAMP or op == O_DURATION:
            rc = push_null(s, c)
        elif op == O_STRING or op == O_BYTES:
            if sl[7] >= 0:
                rc = push_var(s, c, s.blob_p[sl[7]], s.blob_n[sl[7]])
            else:
                rc = push_var(s, c, NULL, 0)
        else:
            rc = put(s, sl, c, <uint64_t>sl[6], 0, 0, depth)
        if rc < 0:
            return -1
    if md[0] >= 0:
        c = md[0]
        if reserve(s, &s.cols[c].valid, 1) < 0:
            return -1
        s.cols[c].valid.p[s.cols[c].valid.n] = 1
        s.cols[c].valid.n += 1
        s.cols[c].length += 1
    return 0


cdef int message(St* s, int64_t m, int64_t start, int64_t end, int depth) noexcept nogil:
    """Decode message ``m`` from ``start``..``end``: scan, then write every slot."""
    cdef const int64_t* md = s.msgs + 5 * m
    cdef int64_t n = md[2], k
    cdef Rec* rec
    cdef int rc
    if depth >= MAX_DEPTH:
        snprintf(s.msg, MSG, "message nested deeper than %d levels at byte %lld", MAX_DEPTH, <long long>start)
        return fail(s)
    cdef int64_t merges = s.merges
    rec = s.recs + s.rtop
    s.rtop += n
    # merged buffers stay NULL between messages (freed below): only the counts need clearing
    for k in range(n):
        rec[k].n = 0
    rc = scan(s, md, rec, start, end, depth)
    if rc == 0:
        rc = emit(s, md, rec, end, depth)
    if s.merges != merges:  # a message field came twice here (rare): free the concatenations
        for k in range(n):
            free(rec[k].merged.p)
            rec[k].merged.p = NULL
            rec[k].merged.n = 0
            rec[k].merged.cap = 0
        s.merges = merges
    s.rtop -= n
    return rc


cdef inline int header(St* s, const uint8_t* d, int64_t n, int64_t* sid, int64_t* idx_end) noexcept nogil:
    """The schema id and where the message indexes end (the message starts)."""
    cdef int64_t pos = 5, count, j
    cdef uint64_t z = 0
    cdef int i
    cdef uint8_t c
    if n < 5:
        snprintf(s.msg, MSG, "value of %lld bytes is shorter than the 5-byte Confluent header", <long long>n)
        return fail(s)
    if d[0] != 0:
        snprintf(s.msg, MSG, "bad magic byte %d (the Confluent wire format starts with 0)", <int>d[0])
        return fail(s)
    sid[0] = <int32_t>((<uint32_t>d[1] << 24) | (<uint32_t>d[2] << 16) | (<uint32_t>d[3] << 8) | <uint32_t>d[4])
    count = -1
    j = 0
    while True:
        z = 0
        for i in range(11):
            if i == 10 or pos >= n:
                snprintf(s.msg, MSG, "message indexes run past the end of the value")
                return fail(s)
            c = d[pos]
            pos += 1
            z |= (<uint64_t>(c & 0x7F)) << (7 * i)
            if c < 0x80:
                break
        if count < 0:
            count = <int64_t>((z >> 1) ^ (-(z & 1)))
            if count == 0:
                break
            if count < 0 or count > MAX_INDEXES:
                snprintf(s.msg, MSG, "message index count %lld is not between 1 and %d", <long long>count,
                         MAX_INDEXES)
                return fail(s)
        else:
            j += 1
            if j == count:
                break
    idx_end[0] = pos
    return 0


cdef class Chunk:
    """Memory a column was decoded into, handed on without a copy (buffer protocol, read-only)."""

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
    cdef Chunk c = Chunk.__new__(Chunk)
    c.p = b.p
    c.n = b.n
    b.p = NULL
    b.n = 0
    b.cap = 0
    return c


def scan_heads(data, cnp.ndarray offsets, valid):
    """As :func:`kafkawire.serde._protobuf_pure.scan_heads`."""
    cdef cnp.ndarray[cnp.uint8_t, ndim=1, mode="c"] data_c = np.ascontiguousarray(data, dtype=np.uint8)
    cdef cnp.ndarray[cnp.int32_t, ndim=1, mode="c"] offs_c = np.ascontiguousarray(offsets, dtype=np.int32)
    cdef cnp.ndarray[cnp.uint8_t, ndim=1, mode="c"] valid_c
    cdef const uint8_t* validp = NULL
    cdef int64_t nrows = offs_c.shape[0] - 1, row, start, end, ndata = data_c.shape[0]
    cdef int64_t sid, idx_end, last_sid = -1, last_n = -1
    cdef const uint8_t* d = &data_c[0] if ndata else <const uint8_t*>b""
    cdef const uint8_t* last_p = NULL
    cdef St st
    seen = {}
    memset(&st, 0, sizeof(St))
    if valid is not None:
        valid_c = np.ascontiguousarray(valid, dtype=np.uint8)
        if valid_c.shape[0] != nrows:
            raise ValueError("valid has the wrong length")
        validp = &valid_c[0] if nrows else NULL
    for row in range(nrows):
        if validp != NULL and not validp[row]:
            continue
        start = offs_c[row]
        end = offs_c[row + 1]
        if start < 0 or end > ndata or end < start:
            continue
        if header(&st, d + start, end - start, &sid, &idx_end) < 0:
            continue
        # the same head as the last value (the common case): no dict lookup
        if sid == last_sid and idx_end - 5 == last_n and memcmp_eq(d + start + 5, last_p, last_n):
            continue
        last_sid, last_n, last_p = sid, idx_end - 5, d + start + 5
        key = (int(sid), bytes(d[start + 5:start + idx_end]))
        if key not in seen:
            seen[key] = None
    return list(seen)


cdef inline bint memcmp_eq(const uint8_t* a, const uint8_t* b, int64_t n) noexcept nogil:
    cdef int64_t i
    for i in range(n):
        if a[i] != b[i]:
            return False
    return True


def decode(cnp.ndarray msgs, cnp.ndarray slots, cnp.ndarray lookup, list blobs, list col_kinds, list col_widths,
           list col_children, int root_col, dict roots, data, cnp.ndarray offsets, valid, bint permissive):
    """As :func:`kafkawire.serde._protobuf_pure.decode` (same arguments, same results, same errors)."""
    cdef cnp.ndarray[cnp.int64_t, ndim=2, mode="c"] msgs_c = np.ascontiguousarray(msgs, dtype=np.int64)
    cdef cnp.ndarray[cnp.int64_t, ndim=2, mode="c"] slots_c = np.ascontiguousarray(slots, dtype=np.int64)
    cdef cnp.ndarray[cnp.int32_t, ndim=1, mode="c"] lookup_c = np.ascontiguousarray(lookup, dtype=np.int32)
    cdef cnp.ndarray[cnp.uint8_t, ndim=1, mode="c"] data_c = np.ascontiguousarray(data, dtype=np.uint8)
    cdef cnp.ndarray[cnp.int32_t, ndim=1, mode="c"] offs_c = np.ascontiguousarray(offsets, dtype=np.int32)
    cdef cnp.ndarray[cnp.uint8_t, ndim=1, mode="c"] valid_c
    cdef const uint8_t* validp = NULL
    cdef int ncols = len(col_kinds)
    cdef int64_t nblobs = len(blobs), nrows = offs_c.shape[0] - 1, nroots = len(roots)
    cdef list children_arrays = []
    cdef cnp.ndarray[cnp.int32_t, ndim=1, mode="c"] ch
    cdef cnp.ndarray[cnp.int64_t, ndim=1, mode="c"] blob_n = np.zeros(max(nblobs, 1), dtype=np.int64)
    # roots as parallel arrays: schema id, index bytes (offset, length into one buffer), message (-1: error k)
    keys = list(roots.keys())
    cdef cnp.ndarray[cnp.int64_t, ndim=1, mode="c"] r_sid = np.array([key[0] for key in keys] or [0], dtype=np.int64)
    cdef cnp.ndarray[cnp.int64_t, ndim=1, mode="c"] r_msg = np.array(
        [roots[key] if not isinstance(roots[key], str) else -1 for key in keys] or [0], dtype=np.int64)
    idx_all = b"".join(key[1] for key in keys)
    cdef cnp.ndarray[cnp.int64_t, ndim=1, mode="c"] r_off = np.array(
        np.cumsum([0] + [len(key[1]) for key in keys])[:len(keys)] if keys else [0], dtype=np.int64)
    cdef cnp.ndarray[cnp.int64_t, ndim=1, mode="c"] r_len = np.array([len(key[1]) for key in keys] or [0],
                                                                     dtype=np.int64)
    cdef const uint8_t* idxp = <const uint8_t*>(<const char*>idx_all) if idx_all else <const uint8_t*>b""
    cdef const uint8_t** blob_p = NULL
    cdef int64_t* snap = NULL
    cdef St st
    cdef Col* col
    cdef int64_t row, k, start, end, sid, idx_end, found, total_slots = slots_c.shape[0]
    cdef int rc
    cdef const uint8_t* datap
    cdef const int32_t* offp
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
    st.recs = <Rec*>calloc(total_slots + 1, sizeof(Rec))
    blob_p = <const uint8_t**>calloc(nblobs if nblobs else 1, sizeof(uint8_t*))
    if permissive:
        snap = <int64_t*>calloc(4 * (ncols if ncols else 1), sizeof(int64_t))
    try:
        if st.cols == NULL or st.recs == NULL or blob_p == NULL or (permissive and snap == NULL):
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
        # the root and the fields of messages that get one slot per value: sized once for every row
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
        st.msgs = <const int64_t*>&msgs_c[0, 0]
        st.slots = <const int64_t*>&slots_c[0, 0]
        st.lookup = <const int32_t*>&lookup_c[0]
        st.blob_p = blob_p
        st.blob_n = <const int64_t*>&blob_n[0]
        datap = &data_c[0] if data_c.shape[0] else <const uint8_t*>b""
        offp = &offs_c[0]
        with nogil:
            for row in range(nrows):
                if validp != NULL and not validp[row]:
                    if push_null(&st, root_col) < 0:
                        break
                    continue
                if permissive:
                    for k in range(ncols):
                        snap[4 * k] = st.cols[k].length
                        snap[4 * k + 1] = st.cols[k].valid.n
                        snap[4 * k + 2] = st.cols[k].offs.n
                        snap[4 * k + 3] = st.cols[k].data.n
                start = offp[row]
                end = offp[row + 1]
                rc = header(&st, datap + start, end - start, &sid, &idx_end)
                found = -1
                if rc == 0:
                    for k in range(nroots):
                        if r_sid[k] == sid and r_len[k] == idx_end - 5 and memcmp_eq(
                                idxp + r_off[k], datap + start + 5, r_len[k]):
                            found = k
                            break
                    if found < 0:
                        snprintf(st.msg, MSG, "no program for schema id %lld", <long long>sid)
                        rc = fail(&st)
                    elif r_msg[found] < 0:
                        rc = -1
                        st.err = E_DECODE
                        st.msg[0] = 0
                    else:
                        st.buf = datap + start
                        st.rtop = 0
                        rc = message(&st, r_msg[found], idx_end, end - start, 0)
                if rc == 0:
                    continue
                if st.err == E_MEMORY:
                    break
                with gil:
                    if found >= 0 and r_msg[found] < 0:
                        errors.append((row, roots[keys[found]]))
                    else:
                        errors.append((row, (<char*>st.msg).decode("utf-8", "replace")))
                st.err = 0
                if not permissive:
                    break
                for k in range(ncols):
                    st.cols[k].length = snap[4 * k]
                    st.cols[k].valid.n = snap[4 * k + 1]
                    st.cols[k].offs.n = snap[4 * k + 2]
                    st.cols[k].data.n = snap[4 * k + 3]
                if push_null(&st, root_col) < 0:
                    break
        if st.err == E_MEMORY:
            raise MemoryError("out of memory decoding Protobuf values")
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
        free(st.recs)
        free(blob_p)
        free(snap)
