#!/usr/bin/env bash
# Installs every dependency fgtool needs on Debian 12, idempotently, as root.
#   scripts/setup.sh            build + runtime deps of fgtool and its tests
#   scripts/setup.sh --demo     also libtorch (the MLP/VAE demo trainers)
#   scripts/setup.sh --browser  also chromium + playwright-core (browser tests)
#   scripts/setup.sh --fuzz     also clang 14 + its libFuzzer runtime (scripts/fuzz.sh)
#   scripts/setup.sh --tests    also golang-go (tests check pprof output with `go tool pprof`)
#   scripts/setup.sh --bench    also chromium + nodejs + playwright-core (the load of bench/busy_machine.sh)
set -euo pipefail
want_demo=0; want_browser=0; want_fuzz=0; want_tests=0; want_bench=0
for a in "$@"; do
  case "$a" in
    --demo) want_demo=1 ;;
    --browser) want_browser=1 ;;
    --fuzz) want_fuzz=1 ;;
    --tests) want_tests=1 ;;
    --bench) want_bench=1; want_browser=1 ;;  # busy_machine.sh's persistent browser uses playwright-core
    *) echo "setup.sh: unknown option $a" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "setup.sh: run as root (it calls apt-get)" >&2; exit 2; }
export DEBIAN_FRONTEND=noninteractive

pkgs=(g++ cmake ninja-build make pkg-config python3 git
      libboost-program-options-dev libdw-dev libelf-dev zlib1g-dev libzstd-dev
      nlohmann-json3-dev libgtest-dev libbenchmark-dev libxml2-utils
      linux-perf elfutils binutils lld xz-utils libprotozero-dev libdeflate-dev)
# OpenBLAS so fp32 Linear/addmm runs on it, as in the recordings the categories describe.
[ $want_demo = 1 ] && pkgs+=(libtorch-dev libopenblas0-pthread)
[ $want_fuzz = 1 ] && pkgs+=(clang-14 libclang-rt-14-dev)
# Test-only: `go tool pprof` reads every pprof fgtool writes (tests/pprof);
# libc6-dbg because the fixture goldens name libc's local functions
# (__libc_start_call_main, handle_amd), which only its debug symbols hold.
[ $want_tests = 1 ] && pkgs+=(golang-go libc6-dbg)
# bench/busy_machine.sh renders SVGs in headless Chromium and runs Node (JIT code) as load.
if [ $want_bench = 1 ]; then
  pkgs+=(chromium)
  command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
fi
if [ $want_browser = 1 ]; then
  pkgs+=(chromium)
  # Use the machine's Node.js/npm when present (Debian's npm conflicts with a newer node).
  command -v npm >/dev/null 2>&1 || pkgs+=(nodejs npm)
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ $want_browser = 1 ]; then
  # playwright-core (pinned in tests/browser/package-lock.json) drives /usr/bin/chromium; no browser download.
  echo "setup: npm ci in tests/browser"
  (cd "$(dirname "$0")/../tests/browser" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi
echo "setup: all dependencies present"
