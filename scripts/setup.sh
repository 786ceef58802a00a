#!/usr/bin/env bash
# Installs the system tools attnlab builds and tests with (npm installs the JS
# ones): Emscripten, make and gcc always; Chromium with --browser (tests);
# clang with libFuzzer with --fuzz (tests/fuzz; Debian: clang + libclang-rt-N-dev).
# On Debian as root they come from apt-get; otherwise this says what to install.
set -euo pipefail

missing=()
command -v emcc >/dev/null 2>&1 || missing+=(emscripten)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
for arg in "$@"; do
  case $arg in
    --browser) [ -x /usr/bin/chromium ] || missing+=(chromium) ;;
    --fuzz)
      # clang builds fuzzers only with its runtime (libclang_rt.fuzzer): check by building one
      probe=$(mktemp -d)
      echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' > "$probe/f.c"
      if ! clang -fsanitize=fuzzer,address,undefined "$probe/f.c" -o "$probe/f" >/dev/null 2>&1; then
        missing+=(clang)
        v=$(clang --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -n 1 || true)
        missing+=("libclang-rt-${v:-14}-dev")
      fi
      rm -rf "$probe" ;;
  esac
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "attnlab: installing ${missing[*]} with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "attnlab: missing ${missing[*]}." >&2
  echo "  On Debian/Ubuntu: sudo apt-get install -y ${missing[*]}" >&2
  echo "  Elsewhere: install Emscripten (https://emscripten.org), make, gcc and Chromium, then retry." >&2
  exit 1
fi
