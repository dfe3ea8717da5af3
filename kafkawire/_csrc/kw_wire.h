/*
 * kw_wire.h -- byte-order helpers, bounds-checked varints and the magic-2 record parser of kafkawire.
 *
 * Everything here works on raw pointers with explicit bounds and never touches Python objects, so the
 * callers in _codec.pyx run it without the GIL. Every varint byte is checked against the end of the
 * field it belongs to (a forged length must never make us read past a buffer), and every length is
 * checked against the bytes that remain before it is used.
 */
#ifndef KW_WIRE_H
#define KW_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define KW_LIKELY(x) __builtin_expect(!!(x), 1)
#define KW_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define KW_INLINE static inline __attribute__((always_inline))
#else
#define KW_LIKELY(x) (x)
#define KW_UNLIKELY(x) (x)
#define KW_INLINE static inline
#endif

/* ------------------------------------------------------------------ big-endian loads and stores */
KW_INLINE uint16_t kw_be16(const uint8_t *p) { return (uint16_t)(((uint16_t)p[0] << 8) | p[1]); }
KW_INLINE uint32_t kw_be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}
KW_INLINE uint64_t kw_be64(const uint8_t *p) { return ((uint64_t)kw_be32(p) << 32) | kw_be32(p + 4); }
KW_INLINE int16_t kw_be_i16(const uint8_t *p) { return (int16_t)kw_be16(p); }
KW_INLINE int32_t kw_be_i32(const uint8_t *p) { return (int32_t)kw_be32(p); }
KW_INLINE int64_t kw_be_i64(const uint8_t *p) { return (int64_t)kw_be64(p); }

KW_INLINE void kw_put_be16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
KW_INLINE void kw_put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
KW_INLINE void kw_put_be64(uint8_t *p, uint64_t v) {
    kw_put_be32(p, (uint32_t)(v >> 32));
    kw_put_be32(p + 4, (uint32_t)v);
}

/* ------------------------------------------------------------------ varints
 * Readers return 0 on success, KW_VARINT_TRUNCATED when the bytes run out before the last byte, and
 * KW_VARINT_OVERFLOW when the value does not fit: the 5th byte of a 32-bit varint may carry 4 bits
 * (<= 0x0F, and so no continuation bit), the 10th byte of a varlong 1 bit (<= 0x01). */
#define KW_VARINT_TRUNCATED 1
#define KW_VARINT_OVERFLOW 2

KW_INLINE int kw_get_uvarint32(const uint8_t *p, size_t end, size_t *pos, uint32_t *out) {
    size_t i = *pos;
    if (KW_UNLIKELY(i >= end)) return KW_VARINT_TRUNCATED;
    uint8_t b = p[i];
    if (KW_LIKELY(!(b & 0x80))) {
        *out = b;
        *pos = i + 1;
        return 0;
    }
    uint32_t v = b & 0x7F;
    for (int k = 1; k < 5; k++) {
        if (KW_UNLIKELY(++i >= end)) return KW_VARINT_TRUNCATED;
        b = p[i];
        if (k == 4 && b > 0x0F) return KW_VARINT_OVERFLOW;
        v |= (uint32_t)(b & 0x7F) << (7 * k);
        if (!(b & 0x80)) {
            *out = v;
            *pos = i + 1;
            return 0;
        }
    }
    return KW_VARINT_OVERFLOW; /* not reached: the 5th byte check covers the continuation bit */
}

KW_INLINE int kw_get_uvarint64(const uint8_t *p, size_t end, size_t *pos, uint64_t *out) {
    size_t i = *pos;
    if (KW_UNLIKELY(i >= end)) return KW_VARINT_TRUNCATED;
    uint8_t b = p[i];
    if (KW_LIKELY(!(b & 0x80))) {
        *out = b;
        *pos = i + 1;
        return 0;
    }
    uint64_t v = b & 0x7F;
    for (int k = 1; k < 10; k++) {
        if (KW_UNLIKELY(++i >= end)) return KW_VARINT_TRUNCATED;
        b = p[i];
        if (k == 9 && b > 0x01) return KW_VARINT_OVERFLOW;
        v |= (uint64_t)(b & 0x7F) << (7 * k);
        if (!(b & 0x80)) {
            *out = v;
            *pos = i + 1;
            return 0;
        }
    }
    return KW_VARINT_OVERFLOW;
}

KW_INLINE int kw_get_varint(const uint8_t *p, size_t end, size_t *pos, int32_t *out) {
    uint32_t u = 0;
    int rc = kw_get_uvarint32(p, end, pos, &u);
    *out = (int32_t)((u >> 1) ^ (0u - (u & 1)));
    return rc;
}

KW_INLINE int kw_get_varlong(const uint8_t *p, size_t end, size_t *pos, int64_t *out) {
    uint64_t u = 0;
    int rc = kw_get_uvarint64(p, end, pos, &u);
    *out = (int64_t)((u >> 1) ^ (0ull - (u & 1)));
    return rc;
}

KW_INLINE uint32_t kw_zigzag32(int32_t v) { return ((uint32_t)v << 1) ^ (uint32_t)(v >> 31); }
KW_INLINE uint64_t kw_zigzag64(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

KW_INLINE size_t kw_uvarint_size(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Write an unsigned varint at p (room for 10 bytes assumed); returns the bytes written. */
KW_INLINE size_t kw_put_uvarint(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* ------------------------------------------------------------------ magic-2 records -> columns */

/* Output columns, allocated by the caller from counts checked against the input size. */
typedef struct {
    int64_t *offset;
    int64_t *timestamp;
    int8_t *ttype;
    int32_t *batch_index;
    int32_t *hdr_off; /* per record + 1, zero-filled: written only once headers exist (hdr_cap > 0) */
    int32_t *key_off;
    uint8_t *key_data;
    uint8_t *key_null; /* zero-filled null masks: only nulls are written, so a topic without nulls */
    int32_t *val_off;  /* never touches (and never faults in) these pages */
    uint8_t *val_data;
    uint8_t *val_null;
    /* header columns: hdr_cap == 0 until the first header is met (most topics have none) */
    int32_t *hk_off;
    uint8_t *hk_data;
    int32_t *hv_off;
    uint8_t *hv_data;
    uint8_t *hv_null;
    int64_t rec_cap;
    int64_t hdr_cap;
    /* byte capacities of the data buffers (each allocated KW_COPY_SLACK larger) */
    int64_t key_cap, val_cap, hk_cap, hv_cap;
    /* on KW_NEED_SPACE / KW_NEED_HEADERS: where the record that did not fit starts in the section, and
     * (KW_NEED_SPACE) the key and value fill levels that record needed */
    size_t stop_pos;
    int64_t need_key, need_val;
    /* fill levels */
    int64_t n;
    int64_t key_len, val_len;
    int64_t nh, hk_len, hv_len;
    int64_t key_nulls, val_nulls, hv_nulls;
} kw_cols;

/* Parser results. */
#define KW_OK 0
#define KW_CORRUPT 1
#define KW_NEED_HEADERS 2 /* header arrays too small: caller grows them, restores the fill levels, retries */
#define KW_NEED_SPACE 3   /* key or value buffer too small: same protocol as KW_NEED_HEADERS */

typedef struct {
    int64_t base_offset;
    int64_t base_timestamp;
    int64_t max_timestamp;
    int64_t fetch_offset;
    int32_t batch_row;
    int log_append_time;
} kw_batch_ctx;

#define KW_FAIL(msg)       \
    do {                   \
        *err = (msg);      \
        return KW_CORRUPT; \
    } while (0)

#define KW_VARINT_MSG(rc, what) \
    ((rc) == KW_VARINT_TRUNCATED ? what " varint runs past the end of its record" : what " varint overflows")

/* Output data buffers are allocated this many bytes larger than their bound, so that short copies can be
 * done as whole 32-byte blocks (no call into memcpy for every key and value). */
#define KW_COPY_SLACK 32

#if defined(__GNUC__) || defined(__clang__)
#define KW_RESTRICT __restrict__
#else
#define KW_RESTRICT
#endif

/* Copy n bytes; may write up to 31 bytes past dst + n (into the slack) and read past src + n when that
 * stays before src_end. */
KW_INLINE void kw_copy(uint8_t *KW_RESTRICT dst, const uint8_t *KW_RESTRICT src, size_t n, const uint8_t *src_end) {
    if (KW_LIKELY(n <= 256 && (size_t)(src_end - src) >= ((n + 31) & ~(size_t)31))) {
        for (size_t i = 0; i < n; i += 32) memcpy(dst + i, src + i, 32);
    } else {
        memcpy(dst, src, n);
    }
}

/* Key and value bytes of up to `count` magic-2 records in p[0:len): a sizing estimate, not a validation.
 * Stops quietly at the first malformed record (the real parse reports it). */
static void kw_v2_data_sizes(const uint8_t *p, size_t len, int32_t count, int64_t *key_bytes, int64_t *val_bytes) {
    size_t pos = 0;
    int64_t kb = 0, vb = 0;
    for (int32_t r = 0; r < count; r++) {
        int32_t rec_len, off_delta, klen, vlen;
        int64_t ts_delta;
        if (kw_get_varint(p, len, &pos, &rec_len) || rec_len < 1 || (size_t)rec_len > len - pos) break;
        size_t end = pos + (size_t)rec_len;
        pos++;
        if (kw_get_varlong(p, end, &pos, &ts_delta) || kw_get_varint(p, end, &pos, &off_delta) ||
            kw_get_varint(p, end, &pos, &klen))
            break;
        if (klen > 0) {
            if ((size_t)klen > end - pos) break;
            pos += (size_t)klen;
            kb += klen;
        }
        if (kw_get_varint(p, end, &pos, &vlen)) break;
        if (vlen > 0) vb += vlen;
        pos = end;
    }
    *key_bytes = kb;
    *val_bytes = vb;
}

/* Parse `count` magic-2 records from p[0:len) into c (records below fetch_offset are validated but not
 * stored). The section must be exactly consumed. The caller guarantees room for `count` more records; key,
 * value and header bytes are checked against their capacities record by record. On KW_CORRUPT, *err names
 * the fault and c's fill levels are meaningless; on KW_NEED_HEADERS / KW_NEED_SPACE, c holds the fill
 * levels reached before the record starting at c->stop_pos, and the caller restores c as it was before
 * the call, grows the columns (what is left of the section bounds what the rest can need) and calls again.
 * Output pointers are copied into restrict-qualified locals: byte stores (null masks, timestamp types)
 * would otherwise force the compiler to reload every pointer of c after each of them. */
static int kw_parse_v2_records(kw_cols *c, const uint8_t *p, size_t len, int32_t count, const kw_batch_ctx *b,
                               const char **err) {
    int64_t *KW_RESTRICT const out_offset = c->offset;
    int64_t *KW_RESTRICT const out_ts = c->timestamp;
    int8_t *KW_RESTRICT const out_ttype = c->ttype;
    int32_t *KW_RESTRICT const out_batch = c->batch_index;
    int32_t *KW_RESTRICT const key_off = c->key_off;
    uint8_t *KW_RESTRICT const key_data = c->key_data;
    uint8_t *KW_RESTRICT const key_null = c->key_null;
    int32_t *KW_RESTRICT const val_off = c->val_off;
    uint8_t *KW_RESTRICT const val_data = c->val_data;
    uint8_t *KW_RESTRICT const val_null = c->val_null;
    int32_t *KW_RESTRICT const hdr_off = c->hdr_cap ? c->hdr_off : NULL;
    const uint8_t *const p_end = p + len;
    const int64_t base_offset = b->base_offset, base_ts = b->base_timestamp, fetch = b->fetch_offset;
    const int64_t max_ts = b->max_timestamp;
    const int log_append = b->log_append_time;
    const int32_t row = b->batch_row;
    const int64_t key_cap = c->key_cap, val_cap = c->val_cap;
    int64_t n = c->n, key_len = c->key_len, val_len = c->val_len, key_nulls = c->key_nulls,
            val_nulls = c->val_nulls;
    size_t pos = 0;
    int rc;
#define KW_NEED(code)                 \
    do {                              \
        c->n = n;                     \
        c->key_len = key_len;         \
        c->val_len = val_len;         \
        c->stop_pos = rec_start;      \
        return (code);                \
    } while (0)
    for (int32_t r = 0; r < count; r++) {
        int32_t rec_len, off_delta, klen, vlen, hcount;
        int64_t ts_delta;
        const size_t rec_start = pos;
        if ((rc = kw_get_varint(p, len, &pos, &rec_len))) {
            *err = rc == KW_VARINT_TRUNCATED ? "record length varint runs past the end of the records"
                                             : "record length varint overflows";
            return KW_CORRUPT;
        }
        if (KW_UNLIKELY(rec_len < 0 || (size_t)rec_len > len - pos))
            KW_FAIL("record length is negative or larger than the bytes left in the batch");
        size_t end = pos + (size_t)rec_len;
        if (KW_UNLIKELY(pos >= end)) KW_FAIL("record ends before its attributes");
        pos++; /* record attributes: unused by every Kafka version so far */
        if ((rc = kw_get_varlong(p, end, &pos, &ts_delta))) KW_FAIL(KW_VARINT_MSG(rc, "timestamp delta"));
        if ((rc = kw_get_varint(p, end, &pos, &off_delta))) KW_FAIL(KW_VARINT_MSG(rc, "offset delta"));
        if ((rc = kw_get_varint(p, end, &pos, &klen))) KW_FAIL(KW_VARINT_MSG(rc, "key length"));
        if (KW_UNLIKELY(klen < -1)) KW_FAIL("negative key length");
        const uint8_t *kp = p + pos;
        if (klen > 0) {
            if (KW_UNLIKELY((size_t)klen > end - pos)) KW_FAIL("key runs past the end of its record");
            pos += (size_t)klen;
        }
        if ((rc = kw_get_varint(p, end, &pos, &vlen))) KW_FAIL(KW_VARINT_MSG(rc, "value length"));
        if (KW_UNLIKELY(vlen < -1)) KW_FAIL("negative value length");
        const uint8_t *vp = p + pos;
        if (vlen > 0) {
            if (KW_UNLIKELY((size_t)vlen > end - pos)) KW_FAIL("value runs past the end of its record");
            pos += (size_t)vlen;
        }
        if ((rc = kw_get_varint(p, end, &pos, &hcount))) KW_FAIL(KW_VARINT_MSG(rc, "header count"));
        if (KW_UNLIKELY(hcount < 0)) KW_FAIL("negative header count");
        /* Wrapping add: a forged delta must not be undefined behaviour (the spec wraps like Java's long). */
        int64_t offset = (int64_t)((uint64_t)base_offset + (uint64_t)(int64_t)off_delta);
        int keep = offset >= fetch;
        if (hcount > 0) {
            /* Each header takes at least 2 bytes (two length varints): reject forged counts early. */
            if (KW_UNLIKELY((size_t)hcount > (end - pos) / 2)) KW_FAIL("header count larger than the record");
            if (keep && KW_UNLIKELY(c->nh + hcount > c->hdr_cap)) KW_NEED(KW_NEED_HEADERS);
            for (int32_t h = 0; h < hcount; h++) {
                int32_t hkl, hvl;
                if ((rc = kw_get_varint(p, end, &pos, &hkl))) KW_FAIL(KW_VARINT_MSG(rc, "header key length"));
                if (KW_UNLIKELY(hkl < 0)) KW_FAIL("negative header key length (header keys cannot be null)");
                if (KW_UNLIKELY((size_t)hkl > end - pos)) KW_FAIL("header key runs past the end of its record");
                const uint8_t *hkp = p + pos;
                pos += (size_t)hkl;
                if ((rc = kw_get_varint(p, end, &pos, &hvl))) KW_FAIL(KW_VARINT_MSG(rc, "header value length"));
                if (KW_UNLIKELY(hvl < -1)) KW_FAIL("negative header value length");
                const uint8_t *hvp = p + pos;
                if (hvl > 0) {
                    if (KW_UNLIKELY((size_t)hvl > end - pos)) KW_FAIL("header value runs past the end of its record");
                    pos += (size_t)hvl;
                }
                if (keep) {
                    int64_t j = c->nh;
                    if (KW_UNLIKELY(c->hk_len + hkl > c->hk_cap || c->hv_len + (hvl > 0 ? hvl : 0) > c->hv_cap))
                        KW_NEED(KW_NEED_HEADERS);
                    memcpy(c->hk_data + c->hk_len, hkp, (size_t)hkl);
                    c->hk_len += hkl;
                    c->hk_off[j + 1] = (int32_t)c->hk_len;
                    if (hvl >= 0) {
                        memcpy(c->hv_data + c->hv_len, hvp, (size_t)hvl);
                        c->hv_len += hvl;
                    } else {
                        c->hv_null[j] = 1;
                        c->hv_nulls++;
                    }
                    c->hv_off[j + 1] = (int32_t)c->hv_len;
                    c->nh = j + 1;
                }
            }
        }
        if (KW_UNLIKELY(pos != end)) KW_FAIL("record has bytes after its last header");
        if (!keep) continue;
        if (KW_UNLIKELY(key_len + (klen > 0 ? klen : 0) > key_cap || val_len + (vlen > 0 ? vlen : 0) > val_cap)) {
            c->need_key = key_len + (klen > 0 ? klen : 0);
            c->need_val = val_len + (vlen > 0 ? vlen : 0);
            KW_NEED(KW_NEED_SPACE);
        }
        out_offset[n] = offset;
        if (log_append) {
            out_ts[n] = max_ts;
            out_ttype[n] = 1;
        } else {
            out_ts[n] = (int64_t)((uint64_t)base_ts + (uint64_t)ts_delta);
            out_ttype[n] = 0;
        }
        out_batch[n] = row;
        if (klen > 0) {
            kw_copy(key_data + key_len, kp, (size_t)klen, p_end);
            key_len += klen;
        } else if (klen < 0) {
            key_null[n] = 1;
            key_nulls++;
        }
        key_off[n + 1] = (int32_t)key_len;
        if (vlen > 0) {
            kw_copy(val_data + val_len, vp, (size_t)vlen, p_end);
            val_len += vlen;
        } else if (vlen < 0) {
            val_null[n] = 1;
            val_nulls++;
        }
        val_off[n + 1] = (int32_t)val_len;
        if (hdr_off) hdr_off[n + 1] = (int32_t)c->nh;
        n++;
    }
    if (KW_UNLIKELY(pos != len)) KW_FAIL("record batch has bytes after its last record");
    c->n = n;
    c->key_len = key_len;
    c->val_len = val_len;
    c->key_nulls = key_nulls;
    c->val_nulls = val_nulls;
    return KW_OK;
#undef KW_NEED
}

#endif /* KW_WIRE_H */
