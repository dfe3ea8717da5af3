"""Fuzz targets: one function per attack surface, each taking the fuzzer's bytes.

Every target enforces the same invariant (docs/SECURITY.md): hostile bytes may only raise a
:class:`kafkawire.KafkaWireError` subclass (:class:`kafkawire.ProtocolError` for the protocol layer);
any other exception, a sanitizer report, a crash or a hang is a bug. Targets also check that what a
successful decode returns is bounded by a small multiple of what went in (forged lengths and counts
must not turn into large allocations).

The first byte(s) of the input are *option bytes* that pick the variant (CRC checked or repaired,
codec, API/version, ...), so one corpus file drives every path. Targets that must get past a checksum
recompute it (``fix_crcs``): a fuzzer cannot forge CRC32C, and without the repair every mutation would
stop at the CRC check and never reach the record parser.

The decompression cap is lowered by :func:`apply_fuzz_limits` (the runner calls it; tests patch it).
Import this module only after :func:`fuzz._ext.install` when the sanitized extension is wanted.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable

import kafkawire
from kafkawire import compression
from kafkawire.errors import KafkaWireError, ProtocolError
from kafkawire.protocol import API_BY_KEY

__all__ = [
    "TARGETS",
    "RESPONSES",
    "FUZZ_CAP",
    "GZIP_FAST_PATH_LENIENCY",
    "InvariantViolation",
    "apply_fuzz_limits",
    "fix_crcs",
    "decode_during_writes",
    "v2_batch",
    "legacy_wrapper",
]

#: Decompression cap used while fuzzing: small, so that a bomb shows up as DecompressionError quickly
#: and a run cannot eat the shared machine's memory. The production default is far larger.
FUZZ_CAP = 1 << 20

#: Every response class and version of the protocol layer, in a stable order (option bytes index it).
RESPONSES: list[tuple[type, int]] = [
    (resp, v)
    for key in sorted(API_BY_KEY)
    for resp in (API_BY_KEY[key][1],)
    for v in range(resp.MIN_VERSION, resp.MAX_VERSION + 1)
]


#: zlib refusals that gzip's fast path (miniz_oxide, through cramjam) does not share: a back-reference
#: reaching before the start of the member reads zeros there. The member's CRC32 and ISIZE must still
#: match what it returns (docs/SECURITY.md). Any other disagreement with zlib is a violation.
GZIP_FAST_PATH_LENIENCY = ("invalid distance too far back",)


class InvariantViolation(AssertionError):
    """A target's invariant failed on a non-crashing input (wrong exception type, unbounded output)."""


def _check_exception(exc: BaseException, allowed: type[BaseException], what: str) -> None:
    if not isinstance(exc, allowed):
        raise InvariantViolation(f"{what}: {type(exc).__name__} is not a {allowed.__name__}: {exc!r}") from exc


def _columns_nbytes(cols: kafkawire.RecordColumns) -> int:
    total = 0
    for name in cols.RECORD_ARRAYS + cols.BATCH_ARRAYS:
        total += getattr(cols, name).nbytes
    for name in cols.BINARY_COLUMNS:
        col = getattr(cols, name)
        total += col.offsets.nbytes + col.data.nbytes + (0 if col.valid is None else col.valid.nbytes)
    return total


def _check_columns(cols: kafkawire.RecordColumns, data_len: int, inflated: int) -> None:
    """A decode's output stays within a small multiple of its input (plus what was decompressed)."""
    if not 0 <= cols.valid_bytes <= data_len:
        raise InvariantViolation(f"valid_bytes {cols.valid_bytes} outside 0..{data_len}")
    # ~40 bytes of fixed-width columns per record, records of >= 7 bytes: 16x is generous, never tight.
    bound = 16 * (data_len + inflated) + 4096
    got = _columns_nbytes(cols)
    if got > bound:
        raise InvariantViolation(f"decode of {data_len} bytes (+{inflated} inflated) returned {got} bytes")
    n = len(cols.offset)
    for name in cols.RECORD_ARRAYS:
        want = n + 1 if name == "header_offsets" else n
        if len(getattr(cols, name)) != want:
            raise InvariantViolation(f"column {name} has {len(getattr(cols, name))} rows for {n} records")
    if n and (cols.batch_index.min() < 0 or cols.batch_index.max() >= len(cols.batch_base_offset)):
        raise InvariantViolation("batch_index points outside the batch columns")


# --------------------------------------------------------------------------------------------------
# Building blocks: repair CRCs, wrap payloads in valid framing
# --------------------------------------------------------------------------------------------------


def fix_crcs(data: bytes | bytearray) -> bytearray:
    """Recompute the CRC of every complete entry (magic 2: CRC32C, magic 0/1: CRC32) in place of the stored one."""
    buf = bytearray(data)
    pos, n = 0, len(buf)
    while n - pos >= 17:
        (length,) = struct.unpack_from(">i", buf, pos + 8)
        if length < 5 or 12 + length > n - pos:
            break
        end = pos + 12 + length
        magic = buf[pos + 16]
        if magic == 2 and length >= 49:
            struct.pack_into(">I", buf, pos + 17, kafkawire.crc32c(bytes(buf[pos + 21 : end])))
        elif magic in (0, 1) and length >= 14:
            struct.pack_into(">I", buf, pos + 12, kafkawire.crc32(bytes(buf[pos + 16 : end])))
        pos = end
    return buf


def v2_batch(
    section: bytes,
    count: int,
    *,
    attributes: int = 0,
    base_offset: int = 0,
    last_offset_delta: int = 0,
    producer_id: int = -1,
) -> bytes:
    """A magic-2 record batch around an (already compressed, if the attributes say so) records section."""
    body = struct.pack(
        ">hiqqqhii", attributes, last_offset_delta, 1_700_000_000_000, 1_700_000_000_000, producer_id, 0, 0, count
    ) + bytes(section)
    head = struct.pack(">qiib", base_offset, 9 + len(body), 0, 2)
    return head + struct.pack(">I", kafkawire.crc32c(body)) + body


def legacy_wrapper(value: bytes | None, *, magic: int, attributes: int, offset: int = 0, timestamp: int = 0) -> bytes:
    """A magic 0/1 message (e.g. a compressed wrapper whose ``value`` is the compressed inner set)."""
    body = bytes([magic, attributes])
    if magic == 1:
        body += struct.pack(">q", timestamp)
    body += struct.pack(">i", -1)  # null key
    body += struct.pack(">i", -1) if value is None else struct.pack(">i", len(value)) + bytes(value)
    crc = kafkawire.crc32(body)
    return struct.pack(">qiI", offset, 4 + len(body), crc) + body


def _decode(data: bytes, opts: int, extra: int, inflated: int) -> None:
    """decode_records with options from ``opts``; checks the invariant."""
    read_committed = bool(opts & 4)
    kwargs: dict = {"verify_crc": bool(opts & 1)}
    if opts & 8:
        kwargs["fetch_offset"] = extra - 8
    if read_committed:
        kwargs["isolation"] = "read_committed"
        # A few aborted transactions of small producer ids, so the filter has something to match.
        kwargs["aborted_transactions"] = [((extra >> 4) - 1, extra & 15), (extra & 3, 0)]
    try:
        cols = kafkawire.decode_records(data, **kwargs)
    except Exception as exc:
        _check_exception(exc, KafkaWireError, "decode_records")
        return
    _check_columns(cols, len(data), inflated)
    for i in range(min(len(cols.offset), 4)):  # materialise a few records: the Python views must hold
        cols[i]


def _outcome(data: bytes, kwargs: dict) -> kafkawire.RecordColumns | None:
    try:
        return kafkawire.decode_records(data, **kwargs)
    except Exception as exc:
        _check_exception(exc, KafkaWireError, "decode_records")
        return None


def decode_during_writes(a: bytes, b: bytes, rounds: int, **kwargs: object) -> int:
    """Decode a ``bytearray`` ``rounds`` times while a thread keeps switching it between states ``a`` and ``b``.

    The "buffer changes during decode" mode (issue 12): the compiled core releases the GIL on large
    batches, so another thread can write into the caller's buffer mid-decode. Each decode must either
    raise a :class:`KafkaWireError` or return exactly what decoding ``a`` or ``b`` alone returns (a
    consistent state), never a crash, another exception or records mixed from both. The differing
    bytes are written with one slice assignment, so under the GIL the buffer is only ever ``a`` or ``b``;
    a reader that runs without the GIL may still see a torn mix. Returns how many decodes succeeded.
    """
    if len(a) != len(b):
        raise ValueError("the two states must have the same length (a bytearray with exports cannot resize)")
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    if not diff:
        raise ValueError("the two states are identical")
    lo, hi = diff[0], diff[-1] + 1
    expected = [c for c in (_outcome(a, kwargs), _outcome(b, kwargs)) if c is not None]
    buf = bytearray(a)
    span_a, span_b = a[lo:hi], b[lo:hi]
    stop = threading.Event()

    def writer() -> None:
        while not stop.is_set():
            buf[lo:hi] = span_b
            buf[lo:hi] = span_a

    thread = threading.Thread(target=writer, name="kafkawire-buffer-writer", daemon=True)
    thread.start()
    ok = 0
    try:
        for _ in range(rounds):
            try:
                cols = kafkawire.decode_records(buf, **kwargs)  # type: ignore[arg-type]
            except Exception as exc:
                _check_exception(exc, KafkaWireError, "decode_records of a changing buffer")
                continue
            if not any(cols.equals(want) for want in expected):
                raise InvariantViolation("decode of a changing buffer returned what neither state decodes to")
            ok += 1
    finally:
        stop.set()
        thread.join()
    return ok


# --------------------------------------------------------------------------------------------------
# Targets
# --------------------------------------------------------------------------------------------------


def target_records(data: bytes) -> None:
    """Raw fetch bytes into decode_records: batches, legacy sets, partial tails, read_committed.

    ``data[0]`` options: bit 0 verify CRC, bit 1 repair CRCs first, bit 2 read_committed, bit 3
    fetch_offset; ``data[1]`` parameterises the fetch offset and aborted list.
    """
    if len(data) < 2:
        return
    opts, extra, payload = data[0], data[1], data[2:]
    if opts & 2:
        payload = bytes(fix_crcs(payload))
    # Each complete entry may inflate up to the cap.
    _decode(payload, opts, extra, compression.MAX_DECOMPRESSED_SIZE * (len(payload) // 26 + 1))


def target_legacy(data: bytes) -> None:
    """The legacy path: the input is the *inner* message set of a magic 0/1 compressed wrapper.

    The harness compresses it and wraps it with a valid CRC, so mutations reach the inner walk (relative
    offsets, nested wrappers, inner magic checks) instead of dying in the compressed framing.
    ``data[0]`` options: bit 0 verify CRC, bit 1 repair inner CRCs, bit 2 read_committed, bit 3
    fetch_offset, bit 4 wrapper magic 1, bits 5-6 codec (gzip/snappy/lz4/none-as-compressed-id 0 is
    uncompressed), bit 7 LogAppendTime; ``data[1]`` the wrapper offset (0 = KIP-31's "as written").
    """
    if len(data) < 2:
        return
    opts, extra, inner = data[0], data[1], data[2:]
    if opts & 2:
        inner = bytes(fix_crcs(inner))
    magic = (opts >> 4) & 1
    codec = (opts >> 5) & 3  # 0 none: the inner bytes become the plain value of an uncompressed message
    attributes = codec | (8 if opts & 0x80 and magic == 1 else 0)
    value = compression.compress(codec, inner, magic) if codec else inner
    entry = legacy_wrapper(value, magic=magic, attributes=attributes, offset=extra * 1000, timestamp=extra)
    _decode(entry, opts & ~2, extra, len(inner))


def target_v2(data: bytes) -> None:
    """A magic-2 batch whose records section is the input (compressed by the harness), CRC valid.

    ``data[0]`` options: bits 0-2 codec (5-7 stay unknown ids), bit 3 LogAppendTime, bit 4
    transactional, bit 5 control, bit 6 read_committed, bit 7 fetch_offset; ``data[1]`` the record
    count (0-254, 255 = a forged 2**31-1), ``data[2]`` the last offset delta.
    """
    if len(data) < 3:
        return
    opts, count_b, lod, section = data[0], data[1], data[2], data[3:]
    codec = opts & 7
    count = 0x7FFFFFFF if count_b == 255 else count_b
    packed = compression.compress(codec, section, 2) if 1 <= codec <= 4 else section
    attributes = codec | (opts & 0x38)
    batch = v2_batch(packed, count, attributes=attributes, base_offset=lod, last_offset_delta=lod, producer_id=lod & 3)
    _decode(batch, 1 | (4 if opts & 0x40 else 0) | (8 if opts & 0x80 else 0), lod, len(section))


def target_changing(data: bytes) -> None:
    """The input's fetch bytes decoded while another thread rewrites part of them (see :func:`decode_during_writes`).

    ``data[0]`` options as in :func:`target_records` (bit 1 repairs the CRCs of both states);
    ``data[1]`` picks where the second state differs (a position scaled to the payload) and ``data[2]``
    the XOR mask (0 is taken as 0xFF) over 4 bytes there.
    """
    if len(data) < 4:
        return
    opts, where, mask, payload = data[0], data[1], data[2] or 0xFF, data[3:]
    b = bytearray(payload)
    at = where * len(b) // 256
    for i in range(at, min(at + 4, len(b))):
        b[i] ^= mask
    a_state, b_state = bytes(payload), bytes(b)
    if opts & 2:
        a_state, b_state = bytes(fix_crcs(a_state)), bytes(fix_crcs(b_state))
    if a_state == b_state:
        return
    kwargs: dict = {"verify_crc": bool(opts & 1)}
    if opts & 4:
        kwargs.update(isolation="read_committed", aborted_transactions=[(0, 0), (1, 0)])
    decode_during_writes(a_state, b_state, 3, **kwargs)


def target_decompress(data: bytes) -> None:
    """compression.decompress on hostile payloads: every codec and magic, with the cap enforced.

    ``data[0]``: bits 0-2 codec, bits 3-4 magic. gzip is checked differentially: what decompress
    returns (through cramjam's fast path when it applies) must be what zlib alone returns.
    """
    if not data:
        return
    codec, magic, payload = data[0] & 7, (data[0] >> 3) & 3, data[1:]
    try:
        out = compression.decompress(codec, payload, magic)
    except Exception as exc:
        _check_exception(exc, KafkaWireError, "decompress")
        return
    if len(out) > compression.MAX_DECOMPRESSED_SIZE:
        raise InvariantViolation(f"decompress returned {len(out)} bytes, above the cap")
    if codec == 1:
        # Differential: gzip's cramjam fast path may only accept what zlib accepts, with the same bytes,
        # apart from the one documented leniency of miniz_oxide (GZIP_FAST_PATH_LENIENCY).
        try:
            want = compression._gzip_decompress_zlib(payload, compression.MAX_DECOMPRESSED_SIZE)
        except Exception as exc:
            if not any(why in str(exc) for why in GZIP_FAST_PATH_LENIENCY):
                raise InvariantViolation(f"gzip fast path accepted what zlib refuses: {exc!r}") from exc
        else:
            if bytes(out) != want:
                raise InvariantViolation("gzip fast path and zlib inflate to different bytes")


def target_protocol(data: bytes) -> None:
    """``XResponse.decode(body, version)`` for every response API and version.

    ``data[0:2]`` (big-endian, modulo the number of (API, version) pairs) picks the decoder. A body that
    decodes must re-encode to a body that decodes to an equal message, and a Fetch response's record
    sets are decoded too (those may raise any KafkaWireError: they are record bytes).
    """
    if len(data) < 2:
        return
    cls, version = RESPONSES[((data[0] << 8) | data[1]) % len(RESPONSES)]
    body = data[2:]
    try:
        msg = cls.decode(body, version, allow_trailing=bool(data[0] & 0x80))
    except Exception as exc:
        _check_exception(exc, ProtocolError, f"{cls.__name__}.decode v{version}")
        return
    try:
        again = cls.decode(msg.encode_body(version), version)
    except Exception as exc:
        raise InvariantViolation(f"{cls.__name__} v{version}: decoded message does not re-encode: {exc!r}") from exc
    if again != msg:
        raise InvariantViolation(f"{cls.__name__} v{version}: re-encoded message decodes differently")
    if cls.__name__ == "FetchResponse":
        for topic in msg.responses:
            for part in topic.partitions:
                if part.records is None:
                    continue
                try:
                    part.records_columns(isolation="read_committed")
                except Exception as exc:
                    _check_exception(exc, KafkaWireError, "FetchResponse partition records")


def target_group(data: bytes) -> None:
    """The consumer-group payloads embedded in JoinGroup/SyncGroup responses (``kafkawire.client.group.payloads``).

    ``data[0]`` bit 0: decode as an assignment (SyncGroup) instead of a subscription (JoinGroup member
    metadata, written by *other* group members: as hostile as anything a broker sends).
    """
    from kafkawire.client.group.payloads import decode_assignment, decode_subscription

    if not data:
        return
    fn = decode_assignment if data[0] & 1 else decode_subscription
    try:
        fn(data[1:])
    except Exception as exc:
        _check_exception(exc, ProtocolError, fn.__name__)


#: Name -> target. ``fuzz/run.py`` runs them; ``fuzz/corpus.py`` writes their seed corpora.
TARGETS: dict[str, Callable[[bytes], None]] = {
    "records": target_records,
    "legacy": target_legacy,
    "v2": target_v2,
    "changing": target_changing,
    "decompress": target_decompress,
    "protocol": target_protocol,
    "group": target_group,
    "avro": lambda data: _avro_target()(data),  # fuzz/avro_target.py: registry-framed Avro values (issue 20)
    "protobuf": lambda data: _protobuf_target()(data),  # fuzz/protobuf_target.py: Protobuf values (issue 33)
}


def _protobuf_target() -> Callable[[bytes], None]:
    from fuzz.protobuf_target import target_protobuf

    return target_protobuf


def _avro_target() -> Callable[[bytes], None]:
    from fuzz.avro_target import target_avro

    return target_avro


def apply_fuzz_limits() -> None:
    """Lower the decompression cap to :data:`FUZZ_CAP` for this process (the fuzz runner calls it)."""
    compression.MAX_DECOMPRESSED_SIZE = FUZZ_CAP
