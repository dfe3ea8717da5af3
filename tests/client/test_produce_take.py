"""``take``: the rows of a binary column one produce batch carries (values and keys of a batch are cut
from the caller's columns with it, once per batch), with Arrow's kernel and with numpy's (no pyarrow)."""

from __future__ import annotations

import numpy as np
import pytest

from kafkawire.client.producer import produce
from kafkawire.client.producer.produce import take
from kafkawire.columns import BinaryColumn


def _column(rng: np.random.Generator, n: int) -> tuple[BinaryColumn, list[bytes | None]]:
    values: list[bytes | None] = [
        None if rng.random() < 0.1 else bytes(rng.integers(0, 256, int(rng.integers(0, 9)), dtype=np.uint8))
        for _ in range(n)
    ]
    lengths = [0 if v is None else len(v) for v in values]
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    data = np.frombuffer(b"".join(v or b"" for v in values), dtype=np.uint8)
    valid = np.array([v is not None for v in values], dtype=bool)
    return BinaryColumn(offsets, data, valid), values


@pytest.mark.parametrize("gather", ["arrow", "numpy"])
@pytest.mark.parametrize("seed", range(20))
def test_take_returns_exactly_the_rows_asked_for(seed: int, gather: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if gather == "numpy":  # what runs without pyarrow
        monkeypatch.setattr(produce, "_pyarrow", None)
    else:
        assert produce._arrow() is not None
    rng = np.random.default_rng(seed)
    col, values = _column(rng, int(rng.integers(1, 300)))
    n = len(values)
    a = int(rng.integers(0, n))
    b = int(rng.integers(a, n + 1))
    runs = [
        np.arange(a, b, dtype=np.int64),  # a run of consecutive rows: sliced, not gathered
        np.sort(rng.choice(n, size=min(n, 17), replace=False)).astype(np.int64),  # one partition's rows
        rng.permutation(n)[: max(1, n // 3)].astype(np.int64),  # any order
    ]
    for idx in runs:
        got = take(col, idx)
        assert got.to_pylist() == [values[i] for i in idx.tolist()]
        assert got.offsets.dtype == np.int32 and int(got.offsets[0]) == 0
