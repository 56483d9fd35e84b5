#!/bin/bash
# build.sh [BUILD_DIR] [configure args...] - generate the build system and
# build raidfuse from scratch in BUILD_DIR (default: build/ in the source
# tree; a relative BUILD_DIR is taken from the current directory). An
# existing BUILD_DIR is emptied first, but only if it is a build directory
# (it has config.status or config.log) and not the source tree or a directory above it.
# A first argument that starts with - or holds = (--prefix=/usr, CFLAGS=-O0)
# is a configure argument: BUILD_DIR is then the default.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd -P)
build=$top/build
if [ $# -gt 0 ] && [[ $1 != -* && $1 != *=* ]]; then
	build=$1
	shift
fi
case $build in /*) ;; *) build=$PWD/$build ;; esac
if [ -e "$build" ]; then
	real=$(cd "$build" && pwd -P)
	real=${real%/}
	case $top/ in "$real"/*)
		echo "build.sh: $build is the source tree or above it; not removing it" >&2; exit 2 ;;
	esac
	if [ -n "$(ls -A "$build")" ] && [ ! -f "$build/config.status" ] && [ ! -f "$build/config.log" ]; then
		echo "build.sh: $build is not empty and is no build directory (no config.status or config.log); not removing it" >&2
		exit 2
	fi
fi
cd "$top"
./autogen.sh >/dev/null 2>&1 || ./autogen.sh
rm -rf "$build"
mkdir -p "$build"
cd "$build"
"$top/configure" -q --enable-werror "$@"
make -s -j"$(nproc)"
