// FileBytes: whole files read to EOF, from regular files (sized by fstat) and
// from files that report no size (a FIFO here, as /proc/kallsyms does).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <thread>

#include "symbols/file_bytes.h"
#include "test_support.h"

namespace {

std::string random_bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());  // NULs included
  return s;
}

TEST(FileBytes, RegularFileWholeAndReplacedOnReread) {
  const std::string dir = fg::test::temp_dir();
  const std::string big = random_bytes(3u << 20, 1), small = "ffffffff81000000 T _text\n";
  fg::test::write_file(dir + "/big", big);
  fg::test::write_file(dir + "/small", small);
  fg::FileBytes f;
  ASSERT_TRUE(f.read(dir + "/big", nullptr));
  EXPECT_EQ(f.view(), big);
  ASSERT_TRUE(f.read(dir + "/small", nullptr));
  EXPECT_EQ(f.view(), small);
  fg::test::write_file(dir + "/empty", "");
  ASSERT_TRUE(f.read(dir + "/empty", nullptr));
  EXPECT_TRUE(f.view().empty());
}

// A FIFO has no size: the buffer starts at 1 MB and grows while keeping what
// was read (a lost or repeated chunk at a growth would fail the comparison).
TEST(FileBytes, FileWithoutSizeGrowsAndKeepsEveryByte) {
  const std::string dir = fg::test::temp_dir();
  const std::string path = dir + "/fifo";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  const std::string bytes = random_bytes((5u << 20) + 12345, 2);
  std::thread writer([&] {
    std::ofstream out(path, std::ios::binary);
    for (size_t at = 0; at < bytes.size(); at += 70000)
      out.write(bytes.data() + at, std::streamsize(std::min<size_t>(70000, bytes.size() - at)));
  });
  fg::FileBytes f;
  const bool ok = f.read(path, nullptr);
  writer.join();
  ASSERT_TRUE(ok);
  EXPECT_EQ(f.view().size(), bytes.size());
  EXPECT_TRUE(f.view() == bytes);
}

TEST(FileBytes, MissingFileSaysWhichAndHoldsNothing) {
  const std::string dir = fg::test::temp_dir();
  fg::test::write_file(dir + "/some", "abc");
  fg::FileBytes f;
  ASSERT_TRUE(f.read(dir + "/some", nullptr));
  std::string error;
  EXPECT_FALSE(f.read(dir + "/missing", &error));
  EXPECT_NE(error.find(dir + "/missing"), std::string::npos) << error;
  EXPECT_TRUE(f.view().empty());
  EXPECT_FALSE(f.read(dir, &error));  // a directory: read() fails with EISDIR
  EXPECT_NE(error.find("cannot read " + dir), std::string::npos) << error;
}

// A sparse file over the budget is refused before anything is allocated.
TEST(FileBytes, FileOverTheBudgetIsRefused) {
  const std::string dir = fg::test::temp_dir();
  const std::string path = dir + "/sparse";
  fg::test::write_file(path, "");
  ASSERT_EQ(::truncate(path.c_str(), off_t(fg::FileBytes::kMaxBytes) + 1), 0);
  fg::FileBytes f;
  std::string error;
  EXPECT_FALSE(f.read(path, &error));
  EXPECT_NE(error.find(path + ": larger than 1024 MB"), std::string::npos) << error;
  EXPECT_TRUE(f.view().empty());
}

}  // namespace
