// PerfScriptCollapser on committed perf script fixtures (goldens reviewed by
// hand, see testdata/collapse/README.md), on small texts written here, and on
// malformed input.
#include <gtest/gtest.h>

#include <sstream>

#include "collapse/perf_script_collapser.h"
#include "diagnostics/input_error.h"
#include "folded/folded_writer.h"
#include "test_support.h"

namespace {

using fg::test::read_file;
using fg::test::testdata;

std::string folded_text(const fg::FoldedProfile& p) {
  std::string s;
  fg::write_folded(p, s);
  return s;
}

std::string collapse_file(const std::string& path, fg::CollapseOptions o = {}, fg::CollapseStats* stats = nullptr) {
  fg::FoldedProfile p = fg::collapse_perf_script(path, o, stats);
  return o.off_cpu ? folded_text(fg::with_rounded_weights(p)) : folded_text(p);
}

std::string collapse_text(const std::string& text, fg::CollapseOptions o = {}, fg::CollapseStats* stats = nullptr) {
  fg::FoldedProfile p;
  fg::PerfScriptCollapser c(p, o, "t.txt");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) c.feed(line);
  c.finish();
  if (stats) *stats = c.stats();
  return o.off_cpu ? folded_text(fg::with_rounded_weights(p)) : folded_text(p);
}

double weight_of(const std::string& folded, const std::string& needle) {
  double w = 0;
  std::istringstream in(folded);
  for (std::string line; std::getline(in, line);) {
    size_t sp = line.rfind(' ');
    if (line.substr(0, sp).find(needle) != std::string::npos) w += std::stod(line.substr(sp + 1));
  }
  return w;
}

// ---- goldens ----

struct Golden {
  const char* input;
  const char* golden;
  void (*setup)(fg::CollapseOptions&);
};

class CollapseGolden : public ::testing::TestWithParam<Golden> {};

TEST_P(CollapseGolden, MatchesReviewedOutput) {
  fg::CollapseOptions o;
  if (GetParam().setup) GetParam().setup(o);
  EXPECT_EQ(collapse_file(testdata(std::string("collapse/") + GetParam().input), o),
            read_file(testdata(std::string("collapse/") + GetParam().golden)));
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, CollapseGolden,
    ::testing::Values(Golden{"fp.txt", "fp.folded", nullptr},
                      Golden{"fp-fields.txt", "fp-fields.tid-all.folded",
                             [](fg::CollapseOptions& o) {
                               o.root = fg::CollapseOptions::Root::CommPidTid;
                               o.tidy.annotate_kernel = o.tidy.annotate_jit = true;
                             }},
                      Golden{"dwarf.txt", "dwarf.folded", nullptr},
                      Golden{"pipe.txt", "pipe.pid.folded",
                             [](fg::CollapseOptions& o) { o.root = fg::CollapseOptions::Root::CommPid; }},
                      Golden{"offcpu.txt", "offcpu.folded", [](fg::CollapseOptions& o) { o.off_cpu = true; }},
                      Golden{"mixed.txt", "mixed.folded", nullptr},
                      Golden{"mixed.txt", "mixed.offcpu.folded", [](fg::CollapseOptions& o) { o.off_cpu = true; }}));

TEST(Collapse, FieldSubsetsOfOneRecordingAgree) {
  // Default fields vs an explicit -F list with symoff and --ns: same stacks.
  EXPECT_EQ(collapse_file(testdata("collapse/fp.txt")), collapse_file(testdata("collapse/fp-fields.txt")));
  // -F comm,tid,ip,sym: no time, event, period or dso; every sample still counts once.
  fg::CollapseStats full, minimal;
  fg::CollapseOptions count;
  count.count_samples = true;
  collapse_file(testdata("collapse/fp.txt"), count, &full);
  std::string m = collapse_file(testdata("collapse/fp-minimal.txt"), {}, &minimal);
  EXPECT_GT(full.samples_folded, 100u);
  EXPECT_EQ(minimal.samples_folded, full.samples_folded);
  EXPECT_EQ(weight_of(m, "gemm"), weight_of(collapse_file(testdata("collapse/fp.txt"), count), "gemm"));
}

TEST(Collapse, FixtureKeepsWhatThePerlScriptLoses) {
  std::string f = collapse_file(testdata("collapse/fp.txt"));
  EXPECT_NE(f.find(";std::_Function_handler<void (int), main::{lambda(int)#1}>::_M_invoke;"), std::string::npos) << f;
  EXPECT_NE(f.find(";(anonymous namespace)::make_input"), std::string::npos) << f;
}

TEST(Collapse, PeriodWeightsAndCount) {
  fg::FoldedProfile p = fg::collapse_perf_script(testdata("collapse/fp.txt"), {});
  EXPECT_EQ(p.units, "ns");
  fg::CollapseOptions count;
  count.count_samples = true;
  fg::CollapseStats st;
  fg::FoldedProfile c = fg::collapse_perf_script(testdata("collapse/fp.txt"), count, &st);
  EXPECT_EQ(c.units, "samples");
  EXPECT_EQ(c.total(), double(st.samples_folded));
  EXPECT_EQ(p.total(), c.total() * 1001001);  // cpu-clock at 999 Hz: every period is 1001001 ns
}

// ---- small texts ----

const char* kDefects =
    "prog  100   1.000000:    10 cpu-clock: \n"
    "\t    1000 std::function<void (int)>::operator()(int) const+0x10 (/tmp/prog)\n"
    "\t    2000 (anonymous namespace)::make_input+0x4 (/tmp/prog)\n"
    "\t    3000 main+0x8 (/tmp/prog)\n"
    "\n";

TEST(Collapse, PerlDefectsAreNotCopied) {
  EXPECT_EQ(collapse_text(kDefects),
            "prog;main;(anonymous namespace)::make_input;std::function<void (int)>::operator() 10\n");
}

TEST(Collapse, RootNamesAndSpaces) {
  const char* text =
      "gemm worker 10/11   1.000000: 5 cpu-clock: \n"
      "\t    1000 f (/tmp/p)\n"
      "\n";
  fg::CollapseOptions o;
  EXPECT_EQ(collapse_text(text, o), "gemm_worker;f 5\n");
  o.root = fg::CollapseOptions::Root::CommPid;
  EXPECT_EQ(collapse_text(text, o), "gemm_worker-10;f 5\n");
  o.root = fg::CollapseOptions::Root::CommPidTid;
  EXPECT_EQ(collapse_text(text, o), "gemm_worker-10/11;f 5\n");
}

TEST(Collapse, FirstEventOnlyUnlessNamed) {
  const char* text =
      "p 1/1 1.0: 7 task-clock: \n\t 10 a (/p)\n\n"
      "p 1/1 1.1: 3 cycles:u: \n\t 10 b (/p)\n\n"
      "p 1/1 1.2: 7 task-clock: \n\t 10 a (/p)\n\n";
  fg::CollapseStats st;
  EXPECT_EQ(collapse_text(text, {}, &st), "p;a 14\n");
  EXPECT_EQ(st.samples_other_event, 1u);
  fg::CollapseOptions o;
  o.event = "cycles";  // modifiers need not be named
  EXPECT_EQ(collapse_text(text, o), "p;b 3\n");
}

// As the native fold: an event recorded with terms (-e task-clock/period=N/)
// answers to its name without them, and only the first such event is
// folded; the units follow the event chosen.
TEST(Collapse, EventNamedWithoutItsTerms) {
  const char* text =
      "p 1/1 1.0: 250 cpu-clock/period=250/: \n\t 10 a (/p)\n\n"
      "p 1/1 1.1: 100 task-clock/period=100/: \n\t 10 b (/p)\n\n"
      "p 1/1 1.2: 100 task-clock/period=100/:u: \n\t 10 b (/p)\n\n"
      "p 1/1 1.3: 250 cpu-clock/period=250/: \n\t 10 a (/p)\n\n";
  fg::CollapseOptions o;
  o.event = "task-clock";
  fg::FoldedProfile p;
  {
    fg::PerfScriptCollapser c(p, o, "t.txt");
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) c.feed(line);
    c.finish();
    EXPECT_EQ(c.stats().event, "task-clock/period=100/");
    EXPECT_EQ(c.stats().samples_other_event, 3u);  // ":u" is another event
  }
  EXPECT_EQ(folded_text(p), "p;b 100\n");
  EXPECT_EQ(p.units, "ns");
  o.event = "cpu-clock/period=250/";
  EXPECT_EQ(collapse_text(text, o), "p;a 500\n");
  o.event = "cpu";
  EXPECT_EQ(collapse_text(text, o), "");
}

TEST(Collapse, InlineFramesOnlyWithOption) {
  const char* text =
      "p 1 1.0: 1 cpu-clock: \n"
      "\t 10 leaf (inlined)\n"
      "\t 10 caller (/p)\n"
      "\n";
  EXPECT_EQ(collapse_text(text), "p;caller 1\n");
  fg::CollapseOptions o;
  o.keep_inline = true;
  EXPECT_EQ(collapse_text(text, o), "p;caller;leaf 1\n");
}

TEST(Collapse, SamplesWithoutCallchainAndSrclineLines) {
  const char* text =
      "        workload  8474   515.978372:    100 cpu-clock:      7f6e830dc0c0 do_lookup_x+0x360 (/lib/ld.so)\n"
      "        workload  8474   515.979366:    100 cpu-clock:      7f6e82bd4dc7 sysmalloc+0x2a7 (/lib/libc.so.6)\n"
      "p 1 1.0: 1 cpu-clock: \n"
      "\t 1452 make_input (/w)\n"
      "  workload.cpp:25\n"
      "\t 1618 main (/w)\n"
      "  workload.cpp:50\n";
  EXPECT_EQ(collapse_text(text), "p;main;make_input 1\nworkload;do_lookup_x 100\nworkload;sysmalloc 100\n");
}

// ---- off-CPU ----

const char* kOffCpu =
    // task 10 sleeps at 1.000000 and is switched in (PERF_RECORD_SWITCH IN) 250 us later
    "p 10/10 [000] 1.000000000: sched:sched_switch: prev_comm=p prev_pid=10 prev_prio=120 prev_state=S ==> "
    "next_comm=swapper/0 next_pid=0 next_prio=120\n"
    "\t ffffffff81000010 __schedule (/k)\n"
    "\t 100 nap (/p)\n"
    "\n"
    "p 10/10 [000] 1.000010000: PERF_RECORD_SWITCH OUT\n"
    "p 10/10 [000] 1.000250000: PERF_RECORD_SWITCH IN\n"
    // task 11 is preempted (R) and is switched in by a sched_switch naming it 1000 us later
    "q w 10/11 [001] 1.001000000: sched:sched_switch: prev_comm=q w prev_pid=11 prev_prio=120 prev_state=R+ ==> "
    "next_comm=z next_pid=12 next_prio=120\n"
    "\t 200 spin (/p)\n"
    "\n"
    "z 12/12 [001] 1.002000000: sched:sched_switch: prev_comm=z prev_pid=12 prev_prio=120 prev_state=D ==> "
    "next_comm=q w next_pid=11 next_prio=120\n"
    "\t 300 io (/p)\n"
    "\n"
    // task 12 never comes back: not counted. The idle task is never counted.
    "swapper 0/0 [001] 1.003000000: sched:sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R "
    "==> next_comm=p next_pid=13 next_prio=120\n"
    "\n";

fg::CollapseOptions off_cpu_options() {
  fg::CollapseOptions o;
  o.off_cpu = true;
  return o;
}

TEST(CollapseOffCpu, PairsSwitchOutsWithTheFirstSwitchIn) {
  fg::CollapseOptions o = off_cpu_options();
  fg::CollapseStats st;
  EXPECT_EQ(collapse_text(kOffCpu, o, &st), "p;nap;__schedule 250\nq_w;spin 1000\n");
  EXPECT_EQ(st.intervals, 2u);
  EXPECT_EQ(st.pending_at_end, 1u);
  EXPECT_EQ(st.switch_outs, 3u);
  o.root = fg::CollapseOptions::Root::CommPidTid;
  EXPECT_EQ(collapse_text(kOffCpu, o), "p-10/10;nap;__schedule 250\nq_w-10/11;spin 1000\n");
}

TEST(CollapseOffCpu, StateAndMinimumBlockFilters) {
  fg::CollapseOptions o = off_cpu_options();
  o.state_mask = fg::parse_state_filter("S,D");
  EXPECT_EQ(collapse_text(kOffCpu, o), "p;nap;__schedule 250\n");
  o.state_mask = fg::parse_state_filter("involuntary");
  EXPECT_EQ(collapse_text(kOffCpu, o), "q_w;spin 1000\n");
  o.state_mask = 0;
  o.min_block_us = 500;
  fg::CollapseStats st;
  EXPECT_EQ(collapse_text(kOffCpu, o, &st), "q_w;spin 1000\n");
  EXPECT_EQ(st.filtered_short, 1u);
  EXPECT_THROW(fg::parse_state_filter("Q"), fg::UsageError);
}

// Without PERF_RECORD_SWITCH lines (recorded without --switch-events): a
// sched_switch naming the task as next_pid ends its block; otherwise the
// task's next record does (a sample, its next switch-out, its exit), an
// upper bound, as fgtool fold ends it.
const char* kOffCpuNoSwitchLines =
    // task 10 sleeps at 1.000000; its next record is a cpu-clock sample 300 us later
    "p 10/10 [000] 1.000000000: sched:sched_switch: prev_comm=p prev_pid=10 prev_prio=120 prev_state=S ==> "
    "next_comm=swapper/0 next_pid=0 next_prio=120\n"
    "\t 100 nap (/p)\n"
    "\n"
    "p 10/10 [000] 1.000300000:     1000000 cpu-clock: \n"
    "\t 110 work (/p)\n"
    "\n"
    // task 11 is preempted and named as next_pid 1000 us later
    "q 11/11 [001] 1.001000000: sched:sched_switch: prev_comm=q prev_pid=11 prev_prio=120 prev_state=R ==> "
    "next_comm=z next_pid=12 next_prio=120\n"
    "\t 200 spin (/p)\n"
    "\n"
    "z 12/12 [001] 1.002000000: sched:sched_switch: prev_comm=z prev_pid=12 prev_prio=120 prev_state=D ==> "
    "next_comm=q next_pid=11 next_prio=120\n"
    "\t 300 io (/p)\n"
    "\n"
    // task 12 is switched out again 2000 us later with no switch-in seen: the first block ends there
    "z 12/12 [001] 1.004000000: sched:sched_switch: prev_comm=z prev_pid=12 prev_prio=120 prev_state=S ==> "
    "next_comm=swapper/1 next_pid=0 next_prio=120\n"
    "\t 310 wait (/p)\n"
    "\n"
    // and exits 500 us after that (perf script --show-task-events)
    "z 12/12 1.004500000: PERF_RECORD_EXIT(12:12):(1:1)\n";

TEST(CollapseOffCpu, WithoutSwitchLinesTheNextRecordEndsABlock) {
  fg::CollapseOptions o = off_cpu_options();
  fg::CollapseStats st;
  EXPECT_EQ(collapse_text(kOffCpuNoSwitchLines, o, &st), "p;nap 300\nq;spin 1000\nz;io 2000\nz;wait 500\n");
  EXPECT_EQ(st.intervals, 4u);
  EXPECT_EQ(st.closed_by_next_record, 3u);
  EXPECT_EQ(st.pending_at_end, 0u);
  EXPECT_EQ(st.repeated_switch_outs, 0u);
}

TEST(CollapseOffCpu, SwitchLinesTurnTheNextRecordRuleOff) {
  // The same text after a PERF_RECORD_SWITCH line: only switch-ins end
  // blocks, and a switch-out while one is pending replaces it (its
  // switch-in was missed).
  std::string text = std::string("x 9/9 [000] 0.900000000: PERF_RECORD_SWITCH OUT\n") + kOffCpuNoSwitchLines;
  fg::CollapseOptions o = off_cpu_options();
  fg::CollapseStats st;
  EXPECT_EQ(collapse_text(text, o, &st), "q;spin 1000\n");
  EXPECT_EQ(st.intervals, 1u);
  EXPECT_EQ(st.closed_by_next_record, 0u);
  EXPECT_EQ(st.repeated_switch_outs, 1u);
  EXPECT_EQ(st.pending_at_end, 2u);  // p (its sample ended nothing) and z's second block
  // A switch line only after such blocks ended: they are left out, and counted.
  text = std::string(kOffCpuNoSwitchLines) + "x 9/9 [000] 1.006000000: PERF_RECORD_SWITCH IN\n";
  EXPECT_EQ(collapse_text(text, o, &st), "q;spin 1000\n");
  EXPECT_EQ(st.next_record_dropped, 3u);
  EXPECT_EQ(st.closed_by_next_record, 0u);
}

TEST(CollapseOffCpu, OnCpuModeIgnoresSwitchSamples) {
  fg::CollapseStats st;
  EXPECT_EQ(collapse_text(kOffCpu, {}, &st), "");
  EXPECT_EQ(st.samples_folded, 0u);
}

// ---- malformed input ----

TEST(CollapseMalformed, ErrorNamesFileAndLine) {
  std::string text = std::string(kDefects) + "p 1 1.0: 1 cpu-clock: \n\tnot-an-address main (/p)\n\n";
  try {
    collapse_text(text);
    FAIL() << "no error";
  } catch (const fg::InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("t.txt:7: ", 0), 0u) << e.what();
  }
}

TEST(CollapseMalformed, FrameOutsideSampleAndJunkHeader) {
  EXPECT_THROW(collapse_text("\t 1000 main (/p)\n"), fg::InputError);
  EXPECT_THROW(collapse_text("this is not perf script\nneither is this\n"), fg::InputError);
  EXPECT_THROW(collapse_text(std::string("p 1 1.0: cpu-clock: \n\x01\x02\0\x03", 25)), fg::InputError);
  fg::CollapseOptions off;
  off.off_cpu = true;
  EXPECT_THROW(collapse_text("p 1 1.0: sched:sched_switch: garbled\n\n", off), fg::InputError);
}

TEST(CollapseMalformed, LenientSkipsTheDamagedSampleAndCounts) {
  std::string text = std::string(kDefects) + "p 1 1.0: 1 cpu-clock: \n\tzz main (/p)\n\t 10 f (/p)\n\n" +
                     "\t 1000 orphan (/p)\n" + kDefects;
  fg::CollapseOptions o;
  o.lenient = true;
  fg::CollapseStats st;
  std::string f = collapse_text(text, o, &st);
  EXPECT_EQ(f, "prog;main;(anonymous namespace)::make_input;std::function<void (int)>::operator() 20\n");
  EXPECT_EQ(st.malformed_skipped, 2u);
  EXPECT_EQ(st.first_malformed.rfind("t.txt:7: ", 0), 0u) << st.first_malformed;
}

TEST(CollapseMalformed, BinaryFileIsRejectedQuickly) {
  std::string dir = fg::test::temp_dir();
  std::string junk(3 << 20, '\x7f');  // one 3 MiB "line"
  fg::test::write_file(dir + "/junk.txt", junk);
  try {
    fg::collapse_perf_script(dir + "/junk.txt", {});
    FAIL() << "no error";
  } catch (const fg::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("junk.txt:1: "), std::string::npos) << e.what();
  }
}

TEST(Collapse, LooksLikePerfScript) {
  EXPECT_TRUE(fg::looks_like_perf_script(read_file(testdata("collapse/fp.txt")).substr(0, 4096)));
  EXPECT_TRUE(fg::looks_like_perf_script(read_file(testdata("collapse/offcpu.txt")).substr(0, 4096)));
  EXPECT_FALSE(fg::looks_like_perf_script(read_file(testdata("collapse/fp.folded")).substr(0, 4096)));
  EXPECT_FALSE(fg::looks_like_perf_script("main;foo 12\nmain;bar 3\n"));
}

}  // namespace

namespace {

fg::FoldedProfile profile_of(const std::string& text, const fg::CollapseOptions& o) {
  fg::FoldedProfile p;
  fg::PerfScriptCollapser c(p, o, "t.txt");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) c.feed(line);
  c.finish();
  return p;
}

// One sample header and its callchain lines (leaf first).
std::string sample(const std::string& comm, const std::vector<std::string>& frames) {
  std::string s = comm + " 100/100 [000] 1.000000: 1 cpu-clock:\n";
  for (const auto& f : frames) s += "\t" + f + "\n";
  return s + "\n";
}

}  // namespace

// The collapser remembers each callchain text's frame (see FrameText): a
// repeated text must give what a first sight gives, including where the name
// depends on the address (--addrs, kernel detection without a dso), for
// inlined frames, and with names cut to the limit counted per occurrence.
TEST(Collapse, RepeatedFrameTextsFoldAsFirstSeen) {
  std::string long_name(fg::kMaxFrameNameBytes + 10, 'n');
  std::string text;
  for (int i = 0; i < 3; ++i) {
    text += sample("app", {"401000 leaf+0x1 (/bin/app)", "ffffffff81000000 [unknown] ([unknown])",
                           "401100 inl (/bin/app) (inlined)", "401200 [unknown] (/bin/app)",
                           "401300 " + long_name + " (/bin/app)", "401400 main (/bin/app)"});
    // The same texts at other addresses.
    text += sample("app", {"401001 leaf+0x1 (/bin/app)", "0000000000001234 [unknown] ([unknown])",
                           "401201 [unknown] (/bin/app)", "401400 main (/bin/app)"});
  }
  for (int variant = 0; variant < 4; ++variant) {
    fg::CollapseOptions o;
    o.tidy.annotate_kernel = variant & 1;
    o.tidy.raw_addresses = variant & 2;
    o.keep_inline = variant == 3;
    fg::CollapseStats stats;
    std::string got = collapse_text(text, o, &stats);
    EXPECT_EQ(stats.truncated_names, 3u) << variant;
    // Each sample alone, through a fresh collapser (nothing cached yet).
    fg::FoldedProfile merged;
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find("\n\n", start) + 2;
      merged.merge(profile_of(text.substr(start, end - start), o));
      start = end;
    }
    EXPECT_EQ(got, folded_text(merged)) << variant;
    EXPECT_EQ(got.find("[app <401201>]") != std::string::npos, (variant & 2) != 0) << variant;
    EXPECT_EQ(got.find("]_[k];leaf") != std::string::npos, (variant & 1) != 0) << variant;
    EXPECT_EQ(got.find(";inl;") != std::string::npos, variant == 3) << variant;
  }
}
