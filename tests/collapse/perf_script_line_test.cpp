// Header and callchain-line parsing for the perf script formats fgtool reads.
#include <gtest/gtest.h>

#include "collapse/perf_script_line.h"

namespace {

fg::PerfScriptHeader header(std::string_view line) {
  fg::PerfScriptHeader h;
  EXPECT_TRUE(fg::parse_perf_script_header(line, h)) << line;
  return h;
}

TEST(PerfScriptHeader, DefaultOutput) {
  auto h = header("workload  8201   448.812986:    1001001 cpu-clock: ");
  EXPECT_EQ(h.comm, "workload");
  EXPECT_EQ(h.pid, "");
  EXPECT_EQ(h.tid, "8201");
  EXPECT_TRUE(h.has_time);
  EXPECT_EQ(h.time_ns, 448812986000ull);
  EXPECT_TRUE(h.has_period);
  EXPECT_EQ(h.period, 1001001u);
  EXPECT_EQ(h.event, "cpu-clock");
  EXPECT_FALSE(h.tentative);
}

TEST(PerfScriptHeader, PidTidCpuNanosecondsTrace) {
  auto h = header(
      "gemm worker 13537/13538 [001]   808.511230043: sched:sched_switch: prev_comm=gemm worker prev_pid=13538 "
      "prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120");
  EXPECT_EQ(h.comm, "gemm worker");
  EXPECT_EQ(h.pid, "13537");
  EXPECT_EQ(h.tid, "13538");
  EXPECT_TRUE(h.has_cpu);
  EXPECT_EQ(h.time_ns, 808511230043ull);
  EXPECT_FALSE(h.has_period);
  EXPECT_EQ(h.event, "sched:sched_switch");
  EXPECT_EQ(h.rest.substr(0, 22), "prev_comm=gemm worker ");
}

TEST(PerfScriptHeader, DyingTaskAndPaddedEvent) {
  auto h = header(":-1 18066/-1   826.730860918:          1 sched:sched_switch: prev_comm=x prev_pid=18066");
  EXPECT_EQ(h.comm, ":-1");
  EXPECT_EQ(h.pid, "18066");
  EXPECT_EQ(h.tid, "-1");
  EXPECT_EQ(h.period, 1u);
  EXPECT_EQ(h.event, "sched:sched_switch");
}

TEST(PerfScriptHeader, SideBand) {
  auto h = header("workload 14509/14509   826.738904537: PERF_RECORD_SWITCH IN         ");
  EXPECT_EQ(h.sideband, "PERF_RECORD_SWITCH");
  EXPECT_EQ(h.rest.substr(0, 2), "IN");
  EXPECT_EQ(h.tid, "14509");
}

TEST(PerfScriptHeader, NoCallchainSampleCarriesTheFrame) {
  auto h = header("        workload  8474   515.978372:    1001001 cpu-clock:      7f6e830dc0c0 do_lookup_x+0x360 (/usr/lib/ld.so)");
  EXPECT_EQ(h.comm, "workload");
  EXPECT_EQ(h.event, "cpu-clock");
  EXPECT_EQ(h.rest, "7f6e830dc0c0 do_lookup_x+0x360 (/usr/lib/ld.so)");
}

// A recording without PERF_SAMPLE_TIME (perf record --per-thread) prints
// no time: the period sits between pid/tid and the event. It was read as
// the tid, and the pid/tid as part of the comm.
TEST(PerfScriptHeader, NoTimePeriodBeforeTheEvent) {
  auto h = header("calls 30635/30636    1001001 cpu-clock: ");
  EXPECT_EQ(h.comm, "calls");
  EXPECT_EQ(h.pid, "30635");
  EXPECT_EQ(h.tid, "30636");
  EXPECT_FALSE(h.has_time);
  EXPECT_TRUE(h.has_period);
  EXPECT_EQ(h.period, 1001001u);
  EXPECT_EQ(h.event, "cpu-clock");
  h = header("gemm worker 30636    1001001 cpu-clock: ");  // tid alone
  EXPECT_EQ(h.comm, "gemm worker");
  EXPECT_EQ(h.tid, "30636");
  EXPECT_EQ(h.period, 1001001u);
  h = header("gemm worker 30636 cpu-clock: ");  // no period: the decimal is the tid
  EXPECT_EQ(h.comm, "gemm worker");
  EXPECT_EQ(h.tid, "30636");
  EXPECT_FALSE(h.has_period);
  h = header("p 7 11 1.000000: 5 cpu-clock: ");  // with a time, as before
  EXPECT_EQ(h.comm, "p 7");
  EXPECT_EQ(h.tid, "11");
  EXPECT_EQ(h.period, 5u);
}

TEST(PerfScriptHeader, TentativeWithoutTimeOrEvent) {
  auto h = header("workload  8333 ");
  EXPECT_TRUE(h.tentative);
  EXPECT_EQ(h.comm, "workload");
  EXPECT_EQ(h.tid, "8333");
}

TEST(PerfScriptFrame, Forms) {
  fg::PerfScriptFrame f;
  ASSERT_TRUE(fg::parse_perf_script_frame(
      "\t            1618 std::_Function_handler<void (int), main::{lambda(int)#1}>::_M_invoke+0x58 (/tmp/workload)", f));
  EXPECT_EQ(f.address, "1618");
  EXPECT_EQ(f.symbol, "std::_Function_handler<void (int), main::{lambda(int)#1}>::_M_invoke+0x58");
  EXPECT_EQ(f.dso, "/tmp/workload");
  ASSERT_TRUE(fg::parse_perf_script_frame("\t    1599 S::operator()", f));  // -F ip,sym: no dso
  EXPECT_EQ(f.symbol, "S::operator()");
  EXPECT_EQ(f.dso, "");
  ASSERT_TRUE(fg::parse_perf_script_frame("\t    1599 inl_fn (inlined)", f));
  EXPECT_TRUE(f.inlined);
  EXPECT_EQ(f.symbol, "inl_fn");
  ASSERT_TRUE(fg::parse_perf_script_frame("\t    7fdb7b8f2ad7 [unknown] (/tmp/x (deleted))", f));
  EXPECT_EQ(f.dso, "/tmp/x (deleted)");
  ASSERT_TRUE(fg::parse_perf_script_frame("\t    7fdb7b8f2ad7", f));
  EXPECT_EQ(f.symbol, "");
  EXPECT_FALSE(fg::parse_perf_script_frame("\tmain (/tmp/x)", f));
  EXPECT_FALSE(fg::parse_perf_script_frame("\t12345678901234567 f", f));
}

TEST(PerfScriptTime, Parses) {
  uint64_t ns = 0;
  EXPECT_TRUE(fg::parse_perf_script_time("1.5:", ns));
  EXPECT_EQ(ns, 1500000000u);
  EXPECT_FALSE(fg::parse_perf_script_time("1.1234567891:", ns));
  EXPECT_FALSE(fg::parse_perf_script_time(".5:", ns));
  EXPECT_FALSE(fg::parse_perf_script_time("12:", ns));
}

}  // namespace
