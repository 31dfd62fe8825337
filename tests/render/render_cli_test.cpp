// The built fgtool: `fgtool svg` and `fgtool diff` end to end, including
// exit codes and messages for bad input and bad options.
#include <gtest/gtest.h>

#include <fstream>

#include "test_support.h"

namespace fg {
namespace {

using test::run_shell;
using test::shell_quote;

std::string bin() { return shell_quote(test::fgtool_bin()); }
std::string data(const std::string& name) { return shell_quote(test::testdata("folded/" + name)); }

TEST(CliSvg, RendersFileAndStdinAndGzip) {
  std::string dir = test::temp_dir();
  auto r = run_shell(bin() + " svg " + data("small.folded") + " -o " + dir + "/a.svg");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string a = test::read_file(dir + "/a.svg");
  EXPECT_EQ(test::xml_wellformed_error(a), "");
  EXPECT_NE(a.find("function init(evt)"), std::string::npos);
  r = run_shell("gzip -c " + data("small.folded") + " | " + bin() + " svg");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, a);  // same input, same bytes
  r = run_shell(bin() + " svg --no-javascript --inverted --colors aqua --title T --minwidth 0 " +
                data("perf-gzip.folded") + " " + data("small.folded"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("<script"), std::string::npos);
  EXPECT_NE(r.out.find("<title>gzip ("), std::string::npos);  // both inputs merged
  EXPECT_NE(r.out.find("<title>main ("), std::string::npos);
  EXPECT_EQ(test::xml_wellformed_error(r.out), "");
}

TEST(CliSvg, PerfDataGraphSaysHowItWasRecorded) {
  // testdata/perf/fp.data: perf record -e cpu-clock -F 499 -g ./prog 150000000 (testdata/perf/README.md).
  auto r = run_shell(bin() + " svg --no-javascript " + shell_quote(test::testdata("perf/fp.data")));
  ASSERT_EQ(r.status, 0) << r.err;
  size_t at = r.out.find("<text id=\"subtitle\"");
  ASSERT_NE(at, std::string::npos);
  std::string sub = r.out.substr(at, r.out.find("</text>", at) - at);
  EXPECT_NE(sub.find(">cpu-clock at 499 Hz; command: ./prog 150000000; "), std::string::npos) << sub;
  EXPECT_NE(sub.find(" s sampled"), std::string::npos) << sub;
  // --subtitle wins; folded input gets none.
  r = run_shell(bin() + " svg --no-javascript --subtitle mine " + shell_quote(test::testdata("perf/fp.data")));
  EXPECT_NE(r.out.find("<text id=\"subtitle\" x=\"600.0\" y=\"48.0\">mine</text>"), std::string::npos);
  r = run_shell(bin() + " svg --no-javascript " + data("small.folded"));
  EXPECT_EQ(r.out.find("id=\"subtitle\""), std::string::npos);
}

TEST(CliSvg, FlamechartAndReverse) {
  auto r = run_shell("printf 'm;a 1\\nm;b 1\\nm;a 1\\n' | " + bin() + " svg --flamechart --no-javascript");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("<g fg:x=\"2\" fg:w=\"1\"><title>a (1 samples"), std::string::npos);
  EXPECT_EQ(test::xml_wellformed_error(r.out), "");
  r = run_shell("printf 'm;a;leaf 1\\nm;b;leaf 1\\n' | " + bin() + " svg --reverse --no-javascript");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("<title>leaf (2 samples, 100.00%)"), std::string::npos);
  EXPECT_EQ(test::xml_wellformed_error(r.out), "");
  // A three-column file given to svg is drawn as a differential flamegraph.
  r = run_shell(bin() + " svg " + data("diff3.folded"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Differential Flame Graph"), std::string::npos);
  EXPECT_EQ(test::xml_wellformed_error(r.out), "");
}

TEST(CliSvg, BadInputFailsWithFileAndLine) {
  std::string dir = test::temp_dir();
  test::write_file(dir + "/bad.folded", "main;a 1\nmain;b oops\n");
  auto r = run_shell(bin() + " svg " + dir + "/bad.folded -o " + dir + "/out.svg");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "fgtool svg: " + dir + "/bad.folded:2: 'oops' is not a count (expected 'frame;frame;... COUNT')\n");
  EXPECT_FALSE(std::ifstream(dir + "/out.svg").good());  // nothing half-written left behind
  r = run_shell(bin() + " svg --lenient " + dir + "/bad.folded -o " + dir + "/out.svg");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.err.find("skipped 1 malformed line (first at line 2"), std::string::npos) << r.err;
  r = run_shell(bin() + " svg " + dir + "/missing.folded");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("missing.folded: cannot open"), std::string::npos);
  r = run_shell(bin() + " svg --colors rainbow " + data("small.folded"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown palette"), std::string::npos);
  r = run_shell(bin() + " svg --minwidth lots " + data("small.folded"));
  EXPECT_EQ(r.status, 2);
}

TEST(CliSvg, HelpHasExamples) {
  auto r = run_shell(bin() + " svg --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("Examples:"), std::string::npos);
  EXPECT_NE(r.out.find("--minwidth"), std::string::npos);
  // --colors wall is described as drawn: a hot/cold blend, not blue leaves.
  r = run_shell(bin() + " help svg");
  std::string flat;  // help text is wrapped: compare with single spaces
  for (char c : r.out)
    if (!(c == ' ' || c == '\n') || (!flat.empty() && flat.back() != ' ')) flat += (c == '\n' ? ' ' : c);
  EXPECT_NE(flat.find("wall (hot/cold: each frame blended from warm to blue by the share of its time spent off the CPU"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(flat.find("frames blue"), std::string::npos);
  r = run_shell(bin() + " help diff");
  EXPECT_NE(r.out.find("--negate"), std::string::npos);
}

TEST(CliDiff, SvgFoldedTopAndThreeColumn) {
  std::string dir = test::temp_dir();
  auto r = run_shell(bin() + " diff " + data("before.folded") + " " + data("after.folded") + " -o " + dir + "/d.svg");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string svg = test::read_file(dir + "/d.svg");
  EXPECT_EQ(test::xml_wellformed_error(svg), "");
  EXPECT_NE(svg.find("Differential Flame Graph"), std::string::npos);
  r = run_shell(bin() + " diff --format folded " + data("before.folded") + " " + data("after.folded"));
  ASSERT_EQ(r.status, 0) << r.err;
  // before: 100 samples, after: 125; A scaled by 1.25.
  EXPECT_NE(r.out.find("train;forward;dropout 0 10\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("train;forward;relu 12.5 10\n"), std::string::npos) << r.out;
  test::write_file(dir + "/ab.diff", r.out);
  r = run_shell(bin() + " diff --no-normalize --format folded " + data("before.folded") + " " + data("after.folded"));
  EXPECT_NE(r.out.find("train;forward;relu 10 10\n"), std::string::npos) << r.out;
  r = run_shell(bin() + " diff " + dir + "/ab.diff --no-javascript");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::xml_wellformed_error(r.out), "");
  r = run_shell(bin() + " diff --top 2 " + data("before.folded") + " " + data("after.folded"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Self share, largest gains"), std::string::npos);
  EXPECT_NE(r.out.find("at::native::mm<float>"), std::string::npos);
  EXPECT_EQ(r.out.find("<svg"), std::string::npos);
}

TEST(CliDiff, BadInputs) {
  // One plain folded file: the line that is not three-column, and what diff wants.
  auto r = run_shell(bin() + " diff " + data("small.folded"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("small.folded:1: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("give BEFORE AFTER"), std::string::npos) << r.err;
  r = run_shell(bin() + " diff");
  EXPECT_EQ(r.status, 2);
  std::string dir = test::temp_dir();
  test::write_file(dir + "/bad.folded", "x 1\n\n;;; \n");
  r = run_shell(bin() + " diff " + data("small.folded") + " " + dir + "/bad.folded");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "fgtool diff: " + dir + "/bad.folded:3: no count at the end of the line (expected 'frame;frame;... COUNT')\n");
  r = run_shell(bin() + " diff --format png " + data("small.folded") + " " + data("small.folded"));
  EXPECT_EQ(r.status, 2);
}

}  // namespace
}  // namespace fg
