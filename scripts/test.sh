#!/usr/bin/env bash
# The README's test command: installs every dependency (apt-get, as root),
# builds everything, and runs the whole test suite (unit, integration with
# real `perf record`, libtorch trainers, browser tests in headless Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
bash scripts/setup.sh --demo --browser --tests
bash scripts/build.sh
unset DEBUGINFOD_URLS
export FGTOOL_NO_PROGRESS=1
echo "test: running ctest ($(nproc) jobs)"
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 900
echo "test: all done in $(( $(date +%s) - t0 ))s"
