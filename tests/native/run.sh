#!/usr/bin/env bash
# Runs the native test binaries given as arguments, as many at a time as
# there are cores (JOBS); each prints its own "N passed, N failed" line.
# Prints each binary's result in the order given, the total, and fails if any
# check failed or any binary crashed.
set -u
jobs=${JOBS:-$(nproc)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
key() { printf '%s' "$1" | tr '/' '_'; }
export tmp
export -f key
# started last first: the make order ends with the double build, whose binaries take longest, so
# they start early and no core sits idle at the end waiting on one long binary
printf '%s\n' "$@" | tac | xargs -P "$jobs" -I{} bash -c 'k=$(key "$1"); "$1" >"$tmp/$k.out" 2>&1; echo $? >"$tmp/$k.rc"' _ {}
passed=0; failed=0; crashed=0
for bin in "$@"; do
  k=$(key "$bin")
  out=$(cat "$tmp/$k.out"); rc=$(cat "$tmp/$k.rc")
  printf '%s\n' "$out" | sed "s|^|[$bin] |" | grep -v ' passed, 0 failed$' || true
  line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
  if [ -z "$line" ] || [ "$rc" -ne 0 ]; then
    echo "[$bin] exited $rc"; crashed=$((crashed + 1))
  fi
  if [ -n "$line" ]; then
    p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
    passed=$((passed + p)); failed=$((failed + f))
    echo "[$bin] $line"
  fi
done
echo "native: $passed passed, $((failed + crashed)) failed"
[ $failed -eq 0 ] && [ $crashed -eq 0 ]
