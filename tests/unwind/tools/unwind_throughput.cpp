// Measures DwarfUnwinder speed on a perf.data recorded with --call-graph
// dwarf: time spent in unwind() only (reading and the process table are
// excluded), samples/s and frames/s, plus the outcome counts.
// Usage: unwind_throughput FILE.data [repeat=1]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "perf/perf_data_reader.h"
#include "unwind/dwarf_unwinder.h"

namespace {

struct Timed : fg::RecordHandler {
  fg::ProcessTable table;
  fg::DwarfUnwinder unwinder{table};
  std::vector<fg::UnwindFrame> frames;
  double seconds = 0;
  void on_mmap(const fg::MmapRecord& r) override { table.apply(r); }
  void on_comm(const fg::CommRecord& r) override { table.apply(r); }
  void on_fork(const fg::TaskRecord& r) override { table.apply_fork(r); }
  void on_exit(const fg::TaskRecord& r) override { table.apply_exit(r); }
  void on_sample(const fg::Sample& s) override {
    if (s.regs_user == nullptr && s.regs_abi == 0 && s.stack_user == nullptr) return;
    auto t0 = std::chrono::steady_clock::now();
    unwinder.unwind(s, frames);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE.data [repeat]\n", argv[0]);
    return 2;
  }
  setenv("DEBUGINFOD_URLS", "", 1);
  int repeat = argc > 2 ? std::atoi(argv[2]) : 1;
  for (int r = 0; r < repeat; ++r) {
    Timed t;
    fg::PerfDataReader reader(argv[1]);
    reader.read(t);
    const fg::UnwindStats& st = t.unwinder.stats();
    std::printf("%llu samples in %.3f s: %.0f samples/s, %.0f frames/s (%.1f frames/sample)\n",
                (unsigned long long)st.samples, t.seconds, st.samples / t.seconds,
                st.frames / t.seconds, double(st.frames) / double(st.samples ? st.samples : 1));
    for (size_t i = 0; i < fg::kUnwindOutcomeCount; ++i)
      if (st.by_outcome[i])
        std::printf("  %-40s %llu\n", fg::to_string(fg::UnwindOutcome(i)),
                    (unsigned long long)st.by_outcome[i]);
    std::printf("  Dwfl created %llu, modules reported %llu\n", (unsigned long long)st.dwfl_created,
                (unsigned long long)st.modules_reported);
  }
  return 0;
}
