#!/usr/bin/env bash
# shellcheck disable=SC2154  # the *_wall, *_cpu and *_rss variables are set with printf -v
# The heterogeneous fold benchmark (issue 16, item 2): records what a busy
# 2-core machine runs, system-wide with frame pointers, and prints in one run
# `fgtool fold` (default threads and --threads 1) against
# `perf script --no-inline > /dev/null`, a cold first run against warm runs,
# and PASS/MISS against the targets; and what `fgtool export -f pprof` adds.
#
#   bench/busy_machine.sh [BUILD_DIR] [options]
#     --seconds N     length of the recording (default 240: ~2.4 M samples, 430-540 MB)
#     --short         a 20 s recording (a quick check of the script, not the targets)
#     --data FILE     measure this recording instead of recording a new one
#     --keep-data F   record into F (default $BENCH_DIR/busy.data)
#     --trainers DIR  where mlp_train, vae_train and mnist_synth are (default BUILD_DIR/bin)
#     --svgs DIR      SVGs for Chromium to render (default out/ of the checkout)
#     --browser MODE  persistent (default): one Chromium that stays up and
#                     re-renders the SVGs (bench/busy_browser.mjs, playwright-core
#                     from scripts/setup.sh --bench): ~1.1 k processes and ~18 k
#                     MMAP2, the nearest to issue 16's own held-out recording
#                     (1.6 k processes, 10.7 k MMAP2);
#                     relaunch: a new headless Chromium per screenshot, ~5.5 k
#                     processes and ~100 k MMAP2 (ten times the issue's): a
#                     harsher mix, kept for comparison (bench/README.md)
#     --runs N        warm runs per pipeline, best one counts (default 3)
#     --drop-all      cold run after `echo 3 > /proc/sys/vm/drop_caches` (root; the
#                     whole machine's page cache, the input included) instead of
#                     evicting only the binaries' files. (Either way, one more run
#                     follows with only the recording evicted, the binaries cached.)
#     --profile-only  only the profile below (with --data FILE)
#     --profile       afterwards, perf record -g of one `fgtool fold` (top self-time
#                     functions) and its memory: RSS by kind and, with heaptrack,
#                     the allocations live at the peak
#
# The load (all at once, in its own process group so that it stops with the
# recording): the libtorch MLP and VAE trainers in loops, two Python loops, a
# gzip | gunzip pipeline, headless Chromium screenshotting SVGs, Node scripts
# (bench/busy_load.js: JIT code in anonymous executable memory) and a shell
# loop of short-lived processes (sh -c true, ls, grep). Whatever else runs on
# the machine (other builds) is recorded too: note /proc/loadavg, printed
# before and after.
#
# "Cold" evicts from the page cache (posix_fadvise DONTNEED) the fgtool binary
# and its libraries, every binary that has a build-id in the recording and
# their copies in perf's build-id cache (~/.debug) and /usr/lib/debug; the
# recording itself stays cached, as it would right after `perf record`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=$root/build
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then build=$1; shift; fi
secs=240; data=""; keep=""; trainers=""; svgdir=$root/out; runs=3; drop_all=0; profile=0; browser=persistent
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) secs=$2; shift ;;
    --short) secs=20 ;;
    --data) data=$2; shift ;;
    --keep-data) keep=$2; shift ;;
    --trainers) trainers=$2; shift ;;
    --svgs) svgdir=$2; shift ;;
    --browser) browser=$2; shift ;;
    --runs) runs=$2; shift ;;
    --drop-all) drop_all=1 ;;
    --profile) profile=1 ;;
    --profile-only) profile=2 ;;
    -h|--help) sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "busy_machine.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
case "$browser" in relaunch|persistent) ;; *) echo "busy_machine.sh: --browser is relaunch or persistent" >&2; exit 2 ;; esac
if [ "$browser" = persistent ] && [ -z "$data" ] && [ ! -f "$root/tests/browser/node_modules/playwright-core/index.mjs" ]; then
  echo "busy_machine.sh: the default --browser persistent drives Chromium with playwright-core: run scripts/setup.sh --bench (or pass --browser relaunch)" >&2
  exit 2
fi
[ -d "$build" ] || { echo "busy_machine.sh: no build directory $build" >&2; exit 2; }
build=$(cd "$build" && pwd)
fg=$build/bin/fgtool
[ -x "$fg" ] || { echo "busy_machine.sh: no fgtool at $fg (build first: scripts/build.sh)" >&2; exit 2; }
command -v perf >/dev/null || { echo "busy_machine.sh: perf is not installed" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "busy_machine.sh: needs GNU time (/usr/bin/time)" >&2; exit 2; }
dir=${BENCH_DIR:-/tmp/fgtool-bench}; mkdir -p "$dir"
export DEBUGINFOD_URLS='' FGTOOL_NO_PROGRESS=1
# 1, 5 and 15 min averages and the processes running at this moment.
loadavg() { awk '{split($4, r, "/"); printf "%s %s %s (%d running now)", $1, $2, $3, r[1]}' /proc/loadavg; }
echo "fgtool: $fg ($(git -C "$root" describe --always --dirty 2>/dev/null || echo '?'))"
echo "machine: $(nproc) CPUs, load average before: $(loadavg)"

# ---------------------------------------------------------------- the load
load_pid=""
start_load() {
  local tb=${trainers:-$build/bin} mnist=$dir/mnist zin=$dir/zlib-input
  local -a parts=()
  if [ -x "$tb/mlp_train" ] && [ -x "$tb/vae_train" ] && [ -x "$tb/mnist_synth" ]; then
    [ -s "$mnist/train-images-idx3-ubyte" ] || "$tb/mnist_synth" --out "$mnist" --train 12000 --test 2000 >/dev/null
    parts+=(trainers)
  else
    echo "  (no libtorch trainers in $tb: the load runs without them; pass --trainers DIR)" >&2
  fi
  [ -s "$zin" ] || cat /usr/bin/* 2>/dev/null | head -c 48M >"$zin" || true
  local -a svgs=()
  local s
  for s in "$svgdir"/*.svg; do [ -f "$s" ] && svgs+=("$s"); done
  if [ ${#svgs[@]} = 0 ]; then  # none rendered yet: make two from the fixtures
    mkdir -p "$dir/svg"
    "$fg" svg "$root/testdata/folded/perf-python.folded" -o "$dir/svg/python.svg"
    "$fg" svg "$root/testdata/folded/perf-gzip.folded" -o "$dir/svg/gzip.svg"
    svgs=("$dir/svg/python.svg" "$dir/svg/gzip.svg")
  fi
  if command -v chromium >/dev/null; then parts+=(chromium); else echo "  (no chromium: the load runs without it)" >&2; fi
  if command -v node >/dev/null; then parts+=(node); else echo "  (no node: the load runs without it; scripts/setup.sh --bench)" >&2; fi
  if [ "$browser" = persistent ]; then parts=("${parts[@]/#chromium/chromium-persistent}"); fi
  echo "  load: ${parts[*]} python gzip|gunzip short-lived-processes (${#svgs[@]} SVGs for chromium)"
  # setsid: its own process group, so that `kill -- -PGID` stops all of it.
  setsid bash -c '
    tb=$1 mnist=$2 zin=$3 dir=$4 js=$5 parts=$6 secs=$7; shift 7
    case " $parts " in *" trainers "*)
      while :; do "$tb/mlp_train" --data "$mnist" --epochs 1 --max-batches 80 --threads 2; done >/dev/null 2>&1 &
      while :; do "$tb/vae_train" --data "$mnist" --epochs 1 --max-batches 40 --threads 1; done >/dev/null 2>&1 & ;;
    esac
    for _ in 1 2; do python3 -c "import json
def f(n): return f(n-1) if n else json.dumps([list(range(50))]*200)
while True: f(30)" & done
    while :; do gzip -c "$zin" | gunzip >/dev/null; done &
    case " $parts " in *" chromium "*)
      while :; do for s in "$@"; do
        timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --mute-audio \
          --user-data-dir="$dir/chromium-profile" --window-size=1400,1000 \
          --screenshot="$dir/chromium-shot.png" "file://$s"
      done; done >/dev/null 2>&1 & ;;
    esac
    case " $parts " in *" chromium-persistent "*)
      while :; do node "${js%/*}/busy_browser.mjs" "$secs" "$(command -v chromium)" "$dir/chromium-shot.png" "$@"; done >/dev/null 2>&1 & ;;
    esac
    case " $parts " in *" node "*)
      while :; do node "$js" 15; done >/dev/null 2>&1 & ;;
    esac
    while :; do sh -c true; ls /usr/lib >/dev/null; grep -c root /etc/passwd >/dev/null; sleep 1; done &
    wait' _ "$tb" "$mnist" "$zin" "$dir" "$here/busy_load.js" "${parts[*]}" "$((secs + 30))" "${svgs[@]}" &
  load_pid=$!
}
stop_load() {
  [ -n "$load_pid" ] || return 0
  kill -- -"$load_pid" 2>/dev/null || true
  wait "$load_pid" 2>/dev/null || true
  load_pid=""
}

if [ -z "$data" ]; then
  data=${keep:-$dir/busy.data}
  echo "recording $data: perf record -a -g -F 4999 -e cpu-clock, ${secs}s system-wide under the busy load ..."
  start_load; trap stop_load EXIT
  sleep 5   # let the trainers load libtorch and Chromium start, as on a machine that was already busy
  perf record -q -a -g -F 4999 -e cpu-clock -o "$data" -- sleep "$secs" 2>"$dir/record.log" ||
    { echo "busy_machine.sh: perf record failed:" >&2; tail -5 "$dir/record.log" >&2; exit 1; }
  stop_load; trap - EXIT
  sleep 5   # Chromium's helpers and the trainers' threads take a moment to exit
  echo "  load average after recording: $(loadavg)"
fi
[ -s "$data" ] || { echo "busy_machine.sh: no recording at $data" >&2; exit 2; }

# ------------------------------------------------------------ measurements
# run_timed VAR CMD...: one run, stdout to /dev/null; sets VAR_wall,
# VAR_cpu (user+sys) and VAR_rss (MB).
run_timed() {
  local var=$1; shift
  local t0 t1 u s m
  t0=$(date +%s.%N)
  if ! /usr/bin/time -o "$dir/time.out" -f '%U %S %M' "$@" >/dev/null 2>"$dir/run.err"; then
    echo "busy_machine.sh: failed: $*" >&2; tail -5 "$dir/run.err" >&2; exit 1
  fi
  t1=$(date +%s.%N)
  read -r u s m < <(tail -1 "$dir/time.out")
  printf -v "${var}_wall" '%s' "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')"
  printf -v "${var}_cpu" '%s' "$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.2f", u+s}')"
  printf -v "${var}_rss" '%s' "$(awk -v k="$m" 'BEGIN{printf "%.0f", k/1024}')"
}
# best LABEL VAR N CMD...: N runs; VAR_* of the fastest (the machine is shared:
# the best run is the least disturbed); VAR_rssmax is the largest peak of all.
best() {
  local label=$1 var=$2 n=$3; shift 3
  local bw="" bc="" br="" rmax=0 all=""
  for _ in $(seq "$n"); do
    run_timed one "$@"
    all="$all $one_wall"
    [ "$one_rss" -gt "$rmax" ] && rmax=$one_rss
    if [ -z "$bw" ] || awk -v a="$one_wall" -v b="$bw" 'BEGIN{exit !(a<b)}'; then bw=$one_wall; bc=$one_cpu; br=$one_rss; fi
  done
  printf -v "${var}_wall" '%s' "$bw"; printf -v "${var}_cpu" '%s' "$bc"
  printf -v "${var}_rss" '%s' "$br"; printf -v "${var}_rssmax" '%s' "$rmax"
  printf '  %-40s %7.2f s wall %7.2f s cpu %5d MB peak   (runs:%s s)\n' "$label" "$bw" "$bc" "$rmax" "$all"
}

# The files a cold fold reads: fgtool and its libraries, the recording's
# binaries (build-ids from its header) and their build-id cache and debug copies.
cold_files() {
  {
    echo "$fg"
    ldd "$fg" | awk '$3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'
    perf buildid-list -i "$data" 2>/dev/null | while read -r id path; do
      [ -n "$id" ] || continue
      echo "$path"
      local c=$HOME/.debug/.build-id/${id:0:2}/${id:2}
      echo "$c/elf"; echo "$c/debug"; echo "$c/kallsyms"
      echo "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
    done
  } | sort -u | while read -r f; do [ -f "$f" ] && readlink -f "$f"; done | sort -u
}
# evict FILES...: drop their pages from the page cache; prints resident MB before/after.
evict() {
  python3 - "$@" <<'EOF'
import os, sys, mmap
def resident(path):
    # mincore through a read-only mapping: how many of the file's pages are cached
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return 0
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return 0
        import ctypes, ctypes.util
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            return 0
        pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
        vec = ctypes.create_string_buffer(pages)
        libc.mincore(ctypes.c_void_p(addr), size, vec)
        libc.munmap(ctypes.c_void_p(addr), size)
        return sum(b & 1 for b in vec.raw) * mmap.PAGESIZE
    finally:
        os.close(fd)
files = sys.argv[1:]
before = sum(resident(f) for f in files)
for f in files:
    try:
        fd = os.open(f, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
    except OSError:
        pass
after = sum(resident(f) for f in files)
print(f"  evicted {len(files)} files: {before/1048576:.0f} MB cached before, {after/1048576:.0f} MB after"
      " (pages still mapped by running processes stay)")
EOF
}

if [ $profile != 2 ]; then
size=$(stat -c %s "$data")
echo
echo "recording: $data, $(awk -v s="$size" 'BEGIN{printf "%.0f", s/1048576}') MB"
"$fg" info "$data" 2>/dev/null | grep -E '^(duration|events|  |records|lost|processes|folded):' | grep -v '^      ' | head -8 | sed 's/^/  /'
FGTOOL_NO_PROGRESS=1 "$fg" fold --stats "$data" -o /dev/null 2>&1 | sed -n 's/.*samples, /  /p'
sync "$data" 2>/dev/null || true
cat "$data" >/dev/null   # the recording itself is cached in every run, cold included

echo
echo "cold first run (load average $(loadavg)):"
if [ $drop_all = 1 ]; then
  [ "$(id -u)" = 0 ] || { echo "busy_machine.sh: --drop-all needs root" >&2; exit 2; }
  sync; echo 3 >/proc/sys/vm/drop_caches
  echo "  dropped the whole page cache (echo 3 > /proc/sys/vm/drop_caches)"
else
  mapfile -t files < <(cold_files)
  evict "${files[@]}"
fi
run_timed cold "$fg" fold "$data" -o "$dir/busy.folded"
printf '  %-40s %7.2f s wall %7.2f s cpu %5d MB peak\n' "fgtool fold (cold)" "$cold_wall" "$cold_cpu" "$cold_rss"
stacks=$(grep -vc '^#' "$dir/busy.folded" || true)
echo "  folded stacks: $stacks; the recording's CPU time by command (root frame):"
# Other work on the machine is recorded too (on a shared machine it can
# dominate: compare recordings by this mix, not only by size).
awk '!/^#/ {n = $NF; split($1, f, ";"); w[f[1]] += n; t += n}
     END {for (c in w) printf "%.1f %s\n", 100 * w[c] / t, c}' "$dir/busy.folded" |
  sort -rn | head -10 | awk '{printf "    %5.1f%%  %s\n", $1, $2}'
# The recording itself out of the page cache (copied from another machine,
# or reclaimed since it was written), the binaries cached: the reader asks
# for the file ahead of where it reads. Not a target; cached again after.
evict "$data" >/dev/null
run_timed coldinput "$fg" fold "$data" -o /dev/null
printf '  %-40s %7.2f s wall %7.2f s cpu %5d MB peak\n' "fgtool fold (recording not cached)" "$coldinput_wall" \
  "$coldinput_cpu" "$coldinput_rss"
cat "$data" >/dev/null

echo
echo "warm, best of $runs (load average $(loadavg)):"
best "fgtool fold" fold "$runs" "$fg" fold "$data"
best "fgtool fold --threads 1" fold1 "$runs" "$fg" fold --threads 1 "$data"
best "perf script --no-inline > /dev/null" script "$runs" perf script --no-inline -i "$data"
best "fgtool export -f pprof --no-source-lines" export "$runs" "$fg" export -f pprof --no-source-lines "$data" -o /dev/null
best "export -f pprof --addresses process" export_proc "$runs" "$fg" export -f pprof --no-source-lines \
  --addresses process "$data" -o /dev/null
best "export -f pprof --granularity functions" export_fn "$runs" "$fg" export -f pprof --granularity functions "$data" -o /dev/null
echo "  load average after: $(loadavg)"

echo
echo "targets:"
verdict() { if awk "BEGIN{exit !($1)}"; then echo PASS; else echo MISS; fi; }
ratio=$(awk -v s="$script_wall" -v f="$fold_wall" 'BEGIN{printf "%.1f", s/f}')
ratio_cpu=$(awk -v s="$script_cpu" -v f="$fold_cpu" 'BEGIN{printf "%.1f", s/f}')
printf '  %-4s fgtool fold >= 20x faster than perf script: %sx (wall; %sx in CPU time)\n' \
  "$(verdict "$ratio >= 20")" "$ratio" "$ratio_cpu"
printf '  %-4s peak memory < 150 MB: %s MB (largest of the default-thread runs; cold %s MB)\n' \
  "$(verdict "$fold_rssmax < 150 && $cold_rss < 150")" "$fold_rssmax" "$cold_rss"
printf '  %-4s default threads never slower than --threads 1: %s s vs %s s (cpu %s s vs %s s)\n' \
  "$(verdict "$fold_wall <= $fold1_wall")" "$fold_wall" "$fold1_wall" "$fold_cpu" "$fold1_cpu"
printf '  %-4s cold first run <= 1.5x warm: %s s vs %s s (%sx)\n' \
  "$(verdict "$cold_wall <= 1.5 * $fold_wall")" "$cold_wall" "$fold_wall" \
  "$(awk -v c="$cold_wall" -v w="$fold_wall" 'BEGIN{printf "%.2f", c/w}')"
# The issue's 0.8 s is its 20x where perf script takes 15 s; on this
# recording 20x is perf script's time / 20.
printf '  (also: under 0.8 s, the issue'"'"'s 20x of a 15 s perf script: %s, %s s; 20x of this recording'"'"'s perf script is %s s)\n' \
  "$(verdict "$fold_wall < 0.8")" "$fold_wall" "$(awk -v s="$script_wall" 'BEGIN{printf "%.2f", s/20}')"
printf '  %-4s pprof export adds < 0.3 s to the fold: %s s wall (%s s cpu), peak %s MB vs %s MB (issue 18)\n' \
  "$(verdict "$export_wall - $fold_wall < 0.3")" "$(awk -v e="$export_wall" -v f="$fold_wall" 'BEGIN{printf "%+.2f", e-f}')" \
  "$(awk -v e="$export_cpu" -v f="$fold_cpu" 'BEGIN{printf "%+.2f", e-f}')" "$export_rssmax" "$fold_rssmax"
printf '  (also: each process'"'"'s own addresses, --addresses process --no-source-lines: %s s wall, peak %s MB)\n' \
  "$(awk -v e="$export_proc_wall" -v f="$fold_wall" 'BEGIN{printf "%+.2f", e-f}')" "$export_proc_rssmax"
printf '  (also: pprof export at function level, --granularity functions, no addresses: %s s wall, peak %s MB)\n' \
  "$(awk -v e="$export_fn_wall" -v f="$fold_wall" 'BEGIN{printf "%+.2f", e-f}')" "$export_fn_rssmax"
# Where the export's time goes, from its own --stats line: the fold with
# the collector watching, building the samples (gzip runs meanwhile on the
# other core), and the encoding and gzip left after that.
phases=$("$fg" export -f pprof --no-source-lines --stats "$data" -o /dev/null 2>&1 | grep 'fgtool export: pprof:' || true)
if [ -n "$phases" ]; then
  echo "$phases" | sed -E 's/.*pprof: ([0-9]+) samples.* ([0-9]+) bytes;.*fold ([0-9.]+) s, build ([0-9.]+) s, encode\+gzip ([0-9.]+) s.*/\1 \2 \3 \4 \5/' |
    while read -r n bytes f b e; do
      printf '  (export, one run with --stats: the fold with the collector %s s (the fold alone: %s s), building %s samples %s s, encoding and gzip after it %s s; %s MB written)\n' \
        "$f" "$fold_wall" "$n" "$b" "$e" "$(awk -v x="$bytes" 'BEGIN{printf "%.1f", x/1e6}')"
    done
fi
fi

[ $profile != 0 ] || exit 0
# ------------------------------------------------------------------ profile
echo
echo "profile of one fgtool fold (perf record -g -F 2999; self time):"
perf record -q -g -F 2999 -o "$dir/fold-profile.data" -- "$fg" fold "$data" -o /dev/null 2>/dev/null
{ perf report -i "$dir/fold-profile.data" --no-children --stdio --sort dso,symbol -g none --percent-limit 0.5 2>/dev/null |
  grep -E '^ +[0-9]' | sed 's/[ -]*$//; s/  */ /g' | head -15; } || true
echo
echo "memory of one fgtool fold (peak of /proc/PID/status, sampled every 5 ms):"
"$fg" fold "$data" -o /dev/null &
fpid=$!
python3 - "$fpid" <<'EOF'
import sys, time
pid = sys.argv[1]
peak = {}
at_peak = {}
while True:
    try:
        with open(f"/proc/{pid}/status") as f:
            st = {l.split(":")[0]: int(l.split()[1]) for l in f if l.startswith(("VmRSS", "RssAnon", "RssFile", "RssShmem", "VmHWM"))}
    except (OSError, ValueError, IndexError):
        break
    for k, v in st.items():
        peak[k] = max(peak.get(k, 0), v)
    if st.get("VmRSS", 0) >= peak.get("VmRSS", 0):
        at_peak = st
    time.sleep(0.005)
print("  peak RSS (VmHWM) %.0f MB; at the sampled peak: anonymous (heap) %.0f MB, file-backed (input mmap, binaries) %.0f MB"
      % (peak.get("VmHWM", 0) / 1024, at_peak.get("RssAnon", 0) / 1024, at_peak.get("RssFile", 0) / 1024))
print("  largest seen: anonymous %.0f MB, file-backed %.0f MB" % (peak.get("RssAnon", 0) / 1024, peak.get("RssFile", 0) / 1024))
EOF
wait "$fpid" || true
if command -v heaptrack >/dev/null; then
  echo
  echo "heaptrack: what holds the heap at its peak"
  rm -f "$dir"/heaptrack.fgtool.*
  heaptrack -o "$dir/heaptrack.fgtool" "$fg" fold "$data" -o /dev/null >/dev/null 2>&1 || true
  ht=$(ls "$dir"/heaptrack.fgtool.* 2>/dev/null | head -1)
  if [ -n "$ht" ]; then
    # The allocations live at the heap's peak, by the innermost function
    # outside the standard library that made them. Not in it: memory that
    # fgtool maps itself (HugePageAllocator: the raw-stack table's slots and
    # key blocks), glibc's free lists and the file mappings: compare with RssAnon above.
    heaptrack_print -f "$ht" --flamegraph-cost-type peak -F "$dir/heaptrack-peak.stacks" >"$dir/heaptrack.txt" 2>/dev/null || true
    grep -E '^(peak heap memory consumption|peak RSS)' "$dir/heaptrack.txt" | sed 's/^/  /' || true
    python3 - "$dir/heaptrack-peak.stacks" <<'EOF'
import collections, re, sys
lib = re.compile(r"^(std::|void std::|__gnu_cxx|operator new|allocate$|_M_|__new_allocator|malloc|calloc|realloc|"
                 r"deque$|vector$|_Vector_base|_Deque_base|_Hashtable|_Map_base|basic_string|0x|\?\?)")
owners = collections.Counter()
total = 0
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip().rpartition(" ")
    n = int(n)
    total += n
    frames = [f for f in stack.split(";") if f]
    owner = next((f for f in reversed(frames) if not lib.match(f.split(" (")[0])), "?")
    owners[owner[:130]] += n
print("  heap live at the heap peak: %.1f MB; by the innermost non-std function that allocated it:" % (total / 1048576))
for k, v in owners.most_common(14):
    print("  %7.1f MB  %s" % (v / 1048576, k))
EOF
  fi
fi
