// `fgtool record` end to end: a real recording when perf can record here, the
// child's exit status forwarded, and the explanation when perf is missing.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include "test_support.h"

namespace {

using namespace fg::test;

off_t file_size(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

TEST(RecordCli, RecordsSleepOnCpu) {
  std::string why = perf_unavailable_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  std::string dir = temp_dir();
  auto r = run_shell("cd " + shell_quote(dir) + " && " + fgtool_bin() + " record -o p.data -- sleep 0.2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_GT(file_size(dir + "/p.data"), 0);
  EXPECT_NE(r.err.find("perf record -o p.data -e cpu-clock -F 999 -g -- sleep 0.2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("DNNL_JIT_PROFILE=2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" after "), std::string::npos) << r.err;
  auto head = run_shell("head -c 8 " + shell_quote(dir + "/p.data"));
  EXPECT_EQ(head.out, "PERFILE2");
}

// --stack-size is what `fgtool info` advises for stacks cut short; it implies --dwarf.
TEST(RecordCli, StackSizeImpliesDwarf) {
  auto r = run_shell(fgtool_bin() + " record -n --stack-size 65528 -- ./train");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("--call-graph dwarf,65528 -- ./train"), std::string::npos) << r.out;
  auto bad = run_shell(fgtool_bin() + " record -n --stack-size 70000 -- ./train");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("65528"), std::string::npos) << bad.err;
}

TEST(RecordCli, OffCpuRecordingHasSwitchesAndForwardsExitStatus) {
  std::string why = perf_unavailable_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  std::string dir = temp_dir();
  auto probe = run_shell("perf record -q -e sched:sched_switch -o /dev/null true 2>&1");
  if (probe.status != 0) GTEST_SKIP() << "no sched tracepoints here: " << probe.out;
  auto r = run_shell("cd " + shell_quote(dir) + " && " + fgtool_bin() +
                     " record --off-cpu -o off.data -- sh -c 'sleep 0.05; sleep 0.05; exit 3'");
  EXPECT_EQ(r.status, 3) << r.err;
  ASSERT_GT(file_size(dir + "/off.data"), 0) << r.err;
  auto s = run_shell("perf script -i " + shell_quote(dir + "/off.data") + " --show-switch-events 2>/dev/null | head -400");
  EXPECT_NE(s.out.find("sched:sched_switch"), std::string::npos);
  EXPECT_NE(s.out.find("PERF_RECORD_SWITCH"), std::string::npos);
}

TEST(RecordCli, SvgInOneGo) {
  std::string why = perf_unavailable_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  if (run_shell(fgtool_bin() + " help fold").status != 0 || run_shell(fgtool_bin() + " help svg").status != 0)
    GTEST_SKIP() << "this fgtool has no fold/svg commands yet";
  std::string dir = temp_dir();
  auto r = run_shell("cd " + shell_quote(dir) + " && " + fgtool_bin() +
                     " record -o p.data --svg p.svg -- sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string svg = read_file(dir + "/p.svg");
  EXPECT_EQ(xml_wellformed_error(svg), "");
  EXPECT_NE(svg.find("sh"), std::string::npos);
  // The same subtitle as `fgtool svg p.data`: event, rate, command, duration.
  auto direct = run_shell("cd " + shell_quote(dir) + " && " + fgtool_bin() + " svg p.data");
  auto subtitle = [](const std::string& s) {
    size_t at = s.find("<text id=\"subtitle\"");
    return at == std::string::npos ? std::string() : s.substr(at, s.find("</text>", at) - at);
  };
  EXPECT_NE(subtitle(svg).find("cpu-clock"), std::string::npos) << subtitle(svg);
  EXPECT_NE(subtitle(svg).find("command: sh -c"), std::string::npos) << subtitle(svg);
  EXPECT_EQ(subtitle(svg), subtitle(direct.out));
  // The whole graph is the one `fgtool svg p.data` draws: category colours
  // and their legend (not the hot palette of a plain folded file).
  EXPECT_EQ(svg, direct.out);
  auto hot = run_shell("cd " + shell_quote(dir) + " && " + fgtool_bin() + " fold p.data | " + fgtool_bin() + " svg");
  EXPECT_NE(svg.find(" fg:c=\"other\""), std::string::npos) << svg.substr(0, 3000);  // a frame's category
  EXPECT_NE(svg.find("<g fg:cat=\"other\">"), std::string::npos);                     // and its legend row
  EXPECT_EQ(hot.out.find(" fg:c=\"other\""), std::string::npos);
  // The intermediate folded file (p.svg.folded.XXXXXX, a random name) is removed.
  EXPECT_EQ(run_shell("ls " + shell_quote(dir) + " | grep -c folded").out, "0\n");
}

TEST(RecordCli, ExplainsMissingPerf) {
  std::string empty = temp_dir();
  auto r = run_shell("env PATH=" + shell_quote(empty) + " " + fgtool_bin() + " record -o /dev/null -- true");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("perf is not installed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("apt-get install linux-perf"), std::string::npos) << r.err;
}

TEST(RecordCli, UsageErrors) {
  EXPECT_EQ(run_shell(fgtool_bin() + " record").status, 2);
  EXPECT_EQ(run_shell(fgtool_bin() + " record --off-cpu --wall -- true").status, 2);
  EXPECT_EQ(run_shell(fgtool_bin() + " record --off-cpu -F 99 -- true").status, 2);
  auto dry = run_shell(fgtool_bin() + " record -n --no-jit-profile --off-cpu -o x.data -- ./a -b");
  EXPECT_EQ(dry.status, 0);
  EXPECT_EQ(dry.out, "perf record -o x.data -e sched:sched_switch --switch-events -g -- ./a -b\n");
  auto help = run_shell(fgtool_bin() + " record --help");
  EXPECT_NE(help.out.find("Examples:"), std::string::npos);
}

}  // namespace
