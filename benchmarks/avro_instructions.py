"""Instruction counts of ``decode_avro`` against pyruhvro's ``deserialize_array`` under callgrind (issue 20).

Wall and CPU seconds on the shared 2-core machine move with the load; callgrind's instruction counts do not.
Each contender runs in its own process under ``valgrind --tool=callgrind --collect-atstart=no
--toggle-collect=functools_reduce``: the one measured call is made through ``functools.reduce`` (called nowhere
else), so callgrind counts exactly that call, Python and Arrow wrapping included (for kafkawire: the schema
parse and plan, the id scan, the decode and the Arrow assembly; the registry is a mapping here, no HTTP; for
pyruhvro: its list extraction, decode and RecordBatch)::

    .venv/bin/python benchmarks/avro_instructions.py            # makes the values, runs the three processes

It needs ``valgrind`` on the PATH. ``KW_BENCH_AVRO_RECORDS`` (default 200000) values of bench_avro.py's
10-field schema; the values and callgrind's files go to ``build/avro-instructions/``.
"""

from __future__ import annotations

import concurrent.futures
import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

RECORDS = int(os.environ.get("KW_BENCH_AVRO_RECORDS", "200000"))
HERE = Path(__file__).parent
WORK = HERE.parent / "build" / "avro-instructions"  # values and callgrind files (not committed)
DATA = WORK / f"avro_values_{RECORDS}.npz"
SID = 1


def make_data() -> None:
    import numpy as np

    sys.path.insert(0, str(HERE))
    from bench_avro import make_values

    values = make_values(RECORDS, SID)
    offsets = np.zeros(len(values) + 1, dtype=np.int32)
    offsets[1:] = np.cumsum([len(v) for v in values])
    WORK.mkdir(parents=True, exist_ok=True)
    np.savez(DATA, data=np.frombuffer(b"".join(values), dtype=np.uint8), offsets=offsets)


def child(what: str) -> None:
    import numpy as np
    import pyruhvro

    sys.path.insert(0, str(HERE))
    from bench_avro import SCHEMA

    from kafkawire.columns import BinaryColumn
    from kafkawire.serde import decode_avro

    f = np.load(DATA)
    column = BinaryColumn(f["offsets"], f["data"])
    text = json.dumps(SCHEMA)
    registry = {SID: text}
    bodies = [column[i][5:] for i in range(len(column))]
    # warm both up (imports, first calls) so the baseline holds every one-off cost
    decode_avro(BinaryColumn.from_pylist([column[i] for i in range(10)]), registry, reader_schema=text)
    pyruhvro.deserialize_array(bodies[:10], text)
    if what == "kafkawire":
        out = functools.reduce(lambda _a, _x: decode_avro(column, registry, reader_schema=text), [0], None)
    else:
        out = functools.reduce(lambda _a, _x: pyruhvro.deserialize_array(bodies, text), [0], None)
    assert len(out) == len(column)


def instructions(what: str) -> int:
    out = WORK / f"callgrind.{what}.out"
    subprocess.run(["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=functools_reduce",
                    f"--callgrind-out-file={out}", sys.executable, __file__, what], check=True, capture_output=True)
    summary = re.search(r"^summary:\s*(\d+)", out.read_text(errors="replace"), re.M)
    assert summary is not None
    return int(summary.group(1))


def main() -> None:
    if not DATA.exists():
        make_data()
    print(f"{RECORDS:,} values of bench_avro.py's 10-field record; instructions of the one call (callgrind)")
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        counts = dict(zip(("kafkawire", "pyruhvro"), pool.map(instructions, ("kafkawire", "pyruhvro"))))
    for w, n in counts.items():
        print(f"{w:10s} {n:>14,}  {n / RECORDS:8.1f} per value")
    print(f"pyruhvro / kafkawire: {counts['pyruhvro'] / counts['kafkawire']:.2f}x")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        child(sys.argv[1])
    else:
        main()
