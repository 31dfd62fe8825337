// The perf command lines `fgtool record` builds for each view.
#include <gtest/gtest.h>

#include <cstdlib>

#include "diagnostics/input_error.h"
#include "record/record_command.h"
#include "record/subprocess.h"

namespace {

std::string line(fg::RecordOptions o) { return fg::shell_line(fg::RecordCommandBuilder(o).perf_command()); }

fg::RecordOptions base() {
  fg::RecordOptions o;
  o.command = {"./train", "--epochs", "1"};
  return o;
}

TEST(RecordCommandBuilder, OnCpu) {
  EXPECT_EQ(line(base()), "perf record -o perf.data -e cpu-clock -F 999 -g -- ./train --epochs 1");
  auto o = base();
  o.dwarf = true;
  o.frequency = 499;
  o.output = "out dir/x.data";
  EXPECT_EQ(line(o), "perf record -o 'out dir/x.data' -e cpu-clock -F 499 --call-graph dwarf,16384 -- ./train --epochs 1");
}

TEST(RecordCommandBuilder, OffCpuAndWall) {
  auto o = base();
  o.view = fg::RecordView::OffCpu;
  EXPECT_EQ(line(o), "perf record -o perf.data -e sched:sched_switch --switch-events -g -- ./train --epochs 1");
  EXPECT_EQ(fg::RecordCommandBuilder(o).fold_arguments(), std::vector<std::string>{"--off-cpu"});
  o.view = fg::RecordView::Wall;
  EXPECT_EQ(line(o),
            "perf record -o perf.data -e cpu-clock -F 999 -e sched:sched_switch --switch-events -g -- ./train --epochs 1");
  EXPECT_EQ(fg::RecordCommandBuilder(o).fold_arguments(), std::vector<std::string>{"--wall"});
  o.dwarf = true;
  auto ev = fg::RecordCommandBuilder(o).event_arguments();
  EXPECT_EQ(ev.back(), "dwarf,16384");
}

// Deep stacks (libtorch's autograd) overflow the default 16 KiB copy and are
// cut short; --stack-size raises it up to perf's limit, and nothing else.
TEST(RecordCommandBuilder, DwarfStackSize) {
  auto o = base();
  o.dwarf = true;
  o.stack_size = 65528;
  EXPECT_EQ(line(o), "perf record -o perf.data -e cpu-clock -F 999 --call-graph dwarf,65528 -- ./train --epochs 1");
  for (int bad : {0, 7, 1001, 65536, -8}) {
    o.stack_size = bad;
    try {
      fg::RecordCommandBuilder(o).event_arguments();
      ADD_FAILURE() << "stack size " << bad << " accepted";
    } catch (const fg::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--stack-size"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::to_string(bad)), std::string::npos) << e.what();
    }
  }
}

TEST(RecordCommandBuilder, CommandArgumentsPassThroughUntouched) {
  auto o = base();
  o.command = {"sh", "-c", "echo 'hi' -- -o x"};
  auto cmd = fg::RecordCommandBuilder(o).perf_command();
  ASSERT_GE(cmd.size(), 3u);
  EXPECT_EQ(cmd[cmd.size() - 1], "echo 'hi' -- -o x");
  EXPECT_EQ(cmd[cmd.size() - 4], "--");
}

TEST(RecordCommandBuilder, RejectsBadInput) {
  fg::RecordOptions none;
  EXPECT_THROW(fg::RecordCommandBuilder(none).perf_command(), fg::UsageError);
  auto o = base();
  o.frequency = 0;
  EXPECT_THROW(fg::RecordCommandBuilder(o).perf_command(), fg::UsageError);
  o.frequency = 1000000;
  EXPECT_THROW(fg::RecordCommandBuilder(o).perf_command(), fg::UsageError);
}

TEST(RecordCommandBuilder, JitProfileEnvironmentUnlessSetOrDisabled) {
  unsetenv("DNNL_JIT_PROFILE");
  setenv("ONEDNN_JIT_PROFILE", "1", 1);
  auto o = base();
  auto env = fg::RecordCommandBuilder(o).environment();
  ASSERT_EQ(env.size(), 1u);  // the user's ONEDNN_JIT_PROFILE=1 is kept
  EXPECT_EQ(env[0].first, "DNNL_JIT_PROFILE");
  EXPECT_EQ(env[0].second, "2");
  o.jit_profile = false;
  EXPECT_TRUE(fg::RecordCommandBuilder(o).environment().empty());
  unsetenv("ONEDNN_JIT_PROFILE");
}

TEST(Subprocess, CapturesStatusAndOutput) {
  auto r = fg::run_captured({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.output.find("out"), std::string::npos);
  EXPECT_NE(r.output.find("err"), std::string::npos);
  EXPECT_EQ(fg::run_captured({"/nonexistent/program"}).status, 127);
  EXPECT_EQ(fg::run_inherited({"sh", "-c", "kill -9 $$"}), 128 + 9);
  EXPECT_FALSE(fg::find_in_path("sh").empty());
  EXPECT_TRUE(fg::find_in_path("no-such-program-fgtool").empty());
}

}  // namespace
