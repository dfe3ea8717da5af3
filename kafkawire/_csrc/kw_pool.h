/*
 * kw_pool.h -- a small cache of large output buffers for the decoder.
 *
 * Why: decoding writes every byte of its output columns once. When those columns come from fresh memory,
 * the kernel must fault in and zero each page first, which costs as much as the decoding itself (measured:
 * a 1 MB fetch decoded 3x slower into fresh buffers than into reused ones). glibc does not help for these
 * sizes: blocks above its mmap threshold are unmapped on free, and smaller ones are trimmed off the top of
 * the heap. So buffers whose numpy arrays have been garbage-collected come back here and are handed to the
 * next decode of a similar size, already faulted in.
 *
 * Bounded: at most KW_POOL_SLOTS blocks and kw_pool_limit bytes of capacity are kept (oldest evicted first),
 * blocks are reused only for requests at least half their size, and kw_pool_set_limit(0) turns it off.
 * Not thread-safe by itself: every call is made with the GIL held (block release runs in a tp_dealloc).
 */
#ifndef KW_POOL_H
#define KW_POOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#define KW_POOL_SLOTS 32
#define KW_POOL_GRANULE ((size_t)64 << 10)
#define KW_HUGE ((size_t)2 << 20)

typedef struct {
    void *ptr;
    size_t cap;
} kw_pool_block;

static kw_pool_block kw_pool_free[KW_POOL_SLOTS];
static int kw_pool_count = 0;
static size_t kw_pool_bytes = 0;
static size_t kw_pool_limit = (size_t)256 << 20;

static void kw_pool_evict_oldest(void) {
    free(kw_pool_free[0].ptr);
    kw_pool_bytes -= kw_pool_free[0].cap;
    for (int i = 1; i < kw_pool_count; i++) kw_pool_free[i - 1] = kw_pool_free[i];
    kw_pool_count--;
}

static void kw_pool_set_limit(size_t limit) {
    kw_pool_limit = limit;
    while (kw_pool_count && kw_pool_bytes > kw_pool_limit) kw_pool_evict_oldest();
}

static size_t kw_pool_cached_bytes(void) { return kw_pool_bytes; }

/* A block of at least `size` bytes; its capacity goes to *cap. NULL when out of memory. */
static void *kw_pool_get(size_t size, size_t *cap) {
    int best = -1;
    for (int i = 0; i < kw_pool_count; i++) {
        size_t c = kw_pool_free[i].cap;
        if (c >= size && c / 2 <= size + KW_POOL_GRANULE && (best < 0 || c < kw_pool_free[best].cap)) best = i;
    }
    if (best >= 0) {
        void *p = kw_pool_free[best].ptr;
        *cap = kw_pool_free[best].cap;
        kw_pool_bytes -= *cap;
        for (int i = best + 1; i < kw_pool_count; i++) kw_pool_free[i - 1] = kw_pool_free[i];
        kw_pool_count--;
        return p;
    }
    size_t c = (size + KW_POOL_GRANULE - 1) & ~(KW_POOL_GRANULE - 1);
    void *p = NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (c >= 2 * KW_HUGE) {
        /* Transparent huge pages: one fault (and one zeroing) per 2 MB instead of per 4 KB, as numpy
         * does for its own large arrays. */
        c = (c + KW_HUGE - 1) & ~(KW_HUGE - 1);
        if (posix_memalign(&p, KW_HUGE, c) != 0) p = NULL;
        if (p) madvise(p, c, MADV_HUGEPAGE);
    } else
#endif
        p = malloc(c);
    *cap = c;
    return p;
}

/* Give a block back: kept for reuse while the pool has room, else freed. */
static void kw_pool_put(void *p, size_t cap) {
    if (!p) return;
    if (cap > kw_pool_limit) {
        free(p);
        return;
    }
    while (kw_pool_count && (kw_pool_count == KW_POOL_SLOTS || kw_pool_bytes + cap > kw_pool_limit))
        kw_pool_evict_oldest();
    kw_pool_free[kw_pool_count].ptr = p;
    kw_pool_free[kw_pool_count].cap = cap;
    kw_pool_count++;
    kw_pool_bytes += cap;
}

#endif /* KW_POOL_H */
