"""kafkawire.compat.kafka_python against kafka-python's own decoder, on the same bytes.

Three levels: ``MemoryRecords`` traces (every batch and record attribute, CRC results, reprs, errors) over
a corpus of fetch payloads; the fetcher's ``PartitionRecords`` (the ConsumerRecords a consumer returns,
with read_committed and aborted transactions, CRC checks on and off, fetch offsets inside batches);
and older kafka-python releases (2.0.2 ... 3.0.0) in a subprocess. Checks also that the fast path is
really taken, so the equalities are not the fallback comparing kafka-python with itself.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import kafka.consumer.fetcher as kp_fetcher
import pytest
from compat_corpus import (
    HERE,
    T0,
    consume_partition_records,
    corpus,
    data_batch,
    fetch_payloads,
    fetcher_options,
    trace_kafka_python,
)
from hypothesis import given
from hypothesis import strategies as st
from kafka.consumer.fetcher import Fetcher
from kafka.protocol.consumer import IsolationLevel
from kafka.record.memory_records import MemoryRecords as KpMemoryRecords
from kafka.structs import TopicPartition

from kafkawire.compat import kafka_python as dropin
from kafkawire.compat._fast import FetchColumns

CORPUS = corpus()
TP = TopicPartition("topic", 3)


@pytest.mark.parametrize("peek", [False, True], ids=["iterate", "peek-first"])
@pytest.mark.parametrize("check_crc", [True, False], ids=["crc", "no-crc"])
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_memory_records_trace_matches(name: str, check_crc: bool, peek: bool) -> None:
    data = CORPUS[name]
    expected = trace_kafka_python(KpMemoryRecords, data, check_crc=check_crc, peek=peek)
    assert trace_kafka_python(dropin.MemoryRecords, data, check_crc=check_crc, peek=peek) == expected


def _data_batches(data: bytes) -> list[tuple[dropin.DefaultRecordBatch, list]]:
    """The kafkawire-backed batches of a payload, each with its records."""
    mr = dropin.MemoryRecords(data)
    out = []
    while (batch := mr.next_batch()) is not None:
        if isinstance(batch, dropin.DefaultRecordBatch):
            out.append((batch, list(batch)))
    return out


@pytest.mark.parametrize("name", [n for n in sorted(CORPUS) if n.startswith(("v2_", "txn_", "idempotent"))])
def test_fast_path_is_taken_for_valid_data(name: str) -> None:
    batches = [b for b, _ in _data_batches(CORPUS[name])]
    assert batches, "no magic-2 data batch in this payload"
    assert all(b._kw_state == 1 for b in batches)  # _FAST: records came from kafkawire's columns
    assert isinstance(batches[0]._kw_owner._kw_fetch, FetchColumns)  # one decode for the whole fetch


@pytest.mark.parametrize("name", ["corrupt_record_length", "bad_header_key", "corrupt_codec_7"])
def test_unreproducible_batches_fall_back_to_kafka_python(name: str) -> None:
    mr = dropin.MemoryRecords(CORPUS[name])
    states = []
    while (batch := mr.next_batch()) is not None:
        try:
            list(batch)
        except Exception:
            pass
        states.append(batch._kw_state)
    assert 2 in states  # _FALLBACK for the bad batch
    assert 1 in states  # ... while the good batches around it still take the fast path


FETCHER_OPTIONS = fetcher_options()


@pytest.mark.parametrize("fast_path", [True, False], ids=["fetcher-fast-path", "memory-records-only"])
@pytest.mark.parametrize("options", sorted(FETCHER_OPTIONS))
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_consumer_records_match(name: str, options: str, fast_path: bool) -> None:
    """What the real fetcher hands to poll(): ConsumerRecords, errors, positions and byte counts."""
    data, opts = CORPUS[name], FETCHER_OPTIONS[options]
    expected = consume_partition_records(data, drop_in=False, **opts)
    assert consume_partition_records(data, drop_in=True, fast_path=fast_path, **opts) == expected


def test_read_committed_drops_aborted_transactions() -> None:
    """Not only equal: the aborted data is really gone (guards against both sides ignoring it)."""
    opts = {
        "isolation_level": IsolationLevel.READ_COMMITTED,
        "aborted_transactions": [(4242, 22), (4242, 0)],  # unsorted, as some brokers send them
    }
    got = consume_partition_records(CORPUS["txn_abort"], drop_in=True, **opts)
    assert got == consume_partition_records(CORPUS["txn_abort"], drop_in=False, **opts)
    offsets = [r.offset for r in got if hasattr(r, "offset")]
    assert offsets == [10, 11, 12, 13, 16, 17, 18, 19, 20]  # 0-9 and 22-24 aborted, markers hidden
    assert got[-1][1] == 26  # the position moves past the last control batch


@given(data=fetch_payloads(), check_crc=st.booleans())
def test_random_payloads_match(data: bytes, check_crc: bool) -> None:
    expected = trace_kafka_python(KpMemoryRecords, data, check_crc=check_crc)
    assert trace_kafka_python(dropin.MemoryRecords, data, check_crc=check_crc) == expected


@given(data=fetch_payloads(), flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), max_size=3))
def test_corrupted_payloads_give_the_same_consumer_records(data: bytes, flips: list[tuple[int, int]]) -> None:
    """Random byte flips, consumed with CRC checks on (kafka-python's default)."""
    buf = bytearray(data)
    for pos, mask in flips:
        if buf:
            buf[pos % len(buf)] ^= mask
    expected = consume_partition_records(bytes(buf), drop_in=False)
    assert consume_partition_records(bytes(buf), drop_in=True) == expected


def test_size_in_bytes_for_log_append_time_is_measured() -> None:
    """LogAppendTime loses the timestamp deltas from the columns; sizes come from the bytes then."""
    data = CORPUS["v2_gzip_log_append"]
    ours = [r.size_in_bytes for _, records in _data_batches(data) for r in records]
    mr, theirs = KpMemoryRecords(data), []
    while (batch := mr.next_batch()) is not None:
        theirs.extend(r.size_in_bytes for r in batch)
    assert ours == theirs and len(set(ours)) > 1


def test_headers_lists_are_not_shared() -> None:
    records = list(dropin.MemoryRecords(data_batch(4, 0)).next_batch())
    records[0].headers.append(("x", b"y"))
    assert [len(r.headers) for r in records] == [1, 0, 0, 0]


def test_install_and_uninstall() -> None:
    original = kp_fetcher.MemoryRecords
    original_loop = Fetcher.PartitionRecords._unpack_records
    assert original is KpMemoryRecords and not dropin.is_installed()
    dropin.install()
    try:
        assert kp_fetcher.MemoryRecords is dropin.MemoryRecords and dropin.is_installed()
        assert dropin.fetcher_fast_path_installed()  # kafka-python 3.0.x: a fetcher loop we know
        dropin.install()  # idempotent: uninstall still restores kafka-python's class and loop
    finally:
        dropin.uninstall()
    assert kp_fetcher.MemoryRecords is original and not dropin.is_installed()
    assert Fetcher.PartitionRecords._unpack_records is original_loop and not dropin.fetcher_fast_path_installed()
    with dropin.installed(fetcher_fast_path=False):
        assert dropin.is_installed() and not dropin.fetcher_fast_path_installed()
    dropin.uninstall()  # no-op when not installed
    assert kp_fetcher.MemoryRecords is original
    with dropin.installed():
        assert dropin.is_installed()
    assert kp_fetcher.MemoryRecords is original


def test_validate_crc_after_iteration_is_an_error_as_in_kafka_python() -> None:
    data = data_batch(3, 0)
    for cls in (KpMemoryRecords, dropin.MemoryRecords):
        batch = cls(data).next_batch()
        assert batch.validate_crc()
        list(batch)
        with pytest.raises(AssertionError):
            batch.validate_crc()


def test_timestamps_and_offsets_are_exact() -> None:
    data = data_batch(5, 2**40 + 7, timestamp=T0)
    records = list(dropin.MemoryRecords(data).next_batch())
    assert [r.offset for r in records] == [2**40 + 7 + i for i in range(5)]
    assert [r.timestamp for r in records] == [T0 + 13 * i - (7 if i % 4 == 1 else 0) for i in range(5)]


# ------------------------------------------------------------------------ older kafka-python releases

OLD_RELEASES = ["2.0.2", "2.1.6", "2.2.21", "3.0.0"]
CACHE = Path(os.environ.get("KAFKAWIRE_TEST_CACHE", Path.home() / ".cache" / "kafkawire-tests"))


def _release(version: str) -> Path:
    """kafka-python ``version`` unpacked in a cache directory (downloaded from PyPI once)."""
    target = CACHE / f"kafka-python-{version}"
    if (target / "kafka" / "__init__.py").exists():
        return target
    wheels = CACHE / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", str(wheels),
         f"kafka-python=={version}"],
        check=True,
    )  # fmt: skip
    (wheel,) = wheels.glob(f"kafka_python-{version}-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(target)
    return target


@pytest.mark.slow
@pytest.mark.parametrize("version", OLD_RELEASES)
def test_older_kafka_python_releases(version: str) -> None:
    root = _release(version)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), str(HERE.parent.parent)]))
    proc = subprocess.run(
        [sys.executable, str(HERE / "compat_corpus.py"), "kafka-python"],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    result = json.loads(proc.stdout)
    assert result["version"] == version
    # 2.2+ run the fetcher loop kafkawire replaces: their ConsumerRecords were compared as well.
    assert result["fetcher_fast_path"] == (version >= "2.2")
    assert result["fetcher_cases"] > 0 or version < "2.2"
    assert result["cases"] > 300
    assert result["failures"] == []


def test_itertools_islice_consumption_matches() -> None:
    """The fetcher stops mid-batch (max_poll_records) and resumes: the rest must still match."""
    data = CORPUS["v2_lz4_many_small"]
    mine = Fetcher.PartitionRecords(0, TP, dropin.MemoryRecords(data))
    theirs = Fetcher.PartitionRecords(0, TP, KpMemoryRecords(data))
    sizes = itertools.cycle([1, 2, 5])
    taken = 0
    while mine:  # the fetcher stops asking once the records are drained (take() would fail then)
        n = next(sizes)
        a, b = mine.take(n), theirs.take(n)
        assert a == b
        taken += len(a)
    assert not theirs and taken == 79
