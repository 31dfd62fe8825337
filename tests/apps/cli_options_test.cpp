// Option values through the fgtool binary: a count or size option
// (unsigned) refuses a sign instead of wrapping "-5" around to 4294967291,
// as Boost.Program_options' own reading of unsigned values does.
#include <gtest/gtest.h>

#include "test_support.h"

namespace fg::test {
namespace {

TEST(CliOptions, UnsignedOptionsRefuseASign) {
  const std::string folded = temp_dir() + "/a.folded";
  write_file(folded, "main;a 3\nmain;b 1\n");
  const std::string bin = shell_quote(fgtool_bin()) + " ";
  struct Case {
    std::string args, option;
  };
  for (const Case& c : {Case{"report --top -3 ", "--top"}, Case{"diff --top -2 " + folded + " ", "--top"},
                        Case{"fold --max-stack -1 ", "--max-stack"}, Case{"fold --threads -1 ", "--threads"},
                        Case{"fold --off-cpu --min-block -5 ", "--min-block"},
                        Case{"report --top +3 ", "--top"}, Case{"report --top 3x ", "--top"}}) {
    CommandResult r = run_shell(bin + c.args + shell_quote(folded));
    EXPECT_EQ(r.status, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find("for option '" + c.option + "' is invalid"), std::string::npos) << c.args << ": " << r.err;
  }
  // Plain numbers still read.
  CommandResult ok = run_shell(bin + "report --top 1 " + shell_quote(folded));
  EXPECT_EQ(ok.status, 0) << ok.err;
  CommandResult ok2 = run_shell(bin + "report --top ' 2' " + shell_quote(folded));
  EXPECT_EQ(ok2.status, 0) << ok2.err;
}

}  // namespace
}  // namespace fg::test
