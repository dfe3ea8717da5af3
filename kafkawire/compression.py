"""Compression codecs for Kafka record batches and legacy message sets.

Both codec implementations (the compiled core and the pure-Python reference) call :func:`compress` and
:func:`decompress` once per compressed batch, so the bytes they produce are identical. The heavy lifting
is done by `cramjam <https://github.com/milesgranger/cramjam>`_ (gzip falls back to the standard library's
zlib, which can stop at an output limit, for anything but one plain member); this module adds the
Kafka-specific framing:

* **gzip** (codec 1): a plain gzip member. The header is written here with mtime 0 and OS 255 so the
  output is deterministic. Decoding accepts concatenated members (as Java's ``GZIPInputStream`` does).
* **snappy** (codec 2): the Java producer wraps snappy in snappy-java's *xerial* stream framing
  (``\\x82SNAPPY\\x00``, int32 version, int32 compat, then ``[int32 length][raw snappy block]``\\*, 32 KiB
  of input per block); librdkafka writes raw snappy. Decoding accepts both; encoding writes the xerial
  framing so Java consumers can read it.
* **lz4** (codec 3): the LZ4 *frame* format, written the way Java's ``KafkaLZ4BlockOutputStream`` writes
  it (independent 64 KiB blocks, no checksums). Magic 0 frames carry a header checksum computed over the
  frame magic too (KAFKA-3160): it is repaired before decoding and reproduced when encoding for magic 0.
* **zstd** (codec 4, magic 2 only, KIP-110): zstd frames with or without a content size (Java's
  zstd-jni writes streaming frames without one).

Decompressed output is capped at :data:`MAX_DECOMPRESSED_SIZE` bytes to stop decompression bombs; the
cap is enforced while decompressing (output buffers never grow past it), not checked afterwards.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from typing import Any

import cramjam
import numpy as np
from xxhash import xxh32_intdigest

from .errors import DecompressionError, UnsupportedCodecError

__all__ = ["MAX_DECOMPRESSED_SIZE", "CODEC_NAMES", "compress", "decompress"]

#: Largest decompressed size accepted for one batch / wrapper message (bytes). A payload that would
#: decompress to more raises :class:`~kafkawire.errors.DecompressionError`. Read at call time: assign
#: ``kafkawire.compression.MAX_DECOMPRESSED_SIZE = ...`` to change it.
MAX_DECOMPRESSED_SIZE = 256 * 1024 * 1024

#: Codec id -> name, as stored in attribute bits 0-2.
CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}

#: The gzip level Java's GZIPOutputStream uses by default (Deflater.DEFAULT_COMPRESSION).
GZIP_LEVEL = 6
#: zstd level 3 is the zstd (and Kafka) default.
ZSTD_LEVEL = 3

_Buffer = Any  # bytes, bytearray, memoryview or any contiguous buffer


# --------------------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------------------


def compress(codec: int, data: _Buffer, magic: int) -> bytes:
    """Compress ``data`` (a records section or inner message set) with ``codec`` for format ``magic``.

    ``codec`` 0 returns the bytes unchanged. zstd needs magic 2. Raises
    :class:`~kafkawire.errors.UnsupportedCodecError` for an unknown codec.
    """
    _check_codec(codec, magic)
    if codec == 0:
        return bytes(data)
    if codec == 1:
        return _gzip_compress(data)
    if codec == 2:
        return _snappy_compress(data)
    if codec == 3:
        return _lz4_compress(data, magic)
    return bytes(cramjam.zstd.compress(_as_bytes_like(data), level=ZSTD_LEVEL))


def decompress(codec: int, data: _Buffer, magic: int) -> bytes | memoryview:
    """Decompress a payload written with ``codec`` in a batch/message of format ``magic``.

    Returns the decompressed bytes as ``bytes`` or a read-only ``memoryview`` (no extra copy); call
    ``bytes()`` on it if you need an immutable ``bytes`` object.

    Raises :class:`~kafkawire.errors.DecompressionError` when the payload is malformed or would
    decompress to more than :data:`MAX_DECOMPRESSED_SIZE` bytes, and
    :class:`~kafkawire.errors.UnsupportedCodecError` for an unknown codec (or zstd below magic 2).
    """
    _check_codec(codec, magic)
    if codec == 0:
        return bytes(data)
    cap = int(MAX_DECOMPRESSED_SIZE)
    name = CODEC_NAMES[codec]
    try:
        if codec == 1:
            return _gzip_decompress(data, cap)
        if codec == 2:
            return _snappy_decompress(data, cap)
        if codec == 3:
            return _lz4_decompress(data, magic, cap)
        return _zstd_decompress(data, cap)
    except DecompressionError:
        raise
    except MemoryError:
        raise
    except Exception as exc:  # any library failure on hostile bytes is a corrupt payload
        raise DecompressionError(f"{name} payload does not decompress: {exc}") from exc


def _check_codec(codec: int, magic: int) -> None:
    if codec not in CODEC_NAMES:
        raise UnsupportedCodecError(f"unknown compression codec id {codec}")
    if codec == 4 and magic < 2:
        # zstd arrived with magic 2 (KIP-110); brokers reject it in older formats.
        raise UnsupportedCodecError(f"zstd compression needs magic 2, got magic {magic}")


def _as_bytes_like(data: _Buffer) -> _Buffer:
    if isinstance(data, (bytes, bytearray)):
        return data
    mv = memoryview(data)
    return mv if mv.format == "B" and mv.ndim == 1 else mv.cast("B")


def _cap_error(cap: int, codec: str) -> DecompressionError:
    return DecompressionError(
        f"{codec} payload decompresses to more than {cap} bytes: exceeds cap; if this data is legitimate, "
        "raise kafkawire.compression.MAX_DECOMPRESSED_SIZE"
    )


def _decompress_into(func: Any, data: _Buffer, bound: int, exact: bool, cap: int, codec: str) -> bytes | memoryview:
    """Run a cramjam ``decompress_into`` with an output buffer of ``min(bound, cap)`` bytes.

    ``bound`` is an upper bound of the output read from the frame headers (``exact``: it is a declared
    content size). cramjam refuses to write past the end of the buffer ("failed to write whole
    buffer"), so memory never grows beyond it: that is how the cap is enforced for lz4 and zstd. When
    the bound is within the cap, overflowing it means the frame lied about its sizes (corruption).
    """
    if bound > cap:
        if exact:
            raise _cap_error(cap, codec)  # the frame says so itself: nothing to inflate
        size, limited_by_cap = cap, True
    else:
        size, limited_by_cap = bound, False
    out = np.empty(size, dtype=np.uint8)  # not zero-filled: untouched pages cost nothing
    try:
        n = func(data, out)
    except cramjam.DecompressionError as exc:
        if limited_by_cap and "whole buffer" in str(exc):
            raise _cap_error(cap, codec) from None
        raise DecompressionError(f"{codec} payload does not decompress: {exc}") from exc
    # A read-only view of the filled part, not a copy: decoders only read it (both implementations).
    view = out.data[:n]
    return view.toreadonly()


# --------------------------------------------------------------------------------------------------
# gzip
# --------------------------------------------------------------------------------------------------

# ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL=0 OS=255 (unknown): fixed so both implementations, and every
# platform, write the same bytes.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"


def _gzip_compress(data: _Buffer) -> bytes:
    raw = _as_bytes_like(data)
    deflater = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = deflater.compress(raw) + deflater.flush()
    trailer = struct.pack("<II", zlib.crc32(raw) & 0xFFFFFFFF, len(raw) & 0xFFFFFFFF)
    return _GZIP_HEADER + body + trailer


#: Deflate cannot expand more than 1032:1 (a 258-byte match per 2-bit code, block overhead aside): an
#: ISIZE above this multiple of the member's size is a lie, and no buffer is ever sized from it.
_DEFLATE_MAX_RATIO = 1032


def _gzip_decompress(data: _Buffer, cap: int) -> bytes | memoryview:
    """Inflate a gzip payload: one plain member through cramjam, sized by its trailer; else zlib.

    The fast path takes only what Java's ``GZIPOutputStream``, librdkafka and Python write: a member
    with no optional header fields (FLG 0) whose trailing ISIZE is at most the cap (and what deflate can
    produce from the bytes present). cramjam inflates it into a buffer of exactly ISIZE bytes: it
    checks the CRC32 and ISIZE of the trailer and refuses to write past the buffer, so a payload that
    would give more (a second member, a forged ISIZE) fails there. Any failure, or any other shape,
    goes to :func:`_gzip_decompress_zlib`, which decides and names the fault. The fast path gives zlib's
    bytes wherever zlib accepts, and refuses what zlib refuses with one exception: a back-reference
    reaching before the start of the member (zlib: "invalid distance too far back") reads zeros in
    miniz_oxide, and the member is accepted if its CRC32 and ISIZE match that output. ``fuzz/targets.py``
    checks this differentially; docs/SECURITY.md lists it.
    """
    buf = _as_bytes_like(data)
    n = len(buf)
    if n >= 18 and buf[0] == 0x1F and buf[1] == 0x8B and buf[2] == 8 and buf[3] == 0:
        isize = buf[n - 4] | buf[n - 3] << 8 | buf[n - 2] << 16 | buf[n - 1] << 24
        if isize <= cap and isize <= _DEFLATE_MAX_RATIO * n:
            out = np.empty(isize, dtype=np.uint8)
            try:
                got = cramjam.gzip.decompress_into(buf, out)  # type: ignore[arg-type]  # numpy exports the buffer protocol; its stubs lack __buffer__
            except Exception:  # as the compiled core's fast path: zlib below decides and names the fault
                pass
            else:
                if got == isize:
                    return out.data.toreadonly()
    return _gzip_decompress_zlib(buf, cap)


def _gzip_decompress_zlib(data: _Buffer, cap: int) -> bytes:
    """Inflate gzip with zlib: every header flag, concatenated members, the cap applied while inflating."""
    # zlib's max_length stops inflating at the limit, so a bomb never materialises past cap + 1 bytes.
    buf = bytes(data)
    chunks: list[bytes] = []
    total = 0
    while True:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)  # gzip wrapper only, as Java's GZIPInputStream
        chunk = inflater.decompress(buf, cap - total + 1)
        total += len(chunk)
        if total > cap:
            raise _cap_error(cap, "gzip")
        chunks.append(chunk)
        if not inflater.eof:
            raise DecompressionError("gzip payload is truncated (no end of stream)")
        buf = inflater.unused_data
        if not buf:
            return b"".join(chunks)
        # Concatenated members are legal gzip and Java reads them; anything else is corruption.
        if not buf.startswith(b"\x1f\x8b"):
            raise DecompressionError(f"{len(buf)} trailing bytes after the gzip stream")


# --------------------------------------------------------------------------------------------------
# snappy (xerial framing)
# --------------------------------------------------------------------------------------------------

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
#: version 1, minimum compatible version 1, as snappy-java's SnappyOutputStream writes them.
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)
#: Uncompressed bytes per xerial block (snappy-java's default block size).
XERIAL_BLOCK_SIZE = 32 * 1024


def _snappy_compress(data: _Buffer) -> bytes:
    mv = memoryview(_as_bytes_like(data))
    parts = [_XERIAL_HEADER]
    for start in range(0, len(mv), XERIAL_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(mv[start : start + XERIAL_BLOCK_SIZE]))
        parts.append(struct.pack(">i", len(block)))
        parts.append(block)
    return b"".join(parts)


def _snappy_decompress(data: _Buffer, cap: int) -> bytes | memoryview:
    mv = memoryview(_as_bytes_like(data))
    # Detect the framing by its 8-byte magic alone: version/compat are ignored because some producers
    # (Redpanda) write them little-endian (kafka-python issue #2414).
    if len(mv) >= 16 and mv[:8] == _XERIAL_MAGIC:
        blocks = []
        pos, end = 16, len(mv)
        while pos < end:
            if end - pos < 4:
                raise DecompressionError("truncated xerial snappy block length")
            (length,) = struct.unpack_from(">i", mv, pos)
            pos += 4
            if length < 0 or length > end - pos:
                raise DecompressionError(f"xerial snappy block length {length} exceeds the payload")
            blocks.append(mv[pos : pos + length])
            pos += length
    else:
        blocks = [mv]
    # Raw snappy starts with its uncompressed length, so the cap is checked before anything is inflated.
    sizes = [int(cramjam.snappy.decompress_raw_len(b)) for b in blocks]
    total = sum(sizes)
    if total > cap:
        raise _cap_error(cap, "snappy")
    out = np.empty(total, dtype=np.uint8)
    pos = 0
    for block, size in zip(blocks, sizes):
        written = cramjam.snappy.decompress_raw_into(block, out[pos : pos + size])  # type: ignore[arg-type]  # as above
        if written != size:
            raise DecompressionError("snappy block shorter than its declared length")
        pos += size
    return out.data.toreadonly()


# --------------------------------------------------------------------------------------------------
# lz4 (frame format)
# --------------------------------------------------------------------------------------------------

_LZ4_MAGIC = b"\x04\x22\x4d\x18"
#: FLG: version 01, independent blocks, no block checksum, no content size, no content checksum;
#: BD: 64 KiB maximum block size. This is what KafkaLZ4BlockOutputStream writes.
_LZ4_FLG = 0x60
_LZ4_BD = 0x40
LZ4_BLOCK_SIZE = 64 * 1024
_LZ4_BLOCK_MAX = {4: 64 * 1024, 5: 256 * 1024, 6: 1024 * 1024, 7: 4 * 1024 * 1024}

def _lz4_hc(descriptor: bytes) -> int:
    """The frame header checksum byte: second byte of XXH32 (seed 0) over the frame descriptor.

    XXH32 comes from the ``xxhash`` package (bindings to the reference C library) instead of a hand-written
    Python XXH32: 0.1 us instead of 1-1.7 us per 2-15 byte descriptor, and one less thing to get right.
    """
    return (xxh32_intdigest(descriptor) >> 8) & 0xFF


_LZ4_HEADER = _LZ4_MAGIC + bytes([_LZ4_FLG, _LZ4_BD, _lz4_hc(bytes([_LZ4_FLG, _LZ4_BD]))])
# KAFKA-3160: Kafka < 0.10 computed HC over magic + descriptor; magic 0 readers expect that value.
_LZ4_HEADER_MAGIC0 = _LZ4_MAGIC + bytes([_LZ4_FLG, _LZ4_BD, _lz4_hc(_LZ4_MAGIC + bytes([_LZ4_FLG, _LZ4_BD]))])
_LZ4_END_MARK = b"\x00\x00\x00\x00"


def _lz4_compress(data: _Buffer, magic: int) -> bytes:
    mv = memoryview(_as_bytes_like(data))
    parts = [_LZ4_HEADER_MAGIC0 if magic == 0 else _LZ4_HEADER]
    for start in range(0, len(mv), LZ4_BLOCK_SIZE):
        chunk = mv[start : start + LZ4_BLOCK_SIZE]
        block = bytes(cramjam.lz4.compress_block(chunk, store_size=False))
        if len(block) < len(chunk):
            parts.append(struct.pack("<I", len(block)))
            parts.append(block)
        else:  # incompressible: store it (high bit set), as LZ4F and the Java stream do
            parts.append(struct.pack("<I", len(chunk) | 0x80000000))
            parts.append(bytes(chunk))
    parts.append(_LZ4_END_MARK)
    return b"".join(parts)


def _skippable_frame(mv: memoryview, pos: int) -> int | None:
    """End of the skippable frame (magic 0x184D2A5?, shared by LZ4 and zstd) at ``pos``, else None."""
    (magic,) = struct.unpack_from("<I", mv, pos)
    if magic & 0xFFFFFFF0 != 0x184D2A50:
        return None
    if len(mv) - pos < 8:
        raise DecompressionError("truncated skippable frame")
    (size,) = struct.unpack_from("<I", mv, pos + 4)
    if size > len(mv) - pos - 8:
        raise DecompressionError("skippable frame runs past the payload")
    return pos + 8 + int(size)


def _frame_output(content_size: int | None, walked: int, codec: str) -> int:
    """A frame's output bound: its declared content size, which its blocks must be able to produce."""
    if content_size is None:
        return walked
    if content_size > walked:
        raise DecompressionError(f"{codec} frame declares {content_size} bytes but its blocks hold at most {walked}")
    return content_size


def _scan_frames(
    mv: memoryview, header_min: int, label: str, codec: str, frame: Callable[[int], tuple[int, int | None, int]]
) -> tuple[int, bool]:
    """Walk a payload of frames, skippable ones passed over: ``frame(pos)`` validates the frame at ``pos``
    and returns its end, its declared content size (None if it declares none) and what its blocks can
    produce. Returns the output upper bound and whether it is exact (every frame declared its size)."""
    n = len(mv)
    pos = 0
    total = 0
    exact = True
    while True:
        if n - pos < header_min:
            raise DecompressionError(f"truncated {label} frame header")
        skip_to = _skippable_frame(mv, pos)
        if skip_to is not None:
            pos = skip_to
        else:
            pos, content_size, walked = frame(pos)
            total += _frame_output(content_size, walked, codec)
            exact = exact and content_size is not None
        if pos == n:
            return total, exact


def _lz4_scan(mv: memoryview) -> tuple[list[tuple[int, int]], int, bool]:
    """Validate the framing of a sequence of LZ4 frames without decompressing anything.

    Returns ``(frame start, header checksum position)`` of each frame, an upper bound of the decompressed
    size (the declared content sizes, else per block what it can hold: its exact size when stored, else
    the block maximum or 256 times its compressed size, whichever is smaller) and whether that bound is
    exact (every frame declared its content size). Malformed or
    truncated framing raises :class:`DecompressionError` before any output buffer is allocated.
    """
    headers: list[tuple[int, int]] = []
    total, exact = _scan_frames(mv, 7, "LZ4", "lz4", lambda pos: _lz4_frame(mv, pos, headers))
    return headers, total, exact


def _lz4_frame(mv: memoryview, pos: int, headers: list[tuple[int, int]]) -> tuple[int, int | None, int]:
    """One LZ4 frame at ``pos`` (its header's place appended to ``headers``): see :func:`_scan_frames`."""
    n = len(mv)
    if mv[pos : pos + 4] != _LZ4_MAGIC:
        raise DecompressionError("not an LZ4 frame (bad magic number)")
    flg, bd = mv[pos + 4], mv[pos + 5]
    block_max = _LZ4_BLOCK_MAX.get((bd >> 4) & 0x7)
    if flg >> 6 != 1 or flg & 0x02 or bd & 0x8F or block_max is None:
        raise DecompressionError(f"invalid LZ4 frame descriptor FLG=0x{flg:02x} BD=0x{bd:02x}")
    p = pos + 6
    content_size = None
    if flg & 0x08:
        if n - p < 8:
            raise DecompressionError("truncated LZ4 frame header")
        (content_size,) = struct.unpack_from("<Q", mv, p)
        p += 8
    if flg & 0x01:
        p += 4  # dictionary id
    if p >= n:
        raise DecompressionError("truncated LZ4 frame header")
    headers.append((pos, p))
    p += 1
    block_checksum = 4 if flg & 0x10 else 0
    walked = 0
    while True:
        if n - p < 4:
            raise DecompressionError("truncated LZ4 frame (no end mark)")
        (word,) = struct.unpack_from("<I", mv, p)
        p += 4
        if word == 0:
            break
        size = word & 0x7FFFFFFF
        if size > block_max:
            raise DecompressionError(f"LZ4 block of {size} bytes exceeds the frame's {block_max}")
        # A compressed LZ4 block cannot expand more than ~255x (a match-length extension byte
        # adds at most 255 bytes), which keeps a tiny hostile frame from sizing a large buffer.
        walked += size if word & 0x80000000 else min(block_max, 256 * size + 64)
        p += size + block_checksum
        if p > n:
            raise DecompressionError("truncated LZ4 block")
    p += 4 if flg & 0x04 else 0  # content checksum
    if p > n:
        raise DecompressionError("truncated LZ4 content checksum")
    return p, content_size, walked


def _lz4_decompress(data: _Buffer, magic: int, cap: int) -> bytes | memoryview:
    mv = memoryview(_as_bytes_like(data))
    headers, bound, exact = _lz4_scan(mv)
    if magic == 0:
        # KAFKA-3160: magic 0 producers (Kafka < 0.10, kafka-python's lz4_encode_old_kafka) wrote the
        # header checksum over the frame magic too. Java ignores HC for magic 0; we rewrite it with the
        # correct value so liblz4 accepts the frame whichever way it was written.
        fixed = bytearray(mv)
        for frame_start, hc_pos in headers:
            fixed[hc_pos] = _lz4_hc(bytes(fixed[frame_start + 4 : hc_pos]))
        mv = memoryview(fixed)
    return _decompress_into(cramjam.lz4.decompress_into, mv, bound, exact, cap, "lz4")


# --------------------------------------------------------------------------------------------------
# zstd
# --------------------------------------------------------------------------------------------------

_ZSTD_MAGIC = 0xFD2FB528
_ZSTD_BLOCK_MAX = 128 * 1024


def _zstd_scan(mv: memoryview) -> tuple[int, bool]:
    """Validate the framing of a sequence of zstd frames: (output upper bound, bound exact?).

    Uses each frame's content size when present (one-shot compressors write it), else walks the block
    headers (streaming compressors such as zstd-jni leave it out): raw/RLE blocks state their size,
    compressed blocks produce at most 128 KiB. Malformed or truncated framing raises
    :class:`DecompressionError` before any output buffer is allocated.
    """
    return _scan_frames(mv, 4, "zstd", "zstd", lambda pos: _zstd_frame(mv, pos))


def _zstd_frame(mv: memoryview, pos: int) -> tuple[int, int | None, int]:
    """One zstd frame at ``pos``: see :func:`_scan_frames`."""
    n = len(mv)
    (magic,) = struct.unpack_from("<I", mv, pos)
    if magic != _ZSTD_MAGIC or n - pos < 5:
        raise DecompressionError("not a zstd frame (bad magic number)")
    fhd = mv[pos + 4]
    if fhd & 0x08:
        raise DecompressionError("zstd frame header has its reserved bit set")
    fcs_flag, single_segment = fhd >> 6, (fhd >> 5) & 1
    p = pos + 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[fhd & 0x3]
    fcs_size = (1 if single_segment else 0, 2, 4, 8)[fcs_flag]
    if n - p < fcs_size:
        raise DecompressionError("truncated zstd frame header")
    content_size = None
    if fcs_size == 1:
        content_size = mv[p]
    elif fcs_size == 2:
        content_size = struct.unpack_from("<H", mv, p)[0] + 256
    elif fcs_size == 4:
        content_size = struct.unpack_from("<I", mv, p)[0]
    elif fcs_size == 8:
        content_size = struct.unpack_from("<Q", mv, p)[0]
    p += fcs_size
    walked = 0
    while True:
        if n - p < 3:
            raise DecompressionError("truncated zstd block header")
        header = mv[p] | (mv[p + 1] << 8) | (mv[p + 2] << 16)
        p += 3
        last, block_type, size = header & 1, (header >> 1) & 3, header >> 3
        if block_type == 3 or size > _ZSTD_BLOCK_MAX:
            raise DecompressionError("invalid zstd block header")
        if block_type == 1:  # RLE: one byte repeated `size` times
            walked += size
            p += 1
        else:  # raw: `size` bytes as they are; compressed: at most 128 KiB out
            walked += size if block_type == 0 else _ZSTD_BLOCK_MAX
            p += size
        if p > n:
            raise DecompressionError("truncated zstd block")
        if last:
            break
    p += 4 if fhd & 0x04 else 0  # content checksum
    if p > n:
        raise DecompressionError("truncated zstd content checksum")
    return p, content_size, walked


def _zstd_decompress(data: _Buffer, cap: int) -> bytes | memoryview:
    mv = memoryview(_as_bytes_like(data))
    bound, exact = _zstd_scan(mv)
    return _decompress_into(cramjam.zstd.decompress_into, mv, bound, exact, cap, "zstd")
