"""``RecordColumns.batch_start``: where each batch row's entry starts in the decoded input.

Issue 12 (design): ``kafkawire/compat`` framed the fetch a second time to find each data batch's bytes.
The decoder knows where every entry it decoded starts and ends, so it says so; these tests check the
positions against an independent framing of the same bytes, on both implementations.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path
from types import ModuleType

import pytest

from kafkawire import encode_records

sys.path.append(str(Path(__file__).resolve().parent.parent))  # the fuzz package, beside tests/

from fuzz.targets import v2_batch  # noqa: E402


def frame(data: bytes) -> list[tuple[int, int]]:
    """``(start, end)`` of every complete entry, by the ``[offset][length]`` framing alone."""
    out, pos = [], 0
    while len(data) - pos >= 12:
        (length,) = struct.unpack_from(">i", data, pos + 8)
        if 12 + length > len(data) - pos:
            break
        out.append((pos, pos + 12 + length))
        pos += 12 + length
    return out


def control_batch(base_offset: int, producer_id: int, commit: bool) -> bytes:
    """A transaction marker batch (attributes: transactional | control), built by hand."""
    key = struct.pack(">hh", 0, 1 if commit else 0)
    value = struct.pack(">hi", 0, 0)
    body = b"\x00\x00\x00" + bytes([len(key) * 2]) + key + bytes([len(value) * 2]) + value + b"\x00"
    record = bytes([len(body) * 2]) + body
    return v2_batch(record, 1, attributes=0x30, base_offset=base_offset, producer_id=producer_id)


def _fetch() -> tuple[bytes, list[tuple[int, int]]]:
    parts = [
        encode_records([b"a", b"b"], base_offset=5),
        encode_records([b"c"], base_offset=7, magic=1),
        encode_records([b"d"], base_offset=8, magic=0),
        encode_records([b"x", b"y"], base_offset=9, magic=1, compression="gzip"),
        encode_records([b"p", b"q", b"r"], base_offset=11, compression="lz4"),
        encode_records([b"h"], base_offset=14, headers=[[("k", b"v")]]),
    ]
    data = b"".join(parts)
    return data + encode_records([b"tail"], base_offset=15)[:40], frame(data)


def test_every_batch_row_points_at_its_entry(impl: ModuleType) -> None:
    data, entries = _fetch()
    cols = impl.decode(data, True, -1, False, [])
    assert cols.batch_start.tolist() == [start for start, _ in entries]  # every entry yields records here
    assert cols.batch_start.dtype == "int64"
    for row, (start, end) in enumerate(entries):
        entry = data[start:end]
        assert entry[16] == cols.batch_magic[row]
        if cols.batch_magic[row] == 2:
            assert struct.unpack_from(">q", entry, 0)[0] == cols.batch_base_offset[row]


def test_rows_skip_entries_that_yield_nothing(impl: ModuleType) -> None:
    """Control batches, aborted batches and batches below the fetch offset add no row; the others keep theirs."""
    first = encode_records([b"old"], base_offset=0)
    aborted = encode_records([b"gone"], base_offset=1, producer_id=7, producer_epoch=0, transactional=True)
    marker = control_batch(2, 7, commit=False)
    kept = encode_records([b"new"], base_offset=3)
    data = first + aborted + marker + kept
    cols = impl.decode(data, True, 1, True, [(7, 1)])
    assert cols.value.to_pylist() == [b"new"]
    start = len(first) + len(aborted) + len(marker)
    assert cols.batch_start.tolist() == [start]


def test_fetch_offset_inside_a_wrapper_keeps_the_wrapper_position(impl: ModuleType) -> None:
    head = encode_records([b"a"], base_offset=0)
    wrapper = encode_records([b"x", b"y", b"z"], base_offset=1, magic=1, compression="snappy")
    cols = impl.decode(head + wrapper, True, 2, False, [])
    assert cols.offset.tolist() == [2, 3]
    assert cols.batch_start.tolist() == [len(head)]


@pytest.mark.parametrize("n", [0, 1])
def test_empty_and_single(impl: ModuleType, n: int) -> None:
    data = encode_records([b"v"]) if n else b""
    cols = impl.decode(data, True, -1, False, [])
    assert cols.batch_start.tolist() == ([0] if n else [])
