// `fgtool collapse` as a command, and an agreement test that records a
// program with perf at test time and checks the folding against a naive
// count of leaf functions made here from the same perf script text.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "test_support.h"

namespace {

using namespace fg::test;

TEST(CollapseCli, StdinFileAndOutputAgree) {
  std::string dir = temp_dir();
  std::string fx = shell_quote(testdata("collapse/fp.txt"));
  auto a = run_shell(fgtool_bin() + " collapse -q " + fx);
  auto b = run_shell("cat " + fx + " | " + fgtool_bin() + " collapse -q -");
  auto c = run_shell(fgtool_bin() + " collapse -q " + fx + " -o " + shell_quote(dir + "/out.folded"));
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(a.out, read_file(testdata("collapse/fp.folded")));
  EXPECT_EQ(b.out, a.out);
  EXPECT_EQ(read_file(dir + "/out.folded"), a.out);
  auto gz = run_shell("gzip -c " + fx + " | " + fgtool_bin() + " collapse -q");
  EXPECT_EQ(gz.out, a.out) << gz.err;
  // One thread and two (the default on these machines), from a pipe too.
  for (const char* threads : {"1", "2"}) {
    auto t = run_shell("cat " + fx + " | " + fgtool_bin() + " collapse -q --threads " + threads);
    EXPECT_EQ(t.status, 0) << t.err;
    EXPECT_EQ(t.out, a.out) << threads;
  }
}

TEST(CollapseCli, SummaryAndMalformedInput) {
  std::string dir = temp_dir();
  auto ok = run_shell(fgtool_bin() + " collapse --off-cpu " + shell_quote(testdata("collapse/offcpu.txt")));
  EXPECT_EQ(ok.status, 0);
  EXPECT_NE(ok.err.find("off-CPU intervals"), std::string::npos) << ok.err;
  write_file(dir + "/bad.txt", read_file(testdata("collapse/fp.txt")).substr(0, 400) + "\n\tgarbage here\n");
  auto bad = run_shell(fgtool_bin() + " collapse " + shell_quote(dir + "/bad.txt"));
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("bad.txt:"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("hexadecimal address"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.find('\n'), bad.err.size() - 1) << "one line: " << bad.err;
  auto lenient = run_shell(fgtool_bin() + " collapse --lenient " + shell_quote(dir + "/bad.txt"));
  EXPECT_EQ(lenient.status, 0) << lenient.err;
  EXPECT_NE(lenient.err.find("skipped 1 malformed"), std::string::npos) << lenient.err;
  auto usage = run_shell(fgtool_bin() + " collapse --min-block 5 " + shell_quote(dir + "/bad.txt"));
  EXPECT_EQ(usage.status, 2) << usage.err;
  auto help = run_shell(fgtool_bin() + " collapse --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("Examples:"), std::string::npos);
  EXPECT_NE(help.out.find("--off-cpu"), std::string::npos);
}

// Leaf symbol of each sample, counted straight from the text.
std::map<std::string, long> naive_leaf_counts(const std::string& text, long& samples) {
  std::map<std::string, long> counts;
  std::istringstream in(text);
  bool want_leaf = false;
  samples = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (line[0] != '\t') {
      want_leaf = true;
      samples++;
      continue;
    }
    if (!want_leaf) continue;
    want_leaf = false;
    // "\t    addr symbol" (printed with -F ip,sym: no offset, no dso)
    size_t a = line.find_first_not_of(" \t");
    size_t s = line.find(' ', a);
    std::string sym = s == std::string::npos ? "" : line.substr(s + 1);
    counts[sym]++;
  }
  return counts;
}

TEST(CollapseAgreement, FreshRecordingAgreesWithANaiveCount) {
  std::string why = perf_unavailable_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  std::string dir = temp_dir();
  auto build = run_shell("g++ -O2 -g -fno-omit-frame-pointer -pthread " +
                         shell_quote(testdata("collapse/workload.cpp")) + " -o " + shell_quote(dir + "/workload"));
  ASSERT_EQ(build.status, 0) << build.err;
  auto rec = run_shell("cd " + shell_quote(dir) +
                       " && perf record -q -e cpu-clock:u -F 999 -g -o fp.data ./workload 400 >/dev/null && "
                       "perf script -i fp.data -F comm,tid,time,event,ip,sym > fp.txt");
  ASSERT_EQ(rec.status, 0) << rec.err;
  std::string text = read_file(dir + "/fp.txt");
  long samples = 0;
  auto leaves = naive_leaf_counts(text, samples);
  ASSERT_GT(samples, 50) << "too few samples to judge";

  auto fold = run_shell(fgtool_bin() + " collapse -q " + shell_quote(dir + "/fp.txt"));
  ASSERT_EQ(fold.status, 0) << fold.err;
  std::map<std::string, long> folded_leaves;
  long total = 0;
  std::istringstream in(fold.out);
  for (std::string line; std::getline(in, line);) {
    size_t sp = line.rfind(' ');
    std::string stack = line.substr(0, sp);
    long w = std::stol(line.substr(sp + 1));
    total += w;
    folded_leaves[stack.substr(stack.rfind(';') + 1)] += w;
    EXPECT_EQ(stack.rfind("workload;", 0), 0u) << line;
  }
  EXPECT_EQ(total, samples);  // no period printed: one per sample
  long hot = 0;
  for (const char* fn : {"demo::Kernel<float>::gemm", "(anonymous namespace)::make_input"}) {
    EXPECT_EQ(folded_leaves[fn], leaves[fn]) << fn;
    hot += folded_leaves[fn];
  }
  EXPECT_GT(hot * 10, samples * 8) << fold.out;  // the two kernels are ~all of the run
}

}  // namespace
