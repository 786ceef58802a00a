#!/usr/bin/env bash
# Installs the system tools attnlab builds and tests with (npm installs the JS
# ones): Emscripten, make and gcc always; Chromium with --browser (tests).
# On Debian as root they come from apt-get; otherwise this says what to install.
set -euo pipefail

missing=()
command -v emcc >/dev/null 2>&1 || missing+=(emscripten)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
if [ "${1:-}" = "--browser" ] && [ ! -x /usr/bin/chromium ]; then
  missing+=(chromium)
fi
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
