// Byte-identity of `fgtool fold` on every perf.data fixture under testdata/,
// with several option sets, against checked-in goldens
// (testdata/fold/goldens/, one file per fixture). This is what guards
// refactorings of lib/fold: any change of output, or of an error message,
// shows here. Re-bless with FGTOOL_BLESS=1 after reviewing the diff.
//
// Kernel symbols come from an empty kallsyms file and binaries from
// testdata/fold/symfs (else their recorded paths), so the goldens do not
// depend on this machine's kernel or perf build-id cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "test_support.h"

namespace fg::test {
namespace {

// The option sets every fixture is folded with. Views that a fixture cannot
// fold (--off-cpu without sched_switch, --wall without a clock event) are kept:
// their error line is part of the golden.
const std::vector<std::string>& option_sets() {
  static const std::vector<std::string> sets = {
      "",
      "--pid --count",
      "--tid --all --addrs",
      "--merge-jit --no-demangle",
      "--off-cpu",
      "--wall --state S",
  };
  return sets;
}

// The perf.data fixtures, relative to testdata/.
std::vector<std::string> relative_perf_data_fixtures() {
  std::vector<std::string> out;
  for (const std::string& path : perf_data_fixtures())
    out.push_back(std::filesystem::relative(path, testdata("")).generic_string());
  return out;
}

// Paths in error lines are made independent of where the checkout lives.
std::string without_source_dir(std::string text) {
  const std::string dir = testdata("");
  for (size_t at; (at = text.find(dir)) != std::string::npos;) text.replace(at, dir.size(), "TESTDATA/");
  return text;
}

class FoldGolden : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("DEBUGINFOD_URLS", "", 1);
    setenv("FGTOOL_NO_PROGRESS", "1", 1);
    dir_ = temp_dir();
    write_file(dir_ + "/kallsyms", "");
  }
  CommandResult fold(const std::string& args, const std::string& fixture) const {
    return run_shell(shell_quote(fgtool_bin()) + " fold --buildid-dir " + shell_quote(dir_) + " --kallsyms " +
                     shell_quote(dir_ + "/kallsyms") + " --symfs " + shell_quote(testdata("fold/symfs")) + " " +
                     args + " " + shell_quote(testdata(fixture)));
  }
  std::string dir_;
};

TEST_F(FoldGolden, EveryFixtureWithEveryOptionSet) {
  std::vector<std::string> fixtures = relative_perf_data_fixtures();
  ASSERT_GE(fixtures.size(), 10u) << "perf.data fixtures under testdata/ went missing";
  for (const std::string& fixture : fixtures) {
    std::string actual;
    size_t folded_ok = 0;
    for (const std::string& args : option_sets()) {
      CommandResult r = fold(args, fixture);
      actual += "## fgtool fold " + args + "\n";
      if (r.status == 0) {
        actual += r.out;
        ++folded_ok;
      } else {
        actual += "exit " + std::to_string(r.status) + ": " + without_source_dir(r.err);
      }
      if (args.empty()) {
        // Output does not depend on the thread count.
        CommandResult one = fold("--threads 1", fixture);
        CommandResult two = fold("--threads 2", fixture);
        EXPECT_EQ(one.out, r.out) << fixture << ": --threads 1 differs from the default";
        EXPECT_EQ(two.out, r.out) << fixture << ": --threads 2 differs from the default";
      }
    }
    EXPECT_GE(folded_ok, 1u) << fixture << " folds with no option set";
    std::string name = fixture;
    std::replace(name.begin(), name.end(), '/', '_');
    std::string golden = testdata("fold/goldens/" + name + ".txt");
    if (const char* b = std::getenv("FGTOOL_BLESS"); b && std::string(b) == "1") {
      std::filesystem::create_directories(testdata("fold/goldens"));
      write_file(golden, actual);
    }
    ASSERT_TRUE(std::filesystem::exists(golden)) << golden << " missing; run with FGTOOL_BLESS=1 to create it";
    EXPECT_EQ(actual, read_file(golden)) << "fold of " << fixture << " changed; re-bless with FGTOOL_BLESS=1 after review";
  }
}

}  // namespace
}  // namespace fg::test
