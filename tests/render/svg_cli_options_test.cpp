// `fgtool svg`/`diff` options as help shows them and as flamegraph.pl spells
// them: the help lists what works (--colors category), the aliases do what
// the fgtool names do, and defaults print as written.
#include <gtest/gtest.h>

#include "test_support.h"

namespace fg {
namespace {

using test::run_shell;
using test::shell_quote;

std::string bin() { return shell_quote(test::fgtool_bin()); }

std::string svg_of(const std::string& args) {
  auto r = run_shell("printf 'm;a;b 3\\nm;c 1\\nm;d_[k] 1\\n' | " + bin() + " svg --no-javascript " + args);
  EXPECT_EQ(r.status, 0) << args << ": " << r.err;
  return r.out;
}

TEST(SvgCliOptions, HelpListsCategoryAndPrintsDefaultsAsWritten) {
  auto r = run_shell(bin() + " help svg");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("palette: category"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--font-width arg (=0.59)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("0.5899"), std::string::npos) << r.out;
  for (const char* alias : {"--fontsize", "--fonttype", "--fontwidth", "--cp", "--bgcolors"})
    EXPECT_NE(r.out.find(alias), std::string::npos) << alias;
  auto bad = run_shell("printf 'm;a 1\\n' | " + bin() + " svg --colors nosuch");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("category"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("nosuch"), std::string::npos) << bad.err;
}

// Sizes out of range are usage errors (exit 2) that say the range.
TEST(SvgCliOptions, SizesOutOfRangeSayTheRange) {
  struct Case {
    const char *args, *says;
  };
  for (const Case& c : {Case{"--width 0", "--width must be between 50 and 100000 pixels"},
                        Case{"--height 0", "--height must be between 2 and 1000 pixels"},
                        Case{"--font-size 0", "--font-size must be above 0 and below 500"},
                        Case{"--font-width 10", "--font-width must be above 0 and below 10"}}) {
    auto r = run_shell("printf 'm;a 1\\n' | " + bin() + " svg " + c.args);
    EXPECT_EQ(r.status, 2) << c.args;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << ": " << r.err;
  }
}

TEST(SvgCliOptions, HelpDiffNamesItsDefaultTitle) {
  auto r = run_shell(bin() + " help diff");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("(default: Differential Flame Graph)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Icicle Graph"), std::string::npos) << r.out;
}

TEST(SvgCliOptions, FlamegraphPlSpellingsMatchFgtoolNames) {
  EXPECT_EQ(svg_of("--fontsize 15"), svg_of("--font-size 15"));
  EXPECT_NE(svg_of("--fontsize 15"), svg_of(""));
  EXPECT_EQ(svg_of("--fonttype Courier"), svg_of("--font-type Courier"));
  EXPECT_EQ(svg_of("--fontwidth 0.7"), svg_of("--font-width 0.7"));
  EXPECT_EQ(svg_of("--cp"), svg_of("--hash"));
  EXPECT_NE(svg_of("--cp"), svg_of(""));
  for (const char* lang : {"java", "js", "perl", "python", "rust"})
    EXPECT_EQ(svg_of(std::string("--colors ") + lang), svg_of("--colors hot")) << lang;
  std::string blue = svg_of("--bgcolors blue");
  EXPECT_NE(blue.find("#e0e0ff"), std::string::npos);
  std::string flat = svg_of("--bgcolors '#123456'");
  EXPECT_NE(flat.find("#123456"), std::string::npos);
  auto bad = run_shell("printf 'm;a 1\\n' | " + bin() + " svg --bgcolors '<x>'");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("--bgcolors"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace fg
