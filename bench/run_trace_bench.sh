#!/usr/bin/env bash
# Trace reading speed of `fgtool fold` on a ~300 MB Kineto-shaped trace
# (bench/gen_kineto_trace.py; with ../shared/traces present, the sampled
# recommender rank repeated, else synthetic steps), CPU and GPU views, plain
# and gzip. Not a test; prints MB/s (decompressed bytes / best wall of 3) and
# peak RSS. Then, when ../shared/traces is there, bench/gpu_fold_check.py.
#
#   bench/run_trace_bench.sh [BUILD_DIR]     (default: build; FGTOOL_TRACE_MB=300 sets the size)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
dir=${FGTOOL_BENCH_DIR:-/tmp/fgtool-bench}
fgtool=$build/bin/fgtool
[ -x "$fgtool" ] || { echo "no $fgtool: build first" >&2; exit 2; }
mkdir -p "$dir"
shared=$here/../../shared/traces
trace=$dir/kineto-${FGTOOL_TRACE_MB:-300}mb.json
if [ ! -s "$trace" ]; then
  seed=()
  [ -f "$shared/sampled-rank0.pt.trace.json.gz" ] && seed=(--seed-trace "$shared/sampled-rank0.pt.trace.json.gz")
  echo "generating $trace ${seed[*]:-(synthetic)} ..."
  python3 "$here/gen_kineto_trace.py" "$trace" --mb "${FGTOOL_TRACE_MB:-300}" "${seed[@]}"
fi
[ -s "$trace.gz" ] || gzip -1 -c "$trace" > "$trace.gz"
bytes=$(stat -c %s "$trace")
run() {
  local best=999 rss=0 t m
  for _ in 1 2 3; do
    /usr/bin/time -o "$dir/time.out" -f "%e %M" "$fgtool" fold "$@" -o /dev/null 2>/dev/null
    read -r t m < "$dir/time.out"
    best=$(python3 -c "print(min($best, $t))"); rss=$m
  done
  python3 -c "print('%-34s %6.2f s  %6.0f MB/s  RSS %4d MB' % ('fold $*'.replace('$dir/', ''), $best, $bytes / 1e6 / max($best, 1e-3), $rss // 1024))"
}
run "$trace"
run --gpu "$trace"
run --gpu --idle "$trace"
run "$trace.gz"
if [ -f "$shared/kernel_totals.py" ]; then
  python3 "$here/gpu_fold_check.py" "$fgtool" "$shared"
fi
