// Folded input as it arrives from other tools and editors: a UTF-8 BOM,
// CR-only and CRLF line ends, the three-column diff form told apart from
// folded stacks whose names end in a number, sums past the largest double,
// and `fgtool diff` with an empty side (run through the built fgtool).
#include <gtest/gtest.h>

#include <string>

#include "diagnostics/input_error.h"
#include "folded/folded_reader.h"
#include "folded/profile_loader.h"
#include "folded_text.h"
#include "test_support.h"

namespace fg {
namespace {

using test::folded_text;

// Reads `text` through a file (the streaming path) and as text; both must agree.
std::string read_both(const std::string& text) {
  std::string path = test::temp_dir() + "/in.folded";
  test::write_file(path, text);
  FoldedProfile file, mem;
  read_folded(path, file);
  read_folded_text(text, "in.folded", mem);
  EXPECT_EQ(folded_text(file), folded_text(mem));
  return folded_text(file);
}

std::string error_of_file(const std::string& text, FoldedReadOptions o = {}) {
  std::string path = test::temp_dir() + "/in.folded";
  test::write_file(path, text);
  FoldedProfile p;
  try {
    read_folded(path, p, o);
  } catch (const InputError& e) {
    std::string m = e.what();
    return m.substr(m.rfind('/') + 1);
  }
  return "";
}

TEST(FoldedInputForms, Utf8BomIsDropped) {
  EXPECT_EQ(read_both("\xEF\xBB\xBFmain;a 2\nmain;b 1\n"), "main;a 2\nmain;b 1\n");
  EXPECT_EQ(read_both("\xEF\xBB\xBFmain;a 2\r\n"), "main;a 2\n");
  EXPECT_EQ(read_both("\xEF\xBB\xBF"), "");
  // Only at the very start: elsewhere it is part of a name.
  EXPECT_EQ(read_both("a 1\n\xEF\xBB\xBF" "b 1\n"), "a 1\n\xEF\xBB\xBF" "b 1\n");
}

TEST(FoldedInputForms, CrOnlyAndCrlfLineEnds) {
  EXPECT_EQ(read_both("main;a 1\rmain;b 2\rmain;a 3\r"), "main;a 4\nmain;b 2\n");
  EXPECT_EQ(read_both("main;a 1\rmain;b 2"), "main;a 1\nmain;b 2\n");
  EXPECT_EQ(read_both("main;a 1\r\nmain;b 2\r\n"), "main;a 1\nmain;b 2\n");
  EXPECT_EQ(read_both("\xEF\xBB\xBFmain;a 1\rmain;b 2\r"), "main;a 1\nmain;b 2\n");
  // A CR inside a frame name of a '\n' file (fgtool's own output of such a
  // name starts with it) does not make the file CR-only.
  EXPECT_EQ(read_both("  \rx;a 4\nmain;b 2\n"), "  \rx;a 4\nmain;b 2\n");
  // Line numbers count CR-ended lines, across the 4 MiB read blocks too.
  std::string text;
  for (int i = 0; i < 300000; ++i) text += "main;some_function_name;leaf " + std::to_string(i) + "\r";
  text += "broken line\r";
  EXPECT_EQ(error_of_file(text), "in.folded:300001: 'line' is not a count (expected 'frame;frame;... COUNT')");
}

TEST(FoldedInputForms, ThreeColumnOnlyWhenEveryLineIs) {
  std::string dir = test::temp_dir();
  test::write_file(dir + "/epoch.folded", "train;epoch 1 100\ntrain;step 5\n");
  test::write_file(dir + "/diff3", "\xEF\xBB\xBFmain;x 3 5\r\n\r\nmain;y 0 2\r\n");
  test::write_file(dir + "/late", "main;x 3 5\n" + std::string(100000, '\n') + "main;y 2\n");
  EXPECT_FALSE(looks_like_diff_folded(dir + "/epoch.folded"));
  EXPECT_TRUE(looks_like_diff_folded(dir + "/diff3"));
  EXPECT_FALSE(looks_like_diff_folded(dir + "/late"));
  EXPECT_FALSE(looks_like_diff_folded_text("train;epoch 1 100\ntrain;step 5\n"));
  EXPECT_TRUE(looks_like_diff_folded_text("main;x 3 5\rmain;y 0 2\r"));
  EXPECT_FALSE(looks_like_diff_folded_text("\n\n"));
  // Read as folded, "epoch 1" is a frame name.
  FoldedProfile p;
  read_folded(dir + "/epoch.folded", p);
  EXPECT_EQ(folded_text(p), "train;epoch 1 100\ntrain;step 5\n");
}

TEST(FoldedInputForms, SumsPastTheLargestDoubleAreRejectedAtTheirLine) {
  EXPECT_EQ(error_of_file("a 1e308\nb 1\nc 1e308\n"),
            "in.folded:3: the counts up to this line sum past the largest number fgtool can hold (about 1.8e308)");
  // Lenient: the line is skipped and counted, the total stays finite.
  std::string path = test::temp_dir() + "/l.folded";
  test::write_file(path, "a 1e308\nb 1e308\nc 1\n");
  FoldedProfile p;
  FoldedReadOptions o;
  o.lenient = true;
  std::string warned;
  o.warn = [&](const std::string& w) { warned += w; };
  FoldedReadStats st = read_folded(path, p, o);
  EXPECT_EQ(st.skipped, 1u);
  EXPECT_DOUBLE_EQ(p.total(), 1e308 + 1);
  EXPECT_NE(warned.find("first at line 2"), std::string::npos) << warned;
  // The B column of a three-column file.
  FoldedProfile a, b;
  try {
    read_diff_folded_text("x 1 1e308\ny 1 1e308\n", "d", a, b);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("d:2: the counts up to this line sum past"), std::string::npos) << e.what();
  }
  // Two inputs each within range whose merge is not.
  std::string dir = test::temp_dir();
  test::write_file(dir + "/h1.folded", "a 1.5e308\n");
  test::write_file(dir + "/h2.folded", "b 1.5e308\n");
  try {
    load_profiles({dir + "/h1.folded", dir + "/h2.folded"});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("h2.folded (with the inputs before it): the counts sum past"), std::string::npos)
        << e.what();
  }
}

// ---- through the CLI ----

std::string fgtool() { return test::shell_quote(test::fgtool_bin()); }

TEST(FoldedInputFormsCli, SvgTellsFoldedFromThreeColumn) {
  std::string dir = test::temp_dir();
  test::write_file(dir + "/epoch.folded", "train;epoch 1 100\ntrain;step 5\n");
  test::write_file(dir + "/ab.diff", "main;x 3 5\nmain;y 4 2\n");
  auto svg = [&](const std::string& args) {
    test::CommandResult r = test::run_shell("cd " + test::shell_quote(dir) + " && " + fgtool() + " svg " + args);
    EXPECT_EQ(r.status, 0) << args << ": " << r.err;
    return r.out;
  };
  std::string plain = svg("epoch.folded --no-javascript");
  EXPECT_NE(plain.find("<title>epoch 1 (100 samples"), std::string::npos) << plain.substr(0, 3000);
  EXPECT_EQ(plain.find("<title>epoch ("), std::string::npos);
  // Three-column: drawn as a diff (A and B in each title), automatically or with --diff-input.
  std::string diff = svg("ab.diff --no-javascript");
  EXPECT_NE(diff.find("<title>x (A 3 samples 42.86%, B 5 samples"), std::string::npos) << diff.substr(0, 3000);
  std::string from_stdin = svg("--diff-input --no-javascript < ab.diff");
  EXPECT_EQ(from_stdin, diff);
  // Forced plain: "main;x 3" is the stack.
  std::string forced = svg("--no-diff-input --no-javascript ab.diff");
  EXPECT_NE(forced.find("<title>x 3 (5 samples"), std::string::npos) << forced.substr(0, 3000);
  // --diff-input on a file that is not three-column: the line is named.
  test::CommandResult r = test::run_shell("cd " + test::shell_quote(dir) + " && " + fgtool() + " svg --diff-input epoch.folded");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("epoch.folded:2:"), std::string::npos) << r.err;
}

TEST(FoldedInputFormsCli, DiffWithAnEmptySideIsAnError) {
  std::string dir = test::temp_dir();
  test::write_file(dir + "/a.folded", "main;x 3\nmain;y 1\n");
  test::write_file(dir + "/empty.folded", "");
  test::write_file(dir + "/zero.folded", "main;x 0\n");
  test::write_file(dir + "/oneside.diff", "main;x 3 0\nmain;y 1 0\n");
  auto run = [&](const std::string& args) {
    return test::run_shell("cd " + test::shell_quote(dir) + " && " + fgtool() + " diff " + args);
  };
  struct Case {
    const char* args;
    const char* names;
  } cases[] = {
      {"a.folded empty.folded -o d.svg", "empty.folded: no samples (total 0)"},
      {"empty.folded a.folded -o d.svg", "empty.folded: no samples (total 0)"},
      {"a.folded zero.folded --top 5", "zero.folded: no samples (total 0)"},
      {"a.folded empty.folded --by category", "empty.folded: no samples (total 0)"},
      {"oneside.diff -o d.svg", "oneside.diff (column 3, B): no samples"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    test::CommandResult r = run(c.args);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << r.err;
  }
  // The raw counts can still be drawn.
  test::CommandResult r = run("--no-normalize a.folded empty.folded --format folded");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "main;x 3 0\nmain;y 1 0\n");
}

}  // namespace
}  // namespace fg
