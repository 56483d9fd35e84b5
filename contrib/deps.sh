#!/bin/bash
# deps.sh - install what raidfuse needs to build and test on Debian 12,
# with apt-get (as root, or through sudo). Safe to run again.
set -euo pipefail

packages=(
	build-essential autoconf automake pkg-config
	libfuse3-dev libisal-dev libcriterion-dev
	fuse3 fuse2fs e2fsprogs fio mdadm valgrind gdb python3 util-linux fdisk gnuplot-nox
)

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	as_root apt-get update -q
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
