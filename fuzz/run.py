"""Run one fuzz target: ``python -m fuzz.run TARGET [options] [-- libFuzzer flags]``.

Engines:

``atheris`` (default when installed)
    Coverage-guided: libFuzzer (shipped inside atheris) mutates inputs, guided by Python line coverage of
    kafkawire's modules and, when the extension was built by ``fuzz/build_sanitized.sh`` with clang,
    by the edge counters of the compiled core. Crashes are written under ``build/fuzz-artifacts/TARGET/``.
``mutate``
    A small deterministic mutation loop (bit flips, interesting integers, splices, truncations) over the
    seed corpus, with no dependency beyond the standard library. ``tests/test_hardening.py`` uses it for
    the bounded CI pass; it is also a fallback where atheris cannot be installed.

Set ``KAFKAWIRE_FUZZ_EXT_DIR`` (``fuzz/fuzz.sh`` does) to load a sanitized ``_codec`` built outside the
source tree. The last line printed is ``[fuzz] TARGET: N executions, S s, 0 crashes`` (machine-readable
for ``fuzz/fuzz.sh``).
"""

from __future__ import annotations

import argparse
import os
import random
import struct
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `fuzz` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz import _ext  # noqa: E402

__all__ = ["mutations", "run_mutate", "main"]

ROOT = Path(__file__).resolve().parent.parent

#: Python modules whose line coverage guides each target (``--instrument auto``): the protocol layer and
#: the compression framing are Python; the record targets exercise the compiled core.
PYTHON_UNDER_TEST: dict[str, list[str]] = {
    "protocol": ["kafkawire.protocol"],
    "group": ["kafkawire.protocol"],
    "decompress": ["kafkawire.compression"],
}

_INTERESTING_32 = (0, 1, -1, 5, 7, 12, 48, 49, 61, 127, 128, 255, 256, 0x7FFF, 0x8000, 0xFFFF, 0x10000,
                   0x7FFFFFFF, -0x80000000, 0x40000000, -2)
_INTERESTING_8 = (0, 1, 0x7F, 0x80, 0xFF, 2, 0x10, 0x20, 0x40)


def _mutate_once(buf: bytearray, rng: random.Random, pool: Sequence[bytes]) -> None:
    n = len(buf)
    op = rng.randrange(9)
    if n == 0 or op == 0:  # insert random bytes
        at = rng.randint(0, n)
        buf[at:at] = rng.randbytes(rng.randint(1, 8))
    elif op == 1:  # flip a bit
        i = rng.randrange(n)
        buf[i] ^= 1 << rng.randrange(8)
    elif op == 2:  # interesting byte
        buf[rng.randrange(n)] = rng.choice(_INTERESTING_8)
    elif op == 3 and n >= 4:  # interesting int32 (lengths, counts) big-endian
        i = rng.randrange(n - 3)
        buf[i : i + 4] = struct.pack(">i", rng.choice(_INTERESTING_32))
    elif op == 4:  # varint-ish byte run: continuation bits set
        i = rng.randrange(n)
        k = min(n - i, rng.randint(1, 11))
        buf[i : i + k] = bytes([0x80 | rng.randrange(128) for _ in range(k - 1)] + [rng.randrange(256)])
    elif op == 5:  # truncate
        del buf[rng.randrange(n) :]
    elif op == 6:  # delete a range
        i = rng.randrange(n)
        del buf[i : i + rng.randint(1, 16)]
    elif op == 7:  # duplicate a range
        i = rng.randrange(n)
        j = min(n, i + rng.randint(1, 64))
        at = rng.randint(0, n)
        buf[at:at] = buf[i:j]
    else:  # splice with another seed
        other = rng.choice(pool)
        if other:
            i = rng.randrange(len(other))
            at = rng.randint(0, n)
            buf[at:] = other[i:]


def mutations(pool: Sequence[bytes], rng: random.Random) -> Iterator[bytes]:
    """Endless stream: each seed once as is, then seeds with 1-4 stacked mutations."""
    yield from pool
    while True:
        buf = bytearray(rng.choice(pool))
        for _ in range(rng.randint(1, 4)):
            _mutate_once(buf, rng, pool)
        yield bytes(buf[:65536])


def run_mutate(
    target: Callable[[bytes], None], pool: Sequence[bytes], *, runs: int, max_time: float, seed: int = 0
) -> int:
    """Feed ``target`` up to ``runs`` inputs (or until ``max_time`` seconds); returns the executions done.

    The first input whose call raises propagates, with the offending bytes attached as ``exc.fuzz_input``.
    """
    rng = random.Random(seed)
    deadline = time.monotonic() + max_time
    done = 0
    for data in mutations(pool, rng):
        if done >= runs or (done & 63 == 0 and time.monotonic() > deadline):
            break
        try:
            target(data)
        except BaseException as exc:
            exc.fuzz_input = data  # type: ignore[attr-defined]
            raise
        done += 1
    return done


def _run_atheris(name: str, corpus_dir: Path, args: argparse.Namespace, extra: list[str]) -> int:
    import atheris
    import cramjam  # noqa: F401  - third-party modules imported before instrumentation starts
    import numpy  # noqa: F401

    # Python line coverage only where the code under test is Python: instrumenting the fuzz harness and
    # the thin Python front of the compiled core slowed every execution ~3x and guided nothing (the
    # compiled core's own edge counters come from the clang build).
    include = PYTHON_UNDER_TEST.get(name, [])
    if args.instrument == "all":
        include = ["kafkawire", "fuzz"]
    elif args.instrument == "none":
        include = []
    if include:
        with atheris.instrument_imports(include=include):
            import kafkawire.compression  # noqa: F401  - imported under instrumentation when listed
            import kafkawire.protocol  # noqa: F401
            from fuzz import targets
    else:
        from fuzz import targets

    targets.apply_fuzz_limits()
    fn = targets.TARGETS[name]

    def one(data: bytes) -> None:
        fn(data)

    artifacts = ROOT / "build" / "fuzz-artifacts" / name
    artifacts.mkdir(parents=True, exist_ok=True)
    argv = [
        sys.argv[0],
        str(corpus_dir),
        f"-artifact_prefix={artifacts}/",
        f"-max_total_time={int(args.max_time)}",
        "-timeout=10",  # a single input taking this long is a hang
        "-rss_limit_mb=3072",
        "-malloc_limit_mb=512",  # one allocation this large from a <= 64 KiB input is a forged size
        "-max_len=65536",
        "-print_final_stats=1",
    ]
    if args.runs:
        argv.append(f"-runs={args.runs}")
    atheris.Setup(argv + extra, one)
    atheris.Fuzz()  # exits the process (0 when the time or run budget ran out without a crash)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("target")
    p.add_argument("--engine", choices=("atheris", "mutate"), default=None)
    p.add_argument("--runs", type=int, default=0, help="stop after this many executions (0: no limit)")
    p.add_argument("--max-time", type=float, default=60.0, help="seconds")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--corpus", type=Path, default=None, help="corpus dir (default build/fuzz-corpus/TARGET)")
    p.add_argument("--instrument", choices=("auto", "all", "none"), default="auto",
                   help="Python modules to instrument for coverage (auto: the Python code under test)")
    p.add_argument("--reproduce", type=Path, default=None, help="run the target once on this input file")
    args, extra = p.parse_known_args(argv)
    extra = [a for a in extra if a != "--"]

    used = _ext.install()
    if args.reproduce is not None:
        from fuzz import targets

        targets.apply_fuzz_limits()
        targets.TARGETS[args.target](args.reproduce.read_bytes())
        print(f"[fuzz] {args.target}: {args.reproduce} passes (extension {used or 'in-place'})")
        return 0
    engine = args.engine
    if engine is None:
        try:
            import atheris  # noqa: F401

            engine = "atheris"
        except ImportError:
            engine = "mutate"

    corpus_dir = args.corpus or ROOT / "build" / "fuzz-corpus" / args.target
    if engine == "atheris":
        if not corpus_dir.exists() or not any(corpus_dir.iterdir()):
            from fuzz.corpus import write_corpora

            write_corpora(corpus_dir.parent, [args.target])
        print(f"[fuzz] {args.target}: atheris, extension {used or 'in-place'}", flush=True)
        return _run_atheris(args.target, corpus_dir, args, extra)

    from fuzz import corpus, targets

    targets.apply_fuzz_limits()
    pool = corpus.seeds(args.target)
    if corpus_dir.exists():
        pool += [f.read_bytes() for f in sorted(corpus_dir.iterdir()) if f.is_file()]
    t0 = time.monotonic()
    runs = args.runs or sys.maxsize
    done = run_mutate(targets.TARGETS[args.target], pool, runs=runs, max_time=args.max_time, seed=args.seed)
    print(f"[fuzz] {args.target}: {done} executions, {time.monotonic() - t0:.1f} s, 0 crashes "
          f"(mutate, extension {used or 'in-place'})")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
