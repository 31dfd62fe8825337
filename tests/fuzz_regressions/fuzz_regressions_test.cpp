// Every input a fuzzer once crashed on (testdata/fuzz-regressions/TARGET/)
// and every hand-written seed (fuzz/seeds/TARGET/) goes through the same
// entry point as in the fuzzer: it must end in success or a clean
// fg::InputError (the bodies catch those), never a crash, abort or another
// exception. In the sanitizer CI build this also checks ASan/UBSan findings.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <typeinfo>
#include <string>
#include <vector>

#include "fuzz_target.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> inputs_of(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != "README.md") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

void replay(const std::string& target, const fs::path& file) {
  auto it = fg::fuzz::targets().find(target);
  ASSERT_NE(it, fg::fuzz::targets().end()) << "no fuzz target named " << target;
  std::string bytes = fg::test::read_file(file.string());
  SCOPED_TRACE(file.string());
  try {
    it->second(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  } catch (const std::exception& e) {
    FAIL() << file << ": escaped the reader as " << typeid(e).name() << ": " << e.what();
  }
}

}  // namespace

TEST(FuzzRegressions, EveryDirectoryNamesATarget) {
  for (const auto& e : fs::directory_iterator(fg::test::testdata("fuzz-regressions"))) {
    if (e.is_directory()) {
      EXPECT_TRUE(fg::fuzz::targets().count(e.path().filename().string())) << e.path();
    }
  }
}

TEST(FuzzRegressions, SavedInputsReplayCleanly) {
  size_t n = 0;
  for (const auto& [name, fn] : fg::fuzz::targets()) {
    for (const auto& f : inputs_of(fs::path(fg::test::testdata("fuzz-regressions")) / name)) {
      replay(name, f);
      ++n;
    }
  }
  std::cout << "replayed " << n << " saved fuzzer inputs\n";
}

TEST(FuzzRegressions, SeedsReplayCleanly) {
  for (const auto& [name, fn] : fg::fuzz::targets())
    for (const auto& f : inputs_of(fs::path(fg::test::source_dir()) / "fuzz" / "seeds" / name)) replay(name, f);
}

// Real recordings through the perf.data bodies, so the pipe plumbing
// (writer thread, /proc/self/fd) is exercised even with no saved findings.
TEST(FuzzRegressions, PerfFixturesThroughEveryPerfTarget) {
  for (const char* rel : {"perf/fp.data", "perf/pipe.data", "perf/zstd.data", "perf/sched_pipe.data"}) {
    std::string bytes = fg::test::read_file(fg::test::testdata(rel));
    for (const char* t : {"perf_data_file", "perf_data_pipe", "fold", "pprof_export"}) {
      SCOPED_TRACE(std::string(t) + " " + rel);
      fg::fuzz::targets().at(t)(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    }
  }
}
