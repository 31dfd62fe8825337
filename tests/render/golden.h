// Golden-file comparison for rendered SVGs: FGTOOL_BLESS=1 rewrites the
// files under testdata/render/ instead of comparing.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "test_support.h"

namespace fg::test {

inline void expect_golden(const std::string& name, const std::string& actual) {
  std::string path = testdata("render/" + name);
  const char* bless = std::getenv("FGTOOL_BLESS");
  if (bless && std::string(bless) == "1") {
    write_file(path, actual);
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " missing; run with FGTOOL_BLESS=1 to create it";
  std::string expected = read_file(path);
  if (expected != actual) {
    std::string got = temp_dir() + "/" + name;
    write_file(got, actual);
    auto diff = run_shell("diff -u " + shell_quote(path) + " " + shell_quote(got) + " | head -40");
    ADD_FAILURE() << name << " differs from the golden file (FGTOOL_BLESS=1 to accept):\n" << diff.out;
  }
}

}  // namespace fg::test
