"""kafkawire.compression: Kafka framing of each codec, interoperability, the decompression cap, errors.

Interop partners: kafka-python's ``kafka.codec`` helpers (what its producer writes and its consumer reads),
python-lz4 / python-snappy / zstandard for frames other producers write.
"""

from __future__ import annotations

import gzip
import os
import resource
import struct
import zlib

import cramjam
import kafka.codec as kcodec
import lz4.frame
import numpy as np
import pytest
import snappy
import xxhash
import zstandard

from kafkawire import compression
from kafkawire.compression import compress, decompress
from kafkawire.errors import CorruptRecordError, DecompressionError, UnsupportedCodecError

GZIP, SNAPPY, LZ4, ZSTD = 1, 2, 3, 4

# Sizes around every block boundary the framings use (32 KiB xerial, 64 KiB lz4, 128 KiB zstd).
SIZES = [0, 1, 100, 32 * 1024 - 1, 32 * 1024, 32 * 1024 + 1, 65536, 65537, 131073, 300_000]


def payload(n: int, seed: int = 1) -> bytes:
    """Half-compressible bytes: random runs mixed with repeated text."""
    rng = np.random.default_rng(seed)
    noise = rng.integers(0, 256, size=n, dtype=np.uint8).tobytes()
    text = (b"kafkawire record payload " * (n // 25 + 1))[:n]
    return (
        bytes(a if i % 64 < 16 else b for i, (a, b) in enumerate(zip(noise, text)))
        if n < 2000
        else (noise[: n // 4] + text[n // 4 :])
    )


def codec_magics() -> list[tuple[int, int]]:
    return [(c, m) for c in (GZIP, SNAPPY, LZ4, ZSTD) for m in (0, 1, 2) if not (c == ZSTD and m < 2)]


@pytest.fixture
def cap(monkeypatch: pytest.MonkeyPatch):
    def set_cap(n: int) -> None:
        monkeypatch.setattr(compression, "MAX_DECOMPRESSED_SIZE", n)

    return set_cap


# --------------------------------------------------------------------------------------------------
# Round trips and input types
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("codec,magic", codec_magics())
@pytest.mark.parametrize("size", SIZES)
def test_round_trip(codec: int, magic: int, size: int) -> None:
    data = payload(size)
    packed = compress(codec, data, magic)
    assert decompress(codec, packed, magic) == data
    if size > 1000:
        assert len(packed) < len(data)


@pytest.mark.parametrize("codec,magic", codec_magics())
def test_any_buffer_type_gives_same_bytes(codec: int, magic: int) -> None:
    data = payload(70_000)
    packed = compress(codec, data, magic)
    for variant in (bytearray(data), memoryview(data), np.frombuffer(data, dtype=np.uint8)):
        assert compress(codec, variant, magic) == packed
    for variant in (bytearray(packed), memoryview(packed), np.frombuffer(packed, dtype=np.uint8)):
        assert decompress(codec, variant, magic) == data


@pytest.mark.parametrize("codec,magic", codec_magics())
def test_compress_is_deterministic(codec: int, magic: int) -> None:
    data = payload(100_000)
    assert compress(codec, data, magic) == compress(codec, data, magic)


def test_codec_none_is_identity() -> None:
    assert compress(0, memoryview(b"abc"), 2) == b"abc"
    assert decompress(0, bytearray(b"abc"), 0) == b"abc"


@pytest.mark.parametrize("codec", [-1, 5, 7, 8])
def test_unknown_codec(codec: int) -> None:
    with pytest.raises(UnsupportedCodecError):
        compress(codec, b"x", 2)
    with pytest.raises(UnsupportedCodecError):
        decompress(codec, b"x", 2)


@pytest.mark.parametrize("magic", [0, 1])
def test_zstd_needs_magic_2(magic: int) -> None:
    with pytest.raises(UnsupportedCodecError):
        compress(ZSTD, b"x", magic)
    with pytest.raises(UnsupportedCodecError):
        decompress(ZSTD, compress(ZSTD, b"x", 2), magic)


# --------------------------------------------------------------------------------------------------
# gzip
# --------------------------------------------------------------------------------------------------


def test_gzip_header_is_fixed_and_standard() -> None:
    data = payload(5000)
    packed = compress(GZIP, data, 2)
    # ID1 ID2 deflate, no flags, MTIME 0, XFL 0, OS 255: nothing depends on the clock or the platform.
    assert packed[:10] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    crc, isize = struct.unpack("<II", packed[-8:])
    assert crc == zlib.crc32(data) and isize == len(data)
    assert gzip.decompress(packed) == data
    assert kcodec.gzip_decode(packed) == data


def test_gzip_reads_other_writers() -> None:
    data = payload(50_000)
    assert decompress(GZIP, kcodec.gzip_encode(data), 2) == data  # level 9, real mtime
    assert decompress(GZIP, gzip.compress(data, mtime=123456), 1) == data
    assert decompress(GZIP, bytes(cramjam.gzip.compress(data)), 0) == data


def test_gzip_concatenated_members() -> None:
    # Java's GZIPInputStream reads concatenated members as one stream.
    assert decompress(GZIP, gzip.compress(b"abc") + gzip.compress(b"def"), 2) == b"abcdef"


@pytest.mark.parametrize(
    "bad",
    [b"", b"\x1f\x8b", b"not gzip at all", "truncated", "trailing", "bad-crc"],
)
def test_gzip_corrupt(bad: bytes | str) -> None:
    good = compress(GZIP, payload(5000), 2)
    if bad == "truncated":
        bad = good[:-10]
    elif bad == "trailing":
        bad = good + b"junk"
    elif bad == "bad-crc":
        bad = good[:-8] + b"\x00\x00\x00\x00" + good[-4:]
    with pytest.raises(DecompressionError):
        decompress(GZIP, bad, 2)


def _gzip_outcome(fn: object, data: bytes, cap: int) -> bytes | str:
    try:
        return bytes(fn(data, cap))  # type: ignore[operator]
    except (DecompressionError, zlib.error) as exc:
        if "invalid distance too far back" in str(exc):
            return "lenient"  # miniz_oxide reads zeros there; the trailer's CRC32 must still match
        return f"error: {type(exc).__name__}"


def test_gzip_fast_path_accepts_only_what_zlib_accepts() -> None:
    """One plain member goes through cramjam into a buffer sized by its ISIZE; everything else through
    zlib. On 4,000 mutated members (and the cap just below and at the real size), the result must be the
    zlib path's result: the same bytes, or both refused. The one exception is documented: miniz_oxide
    reads zeros for a back-reference before the start of the member, where zlib refuses."""
    from fuzz.run import mutations

    data = payload(3000)
    seeds = [compress(GZIP, data, 2), gzip.compress(data[:700], mtime=1), compress(GZIP, b"", 2),
             compress(GZIP, data[:10], 2) + compress(GZIP, data[10:40], 2)]
    fast_hits = 0
    for i, mutated in enumerate(mutations(seeds, __import__("random").Random(7))):
        if i == 4000:
            break
        for cap in (1 << 20, 2999, 3000):
            want = _gzip_outcome(compression._gzip_decompress_zlib, mutated, cap)
            got = _gzip_outcome(compression._gzip_decompress, mutated, cap)
            if want == "lenient" and isinstance(got, bytes):  # the one documented leniency: CRC32 must match
                assert zlib.crc32(got) == struct.unpack("<I", mutated[-8:-4])[0]
                continue
            assert got == want, (mutated.hex(), cap)
            fast_hits += isinstance(got, bytes) and mutated[3:4] == b"\x00"
    assert fast_hits > 100  # the mutations did reach the fast path, not only the fallback


def test_gzip_fast_path_never_sizes_a_buffer_from_a_lying_trailer() -> None:
    # ISIZE says 4 GiB - 1: above what deflate can make of 40 bytes, so no buffer of that size is made.
    good = compress(GZIP, b"x" * 10, 2)
    with pytest.raises(DecompressionError):
        decompress(GZIP, good[:-4] + b"\xff\xff\xff\xff", 2)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, hard))  # a 4 GiB buffer would raise MemoryError
    try:
        with pytest.raises(DecompressionError):
            decompress(GZIP, good[:-4] + b"\xff\xff\xff\xff", 2)
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


# --------------------------------------------------------------------------------------------------
# snappy
# --------------------------------------------------------------------------------------------------


def split_xerial(packed: bytes) -> list[bytes]:
    assert packed[:16] == b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    blocks, pos = [], 16
    while pos < len(packed):
        (n,) = struct.unpack_from(">i", packed, pos)
        blocks.append(packed[pos + 4 : pos + 4 + n])
        pos += 4 + n
    assert pos == len(packed)
    return blocks


def test_snappy_writes_xerial_framing_with_32k_blocks() -> None:
    data = payload(100_000)
    blocks = split_xerial(compress(SNAPPY, data, 2))
    assert len(blocks) == 4  # 32 KiB of input per block, as snappy-java's SnappyOutputStream
    plain = [snappy.uncompress(b) for b in blocks]  # each block is raw snappy (python-snappy's C++ decoder)
    assert [len(p) for p in plain] == [32768, 32768, 32768, 100_000 - 3 * 32768]
    assert b"".join(plain) == data


def test_snappy_interop_with_kafka_python() -> None:
    data = payload(100_000)
    assert kcodec.snappy_decode(compress(SNAPPY, data, 1)) == data
    assert decompress(SNAPPY, kcodec.snappy_encode(data), 1) == data  # xerial, as kafka-python's producer
    assert decompress(SNAPPY, kcodec.snappy_encode(data, xerial_compatible=False), 2) == data  # librdkafka: raw


def test_snappy_xerial_little_endian_version_fields() -> None:
    # Redpanda writes version/compat little-endian (kafka-python #2414): only the magic identifies the framing.
    data = payload(40_000)
    packed = bytearray(compress(SNAPPY, data, 2))
    packed[8:16] = struct.pack("<ii", 1, 1)
    assert decompress(SNAPPY, bytes(packed), 2) == data


def test_snappy_empty_xerial_stream() -> None:
    assert compress(SNAPPY, b"", 2) == b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    assert decompress(SNAPPY, compress(SNAPPY, b"", 2), 2) == b""


@pytest.mark.parametrize("case", ["empty", "garbage", "short-length", "block-overrun", "negative", "bad-block"])
def test_snappy_corrupt(case: str) -> None:
    good = compress(SNAPPY, payload(50_000), 2)
    bad = {
        "empty": b"",
        "garbage": b"\xff\xff\xff\xff\xff\xff\xff",
        "short-length": good[:16] + b"\x00\x00",
        "block-overrun": good[:-1],
        "negative": good[:16] + struct.pack(">i", -5) + good[20:],
        "bad-block": good[:20] + b"\x00" * (len(good) - 20),
    }[case]
    with pytest.raises(DecompressionError):
        decompress(SNAPPY, bad, 2)


# --------------------------------------------------------------------------------------------------
# lz4
# --------------------------------------------------------------------------------------------------


def lz4_blocks(frame: bytes) -> list[tuple[bool, int]]:
    """(stored uncompressed?, size) of each block of a frame written without optional fields."""
    pos, out = 7, []
    while True:
        (word,) = struct.unpack_from("<I", frame, pos)
        pos += 4
        if word == 0:
            assert pos == len(frame)
            return out
        out.append((bool(word & 0x80000000), word & 0x7FFFFFFF))
        pos += word & 0x7FFFFFFF


@pytest.mark.parametrize("magic", [1, 2])
def test_lz4_frame_header_like_java(magic: int) -> None:
    frame = compress(LZ4, payload(200_000), magic)
    # FLG 0x60: version 01, independent blocks, no checksums, no content size; BD 0x40: 64 KiB blocks.
    assert frame[:6] == b"\x04\x22\x4d\x18\x60\x40"
    assert frame[6] == (xxhash.xxh32(frame[4:6]).intdigest() >> 8) & 0xFF  # correct HC (spec)
    assert len(lz4_blocks(frame)) == 4
    assert lz4.frame.decompress(frame) == payload(200_000)  # the reference liblz4 accepts it


def test_lz4_magic0_writes_kafka_3160_checksum() -> None:
    data = payload(200_000)
    frame = compress(LZ4, data, 0)
    broken_hc = (xxhash.xxh32(frame[0:6]).intdigest() >> 8) & 0xFF  # over the magic number too
    assert frame[6] == broken_hc != (xxhash.xxh32(frame[4:6]).intdigest() >> 8) & 0xFF
    assert frame[7:] == compress(LZ4, data, 1)[7:]
    # Byte-identical to what kafka-python's producer sends to 0.8/0.9 brokers, and readable by its reader.
    assert frame == kcodec.lz4_encode_old_kafka(data)
    assert kcodec.lz4_decode_old_kafka(frame) == data
    with pytest.raises(RuntimeError):  # a spec-following reader rejects it: the quirk is real
        lz4.frame.decompress(frame)


def test_lz4_magic0_decode_accepts_broken_and_correct_checksums() -> None:
    data = payload(100_000)
    assert decompress(LZ4, kcodec.lz4_encode_old_kafka(data), 0) == data
    assert decompress(LZ4, compress(LZ4, data, 0), 0) == data
    assert decompress(LZ4, compress(LZ4, data, 1), 0) == data  # a correct HC is fine for magic 0 too


@pytest.mark.parametrize("magic", [1, 2])
def test_lz4_broken_checksum_rejected_above_magic0(magic: int) -> None:
    # Java verifies HC for magic >= 1 (KafkaLZ4BlockInputStream ignores it only for magic 0).
    with pytest.raises(DecompressionError):
        decompress(LZ4, kcodec.lz4_encode_old_kafka(payload(1000)), magic)


def test_lz4_interop_with_kafka_python_and_python_lz4() -> None:
    data = payload(300_000)
    assert kcodec.lz4_decode(compress(LZ4, data, 2)) == data
    assert decompress(LZ4, kcodec.lz4_encode(data), 2) == data
    # Frames with content size, content/block checksums, linked blocks, bigger blocks (other producers).
    for kwargs in (
        {},
        {"block_linked": True, "content_checksum": True, "store_size": True},
        {"block_checksum": True, "store_size": False},
        {"block_size": lz4.frame.BLOCKSIZE_MAX4MB, "store_size": False},
    ):
        assert decompress(LZ4, lz4.frame.compress(data, **kwargs), 1) == data
    assert decompress(LZ4, bytes(cramjam.lz4.compress(data)), 2) == data


def test_lz4_incompressible_blocks_are_stored() -> None:
    data = os.urandom(70_000)
    frame = compress(LZ4, data, 2)
    assert lz4_blocks(frame) == [(True, 65536), (True, 70_000 - 65536)]
    assert decompress(LZ4, frame, 2) == data


@pytest.mark.parametrize("case", ["empty", "magic", "truncated", "bad-hc", "block-overrun", "bad-match"])
def test_lz4_corrupt(case: str) -> None:
    good = compress(LZ4, payload(100_000), 2)
    bad = {
        "empty": b"",
        "magic": b"\x00" + good[1:],
        "truncated": good[:-7],
        "bad-hc": good[:6] + bytes([good[6] ^ 0x55]) + good[7:],
        "block-overrun": good[:7] + struct.pack("<I", 0x7FFFFFF0) + good[11:],
        # one sequence: no literals, a match 0xFFFF bytes back, before the start of the output
        "bad-match": good[:7] + struct.pack("<I", 3) + b"\x00\xff\xff" + b"\x00\x00\x00\x00",
    }[case]
    with pytest.raises(DecompressionError):
        decompress(LZ4, bad, 2)


@pytest.mark.parametrize("store_size", [False, True])
@pytest.mark.parametrize("block_size", [lz4.frame.BLOCKSIZE_MAX64KB, lz4.frame.BLOCKSIZE_MAX4MB])
def test_lz4_header_checksum_matches_liblz4(store_size: bool, block_size: int) -> None:
    # Differential: liblz4's frame writer (its own XXH32) against _lz4_hc on the same descriptor, for
    # 2-byte (FLG BD) and 10-byte (with content size) descriptors.
    data = payload(5000)
    frame = lz4.frame.compress(
        data, block_size=block_size, block_linked=False, content_checksum=False, store_size=store_size
    )
    end = 6 + (8 if store_size else 0)
    assert bool(frame[4] & 0x08) == store_size
    assert frame[end] == compression._lz4_hc(frame[4:end])
    assert decompress(LZ4, frame, 2) == data
    # The same frame written by a magic 0 producer (HC over the magic too, KAFKA-3160) is repaired.
    quirk = frame[:end] + bytes([compression._lz4_hc(frame[:end])]) + frame[end + 1 :]
    assert quirk != frame
    assert decompress(LZ4, quirk, 0) == data


# --------------------------------------------------------------------------------------------------
# zstd
# --------------------------------------------------------------------------------------------------


def zstd_stream_frame(data: bytes) -> bytes:
    """A frame without content size, as zstd-jni's ZstdOutputStream (the Java producer) writes."""
    cobj = zstandard.ZstdCompressor().compressobj()
    return cobj.compress(data) + cobj.flush()


def test_zstd_frames_with_and_without_content_size() -> None:
    data = payload(500_000)
    streamed = zstd_stream_frame(data)
    assert zstandard.get_frame_parameters(streamed).content_size == zstandard.CONTENTSIZE_UNKNOWN
    assert decompress(ZSTD, streamed, 2) == data
    one_shot = zstandard.ZstdCompressor(write_content_size=True).compress(data)
    assert zstandard.get_frame_parameters(one_shot).content_size == len(data)
    assert decompress(ZSTD, one_shot, 2) == data
    assert decompress(ZSTD, kcodec.zstd_encode(data), 2) == data
    assert kcodec.zstd_decode(compress(ZSTD, data, 2)) == data


def test_zstd_concatenated_and_skippable_frames() -> None:
    skippable = struct.pack("<II", 0x184D2A50, 3) + b"abc"
    packed = zstd_stream_frame(b"first ") + skippable + compress(ZSTD, b"second", 2)
    assert decompress(ZSTD, packed, 2) == b"first second"


@pytest.mark.parametrize("case", ["empty", "garbage", "truncated", "trailing"])
def test_zstd_corrupt(case: str) -> None:
    good = compress(ZSTD, payload(100_000), 2)
    bad = {
        "empty": b"",
        "garbage": b"\x28\xb5\x2f\xfd" + b"\xff" * 20,
        "truncated": good[:-5],
        "trailing": good + b"xyz",
    }[case]
    with pytest.raises(DecompressionError):
        decompress(ZSTD, bad, 2)


# --------------------------------------------------------------------------------------------------
# The decompression cap
# --------------------------------------------------------------------------------------------------


def test_default_cap() -> None:
    assert compression.MAX_DECOMPRESSED_SIZE == 256 * 1024 * 1024


@pytest.mark.parametrize("codec,magic", codec_magics())
def test_cap_is_inclusive_and_read_at_call_time(codec: int, magic: int, cap) -> None:
    data = payload(300_000)
    packed = compress(codec, data, magic)
    cap(len(data))
    assert decompress(codec, packed, magic) == data
    cap(len(data) - 1)
    with pytest.raises(DecompressionError, match=r"exceeds cap.*kafkawire\.compression\.MAX_DECOMPRESSED_SIZE"):
        decompress(codec, packed, magic)


@pytest.mark.parametrize(
    "codec,frame",
    [
        (LZ4, lambda d: lz4.frame.compress(d, store_size=False, block_linked=True)),
        (LZ4, lambda d: lz4.frame.compress(d, store_size=True)),
        (ZSTD, zstd_stream_frame),
        (SNAPPY, lambda d: bytes(cramjam.snappy.compress_raw(d))),
        (SNAPPY, kcodec.snappy_encode),
        (GZIP, kcodec.gzip_encode),
    ],
)
def test_cap_applies_to_foreign_frames(codec: int, frame, cap) -> None:
    data = payload(200_000)
    packed = frame(data)
    cap(len(data))
    assert decompress(codec, packed, 2) == data
    cap(len(data) - 1)
    with pytest.raises(DecompressionError, match="exceeds cap"):
        decompress(codec, packed, 2)


GiB = 1 << 30


def bomb(codec: int) -> bytes:
    """A small payload that expands to 1 GiB of zeros (256 MiB for snappy, whose ratio is ~20:1)."""
    chunk = bytes(1 << 20)
    if codec == GZIP:
        # A full flush resets the deflate state, so every 1 MiB chunk compresses to the same bytes: repeat them.
        deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
        block = deflater.compress(chunk) + deflater.flush(zlib.Z_FULL_FLUSH)
        header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
        return header + block * 1024 + deflater.flush() + b"\x00" * 8  # trailer never reached
    if codec == SNAPPY:
        block = bytes(cramjam.snappy.compress_raw(bytes(32768)))
        return b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + (struct.pack(">i", len(block)) + block) * 8192
    if codec == LZ4:
        block = bytes(cramjam.lz4.compress_block(bytes(65536), store_size=False))
        blocks = (struct.pack("<I", len(block)) + block) * 16384
        return compress(LZ4, b"", 2)[:7] + blocks + b"\x00\x00\x00\x00"
    cobj = zstandard.ZstdCompressor().compressobj()
    return b"".join(cobj.compress(chunk) for _ in range(1024)) + cobj.flush()


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD])
def test_bomb_is_stopped_without_materialising_it(codec: int, cap) -> None:
    packed = bomb(codec)
    assert len(packed) < 16 << 20
    cap(16 << 20)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    with pytest.raises(DecompressionError, match="exceeds cap"):
        decompress(codec, packed, 2)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    # Never more than the cap (plus one block of slack): not the 1 GiB the payload expands to.
    assert grown_mib < 64


def test_raw_snappy_length_preamble_checked_before_inflating(cap) -> None:
    # A raw snappy payload that claims 4 GiB: rejected from its length varint alone.
    cap(1 << 20)
    with pytest.raises(DecompressionError, match="exceeds cap"):
        decompress(SNAPPY, b"\xff\xff\xff\xff\x0f" + b"\x00" * 10, 2)


# --------------------------------------------------------------------------------------------------
# Error classes
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("codec,magic", codec_magics())
def test_library_errors_become_decompression_error(codec: int, magic: int) -> None:
    with pytest.raises(DecompressionError) as info:
        decompress(codec, b"\x00\x01\x02 definitely not compressed", magic)
    assert isinstance(info.value, CorruptRecordError)  # callers catching corruption catch this too
    assert not isinstance(info.value, cramjam.DecompressionError)


def lz4_frame_claiming(content_size: int, data: bytes) -> bytes:
    """A valid-looking LZ4 frame whose header declares ``content_size`` but holds ``data``."""
    descriptor = bytes([0x68, 0x40]) + struct.pack("<Q", content_size)  # FLG: content size present
    block = bytes(cramjam.lz4.compress_block(data, store_size=False))
    hc = (xxhash.xxh32(descriptor).intdigest() >> 8) & 0xFF
    return b"\x04\x22\x4d\x18" + descriptor + bytes([hc]) + struct.pack("<I", len(block)) + block + b"\x00" * 4


def zstd_frame_claiming(content_size: int, data: bytes) -> bytes:
    """A zstd frame whose 4-byte content size field declares ``content_size`` but holds ``data``."""
    frame = zstandard.ZstdCompressor(write_checksum=False).compress(data)
    fhd = frame[4]
    assert fhd & 0xE3 == 0x20  # single segment, 1-byte content size, no dictionary id
    return frame[:4] + bytes([0xA0 | (fhd & 0x04)]) + struct.pack("<I", content_size) + frame[6:]


@pytest.mark.parametrize("codec,forge", [(LZ4, lz4_frame_claiming), (ZSTD, zstd_frame_claiming)])
def test_declared_content_size_is_not_trusted_for_allocation(codec: int, forge) -> None:
    import tracemalloc

    data = b"small payload " * 10
    assert decompress(codec, forge(len(data), data), 2) == data  # an honest declaration works
    tracemalloc.start()
    try:
        with pytest.raises(DecompressionError, match="declares"):
            decompress(codec, forge(200 << 20, data), 2)  # 200 MB promised by a ~100-byte frame
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_declared_content_size_above_cap_fails_before_inflating(cap) -> None:
    data = bytes(300_000)
    cap(100_000)
    for codec, frame in (
        (LZ4, lz4.frame.compress(data, store_size=True)),
        (ZSTD, zstandard.ZstdCompressor(write_content_size=True).compress(data)),
    ):
        with pytest.raises(DecompressionError, match="exceeds cap"):
            decompress(codec, frame, 2)
