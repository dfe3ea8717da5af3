"""kafkawire.compat.aiokafka against aiokafka's own decoder (compiled and pure), on the same bytes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import aiokafka.consumer.fetcher as aio_fetcher
import pytest
from aiokafka.consumer.fetcher import READ_COMMITTED, READ_UNCOMMITTED, PartitionRecords
from aiokafka.record.memory_records import MemoryRecords as AioMemoryRecords
from aiokafka.structs import TopicPartition
from compat_corpus import HERE, corpus, data_batch, fetch_payloads, trace_aiokafka
from hypothesis import given
from hypothesis import strategies as st

from kafkawire.compat import aiokafka as dropin

CORPUS = corpus()
TP = TopicPartition("topic", 1)


@pytest.mark.parametrize("peek", [False, True], ids=["iterate", "peek-first"])
@pytest.mark.parametrize("check_crc", [True, False], ids=["crc", "no-crc"])
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_memory_records_trace_matches(name: str, check_crc: bool, peek: bool) -> None:
    data = CORPUS[name]
    expected = trace_aiokafka(AioMemoryRecords, data, check_crc=check_crc, peek=peek)
    assert trace_aiokafka(dropin.MemoryRecords, data, check_crc=check_crc, peek=peek) == expected


def test_pure_python_aiokafka_matches_too() -> None:
    """aiokafka without its extensions differs from the compiled one in places; the drop-in follows it."""
    env = dict(os.environ, AIOKAFKA_NO_EXTENSIONS="1", PYTHONPATH=str(HERE.parent.parent))
    proc = subprocess.run(
        [sys.executable, str(HERE / "compat_corpus.py"), "aiokafka"], capture_output=True, text=True, env=env
    )
    result = json.loads(proc.stdout)
    assert "_MemoryRecordsPy" in result["original"]
    assert result["cases"] > 300 and result["failures"] == []


def _consume(records_cls: type, data: bytes, aborted: list | None = None, **kwargs: object) -> list[object]:
    pr = PartitionRecords(
        TP,
        records_cls(data),
        aborted,
        kwargs.get("fetch_offset", 0),
        kwargs.get("key_deserializer"),
        kwargs.get("value_deserializer"),
        kwargs.get("check_crcs", True),
        kwargs.get("isolation_level", READ_UNCOMMITTED),
    )
    out: list[object] = []
    try:
        out.extend(pr)
    except Exception as e:
        out.append(("error", type(e).__name__, str(e)))
    out.append(("position", pr.next_fetch_offset))
    return out


@pytest.mark.parametrize("name", sorted(CORPUS))
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"check_crcs": False},
        {"fetch_offset": 5},
        {"isolation_level": READ_COMMITTED, "aborted": [(4242, 22), (4242, 0)]},
        {"key_deserializer": repr, "value_deserializer": repr},
    ],
    ids=["defaults", "no-crc", "fetch-offset-5", "read-committed-aborted", "deserializers"],
)
def test_consumer_records_match(name: str, options: dict) -> None:
    data = CORPUS[name]
    expected = _consume(AioMemoryRecords, data, **options)
    assert _consume(dropin.MemoryRecords, data, **options) == expected


def test_read_committed_drops_aborted_transactions() -> None:
    got = _consume(dropin.MemoryRecords, CORPUS["txn_abort"], [(4242, 22), (4242, 0)], isolation_level=READ_COMMITTED)
    assert [r.offset for r in got if hasattr(r, "offset")] == [10, 11, 12, 13, 16, 17, 18, 19, 20]


@given(data=fetch_payloads(), check_crc=st.booleans())
def test_random_payloads_match(data: bytes, check_crc: bool) -> None:
    expected = trace_aiokafka(AioMemoryRecords, data, check_crc=check_crc)
    assert trace_aiokafka(dropin.MemoryRecords, data, check_crc=check_crc) == expected


def test_fast_path_is_taken() -> None:
    mr = dropin.MemoryRecords(CORPUS["v2_zstd_headers"])
    batches = []
    while mr.has_next():
        batch = mr.next_batch()
        list(batch)
        batches.append(batch)
    assert batches and all(isinstance(b, dropin.DefaultRecordBatch) and b._state == 1 for b in batches)


def test_install_and_uninstall() -> None:
    original = aio_fetcher.MemoryRecords
    assert original is AioMemoryRecords and not dropin.is_installed()
    with dropin.installed():
        assert aio_fetcher.MemoryRecords is dropin.MemoryRecords
        dropin.install()
    assert aio_fetcher.MemoryRecords is original
    dropin.install()
    dropin.uninstall()
    dropin.uninstall()
    assert aio_fetcher.MemoryRecords is original


def test_records_reach_consumer_record_headers_as_tuples() -> None:
    got = _consume(dropin.MemoryRecords, data_batch(4, 0, headers=True))
    assert [r.headers for r in got[:2]] == [(), (("trace", b"abc"), ("h\u00e9", None), ("trace", b""))]
