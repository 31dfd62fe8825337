// The oracle: record the fixtures with perf, and require that every sample IP in
// the fixture and in libc gets exactly the name `perf script` prints (including
// [unknown], version suffixes and libc aliases). Skipped when perf cannot record.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>

#include "symbols/build_id.h"
#include "symbols/symbol_cache.h"
#include "test_support.h"

namespace {

using fg::test::run_shell;
using fg::test::shell_quote;

struct Map {
  uint64_t start, len, pgoff;
  std::string path;
};

// plt_at_file_offsets: perf 6.1 places synthesized name@plt symbols at the .plt
// section's file offset instead of its address, so where they differ (lld) perf
// says [unknown] for PLT samples and we are right.
void compare_with_perf(const std::string& program, const std::string& args, size_t min_objects,
                       bool kernel = false, bool plt_at_file_offsets = false) {
  SCOPED_TRACE(program);
  std::string reason = fg::test::perf_unavailable_reason();
  if (!reason.empty()) GTEST_SKIP() << reason;
  setenv("DEBUGINFOD_URLS", "", 1);
  std::string dir = fg::test::temp_dir();
  std::string data = dir + "/perf.data";
  auto rec = run_shell("perf record -q -o " + shell_quote(data) + " -e " + (kernel ? "cpu-clock" : "cpu-clock:u") + " -F 2999 " +
                       shell_quote(program) + " " + args + " > /dev/null");
  ASSERT_EQ(rec.status, 0) << rec.err;
  auto script = run_shell("DEBUGINFOD_URLS= perf script -i " + shell_quote(data) +
                          " --show-mmap-events -F ip,sym,dso 2>/dev/null");
  ASSERT_EQ(script.status, 0) << script.err;

  // The recording's [vdso] build-id (perf saves the image in its cache; we are on
  // the same kernel, so the live vdso matches it).
  std::string vdso_build_id;
  {
    auto ids = run_shell("perf buildid-list -i " + shell_quote(data) + " 2>/dev/null | awk '$2==\"[vdso]\"{print $1}'");
    vdso_build_id = fg::build_id_from_hex(ids.out.substr(0, ids.out.find('\n')));
  }
  static const std::regex mmap_re(
      R"(PERF_RECORD_MMAP2? \d+/\d+: \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (0x[0-9a-f]+|0) .*\]: r-xp (.*)$)");
  static const std::regex sample_re(R"(^\s*([0-9a-f]+) (.*) \((.*)\)$)");
  std::vector<Map> maps;
  fg::SymbolOptions opts;
  opts.buildid_dir = fg::test::temp_dir();
  opts.use_proc_kallsyms = true;  // recorded here, now: perf uses /proc/kallsyms too
  fg::SymbolCache cache(opts);
  size_t kernel_samples = 0;
  std::map<std::string, int> per_object;
  size_t samples = 0, mismatches = 0;
  std::istringstream in(script.out);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, mmap_re)) {
      maps.push_back({std::stoull(m[1], nullptr, 16), std::stoull(m[2], nullptr, 16),
                      std::stoull(m[3], nullptr, 16), m[4]});
      continue;
    }
    if (!std::regex_match(line, m, sample_re)) continue;
    uint64_t ip = std::stoull(m[1], nullptr, 16);
    std::string perf_sym = m[2], dso = m[3];
    if (dso == "[kernel.kallsyms]") {
      std::vector<fg::SymbolizedFrame> out;
      cache.symbolize_kernel(ip, false, out);
      std::string ours = out.at(0).resolved ? std::string(out[0].name) : "[unknown]";
      ++kernel_samples;
      if (ours != perf_sym && ++mismatches <= 20)
        ADD_FAILURE() << std::hex << "kernel ip " << ip << ": perf says '" << perf_sym << "', we say '" << ours << "'";
      continue;
    }
    const Map* map = nullptr;
    for (const Map& mp : maps)
      if (ip >= mp.start && ip < mp.start + mp.len && mp.path == dso) map = &mp;
    if (!map || (dso.front() == '[' && dso != "[vdso]")) continue;
    auto h = cache.object({map->path, dso == "[vdso]" ? vdso_build_id : ""});
    std::vector<fg::SymbolizedFrame> out;
    cache.symbolize(h, ip - map->start + map->pgoff, false, out);
    ASSERT_EQ(out.size(), 1u);
    std::string ours = out[0].resolved ? std::string(out[0].name) : "[unknown]";
    ++samples;
    per_object[dso]++;
    if (plt_at_file_offsets && perf_sym == "[unknown]" && ours.size() > 4 &&
        ours.compare(ours.size() - 4, 4, "@plt") == 0)
      continue;
    if (ours != perf_sym) {
      ++mismatches;
      ADD_FAILURE() << std::hex << "ip " << ip << " in " << dso << ": perf says '" << perf_sym << "', we say '"
                    << ours << "'";
      if (mismatches > 20) break;
    }
  }
  EXPECT_GT(samples, 100u);
  EXPECT_GE(per_object.size(), min_objects) << "expected samples in the program and in libc";
  if (kernel && !cache.kernel_status().kptr_restricted) EXPECT_GT(kernel_samples, 5u);
  if (kernel) EXPECT_GT(per_object["[vdso]"], 5) << "fixture spends time in the vdso";
}

TEST(PerfOracle, CFixtureAndLibcNamesMatchPerfScript) { compare_with_perf(SYMFX_C_PIE, "40000000", 2, true); }
TEST(PerfOracle, CxxFixtureNamesMatchPerfScript) { compare_with_perf(SYMFX_CXX, "60000000 cold", 1); }
#ifdef SYMFX_C_LLD
TEST(PerfOracle, LldFixtureNamesMatchPerfScript) { compare_with_perf(SYMFX_C_LLD, "40000000", 2, false, true); }
#endif

}  // namespace
