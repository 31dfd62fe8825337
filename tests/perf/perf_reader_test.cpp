// Tests of the perf.data reader against the committed fixtures in
// testdata/perf (golden record counts produced by `perf script -D`, see
// README.md there) and, when perf can run here, against perf itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <cstring>
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
                                           "switch", "exec", "buildid_mmap"));

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

// Samples per event equal `perf script -F event` (golden NAME.events), for
// every fixture: the right attr is chosen for every record.
TEST_P(FixtureCounts, SamplesPerEventEqualPerfScript) {
  PerfDataReader reader(fixture(GetParam()));
  Counting h;
  reader.read(h);
  std::map<std::string, uint64_t> golden;
  std::istringstream in(test::read_file(testdata("perf/" + GetParam() + ".events")));
  std::string ev;
  uint64_t n;
  while (in >> ev >> n) golden[ev] = n;
  EXPECT_EQ(h.samples_by_event, golden);
  // Stats agree with what was delivered.
  const auto& info = reader.info();
  for (size_t i = 0; i < info.attrs.size(); ++i)
    EXPECT_EQ(reader.stats().samples_per_attr.at(i), h.samples_by_event[info.attrs[i].name]);
}

TEST(PerfReader, SchedSwitchFieldsEqualPerfScriptTrace) {
  for (const char* name : {"sched", "sched_pipe"}) {
    SCOPED_TRACE(name);
    PerfDataReader reader(fixture(name));
    struct H : RecordHandler {
      TracingData td;
      const PerfDataReader* r;
      std::vector<std::string> lines;
      void on_sample(const Sample& s) override {
        if (s.attr->type != 2) return;
        if (td.empty()) td = TracingData::parse(r->info().tracing_data, r->path());
        const TracepointFormat* f = td.find(s.attr->config);
        ASSERT_NE(f, nullptr);
        EXPECT_EQ(f->full_name(), "sched:sched_switch");
        auto str = [&](const char* n) {
          const TracepointField* fl = f->field(n);
          EXPECT_NE(fl, nullptr) << n;
          return fl ? std::string(read_tracepoint_string(*fl, s.raw, s.raw_size)) : std::string();
        };
        auto num = [&](const char* n) {
          const TracepointField* fl = f->field(n);
          int64_t v = -999;
          EXPECT_TRUE(fl && read_tracepoint_int(*fl, s.raw, s.raw_size, &v)) << n;
          return std::to_string(v);
        };
        int64_t state = 0;
        read_tracepoint_int(*f->field("prev_state"), s.raw, s.raw_size, &state);
        // perf prints the lowest set state bit as a letter (R when 0).
        static const char letters[] = "SDTtXZPI";
        std::string st = "R";
        for (int b = 0; b < 8; ++b)
          if (state & (1 << b)) {
            st = std::string(1, letters[b]);
            break;
          }
        if (state & 0x100) st += "+";  // TASK_REPORT_MAX: preempted
        lines.push_back("prev_comm=" + str("prev_comm") + " prev_pid=" + num("prev_pid") + " prev_prio=" +
                        num("prev_prio") + " prev_state=" + st + " ==> next_comm=" + str("next_comm") +
                        " next_pid=" + num("next_pid") + " next_prio=" + num("next_prio"));
        // The common fields agree with the sample.
        EXPECT_EQ(num("common_pid"), std::to_string(s.tid));
      }
    } h;
    h.r = &reader;
    reader.read(h);
    if (std::string(name) == "sched") {
      std::vector<std::string> golden;
      std::istringstream in(test::read_file(testdata("perf/sched.trace")));
      for (std::string l; std::getline(in, l);) golden.push_back(l);
      EXPECT_EQ(h.lines, golden);
    } else {
      EXPECT_EQ(h.lines.size(), 52u);
    }
  }
}

TEST(PerfReader, TracingDataFormats) {
  PerfDataReader reader(fixture("sched"));
  TracingData td = TracingData::parse(reader.info().tracing_data, reader.path());
  EXPECT_EQ(td.version(), "0.6");
  EXPECT_EQ(td.long_size(), 8);
  const EventAttr* tp = nullptr;
  for (const auto& a : reader.info().attrs)
    if (a.type == 2) tp = &a;
  ASSERT_NE(tp, nullptr);
  EXPECT_EQ(tp->name, "sched:sched_switch");
  const TracepointFormat* f = td.find(tp->config);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f, td.find("sched", "sched_switch"));
  const TracepointField* comm = f->field("prev_comm");
  ASSERT_NE(comm, nullptr);
  EXPECT_TRUE(comm->is_array);
  EXPECT_TRUE(comm->is_string);
  EXPECT_EQ(comm->size, 16u);
  const TracepointField* pid = f->field("prev_pid");
  ASSERT_NE(pid, nullptr);
  EXPECT_TRUE(pid->is_signed);
  EXPECT_EQ(pid->size, 4u);
  EXPECT_GT(pid->offset, comm->offset);
  ASSERT_NE(f->field("common_pid"), nullptr);
  EXPECT_TRUE(f->field("common_pid")->is_common);
  EXPECT_FALSE(pid->is_common);
  // Out-of-range reads fail instead of reading past the payload.
  uint8_t small[8] = {};
  int64_t v;
  EXPECT_FALSE(read_tracepoint_int(*pid, small, sizeof small, &v));
  EXPECT_TRUE(read_tracepoint_string(*comm, small, sizeof small).empty());
}

TEST(PerfReader, DataLocStringField) {
  TracepointFormat f = TracingData::parse_format(
      "name: x\nID: 7\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n"
      "\tfield:__data_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;\n"
      "\tfield:int val;\toffset:12;\tsize:4;\tsigned:1;\n",
      "sys");
  EXPECT_EQ(f.id, 7u);
  const TracepointField* n = f.field("name");
  ASSERT_NE(n, nullptr);
  EXPECT_TRUE(n->is_data_loc);
  EXPECT_TRUE(n->is_string);
  uint8_t raw[24] = {};
  uint32_t desc = (5u << 16) | 16u;
  std::memcpy(raw + 8, &desc, 4);
  std::memcpy(raw + 16, "abc\0", 4);
  int32_t val = -5;
  std::memcpy(raw + 12, &val, 4);
  EXPECT_EQ(read_tracepoint_string(*n, raw, sizeof raw), "abc");
  int64_t v = 0;
  EXPECT_TRUE(read_tracepoint_int(*f.field("val"), raw, sizeof raw, &v));
  EXPECT_EQ(v, -5);
  desc = (64u << 16) | 16u;  // longer than the payload
  std::memcpy(raw + 8, &desc, 4);
  EXPECT_TRUE(read_tracepoint_string(*n, raw, sizeof raw).empty());
}

TEST(PerfReader, PipeModeInfoAndNames) {
  PerfDataReader reader(fixture("sched_pipe"));
  EXPECT_TRUE(reader.info().pipe_mode);
  Counting h;
  reader.read(h);
  const auto& info = reader.info();
  ASSERT_EQ(info.attrs.size(), 2u);
  EXPECT_EQ(info.attrs[0].name, "sched:sched_switch");
  EXPECT_EQ(info.attrs[1].name, "cpu-clock");
  EXPECT_FALSE(info.tracing_data.empty());
  EXPECT_FALSE(info.hostname.empty());
  EXPECT_FALSE(info.cmdline.empty());
  EXPECT_EQ(info.arch, "x86_64");
}

TEST(PerfReader, ZstdStatsAndTinyOutputChunks) {
  std::vector<std::string> reference;
  uint64_t decompressed = 0;
  for (size_t chunk : {size_t(0), size_t(1), size_t(7), size_t(100), size_t(4096)}) {
    SCOPED_TRACE(chunk);
    ReadOptions opt;
    opt.zstd_output_chunk = chunk;
    PerfDataReader reader(fixture("zstd"), opt);
    Counting h;
    reader.read(h);
    const auto& st = reader.stats();
    EXPECT_TRUE(reader.info().compressed);
    EXPECT_EQ(reader.info().comp_type, 1u);
    EXPECT_GT(st.records_by_type.at(81), 0u);
    EXPECT_GT(st.compression_ratio(), 1.0);
    if (chunk == 0) {
      reference = h.order;
      decompressed = st.decompressed_bytes;
    } else {
      EXPECT_EQ(h.order, reference);
      EXPECT_EQ(st.decompressed_bytes, decompressed);
    }
  }
}

// --buildid-mmap: MMAP2 records carry build-ids (misc bit 14). prog's equals
// the one the BUILD_ID feature of fp.data lists for the same binary.
TEST(PerfReader, Mmap2BuildIds) {
  std::string expected;
  {
    PerfDataReader fp(fixture("fp"));
    for (const auto& b : fp.info().build_ids)
      if (b.filename.size() >= 5 && b.filename.compare(b.filename.size() - 5, 5, "/prog") == 0)
        expected = build_id_hex(reinterpret_cast<const uint8_t*>(b.build_id.data()), b.build_id.size());
  }
  ASSERT_EQ(expected.size(), 40u);
  PerfDataReader reader(fixture("buildid_mmap"));
  struct H : RecordHandler {
    std::string prog_id;
    bool kernel_exec = false;
    int with_id = 0;
    void on_mmap(const MmapRecord& m) override {
      EXPECT_TRUE(m.is_mmap2);
      if (m.build_id) ++with_id;
      if (m.build_id && m.filename.size() >= 5 && m.filename.substr(m.filename.size() - 5) == "/prog" && m.executable)
        prog_id = build_id_hex(m.build_id, m.build_id_size);
      if (m.pid == -1 && m.filename.find("kernel.kallsyms") != std::string_view::npos) kernel_exec = m.executable;
    }
  } h;
  reader.read(h);
  EXPECT_EQ(h.prog_id, expected);
  EXPECT_TRUE(h.kernel_exec);
  EXPECT_GE(h.with_id, 3);
}

TEST(PerfReader, SwitchEvents) {
  PerfDataReader reader(fixture("switch"));
  struct H : RecordHandler {
    int outs = 0, ins = 0, preempt = 0;
    int32_t pid = -1;
    void on_sample(const Sample& s) override { pid = s.pid; }
    void on_switch(const SwitchRecord& s) override {
      EXPECT_FALSE(s.cpu_wide);
      EXPECT_GT(s.pid, 0);
      EXPECT_GT(s.time, 0u);
      s.out ? ++outs : ++ins;
      preempt += s.preempt;
      EXPECT_TRUE(s.out || !s.preempt);
    }
  } h;
  reader.read(h);
  EXPECT_NEAR(h.outs, h.ins, 2);
  EXPECT_GE(h.outs, 10) << "10 sleeps";
}
