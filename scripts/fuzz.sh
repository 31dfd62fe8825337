#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang++ with ASan+UBSan) and runs each
# for a bounded time, seeded from testdata/. Exits non-zero when a target
# crashes, leaks, times out (-timeout) or exceeds the memory limit; the input
# that did it is left in BUILD/artifacts/TARGET/ (--save also copies it to
# testdata/fuzz-regressions/TARGET/, which tests/fuzz_regressions replays).
#   scripts/fuzz.sh                    every target, 60 s each
#   scripts/fuzz.sh -t 600 folded      one target for 10 minutes
#   options: -t SECONDS (FUZZ_SECONDS), -j JOBS targets at once (default: cores),
#            -b BUILD_DIR (default build-fuzz), --save, --build-only, --list
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${FUZZ_SECONDS:-60}
jobs=$(nproc)
build=$root/build-fuzz
save=0; build_only=0; list=0; targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    -t) seconds=$2; shift ;;
    -j) jobs=$2; shift ;;
    -b) build=$(realpath -m "$2"); shift ;;
    --save) save=1 ;;
    --build-only) build_only=1 ;;
    --list) list=1 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1") ;;
  esac
  shift
done
all=(perf_data_file perf_data_pipe fold pprof_export folded collapse category_rules pprof)
[ -f "$root/fuzz/chrome_trace_fuzzer.cpp" ] && all+=(chrome_trace onednn_verbose)
[ $list = 1 ] && { printf '%s\n' "${all[@]}"; exit 0; }
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

# Debian 12's clang-14 package installs clang++-14; a plain clang++ also does.
cxx=${FUZZ_CXX:-}
for c in clang++-14 clang++; do [ -z "$cxx" ] && command -v $c >/dev/null && cxx=$c; done
[ -n "$cxx" ] || { echo "fuzz.sh: clang++ missing: run scripts/setup.sh --fuzz" >&2; exit 2; }
cc=${cxx/clang++/clang}
t0=$(date +%s)
# -O1: libFuzzer's usual trade-off between speed and sanitizer precision.
CC=$cc CXX=$cxx cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DFGTOOL_FUZZ=ON -DFGTOOL_BUILD_TESTS=OFF -DFGTOOL_BUILD_BENCH=OFF -DFGTOOL_BUILD_APPS=OFF >/dev/null
ninja -C "$build" -j"${FGTOOL_JOBS:-$(nproc)}" $(printf '%s_fuzzer ' "${targets[@]}") >"$build/ninja.log" 2>&1 ||
  { tail -n 60 "$build/ninja.log"; echo "fuzz.sh: build failed" >&2; exit 1; }
echo "fuzz: built in $(( $(date +%s) - t0 ))s"
[ $build_only = 1 ] && exit 0

# Seeds: copies of the fixtures (perf.data up to 128 KiB, so that one
# execution stays in the milliseconds), plus saved regressions.
seed() {  # seed TARGET [PREFIX_BYTE] FILES...
  local t=$1 prefix=$2; shift 2
  local d=$build/seeds/$t f
  mkdir -p "$d"
  for f in "$@"; do
    [ -f "$f" ] || continue
    [ "$(stat -c %s "$f")" -le 131072 ] || continue
    if [ -n "$prefix" ]; then
      { printf "\\x$prefix"; cat "$f"; } > "$d/$prefix-$(basename "$f")"
    else
      cp "$f" "$d/"
    fi
  done
}
rm -rf "$build/seeds"
td=$root/testdata
for t in perf_data_file perf_data_pipe fold pprof_export; do seed $t "" "$td"/perf/*.data "$td"/fold/*.data "$td"/unwind/*.data; done
seed folded "" "$td"/folded/*.folded "$td"/render/*.folded
# The collapse target takes its options from the first byte (bit 0: --off-cpu).
seed collapse 00 "$td"/collapse/*.txt
seed collapse 01 "$td"/collapse/offcpu.txt "$td"/collapse/mixed.txt
seed category_rules "" "$root"/lib/categories/default_rules.json "$root"/fuzz/seeds/category_rules/*.json
seed pprof "" "$td"/pprof/*.pb
seed chrome_trace "" "$td"/traces/*.json
seed onednn_verbose "" "$td"/traces/*.log
for t in "${targets[@]}"; do
  mkdir -p "$build/seeds/$t"
  [ -d "$td/fuzz-regressions/$t" ] && cp "$td/fuzz-regressions/$t"/* "$build/seeds/$t/" 2>/dev/null || true
done

run_one() {
  local t=$1 corpus=$build/corpus/$1 art=$build/artifacts/$1/ log=$build/logs/$1.log
  mkdir -p "$corpus" "$art" "$build/logs"
  local rc=0
  # The text targets get at most 64 KiB inputs, the perf.data ones 128 KiB.
  local max_len=65536
  case $t in perf_data_*|fold|pprof_export) max_len=131072 ;; esac
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    timeout -k 10 $(( seconds + 120 )) "$build/fuzz/${t}_fuzzer" "$corpus" "$build/seeds/$t" \
      -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=$max_len \
      -artifact_prefix="$art" -print_final_stats=1 >"$log" 2>&1 || rc=$?
  local execs
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  if [ $rc = 0 ]; then
    echo "fuzz: $t: ok, $execs runs in ${seconds}s, corpus $(ls "$corpus" | wc -l) inputs"
  else
    echo "fuzz: $t: FAILED (exit $rc) after $execs runs; log $log"
    grep -m1 -E 'ERROR: |SUMMARY: |==[0-9]+==' "$log" | sed 's/^/    /' || true
    for f in "$art"*; do
      [ -f "$f" ] || continue
      echo "    input: $f"
      if [ $save = 1 ]; then
        mkdir -p "$td/fuzz-regressions/$t"
        cp "$f" "$td/fuzz-regressions/$t/"
        echo "    saved to testdata/fuzz-regressions/$t/$(basename "$f")"
      fi
    done
    return 1
  fi
}

failed=0
running=0
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if [ $running -ge "$jobs" ]; then wait -n || failed=1; running=$((running - 1)); fi
done
while [ $running -gt 0 ]; do wait -n || failed=1; running=$((running - 1)); done
echo "fuzz: ${#targets[@]} targets, ${seconds}s each, $jobs at a time, done in $(( $(date +%s) - t0 ))s"
[ $failed = 0 ] || { echo "fuzz: failures above; reproduce with BUILD/fuzz/TARGET_fuzzer INPUT" >&2; exit 1; }
