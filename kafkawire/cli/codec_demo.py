"""``kafkawire codec-demo``: encode a generated record stream into batches, decode it back, print throughput."""

from __future__ import annotations

import time

import numpy as np

import kafkawire
from kafkawire.columns import BinaryColumn


def _generated_column(n: int, size: int, seed: int) -> BinaryColumn:
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, size=n * size, dtype=np.uint8)
    offsets = (np.arange(n + 1, dtype=np.int64) * size).astype(np.int32)
    return BinaryColumn(offsets, data, None)


def run(records: int, batch_size: int, value_size: int, compression: str) -> int:
    """Encode ``records`` records in batches of ``batch_size``, decode them, check and report."""
    impl = "compiled core" if kafkawire.compiled else "pure-Python reference"
    print(f"kafkawire {kafkawire.__version__} ({impl}); {records:,} records of 16 B key + {value_size} B value, "
          f"{batch_size}-record batches, compression={compression}")
    keys = _generated_column(batch_size, 16, 1)
    values = _generated_column(batch_size, value_size, 2)
    ts = np.arange(batch_size, dtype=np.int64) + 1_700_000_000_000
    nbatches = max(1, records // batch_size)
    # Warm up (imports, the buffer pool, first-touch page faults) on a small stream, untimed.
    warm = [kafkawire.encode_records(values, keys, timestamps=ts, compression=compression) for _ in range(2)]
    kafkawire.decode_records(b"".join(warm))
    print("timer: wall clock (time.perf_counter), one run of each step after an untimed warm-up; "
          "for medians against peers use `kafkawire bench`")
    t0 = time.perf_counter()
    parts = []
    for b in range(nbatches):
        parts.append(kafkawire.encode_records(values, keys, timestamps=ts, base_offset=b * batch_size,
                                              compression=compression))
    data = b"".join(parts)
    t1 = time.perf_counter()
    cols = kafkawire.decode_records(data)
    t2 = time.perf_counter()
    n = len(cols)
    assert n == nbatches * batch_size, (n, nbatches * batch_size)
    assert cols.next_offset == n and cols.valid_bytes == len(data)
    assert cols.value[n - 1] == values[batch_size - 1] and cols.key[0] == keys[0]
    mb = len(data) / 1e6
    print(f"encoded {n:,} records into {mb:,.1f} MB in {t1 - t0:.3f} s: {n / (t1 - t0) / 1e6:,.2f} M records/s")
    print(f"decoded {n:,} records (CRC checked) in {t2 - t1:.3f} s: {n / (t2 - t1) / 1e6:,.2f} M records/s, "
          f"{mb / (t2 - t1):,.0f} MB/s")
    return 0
