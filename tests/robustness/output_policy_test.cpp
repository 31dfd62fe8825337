// How fgtool replaces and refuses outputs, run as a user would
// (docs/robustness.md guarantee 5): an input is never overwritten (the same
// inode, whatever the spelling), a read-only file only with --force, a
// file's mode is kept, a dangling symlink is written through, and a failed
// write to stdout exits 2 in every command. Also: input text reaching the
// terminal is escaped, CSV cells cannot start a formula.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "test_support.h"

using namespace fg::test;

namespace {

std::string fgtool() { return shell_quote(fgtool_bin()); }

std::string copy_fixture(const std::string& dir, const std::string& rel, const std::string& name) {
  std::string to = dir + "/" + name;
  write_file(to, read_file(testdata(rel)));
  return to;
}

// Each command that writes a file, given an input as its output.
TEST(OutputPolicy, InputIsNeverTheOutput) {
  std::string dir = temp_dir();
  std::string rec = copy_fixture(dir, "perf/fp.data", "rec.data");
  std::string folded = copy_fixture(dir, "folded/small.folded", "x.folded");
  std::string txt = copy_fixture(dir, "collapse/fp.txt", "perf.txt");
  write_file(dir + "/rules.json", "{\"rules\": []}");
  std::string rec_bytes = read_file(rec), folded_bytes = read_file(folded), txt_bytes = read_file(txt);
  ASSERT_EQ(::symlink("x.folded", (dir + "/alias.folded").c_str()), 0);
  const std::string cases[] = {
      "fold rec.data -o rec.data",
      "fold rec.data -o ./rec.data",
      "svg rec.data -o rec.data",
      "report rec.data -o rec.data",
      "svg x.folded -o alias.folded",
      "svg x.folded -o x.folded --force",
      "diff x.folded x.folded -o x.folded",
      "diff --format folded rec.data x.folded -o rec.data",
      "export --format speedscope x.folded -o x.folded",
      "collapse perf.txt -o perf.txt",
      "report x.folded --rules rules.json -o rules.json",
  };
  for (const std::string& c : cases) {
    SCOPED_TRACE(c);
    CommandResult r = run_shell("cd " + shell_quote(dir) + " && " + fgtool() + " " + c);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("is also an input of this command"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.rfind("fgtool ", r.err.size() - 2), r.err.rfind('\n', r.err.size() - 2) + 1) << "one line: " << r.err;
  }
  EXPECT_EQ(read_file(rec), rec_bytes);
  EXPECT_EQ(read_file(folded), folded_bytes);
  EXPECT_EQ(read_file(txt), txt_bytes);
  // Another name still works.
  CommandResult ok = run_shell("cd " + shell_quote(dir) + " && " + fgtool() + " fold rec.data -o out.folded");
  EXPECT_EQ(ok.status, 0) << ok.err;
}

TEST(OutputPolicy, ReadOnlyOutputNeedsForceAndModeIsKept) {
  std::string dir = temp_dir();
  std::string in = testdata("folded/small.folded");
  std::string ro = dir + "/ro.svg", priv = dir + "/private.svg";
  write_file(ro, "old\n");
  write_file(priv, "old\n");
  ASSERT_EQ(::chmod(ro.c_str(), 0444), 0);
  ASSERT_EQ(::chmod(priv.c_str(), 0600), 0);
  for (const char* cmd : {"svg", "fold", "report", "export --format d3"}) {
    SCOPED_TRACE(cmd);
    std::string c = std::string(cmd) == "fold" ? "collapse " + shell_quote(testdata("collapse/fp.txt"))
                                               : std::string(cmd) + " " + shell_quote(in);
    CommandResult r = run_shell(fgtool() + " " + c + " -o " + shell_quote(ro));
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("read-only (mode 0444); give --force"), std::string::npos) << r.err;
    EXPECT_EQ(read_file(ro), "old\n");
  }
  CommandResult forced = run_shell(fgtool() + " svg " + shell_quote(in) + " --force -o " + shell_quote(ro));
  EXPECT_EQ(forced.status, 0) << forced.err;
  EXPECT_NE(read_file(ro).find("<svg"), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat(ro.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, mode_t(0444));

  CommandResult r = run_shell(fgtool() + " svg " + shell_quote(in) + " -o " + shell_quote(priv));
  EXPECT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(::stat(priv.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, mode_t(0600));  // was 0644 before
  EXPECT_NE(read_file(priv).find("<svg"), std::string::npos);
}

TEST(OutputPolicy, DanglingSymlinkIsWrittenThrough) {
  std::string dir = temp_dir();
  ASSERT_EQ(::symlink("target.svg", (dir + "/link.svg").c_str()), 0);
  CommandResult r =
      run_shell(fgtool() + " svg " + shell_quote(testdata("folded/small.folded")) + " -o " + shell_quote(dir + "/link.svg"));
  ASSERT_EQ(r.status, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::lstat((dir + "/link.svg").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link was replaced by a regular file";
  EXPECT_NE(read_file(dir + "/target.svg").find("<svg"), std::string::npos);
}

// Every command that prints to stdout fails with 2 when stdout cannot be written.
TEST(OutputPolicy, FullStdoutExitsTwoInEveryCommand) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  std::string folded = shell_quote(testdata("folded/small.folded"));
  std::string before = shell_quote(testdata("folded/before.folded")), after = shell_quote(testdata("folded/after.folded"));
  std::string data = shell_quote(testdata("perf/fp.data"));
  const std::string cases[] = {
      "info " + data,
      "fold " + data,
      "svg " + folded,
      "diff --top 5 " + before + " " + after,
      "diff --by category " + before + " " + after,
      "diff " + before + " " + after,
      "report " + folded,
      "report --format csv " + folded,
      "export --format d3 " + folded,
      "collapse " + shell_quote(testdata("collapse/fp.txt")),
      "rules",
      "record -n -- true",
      "help svg",
      "--help",
      "version",
  };
  for (const std::string& c : cases) {
    SCOPED_TRACE(c);
    CommandResult r = run_shell(fgtool() + " " + c + " > /dev/full");
    EXPECT_EQ(r.status, 2) << r.err;
    if (c != "--help" && c != "version" && c != "help svg") {
      EXPECT_NE(r.err.find("write failed"), std::string::npos) << r.err;
    }
  }
}

// Names from the input reach stderr and stdout escaped.
TEST(TerminalSafety, ControlCharactersFromInputsAreEscaped) {
  std::string dir = temp_dir();
  // A rules file whose unknown key holds an escape sequence and a NUL.
  std::string rules = dir + "/rules.json";
  write_file(rules, std::string("{\"rules\": [], \"x\\u001b]0;owned\\u0007\\u0000y\": 1}"));
  CommandResult r = run_shell(fgtool() + " report " + shell_quote(testdata("folded/small.folded")) + " --rules " +
                              shell_quote(rules));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("unknown top-level key"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("x\\x1b]0;owned\\x07\\x00y"), std::string::npos) << r.err;
  for (char c : r.err) EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << int(c);

  // A file name with an escape sequence in an error message.
  std::string evil = dir + "/bad\x1b[2Jname.folded";
  write_file(evil, "no count here\n");
  r = run_shell(fgtool() + " svg " + shell_quote(evil) + " -o " + shell_quote(dir + "/o.svg"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bad\\x1b[2Jname.folded:1:"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos);
}

TEST(TerminalSafety, CsvReportCellsCannotStartAFormula) {
  std::string dir = temp_dir();
  std::string in = dir + "/inj.folded";
  write_file(in, "main;=HYPERLINK(\"http://evil\",\"x\") 5\nmain;+cmd|' /C calc'!A0 3\nmain;-2+3 2\nmain;@SUM(A1) 1\n");
  CommandResult r = run_shell(fgtool() + " report --format csv " + shell_quote(in));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(",\"'=HYPERLINK("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(",'+cmd|"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(",'-2+3,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(",'@SUM(A1),"), std::string::npos) << r.out;
  // No cell starts with a formula character.
  size_t pos = 0;
  while (pos < r.out.size()) {
    size_t nl = r.out.find('\n', pos);
    std::string line = r.out.substr(pos, nl - pos);
    pos = nl == std::string::npos ? r.out.size() : nl + 1;
    size_t start = 0;
    while (start <= line.size()) {
      size_t comma = line.find(',', start);
      std::string cell = line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!cell.empty() && cell[0] == '"') cell = cell.substr(1);
      if (!cell.empty()) {
        EXPECT_EQ(std::string("=+@").find(cell[0]), std::string::npos) << line;
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
}

}  // namespace

namespace {

// A real recording whose command line and DSO path carry escape sequences:
// `fgtool info` shows them escaped.
TEST(TerminalSafety, InfoEscapesDsoPathsAndCommandLine) {
  std::string why = perf_unavailable_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  std::string dir = temp_dir();
  std::string evil_dir = dir + "/bin\x1b[31mred";
  ASSERT_EQ(run_shell("mkdir " + shell_quote(evil_dir) + " && cp /bin/sh " + shell_quote(evil_dir + "/sh")).status, 0);
  CommandResult rec = run_shell("cd " + shell_quote(dir) + " && " + fgtool() + " record -o p.data -- " +
                                shell_quote(evil_dir + "/sh") +
                                " -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done' " +
                                shell_quote("arg\x1b]0;owned\x07"));
  ASSERT_EQ(rec.status, 0) << rec.err;
  CommandResult r = run_shell("cd " + shell_quote(dir) + " && " + fgtool() + " info p.data");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos);
  EXPECT_NE(r.out.find("arg\\x1b]0;owned\\x07"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bin\\x1b[31mred/sh"), std::string::npos) << r.out;
}

}  // namespace
