/*
 * kw_frames.h -- output sizes of single gzip members and LZ4 and zstd frames, for the compiled decoder's
 * fast path.
 *
 * kafkawire.compression validates LZ4/zstd framing in Python before it sizes the output buffer and calls
 * cramjam. For the common case (one standard frame) the compiled decoder computes the same bound here, in
 * C, and calls cramjam with an output of exactly that size, so both paths accept and produce the same
 * bytes. Anything else -- several frames, skippable frames, magic-0 LZ4, malformed or truncated framing --
 * returns -1, and the caller takes the Python path, which also raises the right error.
 */
#ifndef KW_FRAMES_H
#define KW_FRAMES_H
#include <stddef.h>
#include <stdint.h>

#include "kw_crc.h" /* kw_le32, kw_le64 */

/* Bound of one LZ4 frame filling p[0:n): its content size when declared (*exact = 1), else per block its
 * size when stored, otherwise min(block maximum, 256 * compressed size + 64). */
static int64_t kw_lz4_frame_bound(const uint8_t *p, size_t n, int *exact) {
    static const uint32_t block_max_of[8] = {0, 0, 0, 0, 64u << 10, 256u << 10, 1u << 20, 4u << 20};
    if (n < 7 || kw_le32(p) != 0x184D2204u) return -1;
    uint8_t flg = p[4], bd = p[5];
    uint32_t block_max = block_max_of[(bd >> 4) & 7];
    if ((flg >> 6) != 1 || (flg & 0x02) || (bd & 0x8F) || block_max == 0) return -1;
    size_t q = 6;
    int64_t content = -1;
    if (flg & 0x08) {
        if (n - q < 8) return -1;
        uint64_t c = kw_le64(p + q);
        if (c > (uint64_t)INT64_MAX) return -1;
        content = (int64_t)c;
        q += 8;
    }
    if (flg & 0x01) q += 4; /* dictionary id */
    if (q >= n) return -1;
    q += 1; /* header checksum */
    const size_t block_checksum = (flg & 0x10) ? 4 : 0;
    int64_t walked = 0;
    for (;;) {
        if (n - q < 4) return -1;
        uint32_t word = kw_le32(p + q);
        q += 4;
        if (word == 0) break;
        uint32_t size = word & 0x7FFFFFFFu;
        if (size > block_max) return -1;
        if (word & 0x80000000u) {
            walked += size;
        } else {
            uint64_t most = 256 * (uint64_t)size + 64;
            walked += (int64_t)(most < block_max ? most : block_max);
        }
        if ((size_t)size + block_checksum > n - q) return -1;
        q += (size_t)size + block_checksum;
    }
    if (flg & 0x04) {
        if (n - q < 4) return -1;
        q += 4;
    }
    if (q != n) return -1;
    if (content >= 0) {
        if (content > walked) return -1;
        *exact = 1;
        return content;
    }
    *exact = 0;
    return walked;
}

/* Bound of one zstd frame filling p[0:n): its content size when declared (*exact = 1), else per block its
 * size (raw, RLE) or 128 KiB (compressed). */
static int64_t kw_zstd_frame_bound(const uint8_t *p, size_t n, int *exact) {
    static const size_t did_size[4] = {0, 1, 2, 4};
    if (n < 5 || kw_le32(p) != 0xFD2FB528u) return -1;
    uint8_t fhd = p[4];
    if (fhd & 0x08) return -1;
    int fcs_flag = fhd >> 6, single = (fhd >> 5) & 1;
    size_t q = 5 + (single ? 0 : 1) + did_size[fhd & 3];
    size_t fcs_size = fcs_flag == 0 ? (size_t)single : fcs_flag == 1 ? 2 : fcs_flag == 2 ? 4 : 8;
    if (q > n || n - q < fcs_size) return -1;
    int64_t content = -1;
    if (fcs_size == 1) {
        content = p[q];
    } else if (fcs_size == 2) {
        content = (int64_t)((uint32_t)p[q] | ((uint32_t)p[q + 1] << 8)) + 256;
    } else if (fcs_size == 4) {
        content = kw_le32(p + q);
    } else if (fcs_size == 8) {
        uint64_t c = kw_le64(p + q);
        if (c > (uint64_t)INT64_MAX) return -1;
        content = (int64_t)c;
    }
    q += fcs_size;
    int64_t walked = 0;
    for (;;) {
        if (n - q < 3) return -1;
        uint32_t header = (uint32_t)p[q] | ((uint32_t)p[q + 1] << 8) | ((uint32_t)p[q + 2] << 16);
        q += 3;
        uint32_t last = header & 1, type = (header >> 1) & 3, size = header >> 3;
        if (type == 3 || size > (128u << 10)) return -1;
        if (type == 1) {
            walked += size;
            q += 1;
        } else {
            walked += type == 0 ? size : (128u << 10);
            q += size;
        }
        if (q > n) return -1;
        if (last) break;
    }
    if (fhd & 0x04) {
        q += 4;
        if (q > n) return -1;
    }
    if (q != n) return -1;
    if (content >= 0) {
        if (content > walked) return -1;
        *exact = 1;
        return content;
    }
    *exact = 0;
    return walked;
}

/* Size of one plain gzip member filling p[0:n) (no optional header fields, FLG 0: what Java, librdkafka
 * and Python write): its trailing ISIZE when deflate could produce that much from n bytes, else -1. The
 * caller inflates into exactly that many bytes and requires exactly that many back, as
 * kafkawire.compression._gzip_decompress does. */
static int64_t kw_gzip_member_size(const uint8_t *p, size_t n) {
    if (n < 18 || p[0] != 0x1F || p[1] != 0x8B || p[2] != 8 || p[3] != 0) return -1;
    int64_t isize = (int64_t)kw_le32(p + n - 4);
    if ((uint64_t)isize > 1032 * (uint64_t)n) return -1; /* deflate expands at most 1032:1 */
    return isize;
}

#endif /* KW_FRAMES_H */
