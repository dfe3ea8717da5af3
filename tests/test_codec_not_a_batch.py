"""Bytes that are not record data say so (issue 12, defect 6, codec side).

Before the fix, decoding garbage that held no complete entry raised ``RecordTooLargeError`` ("record
batch at offset 7522537965568948079 needs 1919706168 bytes ...; raise the fetch size"): the advice for
a batch larger than the fetch, with an absurd offset (or None). Now the header fields that are present
are checked as a real batch has them; bytes that fail are a ``CorruptRecordError`` starting "not a
record batch: length field ... exceeds ...". A genuinely cut-off first batch is still
``RecordTooLargeError``, and a partial tail after complete entries still decodes silently. Both
implementations give the same class and the same message.
"""

from __future__ import annotations

import random
import struct
from types import ModuleType

import pytest

from kafkawire import CorruptRecordError, RecordTooLargeError, encode_records
from kafkawire.errors import KafkaWireError

GOOD = encode_records([b"x" * 200, b"y"], base_offset=77)


def _decode(impl: ModuleType, data: bytes, verify: bool = True):  # type: ignore[no-untyped-def]
    return impl.decode(data, verify, -1, False, [])


@pytest.mark.parametrize(
    ("data", "why"),
    [
        pytest.param(b"hello world, this is not kafka", "the magic byte 115 is not 0, 1 or 2", id="text"),
        pytest.param(b'{"key": "value", "n": 1}', "the magic byte 32 is not 0, 1 or 2", id="json"),
        pytest.param(b"\xff" * 8 + b"\x7f" * 32, "the base offset -1 is negative", id="ff-bytes"),
        pytest.param(b"\xff" * 10, "base offset -1 is negative", id="ff-no-length"),
        pytest.param(
            GOOD[:8] + struct.pack(">i", 10) + b"\0" * 3, "below the 14 bytes of the smallest entry", id="tiny"
        ),
        pytest.param(
            GOOD[:8] + struct.pack(">i", 40) + GOOD[12:30], "below the 49 bytes of a magic 2 entry", id="v2-short"
        ),
        pytest.param(
            GOOD[:12] + struct.pack(">i", -7) + GOOD[16:100], "partition leader epoch -7 is below -1", id="epoch"
        ),
    ],
)
def test_garbage_is_not_a_record_batch(impl: ModuleType, data: bytes, why: str) -> None:
    with pytest.raises(CorruptRecordError) as info:
        _decode(impl, data)
    msg = str(info.value)
    assert msg.startswith("not a record batch: ")
    assert why in msg
    if len(data) >= 12:
        length = struct.unpack_from(">i", data, 8)[0]
        assert f"length field {length} exceeds the {len(data)} bytes present" in msg
    assert "fetch size" not in msg


def test_cut_off_first_batch_is_still_record_too_large(impl: ModuleType) -> None:
    for cut in (8, 12, 16, 17, 61, 100, len(GOOD) - 1):
        with pytest.raises(RecordTooLargeError) as info:
            _decode(impl, GOOD[:cut])
        assert info.value.offset == 77
        assert info.value.size == (len(GOOD) if cut >= 12 else None)
        assert "fetch size" in str(info.value)


def test_too_few_bytes_for_a_header_never_prints_none(impl: ModuleType) -> None:
    for cut in (1, 7, 11):
        with pytest.raises(RecordTooLargeError) as info:
            _decode(impl, GOOD[:cut])
        assert "None" not in str(info.value)
        assert f"only {cut} bytes were fetched" in str(info.value)


def test_partial_tail_after_a_complete_batch_stays_silent(impl: ModuleType) -> None:
    for tail in (b"hello world, this is not kafka", b"\xff" * 8 + b"\x7f" * 32, GOOD[:50]):
        cols = _decode(impl, GOOD + tail)
        assert cols.value.to_pylist() == [b"x" * 200, b"y"]
        assert cols.valid_bytes == len(GOOD)


def test_random_garbage_never_reports_an_absurd_batch(impl: ModuleType) -> None:
    """Whatever random bytes decode to, a RecordTooLargeError must describe a plausible cut-off batch."""
    rng = random.Random(12)
    too_large = 0
    for _ in range(2000):
        data = rng.randbytes(rng.randrange(1, 200))
        try:
            _decode(impl, data)
        except RecordTooLargeError as exc:
            too_large += 1
            if len(data) >= 8:
                assert exc.offset is not None and exc.offset >= 0
            if len(data) >= 17:
                assert data[16] in (0, 1, 2)
        except KafkaWireError:
            pass
    assert too_large < 200  # at most ~1/256 * 3/4 of inputs of 17+ bytes, plus the short ones


def test_both_implementations_give_the_same_message(candidate_impl: ModuleType, reference: ModuleType) -> None:
    rng = random.Random(5)
    inputs = [rng.randbytes(rng.randrange(1, 120)) for _ in range(500)]
    inputs += [b"hello world, this is not kafka", b"\xff" * 8 + b"\x7f" * 32, GOOD[:50]]
    for data in inputs:
        got = []
        for impl in (candidate_impl, reference):
            try:
                _decode(impl, data)
                got.append("ok")
            except KafkaWireError as exc:
                got.append(f"{type(exc).__name__}: {exc}")
        # Classes always agree (the differential suite's rule); the messages this fix adds agree word for word.
        assert got[0].split(":")[0] == got[1].split(":")[0], data.hex()
        if "not a record batch" in got[0] + got[1] or "RecordTooLarge" in got[0]:
            assert got[0] == got[1], data.hex()
