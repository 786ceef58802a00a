#!/usr/bin/env bash
# Runs the native test binaries given as arguments; each prints its own
# "N passed, N failed" line. Prints the total and fails if any check failed.
set -u
passed=0; failed=0; crashed=0
for bin in "$@"; do
  out=$("$bin" 2>&1); rc=$?
  printf '%s\n' "$out" | sed "s|^|[$bin] |" | grep -v ' passed, 0 failed$' || true
  line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
  if [ -z "$line" ] || [ $rc -ne 0 ]; then
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
