// collapse_in_parallel against one PerfScriptCollapser reading the same input
// (the oracle): the same folded text, counts, chosen event, units, and the
// same first error with its line number, on the committed fixtures and on
// texts written here, with chunks small enough that every sample boundary is
// a possible cut.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "collapse/parallel_collapse.h"
#include "collapse/perf_script_collapser.h"
#include "diagnostics/input_error.h"
#include "folded/folded_writer.h"
#include "test_support.h"

namespace {

using fg::test::testdata;

struct Result {
  std::string folded;
  std::string units;
  fg::CollapseStats stats;
  std::string error;  // what() of the InputError, if one was thrown
};

Result sequential(const std::string& path, fg::CollapseOptions o) {
  Result r;
  o.threads = 1;
  try {
    fg::FoldedProfile p = fg::collapse_perf_script(path, o, &r.stats);
    fg::write_folded(p, r.folded);
    r.units = p.units;
  } catch (const fg::InputError& e) {
    r.error = e.what();
  }
  return r;
}

Result parallel(const std::string& path, const fg::CollapseOptions& o, unsigned threads, size_t chunk_bytes) {
  Result r;
  try {
    fg::InputStream in(path);
    fg::FoldedProfile p = fg::collapse_in_parallel(in, 0, o, threads, chunk_bytes, &r.stats);
    fg::write_folded(p, r.folded);
    r.units = p.units;
  } catch (const fg::InputError& e) {
    r.error = e.what();
  }
  return r;
}

void expect_same(const Result& a, const Result& b) {
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.folded, b.folded);
  EXPECT_EQ(a.units, b.units);
  EXPECT_EQ(a.stats.lines, b.stats.lines);
  EXPECT_EQ(a.stats.samples, b.stats.samples);
  EXPECT_EQ(a.stats.samples_folded, b.stats.samples_folded);
  EXPECT_EQ(a.stats.samples_other_event, b.stats.samples_other_event);
  EXPECT_EQ(a.stats.event, b.stats.event);
  EXPECT_EQ(a.stats.malformed_skipped, b.stats.malformed_skipped);
  EXPECT_EQ(a.stats.first_malformed, b.stats.first_malformed);
  EXPECT_EQ(a.stats.truncated_stacks, b.stats.truncated_stacks);
  EXPECT_EQ(a.stats.truncated_names, b.stats.truncated_names);
}

void expect_same_everywhere(const std::string& path, const fg::CollapseOptions& o) {
  const Result want = sequential(path, o);
  for (unsigned threads : {2u, 3u}) {
    for (size_t chunk_bytes : {size_t(1), size_t(200), size_t(4096), size_t(1) << 20}) {
      SCOPED_TRACE(path + ": " + std::to_string(threads) + " threads, chunks of " + std::to_string(chunk_bytes));
      expect_same(parallel(path, o, threads, chunk_bytes), want);
    }
  }
}

TEST(ParallelCollapse, FixturesFoldAsOnOneThread) {
  for (const char* name : {"fp.txt", "fp-fields.txt", "fp-minimal.txt", "dwarf.txt", "pipe.txt", "mixed.txt"}) {
    const std::string path = testdata(std::string("collapse/") + name);
    fg::CollapseOptions o;
    expect_same_everywhere(path, o);
    o.root = fg::CollapseOptions::Root::CommPidTid;
    o.tidy.annotate_kernel = o.tidy.annotate_jit = true;
    o.count_samples = true;
    expect_same_everywhere(path, o);
  }
  const Result fp = sequential(testdata("collapse/fp.txt"), {});
  EXPECT_GT(fp.stats.samples_folded, 100u);  // the oracle folded something
}

TEST(ParallelCollapse, EventSettledLateIsFoldedByEveryPart) {
  // 40 sched_switch samples (never the default event), then page-faults
  // first, then both events: every part folds page-faults only.
  std::string t;
  auto sample = [&t](const std::string& event, int i) {
    t += "work 1/1 1." + std::to_string(100000 + i) + ": 1 " + event + ": \n\t1000 f" + std::to_string(i % 7) +
         " (/bin/work)\n\t2000 main (/bin/work)\n\n";
  };
  for (int i = 0; i < 40; ++i) sample("sched:sched_switch", i);
  for (int i = 0; i < 300; ++i) sample(i % 3 == 0 ? "page-faults" : "cpu-clock", i);
  const std::string path = fg::test::temp_dir() + "/late.txt";
  fg::test::write_file(path, t);
  const Result want = sequential(path, {});
  EXPECT_EQ(want.stats.event, "page-faults");
  EXPECT_EQ(want.stats.samples_folded, 100u);
  expect_same_everywhere(path, {});
  fg::CollapseOptions cpu;
  cpu.event = "cpu-clock";
  expect_same_everywhere(path, cpu);
  EXPECT_EQ(sequential(path, cpu).stats.samples_folded, 200u);
}

std::string many_samples(int n) {
  std::string t;
  std::mt19937 rng(5);
  for (int i = 0; i < n; ++i) {
    t += "work 1/" + std::to_string(1 + rng() % 4) + " [000] 1." + std::to_string(100000 + i) + ": 1000 cpu-clock: \n";
    for (int f = int(rng() % 5); f >= 0; --f) t += "\t" + std::to_string(4096 + f) + " fn" + std::to_string(rng() % 9) + " (/bin/work)\n";
    t += "\n";
  }
  return t;
}

TEST(ParallelCollapse, FirstErrorAndItsLineAsOnOneThread) {
  std::string t = many_samples(400);
  // Two malformed lines far apart: the earlier one is reported, with its line.
  const size_t late = t.find("\n\n", t.size() * 3 / 4) + 2, early = t.find("\n\n", t.size() / 3) + 2;
  t.insert(late, "\tnot an address\n");
  t.insert(early, "not a header\n");
  const std::string path = fg::test::temp_dir() + "/bad.txt";
  fg::test::write_file(path, t);
  const Result want = sequential(path, {});
  ASSERT_NE(want.error.find("not a perf script sample header"), std::string::npos) << want.error;
  expect_same_everywhere(path, {});
  // --lenient: both skipped and counted, the first one named.
  fg::CollapseOptions lenient;
  lenient.lenient = true;
  const Result skipped = sequential(path, lenient);
  EXPECT_EQ(skipped.stats.malformed_skipped, 2u);
  EXPECT_NE(skipped.stats.first_malformed.find("not a perf script sample header"), std::string::npos);
  expect_same_everywhere(path, lenient);
}

TEST(ParallelCollapse, OverlongLineAndTextWithoutBlankLines) {
  std::string t = many_samples(100);
  t.insert(t.find("\n\n", t.size() / 2) + 2, std::string(fg::PerfScriptCollapser::kMaxLineBytes + 10, 'x') + "\n");
  const std::string path = fg::test::temp_dir() + "/long.txt";
  fg::test::write_file(path, t);
  fg::CollapseOptions lenient;
  lenient.lenient = true;
  const Result want = sequential(path, lenient);
  EXPECT_EQ(want.stats.malformed_skipped, 1u);
  EXPECT_NE(want.stats.first_malformed.find("longer than 1 MiB"), std::string::npos) << want.stats.first_malformed;
  expect_same_everywhere(path, lenient);
  expect_same_everywhere(path, {});  // the error itself, with its line

  // perf script without -g: one line per sample, no blank lines, so no
  // chunk after the first starts a sample: it all folds on one worker.
  std::string flat;
  for (int i = 0; i < 500; ++i)
    flat += "work 1/1 [000] 1." + std::to_string(100000 + i) + ": 1000 cpu-clock: " + std::to_string(4096 + i % 3) +
            " fn" + std::to_string(i % 3) + " (/bin/work)\n";
  const std::string flat_path = fg::test::temp_dir() + "/flat.txt";
  fg::test::write_file(flat_path, flat);
  EXPECT_EQ(sequential(flat_path, {}).stats.samples_folded, 500u);
  expect_same_everywhere(flat_path, {});
}

TEST(ParallelCollapse, ReadErrorWhileWorkersFold) {
  // A gzip stream cut short: the reading thread's error, after the workers
  // have folded what came before it, as on one thread.
  const std::string dir = fg::test::temp_dir();
  std::string t = many_samples(3000);
  auto cut_gzip = [&dir](const std::string& name, const std::string& text) {
    const std::string base = dir + "/" + name;
    fg::test::write_file(base + ".txt", text);
    auto r = fg::test::run_shell("gzip -c " + base + ".txt | head -c $(( $(gzip -c " + base +
                                 ".txt | wc -c) * 9 / 10 )) > " + base + ".txt.gz");
    EXPECT_EQ(r.status, 0) << r.err;
    return base + ".txt.gz";
  };
  const std::string ok = cut_gzip("ok", t);
  const Result want = sequential(ok, {});
  EXPECT_NE(want.error.find("gzip"), std::string::npos) << want.error;
  expect_same_everywhere(ok, {});

  // With a malformed line before the cut, which error comes first depends
  // on how far ahead the reading is (one chunk, on one thread too): either
  // is reported, never neither, and no crash or hang on any thread count.
  t.insert(t.find("\n\n", t.size() / 2) + 2, "not a header\n");
  const std::string bad = cut_gzip("bad", t);
  for (unsigned threads : {2u, 3u}) {
    for (size_t chunk_bytes : {size_t(200), size_t(4096), size_t(1) << 20}) {
      const Result r = parallel(bad, {}, threads, chunk_bytes);
      EXPECT_TRUE(r.error.find("not a perf script sample header") != std::string::npos ||
                  r.error.find("gzip") != std::string::npos)
          << r.error;
    }
  }
}

TEST(ParallelCollapse, OffCpuStaysOnOneThread) {
  // collapse_perf_script takes one thread for --off-cpu whatever threads says.
  fg::CollapseOptions o;
  o.off_cpu = true;
  const Result one = sequential(testdata("collapse/offcpu.txt"), o);
  o.threads = 2;
  Result two;
  fg::FoldedProfile p = fg::collapse_perf_script(testdata("collapse/offcpu.txt"), o, &two.stats);
  fg::write_folded(p, two.folded);
  EXPECT_EQ(two.folded, one.folded);
  EXPECT_GT(one.stats.intervals, 0u);
}

}  // namespace
