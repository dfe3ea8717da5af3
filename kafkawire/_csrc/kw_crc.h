/*
 * kw_crc.h -- CRC32 (IEEE 802.3, zlib's crc32) and CRC32C (Castagnoli, iSCSI) for kafkawire.
 *
 * Kafka checksums magic 0/1 messages with CRC32 and magic 2 record batches with CRC32C (KIP-98), so both
 * sit on the decode hot path. Header-only: every function is static, and the module that includes this
 * file calls kw_crc_init() once before anything else.
 *
 * Implementations, picked at run time so one wheel runs on any CPU of its architecture:
 *
 *  - CRC32C on x86 with SSE4.2: the `crc32` instruction over three independent streams (the instruction
 *    has a latency of 3 cycles and a throughput of 1 per cycle, so three chains keep the unit busy), the
 *    three partial CRCs combined with "append N zero bytes" operators tabulated at init.
 *  - CRC32C on aarch64 built with the CRC extension (__ARM_FEATURE_CRC32): the ACLE __crc32c* intrinsics.
 *  - CRC32 on x86 with PCLMULQDQ: folding 64 bytes per step with carry-less multiplication, the method of
 *    Intel's white paper "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ Instruction"
 *    (Gopal et al., 2009). The fold constants x^k mod P are computed at init from the polynomial rather than
 *    written out, and the final 128-bit remainder is reduced with the table method instead of a Barrett step.
 *  - Everywhere else: slicing-by-8 tables (Kounavis & Berry, "A Systematic Approach to Building High
 *    Performance Software-based CRC Generators", 2005).
 *
 * Everything here is reflected (LSB-first) CRC arithmetic on a "raw" state; the public functions apply
 * the customary pre- and post-inversion so that kw_crc32(v, p, n) == zlib.crc32(p[:n], v) and
 * kw_crc32c(v, p, n) == crc32c.crc32c(p[:n], v). None of them touch Python objects: safe without the GIL.
 */
#ifndef KW_CRC_H
#define KW_CRC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define KW_CRC_X86 1
#include <immintrin.h>
#endif

#if defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#define KW_CRC_ARM 1
#include <arm_acle.h>
#endif

/* Reflected forms of the generator polynomials (bit i = coefficient of x^(31-i)). */
#define KW_POLY_CRC32_REFL 0xEDB88320u
#define KW_POLY_CRC32C_REFL 0x82F63B78u
/* Normal forms without the x^32 term (bit i = coefficient of x^i). */
#define KW_POLY_CRC32_NORM 0x04C11DB7u
#define KW_POLY_CRC32C_NORM 0x1EDC6F41u

/* Bytes per stream in the 3-way CRC32C loops: the long block amortises the combine step on big buffers,
 * the short one still gets the 3x overlap on a few hundred bytes. */
#define KW_CRC32C_LONG 8192
#define KW_CRC32C_SHORT 256

static uint32_t kw_crc32_tab[8][256];
static uint32_t kw_crc32c_tab[8][256];
/* Operators "append KW_CRC32C_LONG (SHORT) zero bytes" on a raw CRC32C state, one table per state byte. */
static uint32_t kw_crc32c_zlong[4][256];
static uint32_t kw_crc32c_zshort[4][256];

static int kw_crc_have_sse42 = 0;
static int kw_crc_have_pclmul = 0;
/* Set by tests to exercise the portable paths on hardware that has the fast ones. */
static int kw_crc_force_software = 0;

static inline uint32_t kw_le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint64_t kw_le64(const uint8_t *p) {
    return (uint64_t)kw_le32(p) | ((uint64_t)kw_le32(p + 4) << 32);
}

static void kw_crc_make_tables(uint32_t tab[8][256], uint32_t poly) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ poly : c >> 1;
        tab[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++) tab[t][i] = (tab[t - 1][i] >> 8) ^ tab[0][tab[t - 1][i] & 0xFF];
}

/* Slicing-by-8 update of a raw state (no inversion). */
static uint32_t kw_crc_sw(const uint32_t tab[8][256], uint32_t crc, const uint8_t *p, size_t n) {
    while (n && ((uintptr_t)p & 7)) {
        crc = tab[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
        n--;
    }
    while (n >= 8) {
        uint32_t lo = crc ^ kw_le32(p), hi = kw_le32(p + 4);
        crc = tab[7][lo & 0xFF] ^ tab[6][(lo >> 8) & 0xFF] ^ tab[5][(lo >> 16) & 0xFF] ^ tab[4][lo >> 24] ^
              tab[3][hi & 0xFF] ^ tab[2][(hi >> 8) & 0xFF] ^ tab[1][(hi >> 16) & 0xFF] ^ tab[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--) crc = tab[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc;
}

/* Tabulate the linear map "raw state -> raw state after nbytes zero bytes" as four byte-indexed tables:
 * compute the image of each of the 32 basis states, then every table entry is an XOR of images. */
static void kw_crc_make_shift(uint32_t out[4][256], const uint32_t tab[8][256], size_t nbytes) {
    uint32_t basis[32];
    for (int b = 0; b < 32; b++) {
        uint32_t c = (uint32_t)1 << b;
        for (size_t i = 0; i < nbytes; i++) c = tab[0][c & 0xFF] ^ (c >> 8);
        basis[b] = c;
    }
    for (int k = 0; k < 4; k++)
        for (uint32_t v = 0; v < 256; v++) {
            uint32_t r = 0;
            for (int b = 0; b < 8; b++)
                if (v & (1u << b)) r ^= basis[8 * k + b];
            out[k][v] = r;
        }
}

static inline uint32_t kw_crc_shift(const uint32_t z[4][256], uint32_t c) {
    return z[0][c & 0xFF] ^ z[1][(c >> 8) & 0xFF] ^ z[2][(c >> 16) & 0xFF] ^ z[3][c >> 24];
}

#ifdef KW_CRC_X86
/* ------------------------------------------------------------------ CRC32C: SSE4.2, three streams */
#if defined(__x86_64__)
#define KW_CRC32C_WORD(c, p) ((uint32_t)_mm_crc32_u64((c), kw_le64(p)))
#define KW_CRC32C_WSIZE 8
#else
#define KW_CRC32C_WORD(c, p) (_mm_crc32_u32((c), kw_le32(p)))
#define KW_CRC32C_WSIZE 4
#endif

__attribute__((target("sse4.2"))) static uint32_t kw_crc32c_sse42(uint32_t crc, const uint8_t *p, size_t n) {
    while (n && ((uintptr_t)p & 7)) {
        crc = _mm_crc32_u8(crc, *p++);
        n--;
    }
    /* Stream a continues the running state; b and c start from 0. Because the raw CRC is linear,
     * crc(s, A|B|C) = shift(shift(crc(s, A)) ^ crc(0, B)) ^ crc(0, C), shift = append one block of zeros. */
    while (n >= 3 * KW_CRC32C_LONG) {
        uint32_t a = crc, b = 0, c = 0;
        const uint8_t *pb = p + KW_CRC32C_LONG, *pc = p + 2 * KW_CRC32C_LONG;
        for (size_t i = 0; i < KW_CRC32C_LONG; i += KW_CRC32C_WSIZE) {
            a = KW_CRC32C_WORD(a, p + i);
            b = KW_CRC32C_WORD(b, pb + i);
            c = KW_CRC32C_WORD(c, pc + i);
        }
        crc = kw_crc_shift(kw_crc32c_zlong, kw_crc_shift(kw_crc32c_zlong, a) ^ b) ^ c;
        p += 3 * KW_CRC32C_LONG;
        n -= 3 * KW_CRC32C_LONG;
    }
    while (n >= 3 * KW_CRC32C_SHORT) {
        uint32_t a = crc, b = 0, c = 0;
        const uint8_t *pb = p + KW_CRC32C_SHORT, *pc = p + 2 * KW_CRC32C_SHORT;
        for (size_t i = 0; i < KW_CRC32C_SHORT; i += KW_CRC32C_WSIZE) {
            a = KW_CRC32C_WORD(a, p + i);
            b = KW_CRC32C_WORD(b, pb + i);
            c = KW_CRC32C_WORD(c, pc + i);
        }
        crc = kw_crc_shift(kw_crc32c_zshort, kw_crc_shift(kw_crc32c_zshort, a) ^ b) ^ c;
        p += 3 * KW_CRC32C_SHORT;
        n -= 3 * KW_CRC32C_SHORT;
    }
    while (n >= KW_CRC32C_WSIZE) {
        crc = KW_CRC32C_WORD(crc, p);
        p += KW_CRC32C_WSIZE;
        n -= KW_CRC32C_WSIZE;
    }
    while (n--) crc = _mm_crc32_u8(crc, *p++);
    return crc;
}

/* ------------------------------------------------------------------ CRC32: PCLMULQDQ folding
 *
 * A 128-bit register holding 16 message bytes represents, in reflected order, the polynomial whose
 * bit k is the coefficient of x^(127-k): its low quadword q0 is worth q0(x)*x^64, the high one q1(x).
 * Moving it D bits further down the message multiplies it by x^D. A reflected 64x64 carry-less product
 * comes out multiplied by an extra x, hence the constants: q0 needs x^(D+63) mod P, q1 needs x^(D-1) mod P.
 * A constant of degree < 32 is stored bit-reversed in the upper half of its quadword (bit 63-d = x^d), so
 * each product has degree < 96 and fits the 128-bit lane it is XORed into.
 */
static uint64_t kw_clmul_k512[2], kw_clmul_k128[2];

static uint64_t kw_xpow_mod(unsigned e, uint32_t poly_norm) {
    uint32_t r = 1; /* x^0 */
    for (unsigned i = 0; i < e; i++) r = (r & 0x80000000u) ? (r << 1) ^ poly_norm : r << 1;
    uint32_t rev = 0;
    for (int b = 0; b < 32; b++)
        if (r & (1u << b)) rev |= 1u << (31 - b);
    return (uint64_t)rev << 32;
}

__attribute__((target("pclmul,sse2"))) static inline __m128i kw_fold(__m128i x, __m128i k) {
    return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

/* Requires n >= 64. */
__attribute__((target("pclmul,sse2"))) static uint32_t kw_crc32_pclmul(uint32_t crc, const uint8_t *p, size_t n) {
    const __m128i k512 = _mm_set_epi64x((long long)kw_clmul_k512[1], (long long)kw_clmul_k512[0]);
    const __m128i k128 = _mm_set_epi64x((long long)kw_clmul_k128[1], (long long)kw_clmul_k128[0]);
    __m128i x0 = _mm_loadu_si128((const __m128i *)p);
    __m128i x1 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 32));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(p + 48));
    /* A running state s is equivalent to s XORed into the first four message bytes. */
    x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128((int)crc));
    p += 64;
    n -= 64;
    while (n >= 64) {
        x0 = _mm_xor_si128(kw_fold(x0, k512), _mm_loadu_si128((const __m128i *)p));
        x1 = _mm_xor_si128(kw_fold(x1, k512), _mm_loadu_si128((const __m128i *)(p + 16)));
        x2 = _mm_xor_si128(kw_fold(x2, k512), _mm_loadu_si128((const __m128i *)(p + 32)));
        x3 = _mm_xor_si128(kw_fold(x3, k512), _mm_loadu_si128((const __m128i *)(p + 48)));
        p += 64;
        n -= 64;
    }
    x1 = _mm_xor_si128(x1, kw_fold(x0, k128));
    x2 = _mm_xor_si128(x2, kw_fold(x1, k128));
    x3 = _mm_xor_si128(x3, kw_fold(x2, k128));
    while (n >= 16) {
        x3 = _mm_xor_si128(kw_fold(x3, k128), _mm_loadu_si128((const __m128i *)p));
        p += 16;
        n -= 16;
    }
    /* x3 is congruent (mod P) to everything so far, placed in the last 16 bytes: finish by table. */
    uint8_t rem[16];
    _mm_storeu_si128((__m128i *)rem, x3);
    crc = kw_crc_sw(kw_crc32_tab, 0, rem, 16);
    return kw_crc_sw(kw_crc32_tab, crc, p, n);
}
#endif /* KW_CRC_X86 */

#ifdef KW_CRC_ARM
static uint32_t kw_crc32c_arm(uint32_t crc, const uint8_t *p, size_t n) {
    while (n && ((uintptr_t)p & 7)) {
        crc = __crc32cb(crc, *p++);
        n--;
    }
    while (n >= 8) {
        crc = __crc32cd(crc, kw_le64(p));
        p += 8;
        n -= 8;
    }
    while (n--) crc = __crc32cb(crc, *p++);
    return crc;
}

static uint32_t kw_crc32_arm(uint32_t crc, const uint8_t *p, size_t n) {
    while (n && ((uintptr_t)p & 7)) {
        crc = __crc32b(crc, *p++);
        n--;
    }
    while (n >= 8) {
        crc = __crc32d(crc, kw_le64(p));
        p += 8;
        n -= 8;
    }
    while (n--) crc = __crc32b(crc, *p++);
    return crc;
}
#endif

static void kw_crc_init(void) {
    kw_crc_make_tables(kw_crc32_tab, KW_POLY_CRC32_REFL);
    kw_crc_make_tables(kw_crc32c_tab, KW_POLY_CRC32C_REFL);
    kw_crc_make_shift(kw_crc32c_zlong, kw_crc32c_tab, KW_CRC32C_LONG);
    kw_crc_make_shift(kw_crc32c_zshort, kw_crc32c_tab, KW_CRC32C_SHORT);
#ifdef KW_CRC_X86
    __builtin_cpu_init();
    kw_crc_have_sse42 = __builtin_cpu_supports("sse4.2") ? 1 : 0;
    kw_crc_have_pclmul = __builtin_cpu_supports("pclmul") ? 1 : 0;
    kw_clmul_k512[0] = kw_xpow_mod(512 + 63, KW_POLY_CRC32_NORM);
    kw_clmul_k512[1] = kw_xpow_mod(512 - 1, KW_POLY_CRC32_NORM);
    kw_clmul_k128[0] = kw_xpow_mod(128 + 63, KW_POLY_CRC32_NORM);
    kw_clmul_k128[1] = kw_xpow_mod(128 - 1, KW_POLY_CRC32_NORM);
#endif
}

/* zlib.crc32 semantics: `crc` is a previous result (0 to start). */
static uint32_t kw_crc32(uint32_t crc, const void *buf, size_t n) {
    const uint8_t *p = (const uint8_t *)buf;
    crc = ~crc;
    if (!kw_crc_force_software) {
#ifdef KW_CRC_X86
        if (kw_crc_have_pclmul && n >= 64) return ~kw_crc32_pclmul(crc, p, n);
#endif
#ifdef KW_CRC_ARM
        return ~kw_crc32_arm(crc, p, n);
#endif
    }
    return ~kw_crc_sw(kw_crc32_tab, crc, p, n);
}

/* crc32c.crc32c semantics: `crc` is a previous result (0 to start). */
static uint32_t kw_crc32c(uint32_t crc, const void *buf, size_t n) {
    const uint8_t *p = (const uint8_t *)buf;
    crc = ~crc;
    if (!kw_crc_force_software) {
#ifdef KW_CRC_X86
        if (kw_crc_have_sse42) return ~kw_crc32c_sse42(crc, p, n);
#endif
#ifdef KW_CRC_ARM
        return ~kw_crc32c_arm(crc, p, n);
#endif
    }
    return ~kw_crc_sw(kw_crc32c_tab, crc, p, n);
}

/* Which implementation each CRC uses right now (for tests and diagnostics). */
static const char *kw_crc32_impl_name(void) {
    if (!kw_crc_force_software) {
#ifdef KW_CRC_X86
        if (kw_crc_have_pclmul) return "pclmulqdq";
#endif
#ifdef KW_CRC_ARM
        return "armv8-crc";
#endif
    }
    return "slicing-by-8";
}

static const char *kw_crc32c_impl_name(void) {
    if (!kw_crc_force_software) {
#ifdef KW_CRC_X86
        if (kw_crc_have_sse42) return "sse4.2";
#endif
#ifdef KW_CRC_ARM
        return "armv8-crc";
#endif
    }
    return "slicing-by-8";
}

#endif /* KW_CRC_H */
