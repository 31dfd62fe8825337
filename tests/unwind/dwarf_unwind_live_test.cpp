// DWARF unwinding on a recording made now: sort_callbacks (built -O2 -g
// without frame pointers) spends its time in callbacks called from qsort in
// libc and std::sort in a std::thread; the unwound stacks must reach main /
// the thread start through those libraries and agree with `perf script`.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

#include "test_support.h"
#include "unwind_harness.h"

namespace {

using fg::UnwindOutcome;
using namespace fg::test;

struct Recording {
  std::string dir, data, script;
  std::string skip;  // why perf could not record
};

const Recording& recording() {
  static Recording r = [] {
    Recording rec;
    setenv("DEBUGINFOD_URLS", "", 1);
    rec.skip = perf_unavailable_reason();
    if (!rec.skip.empty()) return rec;
    rec.dir = temp_dir();
    rec.data = rec.dir + "/dwarf.data";
    auto res = run_shell("perf record -q -o " + shell_quote(rec.data) +
                         " -e cpu-clock -F 999 --call-graph dwarf,16384 " +
                         shell_quote(SORT_CALLBACKS_BIN) + " 0.3");
    if (res.status != 0) {
      rec.skip = "perf record --call-graph dwarf failed: " + res.err.substr(0, 300);
      return rec;
    }
    auto script = run_shell("DEBUGINFOD_URLS= perf script -i " + shell_quote(rec.data) +
                            " -F tid,time,ip,sym,dso --ns --no-inline");
    EXPECT_EQ(script.status, 0) << script.err;
    rec.script = script.out;
    return rec;
  }();
  return r;
}

struct Unwound {
  std::unique_ptr<UnwindingCollector> collector;
};

// Recorded paths as they are, and "[vdso]" as the copy perf record saved in
// its build-id cache (~/.debug/[vdso]/<build-id>/vdso), as perf script does:
// the workload calls clock_gettime, whose frames are in the vdso.
fg::DwarfUnwinder::ElfPathResolver resolver_for(const fg::PerfDataReader& reader) {
  std::string vdso;
  const char* home = std::getenv("HOME");
  for (const auto& b : reader.info().build_ids)
    if (b.filename == "[vdso]" && home != nullptr)
      vdso = std::string(home) + "/.debug/[vdso]/" +
             fg::build_id_hex(reinterpret_cast<const uint8_t*>(b.build_id.data()), b.build_id.size()) +
             "/vdso";
  return [vdso](const fg::MapEntry& m) -> std::string {
    if (m.path == "[vdso]") return access(vdso.c_str(), R_OK) == 0 ? vdso : std::string();
    std::string p(m.path);
    return m.is_file_backed() && access(p.c_str(), R_OK) == 0 ? p : std::string();
  };
}

UnwindingCollector& unwound() {
  static std::unique_ptr<UnwindingCollector> c = [] {
    fg::PerfDataReader reader(recording().data);
    auto col = std::make_unique<UnwindingCollector>(fg::DwarfUnwinderOptions{}, resolver_for(reader));
    reader.read(*col);
    return col;
  }();
  return *c;
}

#define SKIP_WITHOUT_PERF() \
  if (!recording().skip.empty()) GTEST_SKIP() << recording().skip

TEST(DwarfUnwindLive, QsortCallbackStacksReachMainThroughLibc) {
  SKIP_WITHOUT_PERF();
  const auto& c = unwound();
  ASSERT_GT(c.samples.size(), 100u);
  size_t callback = 0, full = 0;
  std::string example;
  for (const auto& s : c.samples) {
    if (s.frames.empty() || s.frames[0].symbol != "compare_ints") continue;
    ++callback;
    int q = s.index_of("qsort");
    int m = s.index_of("main");
    // main -> ... -> qsort (libc, no frame pointers) -> msort... -> compare_ints
    if (q > 1 && m > q && s.frames[q].dso.find("libc.so") != std::string::npos) ++full;
    else if (example.empty())
      for (const auto& f : s.frames) example += f.symbol + " <- ";
  }
  ASSERT_GT(callback, 20u) << "too few samples in compare_ints";
  EXPECT_GE(full, callback * 95 / 100) << full << " of " << callback << "; e.g. " << example;
}

// The unwinder asks libdwfl for separate debug files only where one could
// be found locally (symbols/debuginfo_search.h): with DEBUGINFOD_URLS empty,
// its debuginfod client library is never loaded.
TEST(DwarfUnwindLive, UnwindingLoadsNoDebuginfodClient) {
  SKIP_WITHOUT_PERF();
  ASSERT_GT(unwound().samples.size(), 100u);
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    EXPECT_EQ(line.find("libdebuginfod"), std::string::npos) << line;
}

TEST(DwarfUnwindLive, StdSortInAStdThreadReachesTheThreadStart) {
  SKIP_WITHOUT_PERF();
  const auto& c = unwound();
  size_t callback = 0, full = 0;
  std::set<int32_t> tids;
  for (const auto& s : c.samples) {
    tids.insert(s.tid);
    if (s.frames.empty() || s.frames[0].symbol.find("less_by_value") == std::string::npos) continue;
    ++callback;
    int w = s.index_of("std_sort_worker");
    bool through_libstdcxx = false, reached_libc = false;
    for (size_t i = w < 0 ? s.frames.size() : w + 1; i < s.frames.size(); ++i) {
      if (s.frames[i].dso.find("libstdc++") != std::string::npos) through_libstdcxx = true;
      if (s.frames[i].symbol.find("start_thread") != std::string::npos) reached_libc = true;
    }
    if (s.index_of("sort_with_std_sort") > 0 && w > 0 && through_libstdcxx && reached_libc &&
        s.outcome == UnwindOutcome::complete)
      ++full;
  }
  EXPECT_GE(tids.size(), 2u);
  ASSERT_GT(callback, 10u);
  EXPECT_GE(full, callback * 95 / 100) << full << " of " << callback;
}

TEST(DwarfUnwindLive, FramesAgreeWithPerfScript) {
  SKIP_WITHOUT_PERF();
  const auto& c = unwound();
  auto oracle = parse_perf_script(recording().script);
  Agreement a = compare_with_oracle(c.samples, oracle);
  std::string why;
  for (const auto& m : a.first_mismatches) why += "\n  " + m;
  std::printf("perf script agreement: %llu of %llu user frames in %llu samples\n",
              (unsigned long long)a.matching, (unsigned long long)a.oracle_frames,
              (unsigned long long)a.compared_samples);
  EXPECT_GE(a.compared_samples, c.samples.size() * 9 / 10);
  EXPECT_GE(a.ratio(), 0.98) << a.matching << " of " << a.oracle_frames << why;
}

TEST(DwarfUnwindLive, OneDwflPerProcessAndCountedOutcomes) {
  SKIP_WITHOUT_PERF();
  const auto& c = unwound();
  const fg::UnwindStats& st = c.unwinder.stats();
  EXPECT_EQ(st.samples, c.samples.size());
  EXPECT_LE(st.dwfl_created, c.pids.size() + st.dwfl_invalidated);
  EXPECT_LE(st.dwfl_invalidated, 2u);
  uint64_t sum = 0;
  for (size_t i = 0; i < fg::kUnwindOutcomeCount; ++i) {
    sum += st.by_outcome[i];
    if (st.by_outcome[i])
      std::printf("%-40s %llu\n", fg::to_string(static_cast<UnwindOutcome>(i)),
                  (unsigned long long)st.by_outcome[i]);
  }
  std::printf("frames %llu, Dwfl created %llu, modules %llu, stack/file/refused reads %llu/%llu/%llu\n",
              (unsigned long long)st.frames, (unsigned long long)st.dwfl_created,
              (unsigned long long)st.modules_reported, (unsigned long long)st.stack_reads,
              (unsigned long long)st.file_reads, (unsigned long long)st.refused_reads);
  EXPECT_EQ(sum, st.samples);
  EXPECT_GE(st.complete(), st.samples * 8 / 10);
  EXPECT_GE(st.modules_reported, 3u);  // the program, libc, libstdc++ (+ ld.so)
  EXPECT_GT(st.stack_reads, 0u);
}

TEST(DwarfUnwindLive, DebugFrameOnlyCodeUnwindsWithDebugFrame) {
  SKIP_WITHOUT_PERF();
  // The program's own functions have no .eh_frame entries (libc's do), so
  // compare_ints -> msort and qsort -> main need .debug_frame.
  auto sections = run_shell("readelf -S " + shell_quote(SORT_CALLBACKS_DEBUG_FRAME_BIN));
  if (sections.status == 0) EXPECT_NE(sections.out.find(".debug_frame"), std::string::npos);
  std::string data = recording().dir + "/debug_frame.data";
  auto res = run_shell("perf record -q -o " + shell_quote(data) +
                       " -e cpu-clock -F 999 --call-graph dwarf,16384 " +
                       shell_quote(SORT_CALLBACKS_DEBUG_FRAME_BIN) + " 0.15");
  ASSERT_EQ(res.status, 0) << res.err;
  UnwindingCollector c;
  fg::PerfDataReader reader(data);
  reader.read(c);
  size_t callback = 0, full = 0;
  for (const auto& s : c.samples) {
    if (s.frames.empty() || s.frames[0].symbol != "compare_ints") continue;
    ++callback;
    int q = s.index_of("qsort"), m = s.index_of("main");
    if (q > 1 && m > q && s.outcome == UnwindOutcome::complete) ++full;
  }
  ASSERT_GT(callback, 10u);
  EXPECT_GE(full, callback * 95 / 100) << full << " of " << callback;
}

}  // namespace
