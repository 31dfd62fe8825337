#!/usr/bin/env bash
# Configures and builds fgtool (and, when libtorch is installed, the demo
# trainers) into build/. Extra arguments go to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${FGTOOL_JOBS:-$(nproc)}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
start=$(date +%s)
ninja -C build -j"$jobs" | grep -vE '^\[[0-9]+/[0-9]+\] (Building|Linking|Generating)' || { echo "build failed" >&2; exit 1; }
echo "build: done in $(( $(date +%s) - start ))s (build/bin/fgtool)"
