#!/bin/sh
# Generate configure and Makefile.in (and copy tap-driver.sh into build-aux/).
set -e
cd "$(dirname "$0")"
autoreconf --install --force
