#!/usr/bin/env bash
# CI checks beyond the README's test command (.ci/run calls this after
# scripts/test.sh, which has installed everything and built build/):
#   1. ASan+UBSan build of the parser-heavy test binaries and a ctest run of
#      them; the same build has -Wall -Wextra -Werror on the project's own code
#      (lib/, fgtool, fuzz and robustness tests), so the warning check costs nothing extra;
#   2. a ThreadSanitizer build of fgtool and the fold, perf, unwind and symbols
#      tests (the fold's reading, folding, symbolising and unwinding threads;
#      docs/architecture.md has who owns what) and a ctest run of them: any
#      race report makes fgtool exit 66 and its test fail;
#   3. the libFuzzer targets, FUZZ_SECONDS (60) each;
#   4. no function in lib/ over 80 lines without a "Long function:" reason
#      above it, and no file over 650 without a "Long file:" reason at its
#      top (scripts/long_functions.py, a second), and the hash tables'
#      prefetches present in build/bin/fgtool (scripts/check_prefetch.sh).
# Each step's time is printed; CI_EXTRA_SKIP="asan tsan fuzz length" skips steps.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
skip=" ${CI_EXTRA_SKIP:-} "
jobs=${FGTOOL_JOBS:-$(nproc)}
unset DEBUGINFOD_URLS
export FGTOOL_NO_PROGRESS=1
step() { echo "ci_extra: $1 done in $(( $(date +%s) - $2 ))s"; }

# The sanitized test binaries: everything that parses input (perf.data,
# folded and perf script text, traces, rules) or writes output from it.
# Left out (they gain little from ASan and cost the most): symbols and unwind
# (elfutils does the parsing; their own ASan builds are run by their authors),
# record (runs `perf record` for seconds per test), apps (libtorch) and
# browser (Chromium).
asan_targets=(fgtool folded_tests collapse_test perf_reader_test fold_tests categories_test render_tests
              fuzz_regressions_test robustness_test pprof_tests)
[ -f tests/traces/CMakeLists.txt ] && asan_targets+=(traces_tests)
# Tests excluded under ASan, by name: only *_NOT_BUILT (the binaries not in
# the list above) and browser_* (Chromium, no fgtool code). Everything else
# works under ASan, the live `perf record` tests and the signal-timing test
# included (measured: 259 tests in 71 s with -j2), so nothing else is left out.
asan_exclude='_NOT_BUILT|^browser_'

if [[ $skip != *" length "* ]]; then
  python3 scripts/long_functions.py lib
  bash scripts/check_prefetch.sh build/bin/fgtool
fi

if [[ $skip != *" asan "* ]]; then
  s=$(date +%s)
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFGTOOL_SANITIZE=ON -DFGTOOL_WERROR=ON \
    -DFGTOOL_BUILD_APPS=OFF -DFGTOOL_BUILD_BENCH=OFF >/dev/null
  ninja -C build-asan -j"$jobs" "${asan_targets[@]}" >build-asan/ninja.log 2>&1 ||
    { tail -n 60 build-asan/ninja.log; echo "ci_extra: ASan build failed" >&2; exit 1; }
  step "ASan+UBSan build (-Werror)" "$s"
  s=$(date +%s)
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j"$jobs" --timeout 900 -E "$asan_exclude"
  step "ASan+UBSan tests" "$s"
fi

# Without the ASan step, the -Werror check gets a build of its own (lib/ and fgtool).
if [[ $skip == *" asan "* && $skip != *" werror "* ]]; then
  s=$(date +%s)
  cmake -S . -B build-werror -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFGTOOL_WERROR=ON \
    -DFGTOOL_BUILD_APPS=OFF -DFGTOOL_BUILD_TESTS=OFF -DFGTOOL_BUILD_BENCH=OFF >/dev/null
  ninja -C build-werror -j"$jobs" fgtool >build-werror/ninja.log 2>&1 ||
    { grep -A8 -E 'error:' build-werror/ninja.log | head -n 80; echo "ci_extra: -Werror build failed" >&2; exit 1; }
  step "-Werror build" "$s"
fi

if [[ $skip != *" tsan "* ]]; then
  s=$(date +%s)
  tsan_targets=(fgtool fold_tests perf_reader_test process_table_test symbols_test
                dwarf_unwind_live_test dwarf_unwind_fixture_test pprof_tests folded_tests)
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFGTOOL_TSAN=ON \
    -DFGTOOL_BUILD_APPS=OFF -DFGTOOL_BUILD_BENCH=OFF >/dev/null
  ninja -C build-tsan -j"$jobs" "${tsan_targets[@]}" >build-tsan/ninja.log 2>&1 ||
    { tail -n 60 build-tsan/ninja.log; echo "ci_extra: TSan build failed" >&2; exit 1; }
  step "ThreadSanitizer build" "$s"
  s=$(date +%s)
  # Only the binaries built above: every other test registered in build-tsan is *_NOT_BUILT.
  TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
    ctest --test-dir build-tsan --output-on-failure -j"$jobs" --timeout 900 -E '_NOT_BUILT|^browser_'
  step "ThreadSanitizer tests" "$s"
fi

if [[ $skip != *" fuzz "* ]]; then
  s=$(date +%s)
  bash scripts/setup.sh --fuzz
  bash scripts/fuzz.sh -t "${FUZZ_SECONDS:-60}" -j "$jobs"
  step "fuzzing" "$s"
fi
echo "ci_extra: all done in $(( $(date +%s) - t0 ))s"
