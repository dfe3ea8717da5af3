# Declarations of the C helpers under kafkawire/_csrc/ shared by _codec.pyx (and any later Cython module
# of kafkawire that needs big-endian loads, varints or CRCs without going through Python).

from libc.stddef cimport size_t
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t


cdef extern from "kw_crc.h" nogil:
    void kw_crc_init()
    uint32_t kw_crc32(uint32_t crc, const void *buf, size_t n)
    uint32_t kw_crc32c(uint32_t crc, const void *buf, size_t n)
    const char *kw_crc32_impl_name()
    const char *kw_crc32c_impl_name()
    int kw_crc_force_software


cdef extern from "kw_wire.h" nogil:
    uint16_t kw_be16(const uint8_t *p)
    uint32_t kw_be32(const uint8_t *p)
    uint64_t kw_be64(const uint8_t *p)
    int16_t kw_be_i16(const uint8_t *p)
    int32_t kw_be_i32(const uint8_t *p)
    int64_t kw_be_i64(const uint8_t *p)
    void kw_put_be16(uint8_t *p, uint16_t v)
    void kw_put_be32(uint8_t *p, uint32_t v)
    void kw_put_be64(uint8_t *p, uint64_t v)

    int KW_VARINT_TRUNCATED
    int KW_VARINT_OVERFLOW
    int kw_get_uvarint32(const uint8_t *p, size_t end, size_t *pos, uint32_t *out)
    int kw_get_uvarint64(const uint8_t *p, size_t end, size_t *pos, uint64_t *out)
    int kw_get_varint(const uint8_t *p, size_t end, size_t *pos, int32_t *out)
    int kw_get_varlong(const uint8_t *p, size_t end, size_t *pos, int64_t *out)
    uint32_t kw_zigzag32(int32_t v)
    uint64_t kw_zigzag64(int64_t v)
    size_t kw_uvarint_size(uint64_t v)
    size_t kw_put_uvarint(uint8_t *p, uint64_t v)

    ctypedef struct kw_cols:
        int64_t *offset
        int64_t *timestamp
        int8_t *ttype
        int32_t *batch_index
        int32_t *hdr_off
        int32_t *key_off
        uint8_t *key_data
        uint8_t *key_null
        int32_t *val_off
        uint8_t *val_data
        uint8_t *val_null
        int32_t *hk_off
        uint8_t *hk_data
        int32_t *hv_off
        uint8_t *hv_data
        uint8_t *hv_null
        int64_t rec_cap
        int64_t hdr_cap
        int64_t key_cap
        int64_t val_cap
        int64_t hk_cap
        int64_t hv_cap
        size_t stop_pos
        int64_t need_key
        int64_t need_val
        int64_t n
        int64_t key_len
        int64_t val_len
        int64_t nh
        int64_t hk_len
        int64_t hv_len
        int64_t key_nulls
        int64_t val_nulls
        int64_t hv_nulls

    ctypedef struct kw_batch_ctx:
        int64_t base_offset
        int64_t base_timestamp
        int64_t max_timestamp
        int64_t fetch_offset
        int32_t batch_row
        int log_append_time

    int KW_OK
    int KW_COPY_SLACK
    int KW_CORRUPT
    int KW_NEED_HEADERS
    int KW_NEED_SPACE
    void kw_v2_data_sizes(const uint8_t *p, size_t len, int32_t count, int64_t *key_bytes, int64_t *val_bytes)
    int kw_parse_v2_records(kw_cols *c, const uint8_t *p, size_t len, int32_t count, const kw_batch_ctx *b,
                            const char **err)


cdef extern from "kw_pool.h" nogil:
    void *kw_pool_get(size_t size, size_t *cap)
    void kw_pool_put(void *p, size_t cap)
    void kw_pool_set_limit(size_t limit)
    size_t kw_pool_cached_bytes()


cdef extern from "kw_frames.h" nogil:
    int64_t kw_lz4_frame_bound(const uint8_t *p, size_t n, int *exact)
    int64_t kw_gzip_member_size(const uint8_t *p, size_t n)
    int64_t kw_zstd_frame_bound(const uint8_t *p, size_t n, int *exact)
