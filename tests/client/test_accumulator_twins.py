"""The compiled accumulator behind ``Producer.send()`` (kafkawire/client/producer/_accumulator.pyx) and its
pure twin (_accumulator_pure.py) take the same records into the same columns, count the same bytes, ask the
producer for the same writes and refuse bad arguments with the ``TypeError`` of ``check_record_arguments``."""

from __future__ import annotations

import random
import threading
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from kafkawire.client.producer import _accumulator_pure
from kafkawire.client.producer._impl import accumulator_impl, compiled
from kafkawire.client.producer.delivery import DeliveryBatch
from kafkawire.client.producer.settings import ProducerSettings
from kafkawire.records import check_record_arguments

try:
    from kafkawire.client.producer import _accumulator  # type: ignore[attr-defined]
except ImportError:  # a pure run (KAFKAWIRE_PURE=1 / no extension): the twin is compared with itself
    _accumulator = None

TWINS = [_accumulator_pure] + ([_accumulator] if _accumulator is not None else [])


def test_the_compiled_twin_runs_when_the_codec_is_compiled():
    import kafkawire

    assert compiled == kafkawire.compiled
    assert (accumulator_impl is _accumulator) == kafkawire.compiled


class _Path:
    """A SendPath of one twin with recording callbacks."""

    def __init__(self, mod: ModuleType, **settings: Any) -> None:
        s = ProducerSettings(**{**dict(batch_records=50, batch_bytes=4000, linger_ms=1e9, compression=None, acks=-1,
                                       delivery_timeout_ms=None), **settings})
        self.asked: list[tuple[str, int, int]] = []
        self.wakes = 0
        self.path = mod.SendPath(s, threading.RLock(), None, None, DeliveryBatch, self._wake, self._after, None)

    def _wake(self) -> None:
        self.wakes += 1

    def _after(self, topic: str, fut: Any, ready: int) -> Any:
        self.asked.append((topic, fut.index, ready))
        return fut


def _random_record(rng: random.Random) -> tuple[tuple[Any, ...], dict[str, Any]]:
    def blob() -> Any:
        kind = rng.randrange(6)
        raw = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))
        return [None, raw, raw.hex() + "é", bytearray(raw), memoryview(raw), b""][kind]

    kw: dict[str, Any] = {"key": blob()}
    if rng.random() < 0.3:
        kw["headers"] = [(rng.choice(["h", b"h2", "ü"]), rng.choice([None, b"v", "w", bytearray(b"x")]))
                         for _ in range(rng.randrange(3))]
    if rng.random() < 0.2:
        kw["partition"] = rng.randrange(4)
    if rng.random() < 0.5:
        kw["timestamp_ms"] = rng.randrange(1 << 40)  # before 2005: told apart from "now"
    return (rng.choice(["a", "b"]), blob()), kw


def _state(p: _Path) -> dict[str, Any]:
    out: dict[str, Any] = {"asked": list(p.asked), "bytes": p.path.buffered_bytes, "wakes": p.wakes}
    for topic, buf in sorted(p.path.buffers.items()):
        batches, bno, bidx = buf.row_refs()
        keys = buf.key_column()
        ts = buf.timestamp_array()
        out[topic] = (
            len(buf), buf.value_column().to_pylist(), None if keys is None else keys.to_pylist(), buf.headers,
            # "now" differs between the twins' clocks: compare timestamps that were given
            [t if t < (1 << 40) else None for t in ts.tolist()], buf.partition_array().tolist(), buf.nbytes,
            buf.has_keys, buf.has_partitions, len(batches), buf.tail, bno.tolist(), bidx.tolist(),
        )
    return out


@pytest.mark.parametrize("seed", range(8))
def test_the_twins_buffer_the_same_columns(seed):
    rng = random.Random(seed)
    records = [_random_record(rng) for _ in range(300)]
    paths = [_Path(mod) for mod in TWINS]
    for args, kw in records:
        for p in paths:
            fut = p.path.send(*args, **kw)
            assert fut.batch is p.path.buffers[args[0]].batches[-1] and not fut.done()
    states = [_state(p) for p in paths]
    assert all(s == states[0] for s in states)
    assert any(ready for _, _, ready in states[0]["asked"])  # batch_records/batch_bytes were reached
    # What a write leaves behind (keep) and what is put back in front of newer records (extend).
    keep = sorted(rng.sample(range(len(paths[0].path.buffers["a"])), 40))
    for p in paths:
        old = p.path.buffers.pop("a")
        old.keep(keep)
        for args, kw in records[:30]:
            p.path.send(*args, **kw)
        newer = p.path.buffers.get("a")
        if newer is not None:
            old.extend(newer)
        p.path.buffers["a"] = old
    states = [_state(p) for p in paths]
    assert all(s == states[0] for s in states)
    assert len(paths[0].path.buffers["a"].row_refs()[0]) >= 1


def test_values_of_every_accepted_type_are_kept_as_their_bytes():
    raw = b"\x00\x01xyz"
    for mod in TWINS:
        p = _Path(mod)
        for v in (raw, bytearray(raw), memoryview(raw), memoryview(b"..." + raw)[3:], raw.decode("latin-1")):
            p.path.send("t", v, key=v)
        buf = p.path.buffers["t"]
        assert buf.value_column().to_pylist() == [raw] * 4 + [raw.decode("latin-1").encode()]
        assert buf.key_column().to_pylist() == buf.value_column().to_pylist()
        # A bytearray changed after send() does not change the buffered record.
        ba = bytearray(b"before")
        p.path.send("u", ba)
        ba[:] = b"after!"
        assert p.path.buffers["u"].value_column().to_pylist() == [b"before"]


BAD = [
    ((5,), {}),
    ((1.5,), {"key": b"k"}),
    ((b"v",), {"key": 7}),
    ((np.int64(3),), {}),
    ((b"v",), {"headers": b"x"}),
    ((b"v",), {"headers": {"k": b"v"}}),
    ((b"v",), {"headers": [("k",)]}),
    ((b"v",), {"headers": [(1, b"v")]}),
    ((b"v",), {"headers": [("k", 2)]}),
    ((b"v",), {"headers": ["kv"]}),
]


@pytest.mark.parametrize(("args", "kw"), BAD)
def test_bad_arguments_are_the_type_errors_of_check_record_arguments(args, kw):
    (value,) = args
    key, headers = kw.get("key"), kw.get("headers")
    with pytest.raises(TypeError) as reference:
        check_record_arguments(
            [value], None if key is None else [key], None if headers is None else [headers], argument_prefix="send: "
        )
    assert str(reference.value).startswith("send: ")
    for mod in TWINS:
        p = _Path(mod)
        with pytest.raises(TypeError) as raised:
            p.path.send("t", *args, **kw)
        assert str(raised.value) == str(reference.value)
        assert not p.path.buffers and p.path.buffered_bytes == 0  # nothing buffered, nothing counted


@pytest.mark.parametrize("mod", TWINS, ids=lambda m: m.__name__.rsplit(".", 1)[1])
def test_other_refusals(mod):
    p = _Path(mod)
    with pytest.raises(TypeError, match="send: topic must be a str"):
        p.path.send(b"t", b"v")
    with pytest.raises(ValueError, match="partition must be >= 0"):
        p.path.send("t", b"v", partition=-1)
    p.path.closed = True
    with pytest.raises(RuntimeError, match="producer is closed"):
        p.path.send("t", b"v")
    assert not p.path.buffers


@pytest.mark.parametrize("mod", TWINS, ids=lambda m: m.__name__.rsplit(".", 1)[1])
def test_a_full_buffer_memory_asks_for_room_before_appending(mod):
    p = _Path(mod, buffer_memory=1000, batch_records=10**6, batch_bytes=10**9)
    rooms: list[int] = []

    def make_room(topic: str, size: int) -> None:
        rooms.append(size)
        if len(rooms) == 2:
            raise TimeoutError("no room")  # what Producer._make_room does at max_block_ms
        p.path.buffered_bytes = 0  # as if a write had been acknowledged

    p.path.make_room = make_room
    sent = 0
    with pytest.raises(TimeoutError):
        while True:
            p.path.send("t", b"x" * 76)  # 100 bytes with the record overhead
            sent += 1
    assert rooms == [100, 100]
    assert sent == 20  # 10 fit, room was made once, 10 more fit, then no room
    assert p.path.buffered_bytes == 1000
