// The input formats registered by apps/fgtool/input_formats.cpp: their fixed
// lookup order, detection by content whatever the file is called, and that
// the fgtool binary reads every format the same way the library does.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "folded_text.h"
#include "folded/profile_loader.h"
#include "input_formats.h"
#include "test_support.h"

namespace fg {
namespace {

using test::testdata;

const std::vector<std::string> kOrder = {"perf.data", "pprof", "oneDNN verbose log", "Chrome trace JSON",
                                         "perf script text"};

struct Fixture {
  std::string path;    // under testdata/
  std::string format;  // the loader that must claim it; "" = folded text (no loader)
};

// One or more real files of every format fgtool reads (each fixture's README says how it was made).
const std::vector<Fixture> kFixtures = {
    {"folded/small.folded", ""},
    {"folded/crlf.folded", ""},
    {"folded/perf-python.folded", ""},
    {"fold/fp_static.data", "perf.data"},
    {"perf/pipe.data", "perf.data"},  // perf record -o - (pipe mode)
    {"perf/zstd.data", "perf.data"},
    {"pprof/fp_static.pb", "pprof"},
    {"pprof/fp_static.pb.gz", "pprof"},
    {"pprof/go_merged.pb.gz", "pprof"},
    {"traces/onednn_v3.log", "oneDNN verbose log"},
    {"traces/dnnl_v1.log", "oneDNN verbose log"},
    {"traces/mkldnn_v0.log", "oneDNN verbose log"},
    {"traces/nested.json", "Chrome trace JSON"},
    {"traces/mlp_train_trace.json", "Chrome trace JSON"},
    {"traces/mlp_cpu_run.trace.json.gz", "Chrome trace JSON"},
    {"collapse/fp.txt", "perf script text"},
    {"collapse/dwarf.txt", "perf script text"},
};

// Loads with the loaders' warnings (e.g. dnnl_v1.log's malformed line) kept quiet.
FoldedProfile load_quietly(const std::string& path) {
  ProfileLoadOptions o;
  o.warn = [](const std::string&) {};
  return load_profile(path, o);
}

class InputFormats : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { cli::register_input_formats(); }
};

TEST_F(InputFormats, OrderIsFixedAndRegisteringTwiceChangesNothing) {
  EXPECT_EQ(profile_loader_names(), kOrder);
  cli::register_input_formats();
  EXPECT_EQ(profile_loader_names(), kOrder);
}

// A name the format does not suggest: each file is copied to names of other
// formats (and none), so only its content can decide.
TEST_F(InputFormats, EachFormatIsDetectedByContentWhateverItsName) {
  std::string dir = test::temp_dir();
  const std::vector<std::string> names = {"input", "input.folded", "input.data", "input.json", "input.txt", "x.pb.gz"};
  for (const Fixture& f : kFixtures) {
    SCOPED_TRACE(f.path);
    std::string bytes = test::read_file(testdata(f.path));
    ASSERT_FALSE(bytes.empty());
    std::string expected = test::folded_text(load_quietly(testdata(f.path)));
    EXPECT_NE(expected.find('\n'), std::string::npos) << "the fixture folds to nothing";
    for (const std::string& name : names) {
      SCOPED_TRACE(name);
      std::string copy = dir + "/" + name;
      test::write_file(copy, bytes);
      std::string head = read_file_head(copy);
      const ProfileLoader* l = find_profile_loader(head);
      EXPECT_EQ(l ? l->name : "", f.format);
      // Exactly one format claims each real file: the order never decides for them.
      std::vector<std::string> all = profile_loaders_matching(head);
      EXPECT_EQ(all, f.format.empty() ? std::vector<std::string>{} : std::vector<std::string>{f.format});
      EXPECT_EQ(test::folded_text(load_quietly(copy)), expected);
    }
  }
}

// Gzip'ed text formats are told apart by their inflated start, whatever
// the file is called: folded text (no loader), oneDNN logs, Chrome traces.
TEST_F(InputFormats, GzipTextIsDetectedByItsInflatedContent) {
  std::string dir = test::temp_dir();
  const std::vector<Fixture> plain = {{"folded/small.folded", ""},
                                      {"traces/onednn_v3.log", "oneDNN verbose log"},
                                      {"traces/nested.json", "Chrome trace JSON"}};
  for (const Fixture& f : plain) {
    SCOPED_TRACE(f.path);
    std::string gz = dir + "/input.pb.gz";  // named like pprof
    auto r = test::run_shell("gzip -c " + test::shell_quote(testdata(f.path)) + " > " + test::shell_quote(gz));
    ASSERT_EQ(r.status, 0) << r.err;
    const ProfileLoader* l = find_profile_loader(read_file_head(gz));
    EXPECT_EQ(l ? l->name : "", f.format);
    EXPECT_EQ(test::folded_text(load_quietly(gz)), test::folded_text(load_quietly(testdata(f.path))));
  }
}

// Where two predicates accept the same bytes, the earlier format wins: a
// oneDNN verbose log captured together with perf script output.
TEST_F(InputFormats, TheEarlierFormatWinsWhereTwoMatch) {
  std::string head =
      "python 123 [000] 1.000000: 1000 cpu-clock:\n"
      "\t    1234 main+0x10 (/usr/bin/python3)\n"
      "\n"
      "onednn_verbose,v1,info,oneDNN v3.13.0\n";
  std::vector<std::string> all = profile_loaders_matching(head);
  ASSERT_EQ(all, (std::vector<std::string>{"oneDNN verbose log", "perf script text"}));
  ASSERT_NE(find_profile_loader(head), nullptr);
  EXPECT_EQ(find_profile_loader(head)->name, "oneDNN verbose log");
}

// The binary registers the same formats: `fgtool merge` of each renamed
// fixture writes what the library loads from it.
TEST_F(InputFormats, TheCliReadsEveryFormatByContent) {
  std::string dir = test::temp_dir();
  for (const Fixture& f : kFixtures) {
    SCOPED_TRACE(f.path);
    std::string copy = dir + "/renamed";
    test::write_file(copy, test::read_file(testdata(f.path)));
    auto r = test::run_shell(test::shell_quote(test::fgtool_bin()) + " merge " + test::shell_quote(copy) + " -o - 2>/dev/null");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, test::folded_text(load_quietly(copy)));
  }
}

// Inputs given as pipes: process substitution (`fgtool svg <(fgtool fold
// x.data)`), standard input, a named FIFO. Format detection peeks at each
// input's head; on a pipe that used to consume it, and `svg`, `report` and
// `diff` then read an empty or broken profile. Each is read as the file.
TEST_F(InputFormats, PipedInputsReadAsTheirFiles) {
  const std::string bin = test::shell_quote(test::fgtool_bin());
  auto bash = [](const std::string& script) {
    return test::run_shell("bash -c " + test::shell_quote(script));
  };
  for (const char* fixture : {"folded/small.folded", "pprof/fp_static.pb.gz", "pprof/go_cpu.pb.gz",
                              "perf/pipe.data", "traces/nested.json", "traces/onednn_v3.log"}) {
    SCOPED_TRACE(fixture);
    const std::string in = test::shell_quote(testdata(fixture));
    auto file = bash(bin + " merge " + in + " -o -");
    ASSERT_EQ(file.status, 0) << file.err;
    ASSERT_FALSE(file.out.empty());
    auto substituted = bash(bin + " merge <(cat " + in + ") -o -");
    EXPECT_EQ(substituted.status, 0) << substituted.err;
    EXPECT_EQ(substituted.out, file.out);
    auto piped = bash("cat " + in + " | " + bin + " merge - -o -");
    EXPECT_EQ(piped.status, 0) << piped.err;
    EXPECT_EQ(piped.out, file.out);
    // svg peeks twice (difffolded detection, perf.data subtitle) before it reads.
    auto svg = bash(bin + " svg <(cat " + in + ") -o - | grep -c '<g fg:x='");
    EXPECT_EQ(svg.err.find("no samples"), std::string::npos) << svg.err;
    EXPECT_NE(svg.out, "0\n");
  }
  const std::string folded = test::shell_quote(testdata("folded/small.folded"));
  auto diff = bash(bin + " diff --format folded <(cat " + folded + ") <(cat " + folded + ")");
  EXPECT_EQ(diff.status, 0) << diff.err;
  EXPECT_EQ(diff.out, bash(bin + " diff --format folded " + folded + " " + folded).out);
  // Fractional weights: diff re-reads A for an exact total, which a pipe cannot give.
  const std::string dir = test::temp_dir();
  test::write_file(dir + "/frac.folded", "main;a 1.5\nmain;b 2.25\n");
  test::write_file(dir + "/whole.folded", "main;a 1\nmain;b 3\n");
  auto frac_file = bash(bin + " diff --format folded " + dir + "/frac.folded " + dir + "/whole.folded");
  ASSERT_EQ(frac_file.status, 0) << frac_file.err;
  auto frac_pipe = bash(bin + " diff --format folded <(cat " + dir + "/frac.folded) " + dir + "/whole.folded");
  EXPECT_EQ(frac_pipe.status, 0) << frac_pipe.err;
  EXPECT_EQ(frac_pipe.out, frac_file.out);
  // Units that differ are converted for files (read again apart); a pipe
  // cannot be read again, which is said.
  test::write_file(dir + "/us.folded", "# fgtool units=us\nmain;a 1\nmain;b 3\n");
  test::write_file(dir + "/ns.folded", "# fgtool units=ns\nmain;a 1000\nmain;b 3000\n");
  auto units_pipe = bash(bin + " diff --format folded <(cat " + dir + "/us.folded) " + dir + "/ns.folded");
  EXPECT_EQ(units_pipe.status, 0) << units_pipe.err;
  EXPECT_NE(units_pipe.err.find("counts us, " + dir + "/ns.folded counts ns: compared as ns without converting"),
            std::string::npos) << units_pipe.err;
  const std::string pipe_data = test::shell_quote(testdata("perf/pipe.data"));
  auto fold = bash(bin + " fold <(cat " + pipe_data + ")");
  EXPECT_EQ(fold.status, 0) << fold.err;
  EXPECT_EQ(fold.out, bash(bin + " fold " + pipe_data).out);
  // A named FIFO is not peeked at (a second open would block): fold reads it
  // as perf.data, the other commands as folded text, neither hangs.
  const std::string fifo = test::temp_dir() + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto named = bash("cat " + pipe_data + " > " + fifo + " & timeout 60 " + bin + " fold " + fifo);
  EXPECT_EQ(named.status, 0) << named.err;
  EXPECT_EQ(named.out, fold.out);
  auto named_folded = bash("cat " + folded + " > " + fifo + " & timeout 60 " + bin + " merge " + fifo + " -o -");
  EXPECT_EQ(named_folded.status, 0) << named_folded.err;
  EXPECT_EQ(named_folded.out, bash(bin + " merge " + folded + " -o -").out);
}

// `fgtool fold` reads perf.data and traces; a profile of another kind gets
// the command that reads it named (not perf.data's "bad magic"), exit 1 and
// no output; a file of no known kind keeps the perf.data header error.
TEST_F(InputFormats, FoldNamesTheCommandForOtherProfiles) {
  std::string dir = test::temp_dir();
  struct Case {
    std::string path, says;
  };
  for (const Case& c : {Case{"pprof/fp_static.pb.gz", "a pprof profile, not perf.data: 'fgtool svg'"},
                        Case{"pprof/go_merged.pb", "a pprof profile, not perf.data"},
                        Case{"folded/small.folded", "folded stacks already, not perf.data: 'fgtool svg'"},
                        Case{"folded/crlf.folded", "folded stacks already"},
                        Case{"collapse/fp.txt", "perf script text, not perf.data: 'fgtool collapse "}}) {
    SCOPED_TRACE(c.path);
    const std::string copy = dir + "/renamed.data", out = dir + "/out.folded";
    test::write_file(copy, test::read_file(testdata(c.path)));
    std::remove(out.c_str());
    auto r = test::run_shell(test::shell_quote(test::fgtool_bin()) + " fold " + test::shell_quote(copy) + " -o " +
                             test::shell_quote(out));
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find(copy + ": " + c.says), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("bad magic"), std::string::npos) << r.err;
    EXPECT_NE(access(out.c_str(), F_OK), 0) << "no output is written";
  }
  const std::string junk = dir + "/junk.data";
  test::write_file(junk, std::string("\x7f" "ELF\x02\x01\x01 not a profile\n", 24));
  auto r = test::run_shell(test::shell_quote(test::fgtool_bin()) + " fold " + test::shell_quote(junk) + " -o -");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("byte 0: file header: bad magic"), std::string::npos) << r.err;
  // perf.data itself is still read.
  auto ok = test::run_shell(test::shell_quote(test::fgtool_bin()) + " fold " +
                            test::shell_quote(testdata("fold/fp_static.data")) + " -o /dev/null 2>/dev/null");
  EXPECT_EQ(ok.status, 0) << ok.err;
}

}  // namespace
}  // namespace fg
