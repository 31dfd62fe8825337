// Shared by the pprof CLI tests: run the built fgtool through the shell and
// expect it to succeed.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "test_support.h"

namespace fg::pprof_test {

inline std::string fg_cmd(const std::string& args) {
  return test::shell_quote(test::fgtool_bin()) + " " + args;
}

inline std::string run_ok(const std::string& cmd) {
  test::CommandResult r = test::run_shell(cmd);
  EXPECT_EQ(r.status, 0) << cmd << "\n" << r.err;
  return r.out;
}

}  // namespace fg::pprof_test
