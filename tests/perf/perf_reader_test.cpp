// Tests of the perf.data reader against the committed fixtures in
// testdata/perf (golden record counts produced by `perf script -D`, see
// README.md there) and, when perf can run here, against perf itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "diagnostics/input_error.h"
#include "perf/perf_data_reader.h"
#include "perf/tracing_data.h"
#include "test_support.h"

using namespace fg;
using fg::test::testdata;

namespace {

struct Counting : RecordHandler {
  std::map<std::string, uint64_t> samples_by_event;
  uint64_t samples = 0, mmaps = 0, comms = 0, forks = 0, exits = 0, switches = 0, lost = 0;
  uint64_t last_time = 0;
  uint64_t out_of_order = 0;
  std::vector<uint64_t> times;
  std::vector<std::string> order;  // "type@offset" in delivery order
  const PerfDataReader* reader = nullptr;

  void saw(uint64_t t, const char* what, uint64_t off) {
    if (t < last_time) ++out_of_order;
    last_time = std::max(last_time, t);
    times.push_back(t);
    order.push_back(std::string(what) + "@" + std::to_string(off));
  }
  void on_sample(const Sample& s) override {
    ++samples;
    samples_by_event[s.attr->name]++;
    saw(s.time, "S", s.file_offset);
  }
  void on_mmap(const MmapRecord& m) override {
    ++mmaps;
    saw(m.time, "M", m.file_offset);
  }
  void on_comm(const CommRecord& c) override {
    ++comms;
    saw(c.time, "C", c.file_offset);
  }
  void on_fork(const TaskRecord& t) override {
    ++forks;
    saw(t.time, "F", t.file_offset);
  }
  void on_exit(const TaskRecord& t) override {
    ++exits;
    saw(t.time, "E", t.file_offset);
  }
  void on_switch(const SwitchRecord& s) override {
    ++switches;
    saw(s.time, "W", s.file_offset);
  }
  void on_lost(const LostRecord& l) override {
    ++lost;
    saw(l.time, "L", l.file_offset);
  }
};

// "TYPE COUNT" lines made by count_records.sh from `perf script -D`.
std::map<uint32_t, uint64_t> golden_counts(const std::string& name) {
  std::map<uint32_t, uint64_t> m;
  std::istringstream in(test::read_file(testdata("perf/" + name + ".counts")));
  uint32_t type;
  uint64_t count;
  while (in >> type >> count) m[type] = count;
  return m;
}

// Our counts without the COMPRESSED containers, which perf -D does not list.
std::map<uint32_t, uint64_t> our_counts(const ReadStats& s) {
  auto m = s.records_by_type;
  m.erase(81);
  m.erase(83);
  return m;
}

std::string fixture(const std::string& name) { return testdata("perf/" + name + ".data"); }

}  // namespace

class FixtureCounts : public ::testing::TestWithParam<std::string> {};

TEST_P(FixtureCounts, RecordCountsEqualPerfScriptDump) {
  PerfDataReader reader(fixture(GetParam()));
  Counting h;
  reader.read(h);
  const auto& st = reader.stats();
  EXPECT_EQ(our_counts(st), golden_counts(GetParam()));
  EXPECT_EQ(h.samples, st.records_by_type.count(9) ? st.records_by_type.at(9) : 0);
  EXPECT_GT(h.samples, 0u);
  EXPECT_EQ(h.out_of_order, 0u) << "records must be delivered in time order";
  EXPECT_TRUE(st.warnings.empty()) << st.warnings.front();
  EXPECT_FALSE(reader.info().attrs.empty());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FixtureCounts,
                         ::testing::Values("fp", "dwarf", "pipe", "zstd", "two_clocks", "sched", "sched_pipe",
                                           "switch", "exec"));

TEST(PerfReader, FileModeHeaderAndFeatures) {
  PerfDataReader reader(fixture("fp"));
  const auto& info = reader.info();
  EXPECT_FALSE(info.pipe_mode);
  ASSERT_EQ(info.attrs.size(), 1u);
  EXPECT_EQ(info.attrs[0].name, "cpu-clock");
  EXPECT_EQ(info.attrs[0].type, 1u);
  EXPECT_TRUE(info.attrs[0].sample_id_all());
  EXPECT_TRUE(info.attrs[0].freq());
  EXPECT_EQ(info.attrs[0].sample_period, 499u);
  EXPECT_FALSE(info.hostname.empty());
  EXPECT_FALSE(info.os_release.empty());
  EXPECT_EQ(info.perf_version.rfind("6.", 0), 0u) << info.perf_version;
  EXPECT_EQ(info.arch, "x86_64");
  EXPECT_GE(info.nr_cpus_online, 1u);
  EXPECT_GE(info.nr_cpus_avail, info.nr_cpus_online);
  ASSERT_FALSE(info.cmdline.empty());
  EXPECT_NE(std::find(info.cmdline.begin(), info.cmdline.end(), "record"), info.cmdline.end());
  EXPECT_TRUE(info.has_sample_time);
  EXPECT_LT(info.first_sample_time, info.last_sample_time);
  bool prog = false;
  for (const auto& b : info.build_ids) {
    EXPECT_EQ(b.build_id.size(), 20u);
    prog |= b.filename.find("/prog") != std::string::npos;
  }
  EXPECT_TRUE(prog) << "BUILD_ID feature should list the sampled program";
  Counting h;
  reader.read(h);
  // SAMPLE_TIME brackets every sample.
  EXPECT_EQ(reader.stats().first_sample_time, info.first_sample_time);
  EXPECT_EQ(reader.stats().last_sample_time, info.last_sample_time);
}

TEST(PerfReader, TrailerTimesLieWithinSampleTimeOrAreZero) {
  PerfDataReader reader(fixture("exec"));
  struct H : RecordHandler {
    uint64_t lo, hi;
    int bad = 0, comm_pid_mismatch = 0, exec_comms = 0, forks = 0;
    void check(uint64_t t) {
      if (t != 0 && (t < lo - 2000000000ull || t > hi + 2000000000ull)) ++bad;
    }
    void on_mmap(const MmapRecord& m) override { check(m.time); }
    void on_comm(const CommRecord& c) override {
      check(c.time);
      exec_comms += c.exec;
    }
    void on_fork(const TaskRecord& t) override {
      check(t.time);
      ++forks;
      EXPECT_LE(t.time, t.body_time);
    }
  } h;
  h.lo = reader.info().first_sample_time;
  h.hi = reader.info().last_sample_time;
  reader.read(h);
  EXPECT_EQ(h.bad, 0);
  EXPECT_GE(h.exec_comms, 2) << "sh exec and prog exec";
  EXPECT_EQ(h.forks, 1);
}

TEST(PerfReader, DwarfSamplesCarryRegsAndStack) {
  PerfDataReader reader(fixture("dwarf"));
  struct H : RecordHandler {
    int n = 0, with_stack = 0;
    void on_sample(const Sample& s) override {
      ++n;
      EXPECT_EQ(s.attr->sample_regs_user, 0xff0fffu);
      if (s.regs_abi == 2) {
        uint64_t sp = 0, ip = 0;
        EXPECT_TRUE(s.user_reg(7, &sp));
        EXPECT_TRUE(s.user_reg(8, &ip));
        EXPECT_FALSE(s.user_reg(12, &ip)) << "DS is not in perf's mask";
        EXPECT_NE(sp, 0u);
      }
      if (s.stack_user_size) {
        ++with_stack;
        EXPECT_EQ(s.stack_user_size, 4096u);
        EXPECT_LE(s.stack_user_dyn_size, s.stack_user_size);
      }
    }
  } h;
  reader.read(h);
  EXPECT_GT(h.n, 10);
  EXPECT_GT(h.with_stack, 10);
}
