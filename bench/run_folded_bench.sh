#!/usr/bin/env bash
# Benchmarks the folded reader, `fgtool svg` and `fgtool diff` on large
# generated folded files (bench/gen_folded.py: 200,000 unique stacks, 5-60
# frames deep, 20,000 names, ~185 MB). Not a test; prints numbers.
#
#   bench/run_folded_bench.sh [BUILD_DIR]      (default: build)
#   FGTOOL_BENCH_DIR=/tmp/fgbench bench/run_folded_bench.sh build
#
# Reports: parse+merge MB/s (bench_folded, Google Benchmark, CPU time),
# wall and CPU seconds and peak RSS of `fgtool svg` and `fgtool diff`
# (/usr/bin/time -v). On a loaded machine trust CPU time over wall time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
dir=${FGTOOL_BENCH_DIR:-/tmp/fgtool-bench}
fgtool=$build/bin/fgtool
[ -x "$fgtool" ] || { echo "no $fgtool: build first (cmake --build $build)" >&2; exit 2; }
mkdir -p "$dir"
if [ ! -s "$dir/big.folded" ]; then
  echo "generating $dir/big.folded (sorted) ..."
  python3 "$here/gen_folded.py" "$dir/big.folded"
fi
if [ ! -s "$dir/big-shuffled.folded" ]; then
  echo "generating $dir/big-shuffled.folded ..."
  python3 "$here/gen_folded.py" --shuffle "$dir/big-shuffled.folded"
fi
if [ ! -s "$dir/big-after.folded" ]; then
  echo "generating $dir/big-after.folded (perturbed weights) ..."
  python3 "$here/gen_folded.py" --perturb "$dir/big-after.folded"
fi
size_mb=$(du -m "$dir/big.folded" | cut -f1)
echo "input: $dir/big.folded, ${size_mb} MB, $(wc -l < "$dir/big.folded") lines"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

if [ -x "$build/bench/bench_folded" ]; then
  for f in big.folded big-shuffled.folded; do
    echo "== parse+merge ($f) =="
    FGTOOL_BENCH_FOLDED="$dir/$f" "$build/bench/bench_folded" --benchmark_filter=ParseMerge 2>/dev/null | grep BM_
  done
  echo "== render only =="
  FGTOOL_BENCH_FOLDED="$dir/big.folded" "$build/bench/bench_folded" --benchmark_filter=RenderSvg 2>/dev/null | grep BM_
else
  echo "(no $build/bench/bench_folded: Google Benchmark not found; skipping parse MB/s)"
fi

measure() {  # label, command...
  local label=$1; shift
  local log; log=$(mktemp)
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -v "$@" 2>"$log" >/dev/null
    local wall user sys rss
    wall=$(grep 'Elapsed (wall clock)' "$log" | awk '{print $NF}')
    user=$(grep 'User time' "$log" | awk '{print $NF}')
    sys=$(grep 'System time' "$log" | awk '{print $NF}')
    rss=$(grep 'Maximum resident' "$log" | awk '{print $NF}')
    printf '%-28s wall %8s  cpu %6.2f s  peak RSS %6d MB\n' "$label" "$wall" "$(awk -v u="$user" -v s="$sys" 'BEGIN{print u+s}')" $((rss / 1024))
  else
    local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N)
    printf '%-28s wall %6.2f s (install GNU time for CPU and RSS)\n' "$label" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')"
  fi
  rm -f "$log"
}
echo "== fgtool =="
measure "svg (sorted input)" "$fgtool" svg "$dir/big.folded" -o "$dir/big.svg"
measure "svg (shuffled input)" "$fgtool" svg "$dir/big-shuffled.folded" -o "$dir/big-shuffled.svg"
measure "diff (svg)" "$fgtool" diff "$dir/big.folded" "$dir/big-after.folded" -o "$dir/diff.svg"
measure "diff --format folded" "$fgtool" diff --format folded "$dir/big.folded" "$dir/big-after.folded" -o "$dir/diff.folded"
echo "svg size: $(du -k "$dir/big.svg" | cut -f1) KB, $(grep -c '<g fg:x' "$dir/big.svg") frames drawn"
