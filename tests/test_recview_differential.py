"""The per-record views (issue 32): the compiled ``kafkawire._recview`` and its pure twin
``kafkawire._pure.recview`` give, for every record, the fields the columns hold (``columns[i]``), and
agree with each other: nulls, empty values, headers (wire order, duplicates, null values, non-UTF-8
keys), leader epochs, and what the read-committed filter leaves of control and aborted batches. Also the
record cursor of the consumer loop: order, what it reports as not yet moved past, and discarding.
"""

from __future__ import annotations

import importlib
import pickle
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkawire import Record, RecordColumns, RecordView, decode_records, encode_records
from tests.conftest import REQUIRE_COMPILED
from tests.test_codec_differential import txn_fetch

VIEWS = {"pure": importlib.import_module("kafkawire._pure.recview")}
try:
    VIEWS["compiled"] = importlib.import_module("kafkawire._recview")
except ImportError:
    if REQUIRE_COMPILED:
        raise

FIELDS = ("offset", "timestamp", "timestamp_type", "key", "value", "headers", "topic", "partition",
          "leader_epoch", "serialized_key_size", "serialized_value_size")

nullable = st.none() | st.binary(max_size=20)


@pytest.fixture(params=sorted(VIEWS))
def views(request: pytest.FixtureRequest) -> ModuleType:
    return VIEWS[request.param]


@st.composite
def record_batches(draw: st.DrawFn) -> tuple[bytes, list[dict[str, Any]]]:
    """One to three v2 batches (each its own codec and leader epoch) and what each record holds."""
    parts, expected = [], []
    offset = draw(st.integers(min_value=0, max_value=2**40))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        n = draw(st.integers(min_value=1, max_value=8))
        values = draw(st.lists(nullable, min_size=n, max_size=n))
        keys = draw(st.lists(nullable, min_size=n, max_size=n))
        hkeys = st.binary(max_size=5) | st.sampled_from([b"dup", "é".encode(), b"\xff\xfe"])
        headers = draw(st.lists(st.lists(st.tuples(hkeys, nullable), max_size=3), min_size=n, max_size=n))
        epoch = draw(st.integers(min_value=-1, max_value=2**31 - 1))
        ts = draw(st.lists(st.integers(min_value=0, max_value=2**41), min_size=n, max_size=n))
        codec = draw(st.sampled_from([None, "gzip", "lz4", "zstd", "snappy"]))
        parts.append(encode_records(values, keys, timestamps=ts, headers=headers, base_offset=offset,
                                    compression=codec, partition_leader_epoch=epoch))
        for i in range(n):
            expected.append({
                "offset": offset + i, "timestamp": ts[i], "key": keys[i], "value": values[i], "leader_epoch": epoch,
                "headers": [(k.decode("utf-8", "surrogateescape"), v) for k, v in headers[i]],
                "serialized_key_size": -1 if keys[i] is None else len(keys[i]),
                "serialized_value_size": -1 if values[i] is None else len(values[i]),
            })
        offset += n
    return b"".join(parts), expected


def fields(view: Any) -> dict[str, Any]:
    return {name: getattr(view, name) for name in FIELDS}


@given(batches=record_batches())
def test_views_hold_what_was_encoded_and_agree(batches: tuple[bytes, list[dict[str, Any]]]) -> None:
    data, expected = batches
    cols = decode_records(data)
    pure = list(VIEWS["pure"].iter_records(cols))
    assert len(pure) == len(expected) == len(cols)
    for name, mod in VIEWS.items():
        got = list(mod.iter_records(cols, "t", 3))
        assert len(got) == len(expected), name
        for i, (view, want) in enumerate(zip(got, expected)):
            f = fields(view)
            assert f["topic"] == "t" and f["partition"] == 3
            assert f["timestamp_type"] == 0
            for k, v in want.items():
                assert f[k] == v, (name, i, k)
                assert type(f[k]) is type(v), (name, i, k)
            assert view == cols[i] and view.to_record() == cols[i] and type(view.to_record()) is Record
            assert tuple(view) == tuple(cols[i]) and view[4] == want["value"] and view[-1] == want["headers"]
            assert fields(pure[i]) == {**f, "topic": None, "partition": -1}


def test_iterating_columns_yields_views_equal_to_the_records() -> None:
    data = encode_records([b"a", None, b"", b"d"], [None, b"k", b"", b"k"],
                          headers=[[], [("h", b"1"), ("h", None)], [("", b"")], []], base_offset=5)
    cols = decode_records(data)
    views = list(cols)
    assert all(isinstance(v, RecordView) for v in views)
    assert views == cols.to_records() == [cols[i] for i in range(4)]
    assert all(type(r) is Record for r in cols.to_records())
    offset, _, _, key, value, headers = views[1]
    assert (offset, key, value, headers) == (6, b"k", None, [("h", b"1"), ("h", None)])
    assert views[2].value == b"" and views[2].key == b"" and views[2].headers == [("", b"")]
    assert views[0].key is None and views[0].serialized_key_size == -1 and views[2].serialized_value_size == 0
    assert views[0] != views[1] and views[0] != cols[1] and views[0] != "x"
    assert views[0].topic is None and views[0].partition == -1
    cols._locate("orders", 2)
    again = list(cols)
    assert again[3].topic == "orders" and again[3].partition == 2
    assert again[3] != views[3]  # same tuple, different place
    assert tuple(again[3]) == tuple(views[3])
    with pytest.raises(TypeError):
        hash(again[0])
    with pytest.raises(TypeError):
        RecordView(cols, 0)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="to_record"):
        pickle.dumps(again[0])
    assert pickle.loads(pickle.dumps(again[0].to_record())) == again[0]


def test_read_committed_filtering_agrees(views: ModuleType) -> None:
    """Control batches and aborted transactions never appear as views; the survivors' fields are the columns'."""
    ref = importlib.import_module("kafkawire._pure.codec")
    data, aborted = txn_fetch(ref)
    committed = decode_records(data, isolation="read_committed", aborted_transactions=aborted)
    everything = decode_records(data)
    got = [v.value for v in views.iter_records(committed)]
    assert got == [b"p2-3", b"p2-4", b"plain", b"p1-8", b"p1-9"]
    assert [v.offset for v in views.iter_records(everything)] == [0, 1, 2, 3, 4, 7, 8, 9, 10, 11]
    pure = VIEWS["pure"].iter_records(committed)
    assert [fields(v) for v in views.iter_records(committed)] == [fields(v) for v in pure]


def test_hand_built_columns_with_bad_offsets_raise_not_crash(views: ModuleType) -> None:
    cols = decode_records(encode_records([b"abc", b"de"]))
    cols.value.offsets = np.array([0, 3, 1000], dtype=np.int32)  # past the data
    got = list(views.iter_records(cols))
    assert got[0].value == b"abc"
    with pytest.raises(ValueError, match="outside its data"):
        _ = got[1].value
    cols.batch_index = np.array([0, 9], dtype=np.int32)
    with pytest.raises(ValueError, match="batch_index"):
        _ = list(views.iter_records(cols))[1].leader_epoch


def _answers(*polls: dict[tuple[str, int], RecordColumns]) -> Any:
    todo = list(polls)
    return lambda: todo.pop(0) if todo else None


def _part(base: int, n: int, epoch: int = 4) -> RecordColumns:
    return decode_records(encode_records([b"v%d" % (base + i) for i in range(n)], base_offset=base,
                                         partition_leader_epoch=epoch))


def test_cursor_walks_partitions_and_reports_what_was_not_moved_past(views: ModuleType) -> None:
    a, b = ("t", 0), ("t", 1)
    cursor = views.RecordCursor(_answers({a: _part(10, 3), b: _part(0, 2)}, {}, {b: _part(2, 1, epoch=5)}))
    assert cursor.pending() == {} and cursor.buffered() == 0
    first = next(cursor)
    assert (first.topic, first.partition, first.offset) == ("t", 0, 10)
    # In hand: offset 10 (not moved past), partition 1 not started.
    assert cursor.pending() == {a: (10, -1), b: (0, -1)}
    assert cursor.pending(True) == {a: (11, 4), b: (0, -1)}
    assert cursor.buffered() == 4
    assert next(cursor).offset == 11
    assert cursor.pending() == {a: (11, 4), b: (0, -1)}
    assert next(cursor).offset == 12
    assert cursor.pending() == {a: (12, 4), b: (0, -1)} and cursor.pending(True) == {b: (0, -1)}
    assert [(r.partition, r.offset) for r in cursor] == [(1, 0), (1, 1), (1, 2)]  # the empty poll is skipped
    assert cursor.pending() == {} and cursor.buffered() == 0
    with pytest.raises(StopIteration):
        next(cursor)


def test_cursor_discard(views: ModuleType) -> None:
    a, b = ("t", 0), ("t", 1)
    cursor = views.RecordCursor(_answers({a: _part(0, 3), b: _part(0, 2)}))
    next(cursor)
    cursor.discard(b)
    assert cursor.pending() == {a: (0, -1)}
    assert [r.offset for r in cursor] == [1, 2]
    cursor = views.RecordCursor(_answers({a: _part(0, 3), b: _part(0, 2)}, {a: _part(3, 1)}))
    next(cursor)
    cursor.discard()
    assert cursor.pending() == {} and cursor.buffered() == 0
    assert [r.offset for r in cursor] == [3]


def test_public_record_view_is_the_active_implementation() -> None:
    import kafkawire

    assert RecordView is (VIEWS["compiled"] if kafkawire.compiled else VIEWS["pure"]).RecordView


def test_cursor_discard_keeping_the_record_in_hand(views: ModuleType) -> None:
    a, b = ("t", 0), ("t", 1)
    cursor = views.RecordCursor(_answers({a: _part(0, 3), b: _part(0, 2)}))
    assert next(cursor).offset == 0
    cursor.discard(a, keep_held=True)  # (what pause() does: the record in hand is still being processed)
    assert cursor.pending() == {a: (0, -1), b: (0, -1)} and cursor.pending(True) == {b: (0, -1)}
    assert cursor.buffered() == 2
    assert [(r.partition, r.offset) for r in cursor] == [(1, 0), (1, 1)]
