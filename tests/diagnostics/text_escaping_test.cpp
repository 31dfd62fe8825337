// terminal_safe: input text shown on a terminal cannot carry escape
// sequences; csv_cell: report cells cannot start a spreadsheet formula.
#include <gtest/gtest.h>

#include <string>

#include "diagnostics/csv_cell.h"
#include "diagnostics/terminal_text.h"

namespace {

using fg::csv_cell;
using fg::terminal_safe;

TEST(TerminalSafe, KeepsPrintableAsciiAndValidUtf8) {
  EXPECT_EQ(terminal_safe("libtorch_cpu.so;at::native::add 12"), "libtorch_cpu.so;at::native::add 12");
  EXPECT_EQ(terminal_safe("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5");
  EXPECT_EQ(terminal_safe(""), "");
}

TEST(TerminalSafe, EscapesControlCharacters) {
  // A colour change, a title change (OSC ... BEL), a cursor move, a NUL.
  EXPECT_EQ(terminal_safe("ev\x1b[31mred"), "ev\\x1b[31mred");
  EXPECT_EQ(terminal_safe("\x1b]0;owned\x07"), "\\x1b]0;owned\\x07");
  EXPECT_EQ(terminal_safe(std::string("rule\0name", 9)), "rule\\x00name");
  EXPECT_EQ(terminal_safe("a\nb\rc\td\x7f"), "a\\nb\\rc\\td\\x7f");
  for (int c = 0; c < 0x20; ++c) {
    std::string out = terminal_safe(std::string(1, char(c)));
    EXPECT_EQ(out[0], '\\') << c;
    for (char o : out) EXPECT_GE(static_cast<unsigned char>(o), 0x20u) << c;
  }
}

TEST(TerminalSafe, EscapesC1ControlsAndInvalidUtf8) {
  EXPECT_EQ(terminal_safe("x\xc2\x9b" "2Jy"), "x\\u009b2Jy");  // the one-byte CSI, UTF-8 encoded
  EXPECT_EQ(terminal_safe("\xc2\x85"), "\\u0085");
  EXPECT_EQ(terminal_safe("\xc2\xa0"), "\xc2\xa0");  // U+00A0 is printable
  EXPECT_EQ(terminal_safe("\x9b" "2J"), "\\x9b2J");   // a raw C1 byte is not UTF-8
  EXPECT_EQ(terminal_safe("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(terminal_safe("\xc0\x80"), "\\xc0\\x80");          // overlong NUL
  EXPECT_EQ(terminal_safe("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(terminal_safe("\xe2\x82"), "\\xe2\\x82");          // cut short
}

TEST(CsvCell, NeutralisesFormulaStarts) {
  EXPECT_EQ(csv_cell("=HYPERLINK(\"http://x\")"), "\"'=HYPERLINK(\"\"http://x\"\")\"");
  EXPECT_EQ(csv_cell("+1+2"), "'+1+2");
  EXPECT_EQ(csv_cell("-2+3"), "'-2+3");
  EXPECT_EQ(csv_cell("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(csv_cell("\tx"), "'\tx");
  EXPECT_EQ(csv_cell("\rx"), "\"'\rx\"");
}

TEST(CsvCell, QuotesAndLeavesPlainNamesAlone) {
  EXPECT_EQ(csv_cell("gemm"), "gemm");
  EXPECT_EQ(csv_cell("at::native::add<float>"), "at::native::add<float>");
  EXPECT_EQ(csv_cell("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_cell("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_cell("a=b"), "a=b");  // only the first character matters
  EXPECT_EQ(csv_cell(""), "");
}

}  // namespace
