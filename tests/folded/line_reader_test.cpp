// LineReader (lib/folded/line_reader.h) on texts written here: lines across
// its 64 KiB reads, '\r' before '\n', a last line without '\n', and lines
// over the cap cut and flagged instead of held whole.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "folded/input_stream.h"
#include "folded/line_reader.h"
#include "test_support.h"

namespace {

struct Line {
  std::string text;
  bool too_long;
};

std::vector<Line> lines_of(const std::string& text, size_t max_line) {
  const std::string path = fg::test::temp_dir() + "/lines.txt";
  fg::test::write_file(path, text);
  fg::InputStream in(path);
  fg::LineReader reader(in, max_line);
  std::vector<Line> out;
  std::string_view line;
  bool too_long = false;
  while (reader.next(line, too_long)) out.push_back(Line{std::string(line), too_long});
  EXPECT_EQ(reader.line_number(), out.size());
  EXPECT_EQ(reader.bytes_read(), text.size());
  return out;
}

TEST(LineReader, LinesAcrossReadsCarriageReturnsAndALastLineWithoutNewline) {
  std::string text;
  std::vector<std::string> want;
  for (int i = 0; i < 20000; ++i) {  // about 200 KB: several 64 KiB reads, lines cut between them
    want.push_back("line " + std::to_string(i) + std::string(size_t(i % 13), '.'));
    text += want.back() + (i % 5 == 0 ? "\r\n" : "\n");
  }
  want.push_back("last");
  text += "last";
  const std::vector<Line> got = lines_of(text, 1 << 20);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].text, want[i]) << i;
    EXPECT_FALSE(got[i].too_long);
  }
  EXPECT_TRUE(lines_of("", 1 << 20).empty());
  ASSERT_EQ(lines_of("\n\n", 1 << 20).size(), 2u);
}

TEST(LineReader, LongLinesAreCutAndFlagged) {
  // 200 KB without '\n' (spanning reads) and a 30-byte line, capped at 20.
  const std::string text = "short\n" + std::string(200000, 'x') + "\n" + std::string(30, 'y') + "\nend\n";
  const std::vector<Line> got = lines_of(text, 20);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].text, "short");
  EXPECT_FALSE(got[0].too_long);
  EXPECT_EQ(got[1].text, std::string(20, 'x'));
  EXPECT_TRUE(got[1].too_long);
  EXPECT_EQ(got[2].text, std::string(20, 'y'));
  EXPECT_TRUE(got[2].too_long);
  EXPECT_EQ(got[3].text, "end");
  EXPECT_FALSE(got[3].too_long);
}

}  // namespace
