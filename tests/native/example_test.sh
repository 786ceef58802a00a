#!/usr/bin/env bash
# The C library's example (docs/c-library.md): its code block must be tests/native/example_tutorial.c
# verbatim, and the program built against build/libattnlab.a must print the
# tutorial's scores and weights for the query "journey".
#   example_test.sh <the built example>
set -u
cd "$(dirname "$0")/../.."
bin=$1 src=tests/native/example_tutorial.c
passed=0; failed=0
check() { # name, condition result
  if [ "$2" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL [example] $1"; fi
}
# the fenced block after the line naming the file
block=$(awk -v f="$src" '
  index($0, "<!-- " f " -->") { armed = 1; next }
  armed && /^```c$/ { inside = 1; next }
  inside && /^```$/ { exit }
  inside { print }' docs/c-library.md)
[ "$block" == "$(cat "$src")" ]; check "docs/c-library.md's C example differs from $src" $?
out=$("$bin" 2>&1); check "the example exited $? ($out)" $?
grep -qx 'scores:  0.4753 0.4937 0.3474 0.6565 0.8296 0.8434' <<<"$out"; check "scores: $out" $?
grep -qx 'weights: 0.1435 0.1462 0.1263 0.1720 0.2046 0.2074' <<<"$out"; check "weights: $out" $?
echo "[example] $passed passed, $failed failed"
[ $failed -eq 0 ]
