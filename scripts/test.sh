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
jobs=$(nproc); [ "$jobs" -lt 2 ] && jobs=2
# the three WASM variants are three independent compiles
make -s -j"$jobs" wasm || { echo "attnlab: the WASM build failed"; exit 1; }
node scripts/mnist.mjs || { echo "attnlab: building the digit set (web/data/mnist.bin.gz) failed"; exit 1; }
node scripts/names.mjs || { echo "attnlab: building the names list (web/data/names.txt) failed"; exit 1; }
node scripts/gpt2-vocab.mjs || { echo "attnlab: building GPT-2's vocabulary (web/data/gpt2-vocab.bin.gz) failed"; exit 1; }

failed=()
run() {
  local name=$1; shift
  echo "== $name: $*"
  "$@" || failed+=("$name")
}
run native make -s -j"$(nproc)" test-native
# The js suite two files at a time (each file is mostly one busy WASM thread,
# so on 2 cores it takes about half as long); the browser suite likewise,
# except the lab files that measure the page while it trains, one at a time
# after the others, since a second browser beside them changes what they
# measure: lab (its longest main-thread task), lab-pass (steps paced by the
# clock), lab-text (a reply within a second). The other lab files assert no
# time and run with the pages.
# scripts/run-tests.sh starts the files in the order given: the longest first
# (measured on a clean clone, 2 cores), so that the suite does not end on one
# long file while the other core waits; every other file follows.
# web/vendor/ is made once first; the files that build the site rerun
# scripts/vendor.mjs, which then rewrites nothing the other file's pages read.
js_first=(); browser_first=()
for f in seq2seq defaults docs reference guard vision threads models url-state vendor property; do [ -f "tests/js/$f.test.mjs" ] && js_first+=("tests/js/$f.test.mjs"); done
for f in learn lab-images playground-pass playground learn-ch9 learn-pass learn-images a11y learner playground-positions lab-transformer lab-retina; do [ -f "tests/browser/$f.test.mjs" ] && browser_first+=("tests/browser/$f.test.mjs"); done
run js env JOBS="$jobs" bash scripts/run-tests.sh "${js_first[@]}" tests/js/*.test.mjs
node scripts/vendor.mjs >/dev/null || { echo "attnlab: making web/vendor/ failed"; exit 1; }
pages=(); labs=()
for f in tests/browser/*.test.mjs; do
  case ${f##*/} in lab.test.mjs | lab-pass.test.mjs | lab-text.test.mjs) labs+=("$f") ;; *) pages+=("$f") ;; esac
done
run browser env JOBS="$jobs" bash scripts/run-tests.sh "${browser_first[@]}" "${pages[@]}"
run browser-lab node --test --test-concurrency=1 "${labs[@]}"
if [ $fuzz = 1 ]; then
  # the targets side by side, each on a core for its seconds
  run fuzz env FUZZ_JOBS="$jobs" bash tests/fuzz/run.sh "${FUZZ_SECONDS:-30}"
else
  echo "== fuzz: skipped (clang with libFuzzer is missing; scripts/setup.sh --fuzz installs it as root)"
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "attnlab: failed suites: ${failed[*]}"
  exit 1
fi
echo "attnlab: all suites passed"
