#!/usr/bin/env bash
# Every test attnlab has: native C tests (sanitizers; SIMD, scalar and double
# builds), node:test suites on both WASM builds, and the browser tests in
# headless Chromium, and when clang can build them the libFuzzer targets for
# 30 s each (FUZZ_SECONDS). Runs them all, then exits non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh --browser || exit 1
# fuzzers are optional here: setup installs clang when it can, else they are skipped
fuzz=1
bash scripts/setup.sh --fuzz >/dev/null 2>&1 || fuzz=0
make -s wasm || { echo "attnlab: the WASM build failed"; exit 1; }
node scripts/mnist.mjs || { echo "attnlab: building the digit set (web/data/mnist.bin.gz) failed"; exit 1; }
node scripts/names.mjs || { echo "attnlab: building the names list (web/data/names.txt) failed"; exit 1; }

failed=()
run() {
  local name=$1; shift
  echo "== $name: $*"
  "$@" || failed+=("$name")
}
run native make -s -j"$(nproc)" test-native
# The js suite two files at a time (each file is mostly one busy WASM thread,
# so on 2 cores it takes about half as long); the browser suite one file at a
# time: its lab tests watch training paced by the clock, and several files
# build the site, which regenerates web/vendor/ that the others' pages read.
jobs=$(nproc); [ "$jobs" -lt 2 ] && jobs=2
run js node --test --test-concurrency="$jobs" tests/js/
run browser node --test --test-concurrency=1 tests/browser/
if [ $fuzz = 1 ]; then
  run fuzz bash tests/fuzz/run.sh "${FUZZ_SECONDS:-30}"
else
  echo "== fuzz: skipped (clang with libFuzzer is missing; scripts/setup.sh --fuzz installs it as root)"
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "attnlab: failed suites: ${failed[*]}"
  exit 1
fi
echo "attnlab: all suites passed"
