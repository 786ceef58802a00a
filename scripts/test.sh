#!/usr/bin/env bash
# Every test attnlab has: native C tests (sanitizers; SIMD, scalar and double
# builds), node:test suites on both WASM builds, and the browser tests in
# headless Chromium. Runs them all, then exits non-zero if any suite failed.
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh --browser || exit 1
make -s wasm || { echo "attnlab: the WASM build failed"; exit 1; }
node scripts/mnist.mjs || { echo "attnlab: building the digit set (web/data/mnist.bin.gz) failed"; exit 1; }

failed=()
run() {
  local name=$1; shift
  echo "== $name: $*"
  "$@" || failed+=("$name")
}
run native make -s test-native
run js node --test tests/js/
run browser node --test tests/browser/

if [ ${#failed[@]} -gt 0 ]; then
  echo "attnlab: failed suites: ${failed[*]}"
  exit 1
fi
echo "attnlab: all suites passed"
