#!/usr/bin/env bash
# Benchmarks `fgtool collapse` (perf script text -> folded) on large text,
# against inferno-collapse-perf in the same run when it is installed
# (INFERNO_BIN=DIR, or the build of bench/README.md under /tmp/anchors).
# Not a test; prints numbers.
#
#   bench/run_collapse_bench.sh [BUILD_DIR] [--text FILE] [--mb N] [--seconds S]
#
# Without --text it records the machine as it is (`perf record -a -g -F 999`
# for S seconds, default 10; needs perf and perf_event_paranoid <= 0 or root),
# writes `perf script` of it, and repeats that text to about N MB (default
# 1024) in $FGTOOL_BENCH_DIR (default /tmp/fgtool-bench). Repeating keeps the
# mix of a real recording (kernel and user frames, many processes) at the
# size where per-line costs dominate; an idle machine's recording has few
# distinct stacks, so also try --text with `perf script` of a busy one
# (bench/README.md). fgtool runs with its default threads (one per core) and
# with --threads 1, inferno with its default and --nthreads 1; the ratios
# are printed for wall time (what a person waits for) and CPU time. On a
# loaded machine trust CPU time: wall time includes waiting for the cores.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=build text="" mb=1024 seconds=10
while [ $# -gt 0 ]; do
  case $1 in
    --text) text=$2; shift 2 ;;
    --mb) mb=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    *) build=$1; shift ;;
  esac
done
dir=${FGTOOL_BENCH_DIR:-/tmp/fgtool-bench}
fgtool=$build/bin/fgtool
[ -x "$fgtool" ] || { echo "no $fgtool: build first (cmake --build $build)" >&2; exit 2; }
mkdir -p "$dir"
. "$here/measure.sh"
if [ -z "$text" ]; then
  text=$dir/system.perfscript
  if [ ! -s "$text" ]; then
    echo "recording the machine for ${seconds}s (perf record -a -g -F 999) ..."
    perf record -a -g -F 999 -o "$dir/system.data" -- sleep "$seconds" 2>/dev/null
    perf script -i "$dir/system.data" > "$text" 2>/dev/null
  fi
fi
big=$dir/big.perfscript
one=$(stat -L -c %s "$text")
[ "$one" -gt 0 ] || { echo "$text is empty" >&2; exit 2; }
copies=$(( (mb * 1048576 + one - 1) / one ))
if [ ! -s "$big" ] || [ "$(stat -L -c %s "$big")" -ne $((one * copies)) ]; then
  echo "repeating $text ($((one / 1048576)) MB) $copies times ..."
  for _ in $(seq "$copies"); do cat "$text"; done > "$big"
fi
size=$(stat -L -c %s "$big")
echo "input: $big, $((size / 1048576)) MB, $(grep -c $'^\t' "$big") callchain lines"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$big" > /dev/null  # page cache warm for every tool alike
mbps() { awk -v s="$size" -v c="$1" 'BEGIN{ if (c > 0) printf "%.0f MB/s of CPU", s / 1048576 / c; }'; }

echo "== fgtool =="
measure "fgtool collapse" "$fgtool" collapse -q "$big" -o "$dir/collapse.folded"
fg=$MEASURED_CPU; fgw=$MEASURED_WALL; echo "  $(mbps "$fg")"
measure "fgtool collapse --threads 1" "$fgtool" collapse -q --threads 1 "$big" -o "$dir/collapse-1.folded"
fg1=$MEASURED_CPU; fg1w=$MEASURED_WALL; echo "  $(mbps "$fg1")"
cmp -s "$dir/collapse.folded" "$dir/collapse-1.folded" || { echo "fgtool collapse: --threads 1 gave other output" >&2; exit 1; }
measure "fgtool collapse --pid --all" "$fgtool" collapse -q --pid --all "$big" -o "$dir/collapse-pid.folded"

inferno=$(find_inferno)
if [ -z "$inferno" ]; then
  echo "(inferno not found: set INFERNO_BIN or build it as bench/README.md says; no peer figures)"
  exit 0
fi
echo "== inferno ($inferno) =="
measure "inferno-collapse-perf" "$inferno/inferno-collapse-perf" "$big"
inf=$MEASURED_CPU; infw=$MEASURED_WALL; echo "  $(mbps "$inf")"
measure "inferno-collapse-perf --nthreads 1" "$inferno/inferno-collapse-perf" --nthreads 1 "$big"
inf1=$MEASURED_CPU; inf1w=$MEASURED_WALL; echo "  $(mbps "$inf1")"
measure "inferno-collapse-perf --pid --all" "$inferno/inferno-collapse-perf" --pid --all "$big"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "%.2fx", a/b; else printf "?"; }'; }
echo "fgtool collapse against inferno-collapse-perf (target: at least 2x):"
echo "  wall, default threads each:   $(ratio "$infw" "$fgw") faster"
echo "  wall, one thread each:        $(ratio "$inf1w" "$fg1w") faster"
echo "  CPU, default threads each:    $(ratio "$inf" "$fg") less"
echo "  CPU, one thread each:         $(ratio "$inf1" "$fg1") less"
