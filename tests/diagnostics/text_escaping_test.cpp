// terminal_safe: input text shown on a terminal cannot carry escape
// sequences; csv_cell: report cells cannot start a spreadsheet formula;
// utf8_sequence_length: the UTF-8 rule both terminal and SVG text use.
#include <gtest/gtest.h>

#include <string>

#include "diagnostics/csv_cell.h"
#include "diagnostics/terminal_text.h"
#include "diagnostics/utf8.h"

namespace {

using fg::csv_cell;
using fg::terminal_safe;
using fg::utf8_sequence_length;

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

// An independent encoder for the oracle below.
std::string encode_utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += char(cp);
  } else if (cp < 0x800) {
    s += char(0xC0 | (cp >> 6));
    s += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += char(0xE0 | (cp >> 12));
    s += char(0x80 | ((cp >> 6) & 0x3F));
    s += char(0x80 | (cp & 0x3F));
  } else {
    s += char(0xF0 | (cp >> 18));
    s += char(0x80 | ((cp >> 12) & 0x3F));
    s += char(0x80 | ((cp >> 6) & 0x3F));
    s += char(0x80 | (cp & 0x3F));
  }
  return s;
}

TEST(Utf8Sequence, EveryCodePointButSurrogatesIsValid) {
  for (uint32_t cp = 0x80; cp <= 0x10FFFF; ++cp) {
    std::string s = encode_utf8(cp);
    uint32_t got = 0;
    size_t n = utf8_sequence_length(s, 0, &got);
    if (cp >= 0xD800 && cp <= 0xDFFF) {
      ASSERT_EQ(n, 0u) << std::hex << cp;
    } else {
      ASSERT_EQ(n, s.size()) << std::hex << cp;
      ASSERT_EQ(got, cp);
      ASSERT_EQ(utf8_sequence_length(s.substr(0, s.size() - 1), 0), 0u) << "cut short " << std::hex << cp;
    }
  }
}

// Every two- and three-byte string with a non-ASCII first byte: a sequence
// is accepted exactly when it is the one encoding of a non-surrogate code
// point (so overlong forms, stray continuation bytes and 0xF5.. are refused).
TEST(Utf8Sequence, AcceptsOnlyShortestEncodings) {
  std::string s(3, '\0');
  size_t valid2 = 0, valid3 = 0;
  for (unsigned a = 0x80; a < 0x100; ++a)
    for (unsigned b = 0; b < 0x100; ++b)
      for (unsigned c = 0; c < 0x100; ++c) {
        s[0] = char(a), s[1] = char(b), s[2] = char(c);
        uint32_t cp = 0;
        size_t n = utf8_sequence_length(s, 0, &cp);
        if (n) {
          ASSERT_TRUE(n == 2 || n == 3);
          ASSERT_EQ(encode_utf8(cp), s.substr(0, n));
          ASSERT_FALSE(cp >= 0xD800 && cp <= 0xDFFF);
          if (c == 0) valid2 += n == 2;
          valid3 += n == 3;
        }
      }
  EXPECT_EQ(valid2, 0x800u - 0x80u);                    // U+0080..U+07FF
  EXPECT_EQ(valid3, 0x10000u - 0x800u - 0x800u);        // U+0800..U+FFFF less the surrogates
  EXPECT_EQ(utf8_sequence_length("\xF4\x90\x80\x80", 0), 0u);  // past U+10FFFF
  EXPECT_EQ(utf8_sequence_length("\xF5\x80\x80\x80", 0), 0u);
  EXPECT_EQ(utf8_sequence_length("\xF0\x8F\xBF\xBF", 0), 0u);  // overlong
  EXPECT_EQ(utf8_sequence_length("x\xC3\xA9", 1), 2u);        // at an offset
  EXPECT_EQ(utf8_sequence_length("a", 0), 0u);                // ASCII is not a sequence
}

}  // namespace
