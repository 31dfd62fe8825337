#!/usr/bin/env bash
# Benchmarks the folded reader, `fgtool svg` and `fgtool diff` on large
# generated folded files (bench/gen_folded.py: 200,000 unique stacks, 5-60
# frames deep, 20,000 names, ~185 MB). Not a test; prints numbers.
#
#   bench/run_folded_bench.sh [BUILD_DIR]      (default: build)
#   FGTOOL_BENCH_DIR=/tmp/fgbench bench/run_folded_bench.sh build
#
# Reports: parse+merge MB/s (bench_folded, Google Benchmark, wall time: the
# tree is built on a second thread),
# wall and CPU seconds and peak RSS of `fgtool svg` and `fgtool diff`
# (/usr/bin/time -v), on sorted and on shuffled input, and in the same run
# the peers where installed: inferno-flamegraph, and inferno-diff-folded
# followed by inferno-flamegraph (INFERNO_BIN=DIR, or the build of
# bench/README.md under /tmp/anchors). On a loaded machine trust CPU time
# over wall time.
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
if [ ! -s "$dir/big-after-shuffled.folded" ]; then
  echo "generating $dir/big-after-shuffled.folded ..."
  python3 "$here/gen_folded.py" --perturb --shuffle "$dir/big-after-shuffled.folded"
fi
size_mb=$(du -mL "$dir/big.folded" | cut -f1)
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

. "$here/measure.sh"
echo "== fgtool =="
measure "svg (sorted input)" "$fgtool" svg "$dir/big.folded" -o "$dir/big.svg"
measure "svg (shuffled input)" "$fgtool" svg "$dir/big-shuffled.folded" -o "$dir/big-shuffled.svg"
for order in sorted shuffled; do
  if [ $order = sorted ]; then a=$dir/big.folded b=$dir/big-after.folded
  else a=$dir/big-shuffled.folded b=$dir/big-after-shuffled.folded; fi
  measure "diff (svg, $order)" "$fgtool" diff "$a" "$b" -o "$dir/diff-$order.svg"
  fg_svg=$MEASURED_CPU fg_svg_wall=$MEASURED_WALL
  measure "diff --format folded ($order)" "$fgtool" diff --format folded "$a" "$b" -o "$dir/diff-$order.folded"
  eval "fg_svg_$order=$fg_svg fg_folded_$order=$MEASURED_CPU fg_svg_wall_$order=$fg_svg_wall fg_folded_wall_$order=$MEASURED_WALL"
done
echo "svg size: $(du -k "$dir/big.svg" | cut -f1) KB, $(grep -c '<g fg:x' "$dir/big.svg") frames drawn"

inferno=$(find_inferno)
if [ -z "$inferno" ]; then
  echo "(inferno not found: set INFERNO_BIN or build it as bench/README.md says; no peer figures)"
  exit 0
fi
echo "== inferno ($inferno) =="
measure "inferno-flamegraph (sorted input)" "$inferno/inferno-flamegraph" "$dir/big.folded"
measure "inferno-flamegraph (shuffled input)" "$inferno/inferno-flamegraph" "$dir/big-shuffled.folded"
for order in sorted shuffled; do
  if [ $order = sorted ]; then a=$dir/big.folded b=$dir/big-after.folded
  else a=$dir/big-shuffled.folded b=$dir/big-after-shuffled.folded; fi
  measure "inferno-diff-folded ($order)" "$inferno/inferno-diff-folded" "$a" "$b"
  d=$MEASURED_CPU dw=$MEASURED_WALL
  "$inferno/inferno-diff-folded" "$a" "$b" > "$dir/inferno-diff-$order.folded"
  measure "  + inferno-flamegraph of it" "$inferno/inferno-flamegraph" "$dir/inferno-diff-$order.folded"
  sum=$(awk -v a="$d" -v b="$MEASURED_CPU" 'BEGIN{printf "%.2f", a+b}')
  sumw=$(awk -v a="$dw" -v b="$MEASURED_WALL" 'BEGIN{printf "%.2f", a+b}')
  eval "fgs=\$fg_svg_$order fgf=\$fg_folded_$order fgsw=\$fg_svg_wall_$order fgfw=\$fg_folded_wall_$order"
  # fgtool's folded reader builds the tree on a second core: wall time is
  # what a user waits, CPU time what a loaded machine pays.
  printf '%-44s wall %6.2f s: fgtool diff svg %.2fx, --format folded %.2fx its speed\n' \
    "inferno diff+flamegraph ($order)" "$sumw" "$(awk -v i="$sumw" -v f="$fgsw" 'BEGIN{print i/f}')" \
    "$(awk -v i="$sumw" -v f="$fgfw" 'BEGIN{print i/f}')"
  printf '%-44s cpu  %6.2f s: fgtool diff svg %.2fx, --format folded %.2fx its speed\n' \
    "" "$sum" "$(awk -v i="$sum" -v f="$fgs" 'BEGIN{print i/f}')" \
    "$(awk -v i="$sum" -v f="$fgf" 'BEGIN{print i/f}')"
done
