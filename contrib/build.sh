#!/bin/bash
# build.sh [BUILD_DIR] [configure args...] - generate the build system and
# build raidfuse from scratch in BUILD_DIR (default: build/).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
shift || true
cd "$top"
./autogen.sh >/dev/null 2>&1 || ./autogen.sh
rm -rf "$build"
mkdir -p "$build"
cd "$build"
"$top/configure" -q --enable-werror "$@"
make -s -j"$(nproc)"
