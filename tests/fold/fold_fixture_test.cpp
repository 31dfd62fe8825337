// Deterministic tests on committed recordings (testdata/fold/README.md says
// how each was made) with the exact binary they reference, found through
// --symfs: golden folded output, determinism, missing binaries, and damaged
// files (truncated, corrupt, empty, wrong magic) giving one clear error line.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "test_support.h"

namespace fg::test {
namespace {

class FoldFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("DEBUGINFOD_URLS", "", 1);
    empty_cache_ = temp_dir();  // no perf build-id cache: --symfs must be what finds the binary
  }
  std::string fold_cmd(const std::string& args) const {
    return shell_quote(fgtool_bin()) + " fold --buildid-dir " + shell_quote(empty_cache_) + " " + args;
  }
  std::string symfs() const { return "--symfs " + shell_quote(testdata("fold/symfs")); }

  void check_golden(const std::string& name, const std::string& args) {
    std::string data = name.substr(0, name.find('.'));
    CommandResult r = run_shell(fold_cmd(symfs() + " " + args + " " + shell_quote(testdata("fold/" + data + ".data"))));
    ASSERT_EQ(r.status, 0) << r.err;
    std::string golden = testdata("fold/" + name + ".folded");
    if (std::getenv("FGTOOL_BLESS")) write_file(golden, r.out);
    EXPECT_EQ(r.out, read_file(golden)) << "fold of " << name << " changed; rerun with FGTOOL_BLESS=1 after review";
  }
  std::string empty_cache_;
};

TEST_F(FoldFixture, FramePointerGolden) { check_golden("fp_static", ""); }
TEST_F(FoldFixture, FramePointerTidGolden) { check_golden("fp_static.tid", "--tid --count"); }
TEST_F(FoldFixture, DwarfGoldenSeesThroughQsort) {
  check_golden("dwarf_static", "");
  std::string golden = read_file(testdata("fold/dwarf_static.folded"));
  EXPECT_NE(golden.find("main;__qsort_r;msort_with_tmp.part.0;"), std::string::npos);
  EXPECT_NE(golden.find(";compare_keys "), std::string::npos);
}

TEST_F(FoldFixture, OutputIsDeterministic) {
  std::string cmd = fold_cmd(symfs() + " " + shell_quote(testdata("fold/dwarf_static.data")));
  CommandResult a = run_shell(cmd), b = run_shell(cmd);
  ASSERT_EQ(a.status, 0);
  EXPECT_EQ(a.out, b.out);
  // Lines are sorted byte-wise.
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < a.out.size()) {
    size_t nl = a.out.find('\n', pos);
    lines.push_back(a.out.substr(pos, nl - pos));
    pos = nl + 1;
  }
  EXPECT_TRUE(std::is_sorted(lines.begin(), lines.end()));
}

TEST_F(FoldFixture, ParallelUnwindingGivesTheSameOutput) {
  std::string data = shell_quote(testdata("fold/dwarf_static.data"));
  CommandResult one = run_shell(fold_cmd(symfs() + " --threads 1 " + data));
  CommandResult two = run_shell(fold_cmd(symfs() + " --threads 2 --stats " + data));
  ASSERT_EQ(one.status, 0) << one.err;
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_EQ(one.out, two.out);
  EXPECT_NE(two.err.find("88 samples, 88 folded"), std::string::npos) << two.err;
}

// With two threads a frame-pointer file is read and folded on one thread and
// new stacks are symbolised on another (files with DWARF samples: read on
// one, unwound on two); the bytes must not change.
TEST_F(FoldFixture, ReadingAndSymbolisingThreadsGiveTheSameOutput) {
  std::vector<std::string> files = {testdata("fold/fp_static.data")};
  for (const char* f : {"fp", "exec", "zstd", "two_clocks", "kernel", "buildid_mmap"}) {
    std::string path = testdata(std::string("perf/") + f + ".data");
    if (std::filesystem::exists(path)) files.push_back(path);
  }
  ASSERT_GE(files.size(), 4u);
  for (const std::string& file : files) {
    for (const char* opts : {"", "--pid --kernel", "--tid --count", "--addrs --all"}) {
      std::string args = symfs() + " " + opts + " " + shell_quote(file);
      CommandResult one = run_shell(fold_cmd("--threads 1 " + args));
      CommandResult two = run_shell(fold_cmd("--threads 2 " + args));
      ASSERT_EQ(one.status, 0) << file << " " << opts << ": " << one.err;
      ASSERT_EQ(two.status, 0) << file << " " << opts << ": " << two.err;
      EXPECT_FALSE(one.out.empty()) << file << " " << opts;
      EXPECT_EQ(one.out, two.out) << file << " " << opts;
    }
  }
}

// A malformed --kallsyms file fails the fold at the first kernel frame, with
// the file and line, whether the kernel symbols are loaded on the folding
// thread or (with --threads 2) preloaded and used by the symbolising thread.
TEST_F(FoldFixture, MalformedKallsymsFailsOnEitherThreadCount) {
  std::string dir = temp_dir();
  write_file(dir + "/kallsyms", "ffffffff81000000 T _text\nnot a kallsyms line\n");
  for (const char* threads : {"1", "2"}) {
    CommandResult r = run_shell(fold_cmd(std::string("--threads ") + threads + " --kallsyms " +
                                         shell_quote(dir + "/kallsyms") + " " + shell_quote(testdata("perf/exec.data"))));
    EXPECT_EQ(r.status, 1) << threads << ": " << r.err;
    EXPECT_NE(r.err.find(dir + "/kallsyms:2:"), std::string::npos) << threads << ": " << r.err;
  }
}

TEST_F(FoldFixture, MissingBinaryFallsBackToObjectNames) {
  if (std::filesystem::exists("/tmp/fgtool-fixture/fold_calls_static"))
    GTEST_SKIP() << "the fixture's binary exists at its recorded path on this machine";
  std::string nowhere = temp_dir();
  CommandResult r = run_shell(fold_cmd("--symfs " + shell_quote(nowhere) + " " + shell_quote(testdata("fold/fp_static.data"))));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("[fold_calls_static]"), std::string::npos) << r.out;
  CommandResult info = run_shell(shell_quote(fgtool_bin()) + " info --buildid-dir " + shell_quote(empty_cache_) +
                                 " --symfs " + shell_quote(nowhere) + " " + shell_quote(testdata("fold/fp_static.data")));
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out.find("NOT FOUND"), std::string::npos) << info.out;
}

TEST_F(FoldFixture, InfoSummarisesTheRecording) {
  CommandResult r = run_shell(shell_quote(fgtool_bin()) + " info --buildid-dir " + shell_quote(empty_cache_) + " " +
                              symfs() + " " + shell_quote(testdata("fold/dwarf_static.data")));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("cpu-clock:u: 88 samples"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("88 DWARF stacks, 88 complete"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("perf:        6.1"), std::string::npos) << r.out;
}

TEST_F(FoldFixture, OptionsThatDoNotFitAreUsageErrors) {
  std::string data = shell_quote(testdata("fold/fp_static.data"));
  struct Case {
    std::string args, says;
  };
  for (const Case& c : std::vector<Case>{{"--off-cpu", "no sched:sched_switch events"},
                                         {"--wall", "no sched:sched_switch events"},
                                         {"--off-cpu --wall", "exclude each other"},
                                         {"--state Q", "unknown task state"},
                                         {"--time 5", "START,END"},
                                         {"--time abc,", "not a time"},
                                         {"--time 9,8", "START is after END"},
                                         {"--pid-filter 12x", "not a number"}}) {
    CommandResult r = run_shell(fold_cmd(symfs() + " " + c.args + " " + data));
    EXPECT_EQ(r.status, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << ": " << r.err;
    EXPECT_EQ(r.out, "") << c.args;
  }
}

// Damaged input: a clear one-line error naming the file and byte offset, exit
// status 1, never a crash or a hang; --partial folds what came before.
class FoldDamage : public FoldFixture {
 protected:
  std::string damaged(const std::string& name, const std::string& bytes) {
    std::string path = temp_dir() + "/" + name;
    write_file(path, bytes);
    return path;
  }
};

TEST_F(FoldDamage, TruncatedFilesFailCleanlyAndPartialKeepsTheStart) {
  std::string full = read_file(testdata("fold/fp_static.data"));
  for (size_t cut : {size_t(50), size_t(104), size_t(300), full.size() / 3, full.size() / 2, full.size() - 7}) {
    std::string path = damaged("cut.data", full.substr(0, cut));
    CommandResult r = run_shell("timeout 20 " + fold_cmd(symfs() + " " + shell_quote(path)));
    EXPECT_TRUE(r.status == 1 || r.status == 0) << "cut at " << cut << ": status " << r.status << " " << r.err;
    if (r.status == 1) {
      EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
    }
  }
  std::string path = damaged("half.data", full.substr(0, full.size() / 2));
  CommandResult strict = run_shell(fold_cmd(symfs() + " " + shell_quote(path)));
  EXPECT_EQ(strict.status, 1) << strict.out;
  EXPECT_NE(strict.err.find("byte "), std::string::npos) << strict.err;
  CommandResult partial = run_shell(fold_cmd("--partial " + symfs() + " " + shell_quote(path)));
  EXPECT_EQ(partial.status, 0) << partial.err;
  EXPECT_NE(partial.out.find("model::"), std::string::npos);
  EXPECT_NE(partial.err.find("warning"), std::string::npos) << partial.err;
}

TEST_F(FoldDamage, CorruptSizesEmptyAndForeignFilesAreErrors) {
  std::string full = read_file(testdata("fold/fp_static.data"));
  struct Case {
    std::string name, bytes;
  };
  std::vector<Case> cases = {{"empty", ""}, {"magic", "PERFILE3" + full.substr(8)}, {"text", "hello;world 1\n"}};
  // Flip record size fields in the data section to 0, 7 and 0xffff.
  uint64_t data_offset = 0;
  std::memcpy(&data_offset, full.data() + 40, 8);
  for (uint16_t bad : {uint16_t(0), uint16_t(7), uint16_t(0xffff)}) {
    std::string b = full;
    std::memcpy(&b[data_offset + 6], &bad, 2);
    cases.push_back({"size" + std::to_string(bad), b});
  }
  for (const Case& c : cases) {
    std::string path = damaged(c.name + ".data", c.bytes);
    CommandResult r = run_shell("timeout 20 " + fold_cmd(shell_quote(path)));
    EXPECT_EQ(r.status, 1) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find(path), std::string::npos) << c.name << ": " << r.err;
  }
  CommandResult missing = run_shell(fold_cmd("/nonexistent/perf.data"));
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.err.find("/nonexistent/perf.data"), std::string::npos);
}

}  // namespace
}  // namespace fg::test
