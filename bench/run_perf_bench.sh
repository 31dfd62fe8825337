#!/usr/bin/env bash
# Benchmark of `fgtool fold` against perf's own text pipeline, on one
# frame-pointer recording (>= 100 MB, system-wide) and one DWARF recording.
#
#   bench/run_perf_bench.sh [BUILD_DIR] [--fp FILE] [--dwarf FILE] [--seconds N]
#
# Without --fp/--dwarf it records fresh files into $BENCH_DIR (default
# /tmp/fgtool-bench). Prints wall time and peak memory of each pipeline and the
# ratios, e.g. "fold is 14.2x faster than perf script alone".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}; [ $# -gt 0 ] && shift
fg=$build/bin/fgtool
fp=""; dwarf=""; secs=20
while [ $# -gt 0 ]; do
  case "$1" in
    --fp) fp=$2; shift ;;
    --dwarf) dwarf=$2; shift ;;
    --seconds) secs=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$fg" ] || { echo "no fgtool at $fg (build first: scripts/build.sh)" >&2; exit 2; }
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 2; }
dir=${BENCH_DIR:-/tmp/fgtool-bench}; mkdir -p "$dir"
export DEBUGINFOD_URLS= FGTOOL_NO_PROGRESS=1

load() {  # a mixed CPU load with deep-ish stacks for the recording
  for _ in 1 2; do (python3 -c 'import json
def f(n): return f(n-1) if n else json.dumps([list(range(50))]*200)
t=0
import time
e=time.time()+'"$secs"'
while time.time()<e: t+=len(f(30))' &) ; done
  (for _ in $(seq 1 200); do gzip -9 -c /usr/bin/perf >/dev/null; done &)
}
if [ -z "$fp" ]; then
  fp=$dir/fp.data
  echo "recording $fp: perf record -a -g -F 15000, ${secs}s system-wide ..."
  load; perf record -q -a -g -F 15000 -o "$fp" -- sleep "$secs" 2>/dev/null; pkill -f 'gzip -9 -c /usr/bin/perf' || true
fi
if [ -z "$dwarf" ]; then
  dwarf=$dir/dwarf.data
  echo "recording $dwarf: perf record --call-graph dwarf -F 499, 8s ..."
  perf record -q -F 499 --call-graph dwarf,8192 -o "$dwarf" -- python3 -c 'import time,json
e=time.time()+8
while time.time()<e: json.dumps([list(range(100))]*100)' 2>/dev/null
fi

# measure NAME CMD: wall seconds and peak RSS (MB) of a shell pipeline
measure() {
  local name=$1 cmd=$2 t0 t1 rss
  t0=$(date +%s.%N)
  /usr/bin/time -o "$dir/rss" -f '%M' bash -c "$cmd >/dev/null 2>/dev/null" || true
  rss=$(tail -1 "$dir/rss")
  t1=$(date +%s.%N)
  local s; s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')
  printf '  %-44s %7.2f s  %7.0f MB peak\n' "$name" "$s" "$(awk -v k="${rss:-0}" 'BEGIN{print k/1024}')"
  eval "t_$3=$s"
}

for f in "$fp" "$dwarf"; do
  size=$(stat -c %s "$f")
  printf '\n%s (%.0f MB, %s samples)\n' "$f" "$(awk -v s="$size" 'BEGIN{print s/1048576}')" \
    "$("$fg" info "$f" 2>/dev/null | awk '/^folded:/ {print $2; exit}')"
  "$fg" fold "$f" >/dev/null 2>&1 || true   # warm the page cache and debuginfo
  measure "fgtool fold" "'$fg' fold '$f'" fold
  measure "perf script --no-inline >/dev/null" "perf script --no-inline -i '$f'" script
  measure "perf script --no-inline | fgtool collapse" "perf script --no-inline -i '$f' | '$fg' collapse -" collapse
  awk -v f="$t_fold" -v s="$t_script" -v c="$t_collapse" 'BEGIN{
    printf "  => fgtool fold is %.1fx faster than perf script alone, %.1fx faster than perf script | collapse\n", s/f, c/f }'
done
