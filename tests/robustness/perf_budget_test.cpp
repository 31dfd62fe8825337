// The memory budget and time bounds on hostile perf.data (docs/robustness.md,
// "Memory budget"): each file from hostile_perf_data.h is folded by the built
// fgtool under `ulimit -v` 4 GiB, and must give a clear error (exit 1, file
// and byte offset) or a correct fold within 1 GiB of peak RSS and 10 s.
// --partial turns a budget error into a fold of what was read plus a warning.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "hostile_perf_data.h"
#include "test_support.h"

using namespace fg::test;
namespace h = fg::hostile;

namespace {

constexpr long kMaxRssKb = 1024 * 1024;  // 1 GiB
constexpr double kMaxSeconds = 10;

struct FgtoolRun {
  int status = -1;
  std::string out, err;
  double seconds = 0;
  long rss_kb = -1;
};

// fgtool ARGS (stdin from `input` when given), with its peak RSS (GNU
// time's %M) and wall time.
FgtoolRun fgtool(const std::string& args, const std::string& stdin_command = "", long ulimit_kb = 4194304) {
  static const std::string dir = temp_dir();
  const std::string rss = dir + "/rss";
  std::remove(rss.c_str());
  std::string inner = "ulimit -v " + std::to_string(ulimit_kb) + "; " + (stdin_command.empty() ? "" : stdin_command + " | ") + "exec " +
                      shell_quote(fgtool_bin()) + " " + args;
  // time measures sh, which becomes fgtool (exec) or waits for it (a pipe).
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_shell("/usr/bin/time -f %M -o " + shell_quote(rss) + " sh -c " + shell_quote(inner));
  FgtoolRun out;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.status = r.status;
  out.out = r.out;
  out.err = r.err;
  std::string text = read_file(rss);
  auto nl = text.find_last_of('\n', text.size() >= 2 ? text.size() - 2 : 0);
  try {
    out.rss_kb = std::stol(nl == std::string::npos ? text : text.substr(nl + 1));
  } catch (...) {
  }
  return out;
}

std::string write_temp(const std::string& name, const std::string& bytes) {
  static const std::string dir = temp_dir();
  std::string p = dir + "/" + name;
  std::remove(p.c_str());
  write_file(p, bytes);
  return p;
}

// The bounds every case must meet; prints the measurement for the record.
void expect_bounded(const FgtoolRun& r, const std::string& what) {
  std::cout << "[measure] " << what << ": exit " << r.status << ", " << r.seconds << " s, peak RSS " << r.rss_kb / 1024
            << " MiB\n";
  EXPECT_GT(r.rss_kb, 0) << what;
  EXPECT_LT(r.rss_kb, kMaxRssKb) << what;
  EXPECT_LT(r.seconds, kMaxSeconds) << what;
  EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
}

// A clear error: exit 1, one line naming the file and a byte offset.
void expect_located_error(const FgtoolRun& r, const std::string& path, const std::string& needle) {
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find(path + ": byte "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

}  // namespace

TEST(PerfBudget, ZstdBombOfQueuedRecordsStopsAtTheBudget) {
  // 64 MiB of 8-byte records in ~10 KB of zstd: 8M queued records (~450 MB
  // of queue) without a FINISHED_ROUND.
  std::string p = write_temp("bomb.data", h::zstd_bomb_queued(64));
  ASSERT_LT(p.size(), 200000u);
  FgtoolRun r = fgtool("fold " + shell_quote(p));
  expect_bounded(r, "zstd bomb (queued records)");
  expect_located_error(r, p, "records waiting for their FINISHED_ROUND take");
  EXPECT_NE(r.err.find("more than the memory budget of 256 MiB"), std::string::npos) << r.err;
  // --partial: the records read before the budget ran out are folded.
  r = fgtool("fold --partial " + shell_quote(p));
  expect_bounded(r, "zstd bomb (queued records), --partial");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("partial read"), std::string::npos) << r.err;
  // A larger budget is honoured (and the next limit, zstd output, still holds).
  r = fgtool("fold --max-memory 64M " + shell_quote(p));
  expect_bounded(r, "zstd bomb, --max-memory 64M");
  expect_located_error(r, p, "more than the memory budget of 64 MiB (--max-memory)");
  EXPECT_EQ(fgtool("fold --max-memory 12X " + shell_quote(p)).status, 2);
}

TEST(PerfBudget, OutOfMemoryIsOneLineNotTerminate) {
  // Without the budget, 256 MiB of queued records (about 2 GiB of queue)
  // cannot fit in 1 GiB of address space: std::bad_alloc, on the reading
  // thread or the calling one, must end as one line and exit 1.
  std::string p = write_temp("bigbomb.data", h::zstd_bomb_queued(256));
  for (const char* threads : {"1", "2"}) {
    FgtoolRun r = fgtool("fold --threads " + std::string(threads) + " --max-memory unlimited " + shell_quote(p), "",
                         1024 * 1024);
    expect_bounded(r, std::string("zstd bomb, no budget, 1 GiB address space, threads ") + threads);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.err, "fgtool fold: out of memory\n");
  }
}

TEST(PerfBudget, ZstdOutputIsBoundedByTheInput) {
  // 1100 MiB of large records that are not queued: only the zstd output is
  // big; the limit for a small file is 4 x 256 MiB.
  std::string p = write_temp("volume.data", h::zstd_bomb_volume(1100));
  FgtoolRun r = fgtool("fold " + shell_quote(p));
  expect_bounded(r, "zstd bomb (volume)");
  expect_located_error(r, p, "zstd output reached 1024 MiB");
}

TEST(PerfBudget, ZstdRecordCountIsBoundedByTheInput) {
  // 1100 MiB of 8-byte records with frequent FINISHED_ROUNDs (2 MB of zstd):
  // memory stays small, but 144 million records would take half a minute.
  std::string p = write_temp("rounds.data", h::zstd_bomb_rounds(1100));
  FgtoolRun r = fgtool("fold " + shell_quote(p));
  expect_bounded(r, "zstd bomb (records between rounds)");
  expect_located_error(r, p, "zstd output held ");
  EXPECT_NE(r.err.find("records from"), std::string::npos) << r.err;
  EXPECT_LT(r.rss_kb, 200 * 1024);
}

TEST(PerfBudget, AliasedIdsSectionsAreRejected) {
  std::string p = write_temp("alias.data", h::aliased_ids(2000));
  FgtoolRun r = fgtool("fold " + shell_quote(p));
  expect_bounded(r, "aliased ids");
  expect_located_error(r, p, "they overlap");
}

TEST(PerfBudget, AttrFloodInAPipeFoldsInLinearTime) {
  std::string p = write_temp("attrs.data", h::attr_flood_pipe(40000));
  FgtoolRun r = fgtool("fold - < " + shell_quote(p));
  expect_bounded(r, "40k HEADER_ATTR pipe");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("victim"), std::string::npos) << r.out.substr(0, 500);
  // From a pipe too (not only a regular file on stdin).
  r = fgtool("fold -", "cat " + shell_quote(p));
  expect_bounded(r, "40k HEADER_ATTR pipe (cat |)");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("victim"), std::string::npos);
}

TEST(PerfBudget, AttrFloodInsideZstdFoldsInLinearTime) {
  std::string p = write_temp("zattrs.data", h::attr_flood_zstd(40000));
  ASSERT_LT(p.size(), 100000u);
  FgtoolRun r = fgtool("fold " + shell_quote(p));
  expect_bounded(r, "40k HEADER_ATTR in zstd");
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(PerfBudget, TracingDataCannotAmplify) {
  // 6000 empty formats under an 800 KB system name: 4.8 GB if copied.
  std::string p = write_temp("tracing.data", h::tracing_amplification(800000, 6000));
  FgtoolRun r = fgtool("fold " + shell_quote(p));
  expect_bounded(r, "TRACING_DATA amplification");
  // On-CPU folding does not need the formats: a warning, and the fold.
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("event formats take more than"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("victim"), std::string::npos);
  // Off-CPU needs them: an error naming the byte within the blob.
  r = fgtool("fold --off-cpu " + shell_quote(p));
  expect_bounded(r, "TRACING_DATA amplification, --off-cpu");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("event formats take more than"), std::string::npos) << r.err;
}

TEST(PerfBudget, ForkFloodSharesMaps) {
  // 40000 children of a process with 10000 maps: 3.2 GB if each copied them.
  std::string p = write_temp("forks.data", h::fork_flood(10000, 40000, false));
  FgtoolRun r = fgtool("fold " + shell_quote(p));
  expect_bounded(r, "fork flood");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_LT(r.rss_kb, 200 * 1024);
  EXPECT_NE(r.out.find("parent"), std::string::npos) << r.out;
}

TEST(PerfBudget, ForkFloodWithChildMapsStopsAtTheBudget) {
  // Each child maps a page, so each copies its parent's 10000 maps.
  std::string p = write_temp("forkmaps.data", h::fork_flood(10000, 40000, true));
  FgtoolRun r = fgtool("fold " + shell_quote(p));
  expect_bounded(r, "fork flood with child mmaps");
  expect_located_error(r, p, "process maps would take");
  r = fgtool("fold --partial " + shell_quote(p));
  expect_bounded(r, "fork flood with child mmaps, --partial");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("map changes left out (--partial)"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("parent"), std::string::npos) << r.out;
}

TEST(PerfBudget, MapsPerProcessAreCapped) {
  // 200,000 mappings of one process, each inserted at the front of its
  // sorted list: quadratic without the cap of 131072 maps per process.
  std::string p = write_temp("descending.data", h::descending_mmaps(200000));
  FgtoolRun r = fgtool("fold " + shell_quote(p));
  expect_bounded(r, "200k descending mmaps in one process");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: 68928 mappings ignored: they would have given a process more than 131072 maps"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("parent"), std::string::npos);
}

TEST(PerfBudget, PipeStreamCutShortIsReported) {
  const std::string good = read_file(testdata("perf/pipe.data"));
  ASSERT_EQ(fg::test::get<uint32_t>(good, good.size() - 8), 68u);  // ends with FINISHED_ROUND
  // The complete stream folds cleanly.
  FgtoolRun r = fgtool("fold -", "cat " + shell_quote(testdata("perf/pipe.data")));
  expect_bounded(r, "complete pipe");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // Cut before its last FINISHED_ROUND.
  const size_t cut = good.size() - 8;
  std::string p = write_temp("cut.data", good.substr(0, cut));
  r = fgtool("fold -", "cat " + shell_quote(p));
  expect_bounded(r, "cut pipe");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("-: byte " + std::to_string(cut) + ": pipe-mode stream cut short: it ends after " +
                       std::to_string(cut) + " bytes"),
            std::string::npos)
      << r.err;
  r = fgtool("fold --partial -", "cat " + shell_quote(p));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: -: byte " + std::to_string(cut) + ": pipe-mode stream cut short"), std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("prog;"), std::string::npos);
  // Cut right after the first record (a HEADER_ATTR): no event record at all.
  const size_t first = 16 + fg::test::get<uint16_t>(good, 16 + 6);
  p = write_temp("header_only.data", good.substr(0, first));
  r = fgtool("fold " + shell_quote(p));
  expect_bounded(r, "header-only pipe");
  expect_located_error(r, p, "before any event record");
}

TEST(PerfBudget, FileModeOnAPipeSaysSo) {
  std::string fp = testdata("perf/fp.data");
  FgtoolRun r = fgtool("fold -", "cat " + shell_quote(fp));
  expect_bounded(r, "file-mode perf.data on a pipe");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("-: byte 8: a file-mode perf.data cannot be read from a pipe"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("truncated"), std::string::npos) << r.err;
  // A regular file on stdin is not a pipe: it is read.
  r = fgtool("fold - < " + shell_quote(fp));
  EXPECT_EQ(r.status, 0) << r.err;
}
