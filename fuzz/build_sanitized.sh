#!/usr/bin/env bash
# Build kafkawire._codec with AddressSanitizer + UBSan (and libFuzzer edge coverage) into build/fuzz-asan/,
# leaving the in-place kafkawire/_codec*.so (and kafkawire/_codec.c) that everyone imports untouched.
#
# Sources are copied to build/fuzz-src/ and built there with the repository's own setup.py
# (KAFKAWIRE_SANITIZE=1 adds -fsanitize=address,undefined -O1 -g), compiled by clang so that
# -fsanitize=fuzzer-no-link can add the coverage counters atheris' libFuzzer feeds on.
# Without clang the build falls back to gcc: sanitizers still work, only native coverage is lost.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
PY="${PY:-$ROOT/.venv/bin/python}"
SRC="$ROOT/build/fuzz-src"
OUT="${KAFKAWIRE_FUZZ_EXT_DIR:-$ROOT/build/fuzz-asan}"

rm -rf "$SRC"
mkdir -p "$SRC/kafkawire" "$OUT"
cp kafkawire/_codec.pyx kafkawire/_codec.pxd "$SRC/kafkawire/"
cp -r kafkawire/_csrc "$SRC/kafkawire/"
: >"$SRC/kafkawire/__init__.py"
# setup.py builds the Avro decoder of kafkawire.serde too (the `avro` target)
mkdir -p "$SRC/kafkawire/serde"
cp kafkawire/serde/_avro.pyx kafkawire/serde/_protobuf.pyx "$SRC/kafkawire/serde/"
: >"$SRC/kafkawire/serde/__init__.py"
# setup.py lists every extension: their sources must be there too, fuzzed or not
cp kafkawire/_recview.pyx "$SRC/kafkawire/"
mkdir -p "$SRC/kafkawire/client/producer"
cp kafkawire/client/producer/_accumulator.pyx "$SRC/kafkawire/client/producer/"
: >"$SRC/kafkawire/client/__init__.py"
: >"$SRC/kafkawire/client/producer/__init__.py"

if command -v clang >/dev/null; then
  export CC=clang LDSHARED="clang -shared" CFLAGS="-fsanitize=fuzzer-no-link"
else
  echo "[fuzz] clang not found: building with gcc (no native coverage feedback)" >&2
fi
# Cython 3's argument parsing for a type's __cinit__ computes its keyword values as `args + nargs`
# (__Pyx_KwValues_FASTCALL), and a vectorcall with no positional argument passes args == NULL: UBSan's
# pointer-overflow check stopped every execution at "applying zero offset to null pointer" in
# _Decoder.__cinit__, before any kafkawire code ran (cython/cython#4726, #4872 fixed only NULL + nonzero).
# Without vectorcall tp_new the arguments come as a tuple; kafkawire's own code is compiled as before.
export CFLAGS="${CFLAGS:-} -DCYTHON_VECTORCALL_TPNEW=0"
(cd "$SRC" && KAFKAWIRE_SANITIZE=1 "$PY" "$ROOT/setup.py" -q build_ext \
  --build-lib "$OUT" --build-temp "$ROOT/build/fuzz-asan-tmp" --force)
ls "$OUT"/kafkawire/_codec*.so "$OUT"/kafkawire/serde/_avro*.so "$OUT"/kafkawire/serde/_protobuf*.so
