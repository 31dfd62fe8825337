// The perf command lines `fgtool record` builds for each view.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>

#include "diagnostics/input_error.h"
#include "record/record_command.h"
#include "record/perf_capabilities.h"
#include "record/subprocess.h"
#include "test_support.h"

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
  fg::ChildStatus killed = fg::run_inherited({"sh", "-c", "kill -9 $$"});
  EXPECT_EQ(killed.signal, 9);
  EXPECT_EQ(killed.shell_status(), 128 + 9);
  EXPECT_EQ(killed.describe().rfind("killed by signal 9", 0), 0u) << killed.describe();
  EXPECT_FALSE(fg::find_in_path("sh").empty());
  EXPECT_TRUE(fg::find_in_path("no-such-program-fgtool").empty());
}

// perf exits with 255 on many errors: that is an exit status, not
// "killed by signal 127" (the 128+N reading of a plain int).
TEST(Subprocess, ExitStatusAbove128IsNotASignal) {
  fg::ChildStatus c = fg::run_inherited({"sh", "-c", "exit 255"});
  EXPECT_TRUE(c.started);
  EXPECT_EQ(c.signal, 0);
  EXPECT_EQ(c.exit_code, 255);
  EXPECT_EQ(c.describe(), "exit status 255");
  EXPECT_FALSE(c.ok());
  fg::ChildStatus missing = fg::run_inherited({"/nonexistent/program"});
  EXPECT_FALSE(missing.started);
  EXPECT_EQ(missing.shell_status(), 127);
  EXPECT_TRUE(fg::run_inherited({"true"}).ok());
}

// "Not mounted" and "mounted but unreadable" need different fixes; the
// message says which is true.
TEST(PerfCapabilities, TracefsExplanationSaysWhatIsTrue) {
  using PC = fg::PerfCapabilities;
  std::string not_mounted = PC::explain_tracefs(PC::TracefsState{});
  EXPECT_NE(not_mounted.find("tracefs is not mounted"), std::string::npos) << not_mounted;
  std::string denied = PC::explain_tracefs(PC::TracefsState{"/sys/kernel/tracing", EACCES});
  EXPECT_EQ(denied.find("not mounted"), std::string::npos) << denied;
  EXPECT_NE(denied.find("mounted at /sys/kernel/tracing but this user may not read it (permission denied)"),
            std::string::npos) << denied;
  std::string missing = PC::explain_tracefs(PC::TracefsState{"/sys/kernel/tracing", ENOENT});
  EXPECT_NE(missing.find("cannot be reached (No such file or directory)"), std::string::npos) << missing;
  // Parsing /proc/self/mounts: tracefs, or debugfs with tracing under it.
  std::string dir = fg::test::temp_dir();
  PC::TracefsState st = PC::tracefs_state("proc /proc proc rw 0 0\nnodev " + dir + " tracefs rw 0 0\n");
  EXPECT_EQ(st.mount_point, dir);
  EXPECT_EQ(st.error, ENOENT);  // no events/sched/sched_switch under it
  st = PC::tracefs_state("nodev " + dir + " debugfs rw 0 0\n");
  EXPECT_EQ(st.mount_point, dir + "/tracing");
  EXPECT_TRUE(PC::tracefs_state("proc /proc proc rw 0 0\n").mount_point.empty());
}

// perf's own exit status 255 is reported as such, not as a signal.
TEST(RecordCli, PerfExitStatus255IsNotASignal) {
  std::string dir = fg::test::temp_dir();
  std::string fake = dir + "/fake-perf";
  fg::test::write_file(fake, "#!/bin/sh\necho 'fake perf failing' >&2\nexit 255\n");
  ASSERT_EQ(::chmod(fake.c_str(), 0755), 0);
  fg::test::CommandResult r = fg::test::run_shell("cd " + fg::test::shell_quote(dir) + " && " +
                                                  fg::test::shell_quote(fg::test::fgtool_bin()) +
                                                  " record --no-check --perf " + fg::test::shell_quote(fake) + " -- true");
  EXPECT_EQ(r.status, 255) << r.err;
  EXPECT_NE(r.err.find("(perf exit status 255)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("signal"), std::string::npos) << r.err;
}

}  // namespace
