"""Argument types of the record API (issue 12, defect 2): wrong types raise TypeError, never become data.

Before the fix ``encode_records(b"hello")`` wrote five zero-filled records of 104, 101, 108, 108 and 111
bytes (``list(b"hello")`` is five ints and ``bytes(104)`` is 104 zero bytes), ``"hello"`` five
one-character records, and int elements zero-filled bytes. Every test runs on both implementations
(``impl`` fixture patched into the public API), and :func:`check_record_arguments` is what
``Client.produce`` / ``Producer.send`` call, so it is tested directly as well.
"""

from __future__ import annotations

import re
from types import ModuleType

import numpy as np
import pytest

from kafkawire import BinaryColumn, _impl, decode_records, encode_records
from kafkawire.records import check_record_arguments, record_columns


@pytest.fixture(autouse=True)
def _use_impl(impl: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_impl, "impl", impl)


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"values": b"hello"}, "values"),
        ({"values": bytearray(b"hello")}, "values"),
        ({"values": memoryview(b"hello")}, "values"),
        ({"values": "hello"}, "values"),
        ({"values": [b"a"], "keys": b"k"}, "keys"),
        ({"values": [b"a"], "keys": "k"}, "keys"),
        ({"values": [1, 2, 300]}, "values[0]"),
        ({"values": [b"ok", 2]}, "values[1]"),
        ({"values": [b"ok", np.int64(7)]}, "values[1]"),
        ({"values": [b"ok", 1.5]}, "values[1]"),
        ({"values": np.array([1, 2])}, "values"),
        ({"values": np.array([1.0, 2.0])}, "values"),
        ({"values": [b"a"], "keys": [1]}, "keys[0]"),
        ({"values": [b"a", b"b"], "keys": np.array([1, 2])}, "keys"),
        ({"values": [b"a"], "headers": b"x"}, "headers"),
        ({"values": [b"a"], "headers": [b"k"]}, "headers[0]"),
        ({"values": [b"a"], "headers": [[("k", 1)]]}, "headers[0][0] value"),
        ({"values": [b"a"], "headers": [[(1, b"v")]]}, "headers[0][0] key"),
        ({"values": [b"a"], "headers": [["kv"]]}, "headers[0][0]"),
    ],
)
def test_wrong_types_raise_type_error_naming_the_argument(kwargs: dict, named: str) -> None:
    pattern = re.escape(named)
    with pytest.raises(TypeError, match=rf"^{pattern} "):
        check_record_arguments(**kwargs)
    with pytest.raises(TypeError, match=rf"^{pattern} "):
        encode_records(**kwargs)


def test_argument_prefix_is_prepended_to_the_name() -> None:
    with pytest.raises(TypeError, match=r"^send\.values\[1\] is int"):
        check_record_arguments([b"a", 5], argument_prefix="send.")
    with pytest.raises(TypeError, match=r"^send\.keys must be a sequence"):
        check_record_arguments([b"a"], b"k", argument_prefix="send.")


def test_record_columns_rejects_what_the_client_would_have_sent() -> None:
    """``record_columns`` is the path ``Client.produce`` takes: it applies the same rule."""
    with pytest.raises(TypeError, match="values"):
        record_columns(b"hello")
    with pytest.raises(TypeError, match=r"keys\[0\]"):
        record_columns([b"a"], [1])


def test_one_shot_iterator_of_ints_is_rejected_when_the_column_is_built() -> None:
    with pytest.raises(TypeError, match="element 0 is int"):
        encode_records(iter([1, 2]))


def test_bytes_like_and_none_round_trip() -> None:
    values = [b"plain", bytearray(b"array"), memoryview(b"view"), None, b""]
    keys = [None, b"k1", bytearray(b"k2"), memoryview(b"k3"), b""]
    cols = decode_records(encode_records(values, keys, headers=[[("h", b"1")], None, [], [(b"b", None)], None]))
    assert cols.value.to_pylist() == [b"plain", b"array", b"view", None, b""]
    assert cols.key.to_pylist() == [None, b"k1", b"k2", b"k3", b""]
    assert cols.headers_of(0) == [("h", b"1")]
    assert cols.headers_of(3) == [("b", None)]


def test_str_elements_are_utf8_encoded() -> None:
    """The documented choice: a str value, key or header value is its UTF-8 encoding (as Spark's sink does)."""
    values = ["héllo", "", "日本"]
    cols = decode_records(encode_records(values, keys=["k€", None, "x"], headers=[[("h", "vä")], None, None]))
    assert cols.value.to_pylist() == [s.encode("utf-8") for s in values]
    assert cols.key.to_pylist() == ["k€".encode(), None, b"x"]
    assert cols.headers_of(0) == [("h", "vä".encode())]


def test_numpy_bytes_str_and_object_arrays_are_accepted() -> None:
    cols = decode_records(encode_records(np.array([b"a", b"bc"]), keys=np.array(["x", "yz"])))
    assert cols.value.to_pylist() == [b"a", b"bc"]
    assert cols.key.to_pylist() == [b"x", b"yz"]
    cols = decode_records(encode_records(np.array([b"a", None], dtype=object)))
    assert cols.value.to_pylist() == [b"a", None]
    with pytest.raises(TypeError, match=r"values\[1\] is int"):
        encode_records(np.array([b"a", 3], dtype=object))


def test_columns_pass_unchanged() -> None:
    import pyarrow as pa

    col = BinaryColumn.from_pylist([b"a", None])
    check_record_arguments(col, pa.array([b"k", b"l"], pa.binary()))
    with pytest.raises(TypeError, match="binary or string"):
        encode_records(pa.array([1, 2]))
