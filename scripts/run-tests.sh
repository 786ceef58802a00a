#!/usr/bin/env bash
# Runs node:test files JOBS at a time (default: the cores) in the order given, each
# in its own `node --test`, so that a list with its longest files first leaves no
# core waiting at the end on one long file (node --test sorts the files it is given
# by name). Prints each file's report in the order given with its wall time, then
# the totals; exits non-zero if any file failed.
#   JOBS=2 bash scripts/run-tests.sh tests/js/seq2seq.test.mjs tests/js/*.test.mjs
# A file named twice runs once, where it is first named.
set -u
jobs=${JOBS:-$(nproc)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export tmp
files=()
declare -A seen=()
for f in "$@"; do
  [ -n "${seen[$f]:-}" ] && continue
  seen[$f]=1; files+=("$f")
done
for i in "${!files[@]}"; do printf '%s %s\n' "$i" "${files[$i]}"; done |
  xargs -P "$jobs" -L 1 bash -c 'start=$(date +%s.%N); node --test "$2" >"$tmp/$1.out" 2>&1; echo $? >"$tmp/$1.rc"
    echo "$start $(date +%s.%N)" >"$tmp/$1.time"' _
pass=0; fail=0; failed=()
for i in "${!files[@]}"; do
  f=${files[$i]}
  read -r t0 t1 <"$tmp/$i.time"
  echo "# ---- $f ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s)"
  cat "$tmp/$i.out"
  p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$tmp/$i.out" | tail -n 1)
  n=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$tmp/$i.out" | tail -n 1)
  pass=$((pass + ${p:-0})); fail=$((fail + ${n:-0}))
  if [ "$(cat "$tmp/$i.rc")" != 0 ]; then failed+=("$f"); fi
done
echo "# ${#files[@]} files: $pass passed, $fail failed"
if [ ${#failed[@]} -gt 0 ]; then
  echo "# failed: ${failed[*]}"
  exit 1
fi
