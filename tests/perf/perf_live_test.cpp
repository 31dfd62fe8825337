// The reader against perf itself at test time: fresh recordings (file, pipe,
// -z, dwarf, tracepoint, killed recorder) whose record counts and per-event
// sample counts must equal `perf script -D` / `perf script`, and pipe-mode
// conversions (perf inject -o -) of the committed fixtures that must read the
// same as the file-mode originals. Skipped only when perf cannot run.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "diagnostics/input_error.h"
#include "perf/perf_data_reader.h"
#include "test_support.h"

using namespace fg;
using fg::test::run_shell;
using fg::test::shell_quote;
using fg::test::testdata;

namespace {

struct Seq : RecordHandler {
  std::map<std::string, uint64_t> per_event;
  std::vector<std::string> seq;
  uint64_t last = 0, out_of_order = 0;
  void t(uint64_t time, const std::string& what) {
    if (time < last) ++out_of_order;
    last = std::max(last, time);
    seq.push_back(std::to_string(time) + what);
  }
  void on_sample(const Sample& s) override {
    per_event[s.attr->name]++;
    t(s.time, "S" + std::to_string(s.ip) + "/" + std::to_string(s.callchain_nr) + "/" + std::to_string(s.raw_size));
  }
  void on_mmap(const MmapRecord& m) override { t(m.time, "M" + std::string(m.filename)); }
  void on_comm(const CommRecord& c) override { t(c.time, "C" + std::string(c.comm)); }
  void on_fork(const TaskRecord& f) override { t(f.time, "F" + std::to_string(f.tid)); }
  void on_exit(const TaskRecord& f) override { t(f.time, "E" + std::to_string(f.tid)); }
  void on_switch(const SwitchRecord& s) override { t(s.time, "W" + std::to_string(s.out)); }
};

bool have_perf_binary() { return run_shell("command -v perf").status == 0; }

std::map<uint32_t, uint64_t> perf_counts(const std::string& file) {
  auto r = run_shell("perf script -D -i " + shell_quote(file) + " 2>/dev/null | sh " +
                     shell_quote(testdata("perf/count_records.sh")));
  std::map<uint32_t, uint64_t> m;
  std::istringstream in(r.out);
  uint32_t type;
  uint64_t n;
  while (in >> type >> n) m[type] = n;
  return m;
}

std::map<std::string, uint64_t> perf_events(const std::string& file) {
  auto r = run_shell("perf script -G -F event -i " + shell_quote(file) +
                     " 2>/dev/null | sed 's/^ *//; s/: *$//' | sort | uniq -c");
  std::map<std::string, uint64_t> m;
  std::istringstream in(r.out);
  uint64_t n;
  std::string ev;
  while (in >> n >> ev) m[ev] = n;
  return m;
}

std::map<uint32_t, uint64_t> our_counts(const ReadStats& s) {
  auto m = s.records_by_type;
  m.erase(81);
  m.erase(83);
  return m;
}

}  // namespace

TEST(PerfLive, FreshRecordingsMatchPerfScript) {
  if (auto why = test::perf_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  std::string dir = test::temp_dir();
  std::string prog = shell_quote(testdata("perf/prog"));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"fp", "perf record -q -o @F@ -e cpu-clock -F 999 -g " + prog + " 100000000"},
      {"pipe", "perf record -q -o - -e cpu-clock -F 999 -g " + prog + " 100000000 > @F@"},
      {"zstd", "perf record -q -z -o @F@ -e cpu-clock -F 999 -g " + prog + " 100000000"},
      {"dwarf", "perf record -q -o @F@ -e cpu-clock -F 99 --call-graph dwarf,4096 " + prog + " 100000000"},
      {"sched", "perf record -q -o @F@ -e sched:sched_switch -e cpu-clock -F 999 -g --switch-events " + prog +
                    " 100000000 sleep"},
      {"exec", "perf record -q -o @F@ -e cpu-clock -F 999 -g -- sh -c '" + testdata("perf/prog") + " 100000000; true'"},
  };
  for (const auto& [name, cmd] : cases) {
    SCOPED_TRACE(name);
    std::string file = dir + "/" + name + ".data";
    std::string line = cmd;
    line.replace(line.find("@F@"), 3, shell_quote(file));
    auto r = run_shell(line);
    if (r.status != 0) {
      // e.g. tracepoints not readable in this container.
      if (name == "sched") continue;
      FAIL() << line << ": " << r.err;
    }
    PerfDataReader reader(file);
    Seq h;
    reader.read(h);
    EXPECT_EQ(our_counts(reader.stats()), perf_counts(file));
    EXPECT_EQ(h.per_event, perf_events(file));
    EXPECT_EQ(h.out_of_order, 0u);
    EXPECT_GT(reader.stats().samples, 0u);
  }
}

// `perf record --threads` writes a directory: 'data' and a data.N per
// recording thread (here one per CPU), each in time order, none with
// rounds. Read in turns of a few KB (many merges) or of the default 1 MiB
// (one), the records arrive in the same time order, and the counts are
// perf's.
TEST(PerfLive, ThreadsDirectoryMergesItsFilesInTimeOrder) {
  if (!have_perf_binary()) GTEST_SKIP() << "perf is not installed";
  std::string dir = test::temp_dir();
  for (const char* z : {"", "-z "}) {
    SCOPED_TRACE(z);
    const std::string data = dir + "/threads" + (*z ? "_z" : "") + ".data";
    auto r = run_shell("perf record -q --threads " + std::string(z) + "-a -e cpu-clock -F 2999 -g -o " +
                       shell_quote(data) + " -- " + testdata("perf/prog") + " 100000000");
    if (r.status != 0) GTEST_SKIP() << "perf record --threads -a cannot run here: " << r.err;
    std::vector<std::string> orders[2];
    for (int small : {1, 0}) {
      ReadOptions o;
      o.dir_turn_bytes = small ? 4096 : 0;
      PerfDataReader reader(data, o);
      ASSERT_GE(reader.info().dir_files.size(), 2u);
      Seq h;
      reader.read(h);
      EXPECT_EQ(h.out_of_order, 0u);
      EXPECT_EQ(reader.stats().unordered, 0u);
      EXPECT_EQ(our_counts(reader.stats()), perf_counts(data));
      EXPECT_EQ(h.per_event, perf_events(data));
      EXPECT_GT(reader.stats().bytes, 8u * 4096) << "too small a recording to take several turns";
      orders[small] = std::move(h.seq);
    }
    EXPECT_EQ(orders[0], orders[1]);
  }
}

// perf record SIGKILLed: data size 0; records are read to EOF with a warning.
TEST(PerfLive, KilledRecorder) {
  if (auto why = test::perf_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  std::string dir = test::temp_dir();
  std::string file = dir + "/killed.data";
  auto r = run_shell("perf record -q -o " + shell_quote(file) + " -m 4 -e cpu-clock -F 999 -g " +
                     shell_quote(testdata("perf/prog")) + " 1500000000 & P=$!; sleep 1.2; kill -9 $P; wait $P; true");
  ASSERT_EQ(r.status, 0) << r.err;
  ReadOptions opt;
  opt.partial = true;  // the last record may be cut short too
  PerfDataReader reader(file, opt);
  Seq h;
  reader.read(h, opt);
  ASSERT_FALSE(reader.stats().warnings.empty());
  EXPECT_NE(reader.stats().warnings[0].find("data size field is 0"), std::string::npos) << reader.stats().warnings[0];
  EXPECT_GT(reader.stats().samples, 0u);
  EXPECT_EQ(h.out_of_order, 0u);
}

// The same data in pipe mode (perf inject -o -) reads the same as in file mode.
// (Not for tracepoint files: perf 6.1 inject writes their tracing data
// without its HEADER_TRACING_DATA record, which perf itself cannot read;
// sched_pipe.data, straight from perf record -o -, covers that case.)
TEST(PerfLive, PipeConversionReadsLikeFileMode) {
  if (!have_perf_binary()) GTEST_SKIP() << "perf is not installed";
  std::string dir = test::temp_dir();
  for (const char* name : {"fp", "two_clocks", "dwarf", "switch", "exec"}) {
    SCOPED_TRACE(name);
    std::string in = testdata(std::string("perf/") + name + ".data");
    std::string out = dir + "/" + name + ".pipe";
    auto r = run_shell("perf inject -i " + shell_quote(in) + " -o - > " + shell_quote(out));
    ASSERT_EQ(r.status, 0) << r.err;
    PerfDataReader file_reader(in), pipe_reader(out);
    EXPECT_TRUE(pipe_reader.info().pipe_mode);
    Seq a, b;
    file_reader.read(a);
    pipe_reader.read(b);
    EXPECT_EQ(a.per_event, b.per_event);
    EXPECT_EQ(a.seq, b.seq);
    ASSERT_EQ(file_reader.info().attrs.size(), pipe_reader.info().attrs.size());
    for (size_t i = 0; i < file_reader.info().attrs.size(); ++i)
      EXPECT_EQ(file_reader.info().attrs[i].name, pipe_reader.info().attrs[i].name);
    EXPECT_EQ(file_reader.info().tracing_data.empty(), pipe_reader.info().tracing_data.empty());
  }
}
