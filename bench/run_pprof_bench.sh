#!/usr/bin/env bash
# Benchmark of fgtool's pprof support (issue 18): what `export -f pprof`
# adds to a fold, how fast pprof reads back, and `fgtool merge` throughput on
# folded input.
#
#   bench/run_pprof_bench.sh [BUILD_DIR] PERF_DATA
#
# PERF_DATA: a large recording, e.g. the system-wide one bench/run_perf_bench.sh
# records. Folded inputs for merge are made with bench/gen_folded.py in
# $BENCH_DIR (default /tmp/fgtool-bench). Prints the best of 3 runs (wall) and
# peak memory: the machines are shared, the best run is the least disturbed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../build
if [ $# -ge 2 ]; then build=$1; shift; fi
data=${1:?usage: bench/run_pprof_bench.sh [BUILD_DIR] PERF_DATA}
fg=$build/bin/fgtool
[ -x "$fg" ] || { echo "no fgtool at $fg" >&2; exit 2; }
dir=${BENCH_DIR:-/tmp/fgtool-bench}; mkdir -p "$dir"
export DEBUGINFOD_URLS= FGTOOL_NO_PROGRESS=1

measure() {  # measure NAME CMD VAR: best wall seconds of 3 and its peak RSS
  local name=$1 cmd=$2 best="" best_rss=0 t0 t1 s rss
  for _ in 1 2 3; do
    t0=$(date +%s.%N)
    /usr/bin/time -o "$dir/rss" -f '%M' bash -c "$cmd >/dev/null 2>/dev/null" || true
    t1=$(date +%s.%N)
    rss=$(tail -1 "$dir/rss")
    s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')
    if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN{exit !(a<b)}'; then best=$s; best_rss=${rss:-0}; fi
  done
  printf '  %-52s %7.2f s  %7.0f MB peak\n' "$name" "$best" "$(awk -v k="$best_rss" 'BEGIN{print k/1024}')"
  eval "t_$3=$best"
}
mb() { awk -v s="$(stat -c %s "$1")" 'BEGIN{printf "%.1f", s/1048576}'; }

printf '%s (%s MB)\n' "$data" "$(mb "$data")"
"$fg" fold "$data" >/dev/null 2>&1   # warm the page cache and debuginfo
measure "fgtool fold" "'$fg' fold '$data'" fold
measure "fgtool export -f pprof (gzip, categories)" "'$fg' export -f pprof '$data' -o '$dir/p.pb.gz'" pprof
measure "fgtool export -f pprof --uncompressed --no-categories" \
  "'$fg' export -f pprof --uncompressed --no-categories '$data' -o '$dir/p.pb'" raw
awk -v a="$t_fold" -v b="$t_pprof" -v c="$t_raw" 'BEGIN{printf "  => pprof adds %.2f s to the fold (%.2f s without gzip and categories)\n", b-a, c-a}'
"$fg" export -f pprof --stats "$data" -o "$dir/p.pb.gz" 2>&1 | grep 'pprof:' || true

printf '\nreading pprof (%s MB gzip, %s MB protobuf)\n' "$(mb "$dir/p.pb.gz")" "$(mb "$dir/p.pb")"
measure "fgtool merge p.pb.gz -o /dev/null" "'$fg' merge '$dir/p.pb.gz' -o /dev/null" rgz
measure "fgtool merge p.pb -o /dev/null" "'$fg' merge '$dir/p.pb' -o /dev/null" rpb
awk -v g="$t_rgz" -v p="$t_rpb" -v gs="$(stat -c %s "$dir/p.pb.gz")" -v ps="$(stat -c %s "$dir/p.pb")" 'BEGIN{
  printf "  => gzip: %.0f MB/s of file, %.0f MB/s of protobuf; raw protobuf: %.0f MB/s\n", gs/g/1e6, ps/g/1e6, ps/p/1e6 }'

[ -f "$dir/host1.folded" ] || python3 "$here/gen_folded.py" --seed 1 "$dir/host1.folded"
[ -f "$dir/host2.folded" ] || python3 "$here/gen_folded.py" --seed 2 --perturb "$dir/host2.folded"
in_bytes=$(( $(stat -c %s "$dir/host1.folded") + $(stat -c %s "$dir/host2.folded") ))
printf '\nmerge of two folded files (%s MB in all)\n' "$(awk -v s="$in_bytes" 'BEGIN{printf "%.0f", s/1048576}')"
measure "fgtool merge a b -o /dev/null" "'$fg' merge '$dir/host1.folded' '$dir/host2.folded' -o /dev/null" m
measure "fgtool merge --label host a b -o /dev/null" "'$fg' merge --label host '$dir/host1.folded' '$dir/host2.folded' -o /dev/null" ml
measure "fgtool merge --label host a b -o job.pb.gz" "'$fg' merge --label host '$dir/host1.folded' '$dir/host2.folded' -o '$dir/job.pb.gz'" mp
measure "  ... --no-categories" "'$fg' merge --no-categories --label host '$dir/host1.folded' '$dir/host2.folded' -o '$dir/job.pb.gz'" mpn
awk -v b="$in_bytes" -v m="$t_m" -v l="$t_ml" -v p="$t_mp" -v n="$t_mpn" 'BEGIN{
  printf "  => %.0f MB/s summed, %.0f MB/s with --label (folded), %.0f / %.0f MB/s to pprof (with / without categories)\n",
         b/m/1e6, b/l/1e6, b/p/1e6, b/n/1e6 }'
