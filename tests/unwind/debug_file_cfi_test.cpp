// debug_file_has_cfi on debug files made here with gcc and objcopy: with
// .debug_frame (code built without .eh_frame), without it (gcc's default:
// the CFI is in .eh_frame), compressed, and on what is not ELF.
#include "unwind/debug_file_cfi.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "test_support.h"

namespace {

using namespace fg::test;

class DebugFileCfi : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir();
    std::ofstream(dir_ + "/f.c") << "int twice(int x) { return 2 * x; }\nint main(void) { return twice(1) - 2; }\n";
  }
  // Builds f.c with `flags`, keeps only its debug sections (objcopy
  // `extra`), and returns that file.
  std::string debug_file(const std::string& name, const std::string& flags, const std::string& extra = "") {
    const std::string bin = dir_ + "/" + name, debug = bin + ".debug";
    CommandResult r = run_shell("cc -O1 " + flags + " -o " + shell_quote(bin) + " " + shell_quote(dir_ + "/f.c") +
                                " && objcopy --only-keep-debug " + extra + " " + shell_quote(bin) + " " +
                                shell_quote(debug));
    EXPECT_EQ(r.status, 0) << r.err;
    return debug;
  }
  std::string dir_;
};

TEST_F(DebugFileCfi, OnlyADebugFrameCounts) {
  std::string with = debug_file("with", "-g -fno-asynchronous-unwind-tables -fno-unwind-tables");
  std::string without = debug_file("without", "-g");
  ASSERT_EQ(run_shell("readelf -SW " + shell_quote(with) + " | grep -q '\\.debug_frame'").status, 0)
      << "the compiler put no .debug_frame in " << with << ": this test proves nothing";
  ASSERT_NE(run_shell("readelf -SW " + shell_quote(without) + " | grep -q '\\.debug_frame'").status, 0)
      << "the compiler put a .debug_frame in " << without << ": this test proves less";
  EXPECT_TRUE(fg::debug_file_has_cfi(with));
  EXPECT_FALSE(fg::debug_file_has_cfi(without));
  // Compressed sections keep their names (SHF_COMPRESSED), as Debian's -dbgsym files have them.
  EXPECT_TRUE(fg::debug_file_has_cfi(
      debug_file("with_z", "-g -fno-asynchronous-unwind-tables -fno-unwind-tables", "--compress-debug-sections=zlib")));
  EXPECT_FALSE(fg::debug_file_has_cfi(debug_file("without_z", "-g", "--compress-debug-sections=zlib")));
}

TEST_F(DebugFileCfi, WhatIsNotReadableIsLeftToLibdwfl) {
  std::ofstream(dir_ + "/text") << "not an ELF file\n";
  EXPECT_TRUE(fg::debug_file_has_cfi(dir_ + "/text"));
  EXPECT_TRUE(fg::debug_file_has_cfi(dir_ + "/missing"));
}

}  // namespace
