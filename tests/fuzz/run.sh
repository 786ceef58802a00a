#!/usr/bin/env bash
# npm run fuzz: builds the libFuzzer targets (make fuzz-build, clang) and runs
# each for FUZZ_SECONDS (default 600), or for the seconds given as $1.
# FUZZ_TARGETS="fuzz_attention fuzz_pairs" picks targets. New inputs go to
# build/fuzz/corpus/<target> (the seed corpus in tests/fuzz/corpus/<name> is
# read, never written); a crash is saved as build/fuzz/artifacts/<target>-*
# and makes this script exit non-zero. FUZZ_JOBS runs that many in parallel.
set -uo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-${FUZZ_SECONDS:-600}}
if ! command -v clang >/dev/null 2>&1; then
  echo "fuzz: clang is missing; run scripts/setup.sh --fuzz as root (or apt-get install clang libclang-rt-dev)" >&2
  exit 1
fi
jobs=${FUZZ_JOBS:-1}
make -s -j"$jobs" fuzz-build || { echo "fuzz: building the targets failed" >&2; exit 1; }

targets=${FUZZ_TARGETS:-$(cd tests/fuzz && ls fuzz_*.c | sed 's/\.c$//')}
mkdir -p build/fuzz/artifacts
# each target on its own core for the seconds given, FUZZ_JOBS at a time; its exit status in build/fuzz/<target>.rc
fuzz_one() {
  local t=$1 seconds=$2 name=${1#fuzz_}
  mkdir -p "build/fuzz/corpus/$t"
  # -rss_limit_mb: a single input may not make the engine hold more than 2 GB
  "build/fuzz/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="build/fuzz/artifacts/$t-" "build/fuzz/corpus/$t" "tests/fuzz/corpus/$name" \
    > "build/fuzz/$t.log" 2>&1
  echo $? > "build/fuzz/$t.rc"
}
export -f fuzz_one
for t in $targets; do echo "== fuzz $t for ${seconds}s (seed corpus tests/fuzz/corpus/${t#fuzz_})"; done
printf '%s\n' $targets | xargs -P "$jobs" -I{} bash -c 'fuzz_one "$1" "$2"' _ {} "$seconds"
failed=()
for t in $targets; do
  if [ "$(cat "build/fuzz/$t.rc" 2>/dev/null)" != 0 ]; then
    failed+=("$t")
    tail -n 40 "build/fuzz/$t.log"
  fi
  grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb)' "build/fuzz/$t.log" | sed "s|^|  $t: |"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]} (inputs in build/fuzz/artifacts/)"
  exit 1
fi
echo "fuzz: no findings"
