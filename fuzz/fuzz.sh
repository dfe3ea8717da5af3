#!/usr/bin/env bash
# Coverage-guided fuzzing of every target under AddressSanitizer + UBSan, round-robin.
#
#   fuzz/fuzz.sh [TOTAL_SECONDS] [TARGET ...]      (./dev fuzz passes its arguments here)
#
# Builds the sanitized extension into build/fuzz-asan/ when it is missing or older than the sources,
# writes seed corpora into build/fuzz-corpus/ (kept between runs: the fuzzer adds what it learns),
# then gives each target a slice of at most FUZZ_SLICE seconds (default 240) in turn until
# TOTAL_SECONDS (default 3600) are used. Crashes go to build/fuzz-artifacts/TARGET/; the per-target
# execution totals are printed at the end and written to build/fuzz-summary.txt ($FUZZ_SUMMARY).
# FUZZ_RUNS=N instead runs each target once, for N executions (or TOTAL_SECONDS, whichever comes first):
# the way to give a target a fixed execution count (FUZZ_RUNS=10000000 fuzz/fuzz.sh 7200 v2).
# One fuzzing process at a time: the machine is shared.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
PY="${PY:-$ROOT/.venv/bin/python}"
TOTAL="${1:-3600}"; shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(records legacy v2 changing decompress protocol group avro protobuf)
SLICE="${FUZZ_SLICE:-240}"
RUNS_EACH="${FUZZ_RUNS:-0}"
[ "$RUNS_EACH" -eq 0 ] || SLICE="$TOTAL"
EXT="$ROOT/build/fuzz-asan"

if ! "$PY" -c 'import atheris' 2>/dev/null; then
  echo "[fuzz] installing atheris into the venv"
  "$PY" -m pip install -q atheris || { echo "[fuzz] atheris unavailable: use python -m fuzz.run --engine mutate" >&2; exit 1; }
fi
if ! command -v clang >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "[fuzz] installing clang (native coverage for the sanitized build)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang >/dev/null
fi
so=$(ls "$EXT"/kafkawire/_codec*.so 2>/dev/null | head -1)
avro_so=$(ls "$EXT"/kafkawire/serde/_avro*.so 2>/dev/null | head -1)
if [ -z "$so" ] || [ -z "$avro_so" ] || [ -n "$(find kafkawire/_codec.pyx kafkawire/_codec.pxd kafkawire/_csrc kafkawire/serde/_avro.pyx kafkawire/serde/_protobuf.pyx -newer "$so" 2>/dev/null)" ]; then
  fuzz/build_sanitized.sh || exit 1
fi
"$PY" -m fuzz.corpus "$ROOT/build/fuzz-corpus" >/dev/null

SITE=$("$PY" -c 'import atheris, os; print(os.path.dirname(os.path.dirname(atheris.__file__)))')
export LD_PRELOAD="$SITE/asan_with_fuzzer.so"   # ASan + UBSan runtime with libFuzzer, shipped by atheris
# detect_leaks=0: CPython "leaks" by design. malloc_context_size=0: with PYTHONMALLOC=malloc every Python
# object goes through ASan's allocator, and recording a 30-frame stack on each malloc/free was ~60% of an
# execution; errors are still detected (the report loses only the allocation's stack, which
# --reproduce under a full ASAN_OPTIONS gives back).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1:abort_on_error=1:malloc_context_size=0}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export PYTHONMALLOC=malloc   # every Python allocation through ASan's allocator too
export KAFKAWIRE_FUZZ_EXT_DIR="$EXT"

declare -A RUNS CRASHES
for t in "${TARGETS[@]}"; do RUNS[$t]=0; CRASHES[$t]=0; done
LOGDIR="$ROOT/build/fuzz-logs"; mkdir -p "$LOGDIR"
start=$(date +%s)
round=0
while :; do
  round=$((round + 1))
  for t in "${TARGETS[@]}"; do
    left=$((TOTAL - ($(date +%s) - start)))
    [ "$left" -ge 5 ] || break 2
    slice=$(( left < SLICE ? left : SLICE ))
    log="$LOGDIR/$t.$start.round$round.log"
    t0=$(date +%s)
    "$PY" -m fuzz.run "$t" --engine atheris --max-time "$slice" --runs "$RUNS_EACH" >"$log" 2>&1
    rc=$?
    took=$(( $(date +%s) - t0 ))
    n=$(grep -Eo '^Done [0-9]+ runs' "$log" | tail -1 | grep -Eo '[0-9]+')
    n=${n:-$(grep -Eo '^#[0-9]+' "$log" | tail -1 | tr -d '#')}
    RUNS[$t]=$(( ${RUNS[$t]} + ${n:-0} ))
    if [ "$rc" -ne 0 ]; then
      CRASHES[$t]=$(( ${CRASHES[$t]} + 1 ))
      echo "[fuzz] $t: CRASH (exit $rc), see $log and build/fuzz-artifacts/$t/"
    fi
    echo "[fuzz] round $round $t: ${n:-0} runs in ${took}s (total ${RUNS[$t]})"
  done
  [ "$RUNS_EACH" -eq 0 ] || break
done
{
  echo "target executions crashes (ASan+UBSan, $(date -u +%FT%TZ), ${TOTAL}s budget)"
  for t in "${TARGETS[@]}"; do echo "$t ${RUNS[$t]} ${CRASHES[$t]}"; done
} | tee "${FUZZ_SUMMARY:-$ROOT/build/fuzz-summary.txt}"
total_crashes=0; for t in "${TARGETS[@]}"; do total_crashes=$((total_crashes + ${CRASHES[$t]})); done
[ "$total_crashes" -eq 0 ]
