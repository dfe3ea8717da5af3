"""Compressed decode against bare decompression, measured in alternating pairs.

``python benchmarks/compressed_overhead.py [PAIRS] [CODEC ...]``

For each codec, the same 1M-record fetch as ``bench_codec.py`` (16 B keys, 100 B log-line values,
1000-record batches) is decoded by ``kafkawire.decode_records`` (CRC checked) and, right after, every
batch's records section is decompressed by cramjam alone (what ``bench_codec.py``'s "cramjam bare
decompression" row does). Each pair gives a ratio; the script prints the median ratio and its spread.
On a shared machine the load changes between pytest-benchmark's groups, and a ratio taken from two
timings seconds apart moves less than one taken minutes apart. CPU time (``time.process_time``).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_codec import BARE, entries, fetch  # noqa: E402

import kafkawire  # noqa: E402


def _decode_cpu(data: bytes) -> float:
    start = time.process_time()
    kafkawire.decode_records(data)
    return time.process_time() - start


def _bare_cpu(bare: Callable[[bytes], int], payloads: list[bytes]) -> float:
    start = time.process_time()
    sum(bare(p) for p in payloads)
    return time.process_time() - start


def _mark(ratio: float) -> str:
    """The ratio, in bold when it meets the issue's target (at most 1.2x bare decompression)."""
    return f"**{ratio:.2f}x**" if ratio <= 1.2 else f"{ratio:.2f}x"


def main(argv: list[str]) -> int:
    """Print kafkawire / bare per codec: median of PAIRS alternating measurements."""
    pairs = int(argv[0]) if argv else 11
    codecs = argv[1:] or ["gzip", "snappy", "lz4", "zstd"]
    print(f"kafkawire.compiled={kafkawire.compiled}; {pairs} pairs per codec; CPU time")
    print("| codec | kafkawire (median) | bare (median) | kafkawire / bare: median | min | max |")
    print("|---|---:|---:|---:|---:|---:|")
    for codec in codecs:
        data = fetch(1_000_000, 100, codec)
        payloads = [e[61:] for e in entries(data)]  # each batch's records section, as bench_codec.py
        bare = BARE[codec]
        kafkawire.decode_records(data)  # warm: buffer pool, imports
        ours, theirs, ratios = [], [], []
        for _ in range(pairs):
            a = _decode_cpu(data)
            b = _bare_cpu(bare, payloads)
            ours.append(a)
            theirs.append(b)
            ratios.append(a / b)
        print(f"| {codec} | {statistics.median(ours) * 1e3:.1f} ms | {statistics.median(theirs) * 1e3:.1f} ms "
              f"| {_mark(statistics.median(ratios))} | {min(ratios):.2f}x | {max(ratios):.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
